//! An endpoint's answers this minute, shared by every shard (an atomic counter each, like the
//! virtual keys' meters): the policy score's error rate reads them, so that every shard scores an
//! endpoint alike and the same request routes the same way on each.

use crate::key_meter::PackedWindow;

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

#[cfg(test)]
mod tests {
    use super::*;

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
