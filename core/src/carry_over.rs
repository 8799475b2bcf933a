//! Carrying a shard's state over a config reload: what is known about a deployment follows it by
//! id into the new snapshot, whatever its new index; new deployments start with nothing known,
//! and deployments that are gone are forgotten.
//!
//! An endpoint status an operator set follows its deployment too, unless the new config changes
//! that deployment's configured status: the newer config is the newer word.

use crate::affinity::Pin;
use crate::cooldown_ends::CooldownEnds;
use crate::deployment::DeploymentIdx;
use crate::snapshot::Snapshot;
use crate::state::configured_status;
use crate::state::State;

impl State {
    /// A state for `new` that keeps everything this state (built for `old`) knows about each
    /// deployment whose id is in both: cooldowns, failure counters, requests in flight, latency
    /// averages, this minute's usage, the last health check, the endpoint status an operator
    /// set (dropped when the new config's status for it differs from the old config's). The
    /// usage minutes keep their origin.
    pub fn carry_over(&self, old: &Snapshot, new: &Snapshot) -> State {
        let mut next = State::new(new);
        next.minutes = self.minutes;
        next.spend = self.spend.clone();
        next.providers = self.providers.clone();
        for (i, d) in new.deployments.iter().enumerate() {
            let Some(was) = old.deployment_by_id(&d.id).map(|idx| idx.get()) else {
                continue;
            };
            if configured_status(&old.deployments[was]) == configured_status(d) {
                if let (Some(set), Some(slot)) = (self.endpoint_status.get(was), next.endpoint_status.get_mut(i)) {
                    slot.clone_from(set);
                }
            }
            // A state built for another snapshot than `old` may be shorter: skip what it lacks.
            if let Some(ds) = self.deployments.get(was) {
                next.deployments[i] = ds.clone();
            }
            copy(&self.in_flight, &mut next.in_flight, was, i);
            copy(&self.latency, &mut next.latency, was, i);
            copy(&self.usage, &mut next.usage, was, i);
            copy(&self.health, &mut next.health, was, i);
        }
        for (key, pin) in self.pins.iter() {
            let moved = old.deployments.get(pin.deployment.get()).and_then(|d| new.deployment_by_id(&d.id));
            if let Some(idx) = moved {
                next.pin(key, Pin { deployment: idx, ..pin }, pin.until);
            }
        }
        next.ends = cooldown_ends_for(new, &next);
        next
    }
}

fn copy<T: Copy>(from: &[T], to: &mut [T], was: usize, now: usize) {
    if let (Some(v), Some(slot)) = (from.get(was), to.get_mut(now)) {
        *slot = *v;
    }
}

/// The pick's cooldown index for `state`'s cooldowns, laid out for `snap`.
fn cooldown_ends_for(snap: &Snapshot, state: &State) -> CooldownEnds {
    let mut ends = CooldownEnds::new(snap);
    let all_ends = || state.deployments.iter().map(|ds| ds.cooldown.map(|c| c.until));
    for (i, ds) in state.deployments.iter().enumerate() {
        if let Some(c) = ds.cooldown {
            ends.set(DeploymentIdx(i as u32), c.until, all_ends);
        }
    }
    ends
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use crate::{
        pick, translate, Deployment, DeploymentIdx, Failure, LatencySample, PickRequest, Provider, RejectReason, Rng,
        RouterSettings, Usage,
    };

    use super::*;

    fn dep(id: &str) -> Deployment {
        Deployment::new(id, "g", Provider::OpenAi, "m", "http://h")
    }

    fn snap(ids: &[&str]) -> Snapshot {
        let settings = RouterSettings { allowed_fails: Some(0), ..RouterSettings::default() };
        Snapshot::build(ids.iter().map(|id| dep(id)).collect(), settings).unwrap()
    }

    fn idx(snap: &Snapshot, id: &str) -> DeploymentIdx {
        snap.deployment_by_id(id).unwrap()
    }

    #[test]
    fn translate_follows_ids() {
        let old = snap(&["a", "b", "x"]);
        let new = snap(&["c", "x", "a"]);
        assert_eq!(translate(&old, &new, idx(&old, "x")), Some(DeploymentIdx(1)));
        assert_eq!(translate(&old, &new, idx(&old, "a")), Some(DeploymentIdx(2)));
        assert_eq!(translate(&old, &new, idx(&old, "b")), None);
        assert_eq!(translate(&old, &new, DeploymentIdx(9)), None);
    }

    #[test]
    fn a_cooldown_survives_a_reload_that_reorders_adds_and_removes() {
        let old = snap(&["a", "b", "x"]);
        let mut state = State::new(&old);
        let t0 = Instant::now();
        state.record_failure(&old, idx(&old, "x"), Failure::Connect, t0).unwrap();
        state.request_started(idx(&old, "a"));
        state.record_latency(
            idx(&old, "a"),
            LatencySample { stream: false, total: Duration::from_millis(40), first_token: None, output_tokens: None },
        );
        state.record_usage(idx(&old, "a"), t0, 1, 300);
        state.record_health(idx(&old, "b"), false, t0);

        let new = snap(&["new", "x", "a"]);
        let next = state.carry_over(&old, &new);
        let (x, a) = (idx(&new, "x"), idx(&new, "a"));
        assert_eq!(next.cooldown(x, t0), state.cooldown(idx(&old, "x"), t0));
        assert!(next.is_cooling_down(x, t0));
        assert!(!next.is_cooling_down(idx(&new, "new"), t0));
        assert_eq!(next.deployment(x), state.deployment(idx(&old, "x")));
        assert_eq!(next.in_flight(a), 1);
        assert_eq!(next.latency(a).and_then(|l| l.total()), Some(Duration::from_millis(40)));
        assert_eq!(next.usage(a, t0), Usage { requests: 1, tokens: 300 });
        assert_eq!(next.health(idx(&new, "new")), None);

        // The pick's cooldown index moved with it: the pick never chooses x.
        let mut rng = Rng::new(5);
        for _ in 0..50 {
            let req = PickRequest {
                model: "g",
                failed: &[],
                stream: false,
                input_tokens: 0,
                excluded: &[],
                order: None,
                facts: &crate::NO_FACTS,
            };
            let d = pick(&new, &next, &req, t0, &mut rng).unwrap();
            assert_ne!(d.deployment, x);
            assert!(d.rejected.contains(&(x, RejectReason::CoolingDown)));
        }
    }

    #[test]
    fn a_removed_deployment_is_forgotten() {
        let old = snap(&["a", "x"]);
        let mut state = State::new(&old);
        let t0 = Instant::now();
        state.record_failure(&old, idx(&old, "x"), Failure::Connect, t0).unwrap();
        let without = snap(&["a"]);
        let next = state.carry_over(&old, &without);
        assert_eq!(next, State { minutes: state.minutes, ..State::new(&without) });
        // And coming back later it starts afresh.
        let back = next.carry_over(&without, &old);
        assert!(!back.is_cooling_down(idx(&old, "x"), t0));
    }

    fn policy_dep(id: &str, status: Option<&str>) -> Deployment {
        let mut d = dep(id);
        d.policy = Some(Box::new(crate::policy::PolicyAttrs { status: status.map(Box::from), ..Default::default() }));
        d
    }

    fn policy_snap(deps: Vec<Deployment>) -> Snapshot {
        Snapshot::build(deps, RouterSettings::default()).unwrap()
    }

    #[test]
    fn an_operator_set_status_follows_its_deployment_by_id() {
        let old = policy_snap(vec![policy_dep("a", None), policy_dep("x", Some("up")), policy_dep("gone", None)]);
        let mut state = State::new(&old);
        state.set_endpoint_status(idx(&old, "x"), "maintenance".into());
        state.set_endpoint_status(idx(&old, "a"), "down".into());
        state.set_endpoint_status(idx(&old, "gone"), "down".into());

        // Reordered, one added, one removed; `a` now says `up` outright, which it meant before.
        let new = policy_snap(vec![policy_dep("new", None), policy_dep("x", Some("up")), policy_dep("a", Some("up"))]);
        let next = state.carry_over(&old, &new);
        assert_eq!(next.endpoint_status(idx(&new, "x")), Some("maintenance"));
        assert_eq!(next.effective_endpoint_status(&new, idx(&new, "x")), Some("maintenance"));
        assert_eq!(next.endpoint_status(idx(&new, "a")), Some("down"));
        assert_eq!(next.endpoint_status(idx(&new, "new")), None);
    }

    #[test]
    fn a_reload_that_changes_the_configured_status_drops_the_operators() {
        let old = policy_snap(vec![policy_dep("x", Some("up")), policy_dep("y", Some("up"))]);
        let mut state = State::new(&old);
        state.set_endpoint_status(idx(&old, "x"), "maintenance".into());
        state.set_endpoint_status(idx(&old, "y"), "maintenance".into());

        let new = policy_snap(vec![policy_dep("x", Some("degraded")), dep("y")]);
        let next = state.carry_over(&old, &new);
        assert_eq!(next.endpoint_status(idx(&new, "x")), None);
        assert_eq!(next.effective_endpoint_status(&new, idx(&new, "x")), Some("degraded"));
        // No policy attributes any more: no status to keep either.
        assert_eq!(next.endpoint_status(idx(&new, "y")), None);
        assert_eq!(next.effective_endpoint_status(&new, idx(&new, "y")), None);
    }
}
