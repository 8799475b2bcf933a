//! When a model whose poll failed is polled again: after 1 s, then 2 s, 4 s, … doubling with
//! each failure in a row, never later than the normal poll interval.

use std::time::Duration;

/// The first retry's delay.
pub const FIRST_RETRY: Duration = Duration::from_secs(1);

/// The delay after `failures` failed polls in a row (1 for the first failure).
pub fn retry_after(failures: u32, poll_interval: Duration) -> Duration {
    let factor = 1u32.checked_shl(failures.saturating_sub(1)).unwrap_or(u32::MAX);
    FIRST_RETRY.checked_mul(factor).unwrap_or(Duration::MAX).min(poll_interval)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_from_a_second_up_to_the_poll_interval() {
        let interval = Duration::from_secs(300);
        let delays: Vec<u64> = (1..=11).map(|n| retry_after(n, interval).as_secs()).collect();
        assert_eq!(delays, [1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300]);
        assert_eq!(retry_after(0, interval), FIRST_RETRY, "defensive: no failure yet");
        assert_eq!(retry_after(u32::MAX, interval), interval, "no overflow after very many failures");
        let fast = Duration::from_millis(200);
        assert_eq!(retry_after(1, fast), fast, "never later than a short poll interval");
    }
}
