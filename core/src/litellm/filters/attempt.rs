//! The filters of the attempt itself: the deployments cooling down now, those the attempt
//! excludes outright, and those that already failed for this request.

use std::time::Instant;

use crate::litellm::candidates::{Candidates, Filter};
use crate::{DeploymentIdx, RejectReason, Snapshot, State};

/// Drops every deployment cooling down at `now`.
pub(crate) struct CooldownFilter<'a> {
    pub(crate) state: &'a State,
    pub(crate) now: Instant,
    /// Health checks drive routing and an `allowed_fails_policy` is set: when the cooldowns
    /// would leave nothing, they are ignored for this request (LiteLLM's rule).
    pub(crate) fail_open: bool,
}

impl Filter for CooldownFilter<'_> {
    fn apply(&self, candidates: &mut Candidates<'_>) {
        let ends = self.state.cooldown_ends();
        let now = ends.code_at(self.now);
        let layout = *candidates.layout();
        let cooling = candidates.mark_blocks(|block| ends.cooling(&layout, block, now));
        // Fails open only when configured so (see `fail_open`): the health checks then say
        // which deployments are up, and they already ran.
        if self.fail_open && cooling == candidates.len() {
            return;
        }
        candidates.remove_marked(RejectReason::CoolingDown);
    }
}

/// Drops the deployments the attempt excludes outright (weighted failover). Never fails open:
/// an excluded id is never picked.
pub(crate) struct ExcludedFilter<'a> {
    pub(crate) snap: &'a Snapshot,
    pub(crate) excluded: &'a [DeploymentIdx],
}

impl Filter for ExcludedFilter<'_> {
    fn apply(&self, candidates: &mut Candidates<'_>) {
        if self.excluded.is_empty() {
            return;
        }
        let group = candidates.group();
        candidates.mark_positions(self.excluded.iter().filter_map(|&f| self.snap.position_in(f, group)));
        candidates.remove_marked(RejectReason::Excluded);
    }
}

/// Drops the deployments that already failed for this request.
pub(crate) struct RetrySkipFilter<'a> {
    pub(crate) snap: &'a Snapshot,
    pub(crate) failed: &'a [DeploymentIdx],
}

impl Filter for RetrySkipFilter<'_> {
    fn apply(&self, candidates: &mut Candidates<'_>) {
        if self.failed.is_empty() {
            return;
        }
        let group = candidates.group();
        let failed_live =
            candidates.mark_positions(self.failed.iter().filter_map(|&f| self.snap.position_in(f, group)));
        // Fails open: a retry skips what already failed only while something else remains.
        // Trying a failed deployment again beats giving up with "no deployments".
        if failed_live == candidates.len() {
            return;
        }
        candidates.remove_marked(RejectReason::RetrySkipped);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::group::bit_positions;
    use crate::litellm::candidates::tests::snap;
    use crate::litellm::candidates::CandidateScratch;
    use crate::{Failure, GroupIdx, Snapshot};
    use std::time::Duration;

    /// Runs `filters` over all of group 0; returns the live positions and the rejections.
    fn run(snap: &Snapshot, filters: &[&dyn Filter]) -> (Vec<usize>, Vec<(u32, RejectReason)>) {
        let mut scratch = CandidateScratch::default();
        let mut c = Candidates::new(snap, GroupIdx(0), &mut scratch);
        for f in filters {
            f.apply(&mut c);
        }
        let live: Vec<usize> = c.live_words().iter().enumerate().flat_map(|(b, &w)| bit_positions(w, b * 64)).collect();
        assert_eq!(live.len(), c.len());
        (live, c.rejected().iter().map(|(d, r)| (d.0, *r)).collect())
    }

    #[test]
    fn cooldown_filter_drops_what_cools_down_now() {
        let snap = snap(3);
        let mut state = State::new(&snap);
        let t0 = Instant::now();
        state.record_failure(&snap, DeploymentIdx(1), Failure::Connect, t0);
        let filter = CooldownFilter { state: &state, now: t0, fail_open: false };
        assert_eq!(run(&snap, &[&filter]), (vec![0, 2], vec![(1, RejectReason::CoolingDown)]));
        let later = CooldownFilter { state: &state, now: t0 + Duration::from_secs(5), fail_open: false };
        assert_eq!(run(&snap, &[&later]), (vec![0, 1, 2], vec![]));
        let before = CooldownFilter { state: &state, now: t0 - Duration::from_secs(5), fail_open: false };
        assert_eq!(run(&snap, &[&before]).1, [(1, RejectReason::CoolingDown)]);
    }

    #[test]
    fn cooldown_filter_reads_every_block_and_the_last_partial_one() {
        let snap = snap(200);
        let mut state = State::new(&snap);
        let t0 = Instant::now();
        let cooling = [0, 63, 64, 127, 128, 199];
        for &i in &cooling {
            state.record_failure(&snap, DeploymentIdx(i), Failure::Connect, t0);
        }
        let (live, rejected) = run(&snap, &[&CooldownFilter { state: &state, now: t0, fail_open: false }]);
        assert_eq!(live.len(), 194);
        assert!(cooling.iter().all(|&c| !live.contains(&(c as usize))));
        assert_eq!(rejected, cooling.map(|c| (c, RejectReason::CoolingDown)));
    }

    #[test]
    fn cooldown_filter_keeps_the_order_of_ends_across_an_earlier_epoch() {
        // A long cooldown first, then one ending a week earlier (from another shard): the
        // epoch moves back and both still compare exactly.
        let snap = snap(2);
        let mut state = State::new(&snap);
        let t0 = Instant::now() + Duration::from_secs(30 * 24 * 3600);
        let week = Duration::from_secs(7 * 24 * 3600);
        let cause = Failure::Status(429);
        state.apply_cooldown(crate::CooldownStarted { idx: DeploymentIdx(0), until: t0 + week, cause });
        state.apply_cooldown(crate::CooldownStarted { idx: DeploymentIdx(1), until: t0, cause });
        let at = |now| run(&snap, &[&CooldownFilter { state: &state, now, fail_open: false }]).0;
        assert_eq!(at(t0 - Duration::from_nanos(1)), Vec::<usize>::new());
        assert_eq!(at(t0), [1]);
        assert_eq!(at(t0 + week - Duration::from_nanos(1)), [1]);
        assert_eq!(at(t0 + week), [0, 1]);
    }

    #[test]
    fn retry_skip_drops_failed_deployments_while_another_remains() {
        let snap = snap(3);
        let failed = [DeploymentIdx(2), DeploymentIdx(0), DeploymentIdx(2), DeploymentIdx(9)];
        let filter = RetrySkipFilter { snap: &snap, failed: &failed };
        // Rejections in member order, each once; an index outside the group is ignored.
        assert_eq!(
            run(&snap, &[&filter]),
            (vec![1], vec![(0, RejectReason::RetrySkipped), (2, RejectReason::RetrySkipped)])
        );
    }

    #[test]
    fn retry_skip_fails_open_when_everything_failed() {
        let snap = snap(2);
        let failed = [DeploymentIdx(0), DeploymentIdx(1)];
        let filter = RetrySkipFilter { snap: &snap, failed: &failed };
        assert_eq!(run(&snap, &[&filter]), (vec![0, 1], vec![]));
    }

    #[test]
    fn filters_see_only_what_earlier_filters_left_and_report_in_chain_order() {
        let snap = snap(3);
        let mut state = State::new(&snap);
        let t0 = Instant::now();
        state.record_failure(&snap, DeploymentIdx(2), Failure::Connect, t0);
        let failed = [DeploymentIdx(2), DeploymentIdx(0)];
        let cooldown = CooldownFilter { state: &state, now: t0, fail_open: false };
        let retry = RetrySkipFilter { snap: &snap, failed: &failed };
        assert_eq!(
            run(&snap, &[&cooldown, &retry]),
            (vec![1], vec![(2, RejectReason::CoolingDown), (0, RejectReason::RetrySkipped)])
        );
    }
}
