//! A fixed window: counters that open at their first event and are forgotten `len` later.
//! LiteLLM keeps its failure counters in cache entries with a TTL set on first write; this is
//! the same thing without a cache.

use std::time::{Duration, Instant};

/// Counts of type `C` in the window that is open at a given instant, if any.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct FixedWindow<C> {
    closes_at: Option<Instant>,
    counts: C,
}

impl<C: Copy + Default> FixedWindow<C> {
    /// The counts of the window open at `now`; if none is open, opens an empty one that
    /// closes `len` from `now`.
    pub(crate) fn open_at(&mut self, now: Instant, len: Duration) -> &mut C {
        if !self.is_open(now) {
            self.closes_at = Some(instant_after(now, len));
            self.counts = C::default();
        }
        &mut self.counts
    }

    /// The counts of the window open at `now`, or empty counts if none is.
    pub(crate) fn counts_at(&self, now: Instant) -> C {
        if self.is_open(now) {
            self.counts
        } else {
            C::default()
        }
    }

    pub(crate) fn close(&mut self) {
        self.closes_at = None;
        self.counts = C::default();
    }

    fn is_open(&self, now: Instant) -> bool {
        self.closes_at.is_some_and(|closes_at| now < closes_at)
    }
}

/// The longest span added to an instant: a cooldown or window longer than this is treated as
/// this long. It keeps `Instant + Duration` from overflowing on absurd configured values.
const LONGEST_SPAN: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

/// `now + span`, with `span` capped at 100 years.
pub(crate) fn instant_after(now: Instant, span: Duration) -> Instant {
    // Invariant: every supported platform's `Instant` spans hundreds of years past any `now`
    // a running process sees, so adding at most 100 years cannot overflow.
    now + span.min(LONGEST_SPAN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_opens_on_first_event_and_forgets_after_len() {
        let t0 = Instant::now();
        let len = Duration::from_secs(10);
        let mut w = FixedWindow::<u32>::default();
        assert_eq!(w.counts_at(t0), 0);
        *w.open_at(t0, len) += 1;
        *w.open_at(t0 + Duration::from_secs(9), len) += 1;
        assert_eq!(w.counts_at(t0 + Duration::from_secs(9)), 2);
        // The window does not slide: it closes `len` after its first event.
        assert_eq!(w.counts_at(t0 + len), 0);
        *w.open_at(t0 + len, len) += 1;
        assert_eq!(w.counts_at(t0 + len), 1);
        w.close();
        assert_eq!(w.counts_at(t0 + len), 0);
    }

    #[test]
    fn absurd_spans_do_not_overflow() {
        let t0 = Instant::now();
        assert!(instant_after(t0, Duration::MAX) > t0);
    }
}
