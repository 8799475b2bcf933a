//! Property tests of the filter chain: a filter never adds a candidate, the pick never returns
//! a removed one, rejections come in chain order, and the same input gives the same decision.
//! Inputs are random groups (providers, blocked, vision, orders, tags, regions, windows,
//! declined params), settings, request facts, cooldowns, health results and attempts.

use std::time::{Duration, Instant};

use proptest::prelude::*;

use crate::group::bit_positions;
use crate::litellm::candidates::{CandidateScratch, Candidates, Filter};
use crate::litellm::filters::{
    BlockedFilter, ContextWindowFilter, CooldownFilter, ExcludedFilter, HealthFilter, OrderFilter, RegionFilter,
    RetrySkipFilter, RouteCapabilityFilter, TagFilter, UnsupportedParamsFilter, VisionFilter,
};
use crate::{
    pick, CooldownStarted, Deployment, DeploymentIdx, Event, Failure, GroupIdx, Param, PickRequest, Provider,
    RejectReason, RequestFacts, Rng, RouteKind, RouterSettings, Snapshot, State,
};

const TAGS: [&str; 4] = ["x", "y", "default", "eu"];
const REGIONS: [&str; 3] = ["eu-west-1", "us-east-1", "westeurope"];

/// One filter of the chain, applied to candidates (with the tag filter's scratch).
type Step<'a> = Box<dyn Fn(&mut Candidates<'_>, &mut Vec<u64>) + 'a>;

/// One deployment from a few random bits.
fn deployment(i: usize, bits: u64) -> Deployment {
    let mut d = Deployment::new(&format!("d{i}"), "g", Provider::ALL[(bits % 8) as usize], "m", "http://h");
    let b = |n: u32| bits >> n & 1 == 1;
    d.blocked = bits >> 3 & 7 == 0;
    d.supports_vision = [None, Some(true), Some(false), Some(true)][(bits >> 6 & 3) as usize];
    d.order = [None, Some(1), Some(2), None][(bits >> 8 & 3) as usize];
    d.tags = TAGS.iter().enumerate().filter(|(t, _)| b(10 + *t as u32)).map(|(_, t)| t.to_string()).collect();
    d.region_name =
        [None, Some(REGIONS[0]), Some(REGIONS[1]), Some(REGIONS[2])][(bits >> 14 & 3) as usize].map(Into::into);
    d.max_input_tokens = b(16).then_some(bits >> 17 & 0x3ff);
    d.max_tokens = b(27).then_some(bits >> 28 & 0x7ff);
    if b(39) {
        d.unsupported_params.insert(Param::Tools);
    }
    if b(40) {
        d.unsupported_params.insert(Param::ResponseSchema);
    }
    d
}

fn settings(bits: u8) -> RouterSettings {
    let mut policy = crate::AllowedFailsPolicy::default();
    policy.set("RateLimitErrorAllowedFails", 1);
    RouterSettings {
        enable_health_check_routing: bits & 1 != 0,
        allowed_fails_policy: (bits & 2 != 0).then_some(policy),
        enable_pre_call_checks: bits & 4 != 0,
        enable_tag_filtering: bits & 8 != 0,
        tag_filtering_match_any: bits & 16 == 0,
        routing_strategy: crate::RoutingStrategy::ALL[(bits >> 5) as usize % 5],
        ..RouterSettings::default()
    }
}

fn facts(bits: u64) -> RequestFacts {
    let mut f =
        RequestFacts::new(if bits & 1 != 0 { RouteKind::Embeddings } else { RouteKind::ChatCompletions }, "g".into());
    f.has_image = bits & 2 != 0;
    f.estimated_prompt_tokens = bits >> 2 & 0x3ff;
    f.max_tokens = (bits & 1 << 12 != 0).then_some(bits >> 13 & 0x1ff);
    if bits & 1 << 22 != 0 {
        f.params.insert(Param::Tools);
    }
    f.allowed_model_region = [None, Some("eu"), Some("us"), None][(bits >> 23 & 3) as usize].map(Into::into);
    let prefixes = ["", "!", "&"];
    for (t, tag) in TAGS.iter().enumerate() {
        if bits >> (25 + t) & 1 != 0 {
            f.tags.push(format!("{}{tag}", prefixes[(bits >> (29 + 2 * t)) as usize % 3]));
        }
    }
    f
}

/// A group with its shard state and the attempt's ids.
struct World {
    snap: Snapshot,
    state: State,
    now: Instant,
    facts: RequestFacts,
    failed: Vec<DeploymentIdx>,
    excluded: Vec<DeploymentIdx>,
    order: Option<u32>,
}

fn world(members: &[u64], settings_bits: u8, facts_bits: u64, state_bits: &[u8], order: u8) -> World {
    let deployments = members.iter().enumerate().map(|(i, &b)| deployment(i, b)).collect();
    let snap = Snapshot::build(deployments, settings(settings_bits)).unwrap();
    let mut state = State::new(&snap);
    let now = Instant::now();
    let (mut failed, mut excluded) = (Vec::new(), Vec::new());
    for (i, &s) in state_bits.iter().enumerate().take(members.len()) {
        let idx = DeploymentIdx(i as u32);
        if s & 1 != 0 {
            state.apply_cooldown(CooldownStarted {
                idx,
                until: now + Duration::from_secs(5),
                cause: Failure::Status(429),
            });
        }
        if s & 2 != 0 {
            state.apply(&Event::Health { idx, healthy: false, checked_at: now });
        }
        if s & 4 != 0 {
            failed.push(idx);
        }
        if s & 24 == 24 {
            excluded.push(idx);
        }
    }
    let order = [None, None, Some(1), Some(2)][order as usize % 4];
    World { snap, state, now, facts: facts(facts_bits), failed, excluded, order }
}

fn live_positions(c: &Candidates<'_>) -> Vec<usize> {
    c.live_words().iter().enumerate().flat_map(|(b, &w)| bit_positions(w, b * 64)).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn a_filter_never_adds_a_candidate(
        members in prop::collection::vec(any::<u64>(), 1..140),
        settings_bits in any::<u8>(),
        facts_bits in any::<u64>(),
        state_bits in prop::collection::vec(any::<u8>(), 140),
        order in any::<u8>(),
        removed_before in prop::collection::vec(any::<usize>(), 0..20),
    ) {
        let w = world(&members, settings_bits, facts_bits, &state_bits, order);
        let snap = &w.snap;
        let s = &snap.settings;
        let mut scratch = CandidateScratch::default();
        let mut tag_words = Vec::new();
        let mut c = Candidates::new(snap, GroupIdx(0), &mut scratch);
        // Some candidates already gone, as after earlier filters.
        c.mark_positions(removed_before.iter().map(|p| p % members.len()));
        c.remove_marked(RejectReason::Excluded);
        let steps: Vec<Step<'_>> = vec![
            Box::new(|c, _| RouteCapabilityFilter { snap, route: w.facts.route }.apply(c)),
            Box::new(|c, _| HealthFilter { state: &w.state, now: w.now, staleness: s.health_check_staleness_threshold }.apply(c)),
            Box::new(|c, _| CooldownFilter { state: &w.state, now: w.now, fail_open: s.allowed_fails_policy.is_some() }.apply(c)),
            Box::new(|c, _| BlockedFilter { snap }.apply(c)),
            Box::new(|c, _| ContextWindowFilter { snap, facts: &w.facts }.apply(c)),
            Box::new(|c, _| RegionFilter { snap, facts: &w.facts }.apply(c)),
            Box::new(|c, _| UnsupportedParamsFilter { snap, facts: &w.facts }.apply(c)),
            Box::new(|c, t| TagFilter { snap, tags: &w.facts.tags, match_any: s.tag_filtering_match_any }.apply(c, t)),
            Box::new(|c, _| VisionFilter { snap, has_image: w.facts.has_image }.apply(c)),
            Box::new(|c, _| OrderFilter { snap, target: w.order }.apply(c)),
            Box::new(|c, _| ExcludedFilter { snap, excluded: &w.excluded }.apply(c)),
            Box::new(|c, _| RetrySkipFilter { snap, failed: &w.failed }.apply(c)),
        ];
        for step in &steps {
            let before = live_positions(&c);
            let rejected_before = c.rejected().len();
            step(&mut c, &mut tag_words);
            let after = live_positions(&c);
            prop_assert!(after.iter().all(|p| before.contains(p)), "added: {before:?} -> {after:?}");
            prop_assert_eq!(after.len(), c.len());
            // Exactly what went is newly rejected.
            prop_assert_eq!(c.rejected().len() - rejected_before, before.len() - after.len());
        }
    }

    #[test]
    fn the_pick_never_returns_a_removed_candidate_and_repeats_itself(
        members in prop::collection::vec(any::<u64>(), 1..140),
        settings_bits in any::<u8>(),
        facts_bits in any::<u64>(),
        state_bits in prop::collection::vec(any::<u8>(), 140),
        order in any::<u8>(),
        seed in any::<u64>(),
    ) {
        let w = world(&members, settings_bits, facts_bits, &state_bits, order);
        let req = PickRequest { failed: &w.failed, excluded: &w.excluded, order: w.order, ..PickRequest::new("g", &w.facts) };
        let first = pick(&w.snap, &w.state, &req, w.now, &mut Rng::new(seed));
        let again = pick(&w.snap, &w.state, &req, w.now, &mut Rng::new(seed));
        prop_assert_eq!(&first, &again);
        if let Ok(d) = first {
            prop_assert!(d.rejected.iter().all(|(i, _)| *i != d.deployment));
            prop_assert!(!w.excluded.contains(&d.deployment), "an excluded id was picked");
            let mut ids: Vec<_> = d.rejected.iter().map(|(i, _)| *i).collect();
            ids.sort();
            ids.dedup();
            prop_assert_eq!(ids.len(), d.rejected.len(), "a candidate removed twice");
            prop_assert!(d.rejected.len() < members.len());
            // Chain order: reasons never go back.
            prop_assert!(d.rejected.windows(2).all(|p| p[0].1 as usize <= p[1].1 as usize));
        }
    }
}
