//! The filter chain. Each filter is one small unit that can only remove candidates, and names,
//! for every candidate it removes, a [`RejectReason`]. The chain's order lives in
//! [`crate::pick`]; a filter that fails open says so in its own code.

use std::time::Instant;

use crate::{DeploymentIdx, RejectReason, State};

/// The candidates still standing, and what the filters removed so far.
pub(crate) struct Candidates<'s> {
    live: &'s mut Vec<DeploymentIdx>,
    rejected: &'s mut Vec<(DeploymentIdx, RejectReason)>,
}

impl<'s> Candidates<'s> {
    /// `live` holds the resolved candidates; `rejected` receives what the filters remove.
    pub(crate) fn new(
        live: &'s mut Vec<DeploymentIdx>,
        rejected: &'s mut Vec<(DeploymentIdx, RejectReason)>,
    ) -> Candidates<'s> {
        Candidates { live, rejected }
    }

    pub(crate) fn live(&self) -> &[DeploymentIdx] {
        self.live
    }

    /// Removes every candidate `reject` holds for, recording `reason` for each.
    fn remove_where(&mut self, reason: RejectReason, mut reject: impl FnMut(DeploymentIdx) -> bool) {
        let rejected = &mut *self.rejected;
        let at_most = self.live.len();
        self.live.retain(|&idx| {
            let remove = reject(idx);
            if remove {
                // One allocation per rejecting filter at most, never one per candidate.
                if rejected.len() == rejected.capacity() {
                    rejected.reserve(at_most);
                }
                rejected.push((idx, reason));
            }
            !remove
        });
    }
}

/// One link of the chain.
pub(crate) trait Filter {
    fn apply(&self, candidates: &mut Candidates<'_>);
}

/// Drops every deployment cooling down at `now`.
pub(crate) struct CooldownFilter<'a> {
    pub(crate) state: &'a State,
    pub(crate) now: Instant,
}

impl Filter for CooldownFilter<'_> {
    fn apply(&self, candidates: &mut Candidates<'_>) {
        candidates.remove_where(RejectReason::CoolingDown, |idx| self.state.is_cooling_down(idx, self.now));
    }
}

/// Drops the deployments that already failed for this request.
pub(crate) struct RetrySkipFilter<'a> {
    pub(crate) failed: &'a [DeploymentIdx],
}

impl Filter for RetrySkipFilter<'_> {
    fn apply(&self, candidates: &mut Candidates<'_>) {
        if self.failed.is_empty() {
            return;
        }
        // Fails open: a retry skips what already failed only while something else remains.
        // Trying a failed deployment again beats giving up with "no deployments".
        let untried = candidates.live().iter().filter(|idx| !self.failed.contains(idx)).count();
        if untried == 0 {
            return;
        }
        candidates.remove_where(RejectReason::RetrySkipped, |idx| self.failed.contains(&idx));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Deployment, Failure, Provider, RouterSettings, Snapshot};
    use std::time::Duration;

    fn run(filter: &dyn Filter, input: &[u32]) -> (Vec<u32>, Vec<(u32, RejectReason)>) {
        let mut live: Vec<_> = input.iter().map(|&i| DeploymentIdx(i)).collect();
        let mut rejected = Vec::new();
        filter.apply(&mut Candidates::new(&mut live, &mut rejected));
        (live.iter().map(|d| d.0).collect(), rejected.iter().map(|(d, r)| (d.0, *r)).collect())
    }

    #[test]
    fn cooldown_filter_drops_what_cools_down_now() {
        let dep = |id: &str| Deployment::new(id, "g", Provider::OpenAi, "m", "http://h/v1");
        let settings = RouterSettings { allowed_fails: Some(0), ..RouterSettings::default() };
        let snap = Snapshot::build(vec![dep("a"), dep("b"), dep("c")], settings).unwrap();
        let mut state = State::new(&snap);
        let t0 = Instant::now();
        state.record_failure(&snap, DeploymentIdx(1), Failure::Connect, t0);
        let filter = CooldownFilter { state: &state, now: t0 };
        assert_eq!(run(&filter, &[0, 1, 2]), (vec![0, 2], vec![(1, RejectReason::CoolingDown)]));
        let later = CooldownFilter { state: &state, now: t0 + Duration::from_secs(5) };
        assert_eq!(run(&later, &[0, 1, 2]), (vec![0, 1, 2], vec![]));
    }

    #[test]
    fn retry_skip_drops_failed_deployments_while_another_remains() {
        let failed = [DeploymentIdx(0), DeploymentIdx(2)];
        let filter = RetrySkipFilter { failed: &failed };
        assert_eq!(
            run(&filter, &[0, 1, 2]),
            (vec![1], vec![(0, RejectReason::RetrySkipped), (2, RejectReason::RetrySkipped)])
        );
    }

    #[test]
    fn retry_skip_fails_open_when_everything_failed() {
        let failed = [DeploymentIdx(0), DeploymentIdx(1)];
        let filter = RetrySkipFilter { failed: &failed };
        assert_eq!(run(&filter, &[0, 1]), (vec![0, 1], vec![]));
    }
}
