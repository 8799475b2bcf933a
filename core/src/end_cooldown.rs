//! Ending a cooldown early, at an admin's word (`POST /admin/deployments/{id}/cooldown/end`):
//! the shard that serves the call ends it in its own state and broadcasts
//! [`crate::Event::CooldownEnded`]; every other shard (and instance) ends it too.

use std::time::Instant;

use crate::deployment::DeploymentIdx;
use crate::state::State;

impl State {
    /// Ends `idx`'s cooldown at once, in both places it is kept: the pick uses the deployment
    /// again from the next request. Returns whether it was cooling down at `now`. Its failure
    /// counts stay: under the failure-rate rule, a deployment that keeps failing this minute
    /// cools down again on its next failure.
    pub fn end_cooldown(&mut self, idx: DeploymentIdx, now: Instant) -> bool {
        let Some(ds) = self.deployments.get_mut(idx.get()) else { return false };
        let was_cooling_down = ds.cooldown_at(now).is_some();
        if ds.cooldown.take().is_some() {
            self.ends.clear(idx);
        }
        was_cooling_down
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::{
        pick, CooldownStarted, Deployment, Event, Failure, PickRequest, Provider, RejectReason, Rng, RouterSettings,
        Snapshot,
    };

    use super::*;

    const A: DeploymentIdx = DeploymentIdx(0);
    const B: DeploymentIdx = DeploymentIdx(1);

    /// Group `g` = {a, b}; one failure cools a deployment down for 60 s.
    fn snap() -> Snapshot {
        let dep = |id: &str| Deployment::new(id, "g", Provider::OpenAi, "m", "http://h");
        let settings = RouterSettings { allowed_fails: Some(0), ..RouterSettings::default() };
        Snapshot::build(vec![dep("a"), dep("b")], settings).unwrap()
    }

    /// The deployments 40 picks at `now` choose, and whether `a` was ever dropped as cooling down.
    fn picks(snap: &Snapshot, state: &State, now: Instant) -> (Vec<DeploymentIdx>, bool) {
        let mut rng = Rng::new(11);
        let req = PickRequest {
            model: "g",
            failed: &[],
            stream: false,
            input_tokens: 0,
            excluded: &[],
            order: None,
            facts: &crate::NO_FACTS,
        };
        let (mut chosen, mut a_cooling) = (Vec::new(), false);
        for _ in 0..40 {
            let d = pick(snap, state, &req, now, &mut rng).unwrap();
            a_cooling |= d.rejected.contains(&(A, RejectReason::CoolingDown));
            chosen.push(d.deployment);
        }
        (chosen, a_cooling)
    }

    #[test]
    fn the_pick_uses_a_deployment_again_as_soon_as_its_cooldown_ends() {
        let snap = snap();
        let mut state = State::new(&snap);
        let t0 = Instant::now();
        state.record_failure(&snap, A, Failure::Status(500), t0).unwrap();
        let now = t0 + Duration::from_secs(1);
        let (chosen, a_cooling) = picks(&snap, &state, now);
        assert!(a_cooling && chosen.iter().all(|&d| d == B), "a cools down: every pick is b");

        assert!(state.end_cooldown(A, now));
        assert!(!state.is_cooling_down(A, now));
        assert_eq!(state.cooldown_remaining(A, now), None);
        let (chosen, a_cooling) = picks(&snap, &state, now);
        assert!(!a_cooling, "nothing drops a for a cooldown any more");
        assert!(chosen.contains(&A) && chosen.contains(&B), "the shuffle picks both: {chosen:?}");
        // Ending it again, or one that never started, says it was not cooling down.
        assert!(!state.end_cooldown(A, now));
        assert!(!state.end_cooldown(B, now));
        assert!(!state.end_cooldown(DeploymentIdx(9), now));
    }

    #[test]
    fn an_ended_cooldown_can_start_again_and_others_are_untouched() {
        let snap = snap();
        let mut state = State::new(&snap);
        let t0 = Instant::now();
        state.record_failure(&snap, A, Failure::Connect, t0).unwrap();
        state.record_failure(&snap, B, Failure::Timeout, t0).unwrap();
        assert!(state.end_cooldown(A, t0));
        assert!(state.is_cooling_down(B, t0), "only a's cooldown ends");
        // A new failure cools it down again, for a whole cooldown from then.
        let later = t0 + Duration::from_secs(2);
        let started = state.record_failure(&snap, A, Failure::Status(503), later).unwrap();
        assert_eq!(state.cooldown_remaining(A, later), Some(started.until - later));
        // And the pick reads it again: with b's cooldown ended, every pick is b.
        assert!(state.end_cooldown(B, later));
        let (chosen, a_cooling) = picks(&snap, &state, later);
        assert!(a_cooling && chosen.iter().all(|&d| d == B), "{chosen:?}");
    }

    #[test]
    fn an_expired_cooldown_was_not_cooling_down() {
        let snap = snap();
        let mut state = State::new(&snap);
        let t0 = Instant::now();
        let started = state.record_failure(&snap, A, Failure::Status(500), t0).unwrap();
        assert!(!state.end_cooldown(A, started.until));
        assert!(!state.is_cooling_down(A, t0), "and it is forgotten");
    }

    #[test]
    fn the_event_ends_it_on_the_shard_that_applies_it() {
        let snap = snap();
        let t0 = Instant::now();
        let started = CooldownStarted { idx: A, until: t0 + Duration::from_secs(60), cause: Failure::Status(429) };
        let mut other = State::new(&snap);
        other.apply(&Event::Cooldown(started));
        assert!(other.is_cooling_down(A, t0));
        other.apply(&Event::CooldownEnded { idx: A });
        assert_eq!(other.deployment(A), State::new(&snap).deployment(A), "nothing of the cooldown is left");
        assert!(!picks(&snap, &other, t0).1);
        // An index outside the snapshot changes nothing; the event follows its deployment.
        let before = other.clone();
        other.apply(&Event::CooldownEnded { idx: DeploymentIdx(7) });
        assert_eq!(other, before);
        assert_eq!(Event::CooldownEnded { idx: A }.for_deployment(B).deployment(), B);
    }
}
