//! The health filter (`enable_health_check_routing`): skips the deployments whose recent
//! health check failed ([`crate::HealthCheck`]).

use std::time::{Duration, Instant};

use crate::litellm::candidates::{Candidates, Filter};
use crate::{RejectReason, State};

/// Drops every deployment whose last health check failed less than `staleness` ago. Runs
/// before the cooldown filter, only when `enable_health_check_routing` is on.
pub(crate) struct HealthFilter<'a> {
    pub(crate) state: &'a State,
    pub(crate) now: Instant,
    pub(crate) staleness: Duration,
}

impl Filter for HealthFilter<'_> {
    fn apply(&self, candidates: &mut Candidates<'_>) {
        let members = candidates.members();
        let health = &self.state.health;
        let unhealthy = candidates.mark_where(|pos| {
            health
                .get(members[pos].get())
                .and_then(|h| h.as_ref())
                .is_some_and(|h| h.is_fresh_failure(self.now, self.staleness))
        });
        // Fails open: when every candidate looks unhealthy, the health checks are more likely
        // wrong (or the probe's own network is down) than every deployment at once; trying one
        // beats refusing the request with "no deployments".
        if unhealthy == candidates.len() {
            return;
        }
        candidates.remove_marked(RejectReason::Unhealthy);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::litellm::candidates::CandidateScratch;
    use crate::{DeploymentIdx, Event, GroupIdx, RouterSettings, Snapshot};

    fn snap(n: usize) -> Snapshot {
        let dep = |i: usize| crate::Deployment::new(&format!("d{i}"), "g", crate::Provider::OpenAi, "m", "http://h");
        Snapshot::build((0..n).map(dep).collect(), RouterSettings::default()).unwrap()
    }

    fn check(state: &mut State, i: u32, healthy: bool, checked_at: Instant) {
        state.apply(&Event::Health { idx: DeploymentIdx(i), healthy, checked_at });
    }

    /// The live positions and rejections after the health filter over group 0.
    fn run(snap: &Snapshot, state: &State, now: Instant) -> (usize, Vec<(u32, RejectReason)>) {
        let mut scratch = CandidateScratch::default();
        let mut c = Candidates::new(snap, GroupIdx(0), &mut scratch);
        HealthFilter { state, now, staleness: Duration::from_secs(60) }.apply(&mut c);
        (c.len(), c.rejected().iter().map(|(d, r)| (d.0, *r)).collect())
    }

    #[test]
    fn a_fresh_failed_check_removes_the_deployment() {
        let snap = snap(3);
        let mut state = State::new(&snap);
        let t0 = Instant::now();
        check(&mut state, 0, true, t0);
        check(&mut state, 1, false, t0);
        assert_eq!(run(&snap, &state, t0 + Duration::from_secs(10)), (2, vec![(1, RejectReason::Unhealthy)]));
        // Checked "after" now (another shard's clock): still fresh.
        assert_eq!(run(&snap, &state, t0 - Duration::from_secs(1)).0, 2);
    }

    #[test]
    fn a_stale_result_is_ignored() {
        let snap = snap(2);
        let mut state = State::new(&snap);
        let t0 = Instant::now();
        check(&mut state, 1, false, t0);
        assert_eq!(run(&snap, &state, t0 + Duration::from_secs(59)).0, 1);
        assert_eq!(run(&snap, &state, t0 + Duration::from_secs(60)), (2, vec![]));
    }

    #[test]
    fn a_later_healthy_check_wins_and_an_older_one_does_not() {
        let snap = snap(2);
        let mut state = State::new(&snap);
        let t0 = Instant::now();
        check(&mut state, 1, false, t0 + Duration::from_secs(5));
        check(&mut state, 1, true, t0);
        assert_eq!(run(&snap, &state, t0 + Duration::from_secs(6)).0, 1);
        check(&mut state, 1, true, t0 + Duration::from_secs(6));
        assert_eq!(run(&snap, &state, t0 + Duration::from_secs(6)).0, 2);
    }

    #[test]
    fn fails_open_when_every_candidate_is_unhealthy() {
        let snap = snap(2);
        let mut state = State::new(&snap);
        let t0 = Instant::now();
        check(&mut state, 0, false, t0);
        check(&mut state, 1, false, t0);
        assert_eq!(run(&snap, &state, t0), (2, vec![]));
    }
}
