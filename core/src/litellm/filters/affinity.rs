//! The affinity filter: a conversation stays on the deployment that served it (the pins and
//! their keys are in [`crate::affinity`]), as long as that deployment passes the filters before
//! this one (healthy, not cooling down, not blocked).

use std::time::Instant;

use crate::litellm::candidates::{Candidates, Filter};
use crate::{RejectReason, State};

/// Keeps only the pinned deployment when a live pin names a candidate that is still live.
pub(crate) struct AffinityFilter<'a> {
    pub(crate) state: &'a State,
    pub(crate) now: Instant,
    /// Pin keys to look up, session first.
    pub(crate) keys: [Option<u64>; 2],
}

impl Filter for AffinityFilter<'_> {
    fn apply(&self, candidates: &mut Candidates<'_>) {
        for key in self.keys.into_iter().flatten() {
            let Some(pinned) = self.state.pinned(key, self.now) else { continue };
            let Some(position) = candidates.members().iter().position(|&m| m == pinned) else { continue };
            let live = candidates.live_words()[position / 64] & (1 << (position % 64)) != 0;
            if !live {
                // The pinned deployment was filtered out (down, cooling): the conversation moves.
                continue;
            }
            if candidates.mark_where(|p| p != position) > 0 {
                candidates.remove_marked(RejectReason::AffinityPinned);
            }
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::affinity::{affinity_hash, AffinityKinds, AffinitySettings, Pin};

    mod through_the_pick {
        use super::*;
        use crate::{
            pick, CooldownStarted, Deployment, Event, Failure, PickRequest, Provider, RequestFacts, Rng, RouteKind,
            RouterSettings, Snapshot,
        };

        fn snap(kinds: AffinityKinds) -> Snapshot {
            let dep = |id: &str| Deployment::new(id, "gpt", Provider::OpenAi, "m", "http://127.0.0.1:1/v1");
            let affinity = AffinitySettings { all_groups: kinds, ..AffinitySettings::default() };
            let settings = RouterSettings { affinity, ..RouterSettings::default() };
            Snapshot::build(vec![dep("a"), dep("b"), dep("c")], settings).unwrap()
        }

        fn facts(session: &str) -> RequestFacts {
            let mut f = RequestFacts::new(RouteKind::ChatCompletions, "gpt".into());
            f.affinity.session = Some(affinity_hash(session.as_bytes()));
            f
        }

        const SESSION: AffinityKinds = AffinityKinds { session: true, deployment: false };

        #[test]
        fn a_pinned_conversation_stays_on_its_deployment_while_it_passes_the_filters() {
            let s = snap(SESSION);
            let mut state = State::new(&s);
            let t0 = Instant::now();
            let f = facts("s1");
            let b = s.deployment_by_id("b").unwrap();
            let [key, _] = s.pin_keys(crate::GroupIdx(0), f.affinity);
            state.pin(key.unwrap(), Pin::new(b, t0 + Duration::from_secs(60)), t0);
            for seed in 0..20 {
                let d = pick(&s, &state, &PickRequest::new("gpt", &f), t0, &mut Rng::new(seed)).unwrap();
                assert_eq!(d.deployment, b);
                assert_eq!(d.rejected_for(RejectReason::AffinityPinned), 2);
            }
            // Another session is not pinned.
            let other = facts("s2");
            let d = pick(&s, &state, &PickRequest::new("gpt", &other), t0, &mut Rng::new(1)).unwrap();
            assert_eq!(d.rejected_for(RejectReason::AffinityPinned), 0);
            // b cooling down: the conversation moves (nothing removed for affinity).
            state.apply(&Event::Cooldown(CooldownStarted {
                idx: b,
                until: t0 + Duration::from_secs(5),
                cause: Failure::Connect,
            }));
            let d = pick(&s, &state, &PickRequest::new("gpt", &f), t0, &mut Rng::new(1)).unwrap();
            assert_ne!(d.deployment, b);
            assert_eq!(d.rejected_for(RejectReason::AffinityPinned), 0);
            // An expired pin is no pin.
            let later = t0 + Duration::from_secs(61);
            assert_eq!(state.pinned(key.unwrap(), later), None);
        }

        #[test]
        fn without_the_check_enabled_a_session_id_changes_nothing() {
            let s = snap(AffinityKinds::default());
            assert_eq!(s.pin_keys(crate::GroupIdx(0), facts("s1").affinity), [None, None]);
        }

        #[test]
        fn pins_follow_their_deployment_through_a_reload_and_arrive_as_events() {
            let s = snap(SESSION);
            let t0 = Instant::now();
            let key = s.pin_keys(crate::GroupIdx(0), facts("s1").affinity)[0].unwrap();
            let c = s.deployment_by_id("c").unwrap();
            let mut state = State::new(&s);
            state.apply(&Event::Pin { key, pin: Pin::new(c, t0 + Duration::from_secs(60)), at: t0 });
            assert_eq!(state.pinned(key, t0), Some(c));
            // Reordered: c moves to index 0; b disappears.
            let dep = |id: &str| Deployment::new(id, "gpt", Provider::OpenAi, "m", "http://127.0.0.1:1/v1");
            let new = Snapshot::build(vec![dep("c"), dep("a")], s.settings.clone()).unwrap();
            let moved = state.carry_over(&s, &new);
            assert_eq!(moved.pinned(key, t0), new.deployment_by_id("c"));
        }
    }
}
