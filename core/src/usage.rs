//! Requests and tokens per deployment in the current minute, as usage-based routing (v2) reads
//! them (the filter that drops deployments this request would take past their `rpm`/`tpm` is in
//! the pick's filters).
//!
//! LiteLLM keys its counters by the wall-clock minute (`%H-%M`), so every worker counts in the
//! same minute. The core has no wall clock: minutes are counted from a *minute origin*, an
//! instant every shard must share for their minutes to line up ([`crate::State::set_minute_origin`];
//! without one, a state takes the first instant it records as its origin).

use std::time::{Duration, Instant};

pub(crate) const MINUTE: Duration = Duration::from_secs(60);

/// The minutes since an origin: minute 1 starts at the origin, 0 means "before it" (or no
/// origin yet) and holds no usage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct MinuteClock {
    origin: Option<Instant>,
}

impl MinuteClock {
    pub(crate) fn new(origin: Instant) -> MinuteClock {
        MinuteClock { origin: Some(origin) }
    }

    pub(crate) fn origin(&self) -> Option<Instant> {
        self.origin
    }

    /// The minute `at` falls in; sets the origin to `at` if there is none yet.
    pub(crate) fn minute_starting(&mut self, at: Instant) -> u64 {
        let origin = *self.origin.get_or_insert(at);
        minute_of(origin, at)
    }

    /// The minute `at` falls in, without setting an origin.
    pub(crate) fn minute(&self, at: Instant) -> u64 {
        self.origin.map_or(0, |origin| minute_of(origin, at))
    }

    /// How long from `at` until the next minute starts (a full minute without an origin).
    pub(crate) fn until_next_minute(&self, at: Instant) -> Duration {
        match self.origin.and_then(|origin| at.checked_duration_since(origin)) {
            Some(since) => {
                let into = Duration::from_nanos((since.as_nanos() % MINUTE.as_nanos()) as u64);
                MINUTE - into
            }
            None => MINUTE,
        }
    }
}

fn minute_of(origin: Instant, at: Instant) -> u64 {
    match at.checked_duration_since(origin) {
        Some(since) => since.as_secs() / MINUTE.as_secs() + 1,
        None => 0,
    }
}

/// One deployment's requests and tokens in one minute.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct MinuteUsage {
    /// The minute counted (see [`MinuteClock`]); 0 = nothing counted.
    minute: u64,
    requests: u64,
    tokens: u64,
}

impl MinuteUsage {
    /// Adds usage that happened in `minute`: a later minute replaces the counts, an earlier
    /// one (a late event from another shard) is already over and is dropped.
    pub(crate) fn add(&mut self, minute: u64, requests: u64, tokens: u64) {
        if minute == 0 || minute < self.minute {
            return;
        }
        if minute > self.minute {
            *self = MinuteUsage { minute, requests: 0, tokens: 0 };
        }
        self.requests = self.requests.saturating_add(requests);
        self.tokens = self.tokens.saturating_add(tokens);
    }

    /// The counts if `minute` is the one counted, else zero.
    pub(crate) fn in_minute(&self, minute: u64) -> Usage {
        if minute != 0 && minute == self.minute {
            Usage { requests: self.requests, tokens: self.tokens }
        } else {
            Usage::default()
        }
    }
}

/// Requests and tokens one deployment served in the current minute.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    pub requests: u64,
    pub tokens: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minutes_count_from_the_origin() {
        let t0 = Instant::now();
        let mut clock = MinuteClock::default();
        assert_eq!(clock.minute(t0), 0);
        assert_eq!(clock.until_next_minute(t0), MINUTE);
        assert_eq!(clock.minute_starting(t0), 1);
        assert_eq!(clock.minute(t0 + Duration::from_secs(59)), 1);
        assert_eq!(clock.minute(t0 + Duration::from_secs(60)), 2);
        assert_eq!(clock.minute(t0 - Duration::from_secs(1)), 0);
        assert_eq!(clock.until_next_minute(t0 + Duration::from_secs(45)), Duration::from_secs(15));
    }

    #[test]
    fn usage_rolls_over_with_the_minute_and_drops_late_minutes() {
        let mut u = MinuteUsage::default();
        u.add(3, 1, 100);
        u.add(3, 1, 50);
        assert_eq!(u.in_minute(3), Usage { requests: 2, tokens: 150 });
        assert_eq!(u.in_minute(4), Usage::default());
        u.add(2, 1, 1000);
        assert_eq!(u.in_minute(3), Usage { requests: 2, tokens: 150 });
        u.add(4, 1, 7);
        assert_eq!(u.in_minute(4), Usage { requests: 1, tokens: 7 });
        u.add(0, 1, 1);
        assert_eq!(u.in_minute(0), Usage::default());
    }
}
