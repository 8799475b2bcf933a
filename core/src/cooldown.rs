//! When a failure puts a deployment into cooldown, with LiteLLM's semantics
//! (`litellm/router_utils/cooldown_handlers.py`).
//!
//! Two rules, chosen by whether `router_settings.allowed_fails` is set:
//! - set: `AllowedFailsCounter`, LiteLLM's legacy "v1" counter;
//! - not set: `failure_rate_says_cool_down`, LiteLLM's default "v2" failure-rate rule over
//!   the deployment's outcomes in the current minute.

use std::time::{Duration, Instant};

use crate::deployment::DeploymentIdx;
use crate::failure::Failure;
use crate::window::FixedWindow;

/// A live cooldown: the deployment is skipped by the pick until `until`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cooldown {
    pub until: Instant,
    /// The failure that started it.
    pub cause: Failure,
}

/// A cooldown that [`crate::State::record_failure`] just started. The shard that saw the
/// failure broadcasts it; every other shard applies it with [`crate::State::apply_cooldown`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CooldownStarted {
    pub idx: DeploymentIdx,
    pub until: Instant,
    pub cause: Failure,
}

/// How long the v2 rule's outcome window lasts ("this minute").
pub(crate) const OUTCOME_WINDOW: Duration = Duration::from_secs(60);

/// LiteLLM's `SINGLE_DEPLOYMENT_TRAFFIC_FAILURE_THRESHOLD`: a total outage cools a deployment
/// down, even the only one of its group, once this many requests failed in the minute.
pub(crate) const TOTAL_OUTAGE_MIN_REQUESTS: u64 = 1000;

/// Successes and failures of one deployment in the current outcome window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Outcomes {
    pub successes: u32,
    pub failures: u32,
}

impl Outcomes {
    fn total(self) -> u64 {
        u64::from(self.successes) + u64::from(self.failures)
    }

    /// Whether more than half of this window's requests failed (LiteLLM's
    /// `DEFAULT_FAILURE_THRESHOLD_PERCENT` = 0.5), in integers.
    fn mostly_failed(self) -> bool {
        u64::from(self.failures) * 2 > self.total()
    }

    fn all_failed(self) -> bool {
        u64::from(self.failures) == self.total()
    }
}

/// LiteLLM's v2 rule, for a failure that counts for cooldown. `outcomes` already includes this
/// failure; `group_size` is the number of deployments in the failed deployment's group.
pub(crate) fn failure_rate_says_cool_down(outcomes: Outcomes, failure: Failure, group_size: usize) -> bool {
    // A single deployment is never cooled down for load alone: its callers would get "no
    // deployments" instead of the upstream's own, more useful, error.
    let has_siblings = group_size > 1;
    if failure == Failure::Status(429) && has_siblings {
        return true;
    }
    if outcomes.all_failed() && outcomes.total() >= TOTAL_OUTAGE_MIN_REQUESTS {
        return true;
    }
    if outcomes.mostly_failed() && has_siblings {
        return true;
    }
    // 401, 404: retrying the same deployment cannot help, so take it out even if it is alone.
    !failure.is_retryable()
}

/// LiteLLM's v1 rule: failures counted in a window as long as the cooldown itself; the failure
/// that takes the count past `allowed_fails` starts a cooldown and starts the count again.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct AllowedFailsCounter {
    window: FixedWindow<u32>,
}

impl AllowedFailsCounter {
    /// Counts one failure; true when it must start a cooldown.
    pub(crate) fn count(&mut self, allowed_fails: u32, now: Instant, window: Duration) -> bool {
        let fails = self.window.open_at(now, window);
        *fails = fails.saturating_add(1);
        if *fails > allowed_fails {
            self.window.close();
            true
        } else {
            false
        }
    }

    #[cfg(test)]
    pub(crate) fn fails_at(&self, now: Instant) -> u32 {
        self.window.counts_at(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcomes(successes: u32, failures: u32) -> Outcomes {
        Outcomes { successes, failures }
    }

    #[test]
    fn rate_limit_cools_only_when_the_group_has_another_deployment() {
        let f = Failure::Status(429);
        assert!(failure_rate_says_cool_down(outcomes(9, 1), f, 2));
        assert!(!failure_rate_says_cool_down(outcomes(9, 1), f, 1));
    }

    #[test]
    fn more_than_half_failed_cools_only_with_siblings() {
        let f = Failure::Status(500);
        assert!(failure_rate_says_cool_down(outcomes(1, 2), f, 3));
        assert!(!failure_rate_says_cool_down(outcomes(2, 2), f, 3));
        assert!(!failure_rate_says_cool_down(outcomes(1, 2), f, 1));
    }

    #[test]
    fn a_total_outage_with_traffic_cools_even_a_single_deployment() {
        let f = Failure::Timeout;
        assert!(!failure_rate_says_cool_down(outcomes(0, 999), f, 1));
        assert!(failure_rate_says_cool_down(outcomes(0, 1000), f, 1));
        assert!(!failure_rate_says_cool_down(outcomes(1, 1000), f, 1));
    }

    #[test]
    fn final_errors_cool_even_a_single_deployment() {
        assert!(failure_rate_says_cool_down(outcomes(5, 1), Failure::Status(401), 1));
        assert!(failure_rate_says_cool_down(outcomes(5, 1), Failure::Status(404), 1));
        assert!(!failure_rate_says_cool_down(outcomes(5, 1), Failure::Status(503), 1));
    }

    #[test]
    fn allowed_fails_counter_cools_on_the_failure_past_the_limit_and_restarts() {
        let t0 = Instant::now();
        let window = Duration::from_secs(5);
        let mut c = AllowedFailsCounter::default();
        assert!(!c.count(2, t0, window));
        assert!(!c.count(2, t0, window));
        assert!(c.count(2, t0, window));
        assert_eq!(c.fails_at(t0), 0);
        assert!(!c.count(2, t0, window));
    }

    #[test]
    fn allowed_fails_zero_cools_on_the_first_failure() {
        let mut c = AllowedFailsCounter::default();
        assert!(c.count(0, Instant::now(), Duration::from_secs(5)));
    }
}
