//! The attempt plan: after an attempt fails, retry (re-pick) or stop.

use std::time::Instant;

use crate::{DeploymentIdx, Failure, GroupIdx, RouterSettings, Snapshot, State};

/// What the gateway's retry loop does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Pick again, with [`AttemptPlan::failed`] in the [`crate::PickRequest`].
    Retry,
    /// Give up and answer the client with this failure.
    Stop,
}

/// The retry budget and history of one request: at most `1 + num_retries` attempts, each a
/// fresh pick that skips the deployments that already failed.
///
/// Contract with the gateway: a request is retried only while nothing of the response has
/// reached the client. Once a byte of the response head or body is written, a failure ends the
/// request whatever this plan would say, and the gateway does not consult it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttemptPlan {
    max_attempts: u32,
    failed_attempts: u32,
    /// Distinct deployments that failed, in order of first failure. Allocates on the first
    /// failure only.
    failed: Vec<DeploymentIdx>,
}

impl AttemptPlan {
    pub fn new(settings: &RouterSettings) -> AttemptPlan {
        AttemptPlan { max_attempts: settings.num_retries.saturating_add(1), failed_attempts: 0, failed: Vec::new() }
    }

    /// Records that the attempt at `idx` failed, and says whether to try again.
    ///
    /// Stops when the attempts are used up, or when the failure is final: a 4xx that is not
    /// retryable (see [`Failure::is_retryable`]). A 401 is retried only when
    /// `group_has_other_candidates` (another key or account may work; the same one will not);
    /// [`AttemptPlan::other_candidate_remains`] computes it.
    pub fn after_failure(&mut self, idx: DeploymentIdx, failure: Failure, group_has_other_candidates: bool) -> Next {
        self.failed_attempts = self.failed_attempts.saturating_add(1);
        if !self.failed.contains(&idx) {
            self.failed.push(idx);
        }
        let may_retry = failure.is_retryable() || (failure == Failure::Status(401) && group_has_other_candidates);
        if !may_retry || self.failed_attempts >= self.max_attempts {
            Next::Stop
        } else {
            Next::Retry
        }
    }

    /// The deployments that already failed for this request, for the next pick.
    pub fn failed(&self) -> &[DeploymentIdx] {
        &self.failed
    }

    pub fn failed_attempts(&self) -> u32 {
        self.failed_attempts
    }

    pub fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    /// Whether the group still holds a deployment that is not cooling down and has not failed
    /// for this request, `just_failed` included (call it after recording the failure in
    /// `state`, before [`AttemptPlan::after_failure`]).
    pub fn other_candidate_remains(
        &self,
        snap: &Snapshot,
        state: &State,
        group: GroupIdx,
        just_failed: DeploymentIdx,
        now: Instant,
    ) -> bool {
        snap.group(group)
            .members
            .iter()
            .any(|&idx| idx != just_failed && !self.failed.contains(&idx) && !state.is_cooling_down(idx, now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Deployment, Provider};

    const A: DeploymentIdx = DeploymentIdx(0);
    const B: DeploymentIdx = DeploymentIdx(1);

    fn plan(num_retries: u32) -> AttemptPlan {
        AttemptPlan::new(&RouterSettings { num_retries, ..RouterSettings::default() })
    }

    #[test]
    fn attempts_are_one_plus_num_retries() {
        let mut p = plan(2);
        assert_eq!(p.max_attempts(), 3);
        assert_eq!(p.after_failure(A, Failure::Status(503), true), Next::Retry);
        assert_eq!(p.after_failure(B, Failure::Timeout, true), Next::Retry);
        assert_eq!(p.after_failure(A, Failure::Connect, true), Next::Stop);
        assert_eq!(p.failed_attempts(), 3);
        assert_eq!(p.failed(), [A, B]);
    }

    #[test]
    fn no_retries_means_one_attempt() {
        let mut p = plan(0);
        assert_eq!(p.after_failure(A, Failure::Status(429), true), Next::Stop);
        assert_eq!(p.failed(), [A]);
    }

    #[test]
    fn final_client_errors_stop_at_once() {
        for status in [400, 403, 404, 413, 422] {
            let mut p = plan(5);
            assert_eq!(p.after_failure(A, Failure::Status(status), true), Next::Stop);
        }
    }

    #[test]
    fn retryable_failures_retry_even_without_another_candidate() {
        for f in
            [Failure::Status(408), Failure::Status(409), Failure::Status(429), Failure::Status(500), Failure::Protocol]
        {
            assert_eq!(plan(1).after_failure(A, f, false), Next::Retry, "{f}");
        }
    }

    #[test]
    fn unauthorized_retries_only_when_another_candidate_remains() {
        assert_eq!(plan(2).after_failure(A, Failure::Status(401), true), Next::Retry);
        assert_eq!(plan(2).after_failure(A, Failure::Status(401), false), Next::Stop);
    }

    #[test]
    fn other_candidates_exclude_failed_and_cooling_deployments() {
        let dep = |id: &str| Deployment::new(id, "g", Provider::OpenAi, "m", "http://h/v1");
        let settings = RouterSettings { allowed_fails: Some(0), ..RouterSettings::default() };
        let snap = Snapshot::build(vec![dep("a"), dep("b"), dep("c")], settings).unwrap();
        let mut state = State::new(&snap);
        let t0 = Instant::now();
        let g = GroupIdx(0);
        let mut p = AttemptPlan::new(&snap.settings);
        assert!(p.other_candidate_remains(&snap, &state, g, A, t0));
        state.record_failure(&snap, A, Failure::Status(401), t0);
        assert_eq!(p.after_failure(A, Failure::Status(401), true), Next::Retry);
        state.record_failure(&snap, B, Failure::Status(401), t0);
        // `c` is still there.
        assert!(p.other_candidate_remains(&snap, &state, g, B, t0));
        state.record_failure(&snap, DeploymentIdx(2), Failure::Status(503), t0);
        assert!(!p.other_candidate_remains(&snap, &state, g, B, t0));
    }
}
