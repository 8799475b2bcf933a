//! What the policy score reads of an endpoint's recent answers, shared by every shard (atomics,
//! like the virtual keys' meters) so that every shard scores an endpoint alike and the same
//! request routes the same way on each: this minute's answers (the error rate) and a latency
//! EWMA (α as the pick's latency average, `crate::latency`).

use std::sync::atomic::{AtomicU64, Ordering};

use crate::key_meter::PackedWindow;
use crate::latency::ALPHA;

#[derive(Debug, Default)]
pub struct SharedOutcomes {
    successes: PackedWindow,
    failures: PackedWindow,
}

impl SharedOutcomes {
    /// Counts one answer at `now` (Unix seconds).
    pub fn record(&self, success: bool, now: u64) {
        let counter = if success { &self.successes } else { &self.failures };
        counter.add(now / 60, 1);
    }

    /// Failures among this minute's answers, 0 to 1 (0 without answers).
    pub fn error_rate(&self, now: u64) -> f64 {
        let minute = now / 60;
        let (ok, failed) = (self.successes.get(minute), self.failures.get(minute));
        match ok + failed {
            0 => 0.0,
            total => failed as f64 / total as f64,
        }
    }
}

/// An EWMA of milliseconds in one atomic (the bits of an `f64`; none yet: [`NO_SAMPLE`]).
#[derive(Debug)]
pub struct SharedLatency(AtomicU64);

/// Not an `f64` any sample makes (a NaN payload).
const NO_SAMPLE: u64 = u64::MAX;

impl Default for SharedLatency {
    fn default() -> Self {
        SharedLatency(AtomicU64::new(NO_SAMPLE))
    }
}

impl SharedLatency {
    /// Adds a sample; the first is taken as it is.
    pub fn record(&self, ms: f64) {
        if !ms.is_finite() || ms < 0.0 {
            return;
        }
        let _ = self.0.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |bits| {
            let next = match bits {
                NO_SAMPLE => ms,
                old => f64::from_bits(old) + ALPHA * (ms - f64::from_bits(old)),
            };
            Some(next.to_bits())
        });
    }

    /// The average, `None` before the first sample.
    pub fn ms(&self) -> Option<f64> {
        match self.0.load(Ordering::Relaxed) {
            NO_SAMPLE => None,
            bits => Some(f64::from_bits(bits)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_latency_average_starts_at_its_first_sample_and_moves_by_alpha() {
        let l = SharedLatency::default();
        assert_eq!(l.ms(), None);
        l.record(100.0);
        assert_eq!(l.ms(), Some(100.0));
        l.record(200.0);
        assert!((l.ms().unwrap() - (100.0 + ALPHA * 100.0)).abs() < 1e-9);
        l.record(f64::NAN);
        l.record(-1.0);
        assert!((l.ms().unwrap() - 130.0).abs() < 1e-9, "bad samples are ignored");
    }

    #[test]
    fn the_rate_is_this_minutes_failures_among_its_answers() {
        let o = SharedOutcomes::default();
        assert_eq!(o.error_rate(120), 0.0);
        o.record(true, 120);
        o.record(false, 121);
        o.record(false, 179);
        o.record(true, 150);
        assert_eq!(o.error_rate(170), 0.5);
        assert_eq!(o.error_rate(180), 0.0, "a new minute starts over");
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| (0..100).for_each(|_| o.record(false, 200)));
            }
        });
        assert_eq!(o.error_rate(200), 1.0);
        assert_eq!(o.failures.get(3), 400, "every thread's failures counted");
    }
}
