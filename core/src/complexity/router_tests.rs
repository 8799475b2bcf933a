//! The tier pick and the health gate: for each reason a group cannot serve, the gate takes a
//! peer of the same tier; it fails open when there is nothing better, and a failover is never
//! pinned.

use std::time::{Duration, Instant};

use super::*;
use crate::{Deployment, Failure, Pin, Provider, ProviderBudget, RouteKind, RouterSettings, RoutingStrategy};

fn dep(id: &str, group: &str) -> Deployment {
    Deployment::new(id, group, Provider::OpenAi, "m", "http://127.0.0.1:1/v1")
}

/// Groups `dead` = {d1}, `live` = {l1}, `other` = {o1} (an OpenRouter deployment).
fn snap_with(settings: RouterSettings, edit: impl Fn(&mut Vec<Deployment>)) -> Snapshot {
    let mut deps = vec![dep("d1", "dead"), dep("l1", "live"), dep("o1", "other")];
    deps[2].provider = Provider::OpenRouter;
    edit(&mut deps);
    Snapshot::build(deps, RouterSettings { allowed_fails: Some(0), ..settings }).unwrap()
}

fn snap() -> Snapshot {
    snap_with(RouterSettings::default(), |_| {})
}

fn config(tiers: [&[&str]; 4]) -> RouterConfig {
    RouterConfig {
        name: "auto".into(),
        tiers: tiers.map(|t| t.iter().map(|g| g.to_string()).collect()),
        default_model: None,
        selection: TierSelection::Shuffle,
        session_affinity: true,
        session_ttl: Duration::from_secs(3600),
        classifier: ClassifierSettings::default(),
        llm: None,
        fallback: ClassifierFallback::Heuristic,
    }
}

const POOL: &[&str] = &["dead", "live"];

fn router(snap: &Snapshot) -> AutoRouter {
    AutoRouter::new(config([POOL, POOL, POOL, POOL]), snap).unwrap()
}

fn verdict(tier: Tier) -> Verdict {
    Verdict { tier: Some(tier), cause: Cause::HeuristicScorer, score: Some(-0.1), signals: Signals::EMPTY }
}

fn facts() -> RequestFacts {
    RequestFacts::new(RouteKind::ChatCompletions, "auto".into())
}

fn g(snap: &Snapshot, name: &str) -> GroupIdx {
    snap.group_by_name(name).unwrap()
}

/// Places `n` fresh requests; the groups they went to, and the last decision.
fn place_many(snap: &Snapshot, state: &State, facts: &RequestFacts, n: usize) -> (Vec<GroupIdx>, Routed) {
    let r = router(snap);
    let gate = Gate { snap, state, facts, now: Instant::now() };
    let (mut rng, mut scratch) = (Rng::new(7), PickScratch::new());
    let mut last = None;
    let groups = (0..n)
        .map(|_| {
            let routed = r.place(&gate, verdict(Tier::Simple), true, &mut rng, &mut scratch);
            let group = routed.group;
            last = Some(routed);
            group
        })
        .collect();
    (groups, last.unwrap())
}

/// Every request lands on `live`; those that drew `dead` say so.
fn assert_all_fail_over(snap: &Snapshot, state: &State, facts: &RequestFacts) {
    let r = router(snap);
    let gate = Gate { snap, state, facts, now: Instant::now() };
    let (mut rng, mut scratch) = (Rng::new(7), PickScratch::new());
    let mut failovers = 0;
    for _ in 0..40 {
        let routed = r.place(&gate, verdict(Tier::Medium), true, &mut rng, &mut scratch);
        assert_eq!(routed.group, g(snap, "live"));
        assert_eq!(routed.tier, Some(Tier::Medium), "never another tier");
        if routed.cause == Cause::HealthFailover {
            failovers += 1;
            assert_eq!(routed.displaced, Some(g(snap, "dead")));
            assert_eq!(routed.decided_by, Some(Cause::HeuristicScorer));
            assert_eq!(routed.pin, None, "a failover is never pinned");
        } else {
            assert_eq!(routed.cause, Cause::HeuristicScorer);
            assert!(routed.pin.is_some());
        }
    }
    assert!(failovers > 5, "the shuffle draws the dead group about half the time: {failovers}");
}

#[test]
fn a_healthy_tier_is_left_alone_and_the_shuffle_spreads() {
    let snap = snap();
    let state = State::new(&snap);
    let (groups, _) = place_many(&snap, &state, &facts(), 200);
    let dead = groups.iter().filter(|&&x| x == g(&snap, "dead")).count();
    assert!((60..140).contains(&dead), "{dead}");
}

#[test]
fn a_cooling_group_fails_over_to_its_live_peer() {
    let snap = snap();
    let mut state = State::new(&snap);
    let now = Instant::now();
    assert!(state.record_failure(&snap, DeploymentIdx(0), Failure::Connect, now).is_some());
    assert_all_fail_over(&snap, &state, &facts());
}

#[test]
fn a_blocked_group_fails_over() {
    let snap = snap_with(RouterSettings::default(), |d| d[0].blocked = true);
    assert_all_fail_over(&snap, &State::new(&snap), &facts());
}

/// The gate asks the pick, and the pick's health filter fails open when every candidate of a
/// group looks unhealthy: a group down by health checks alone still counts as serving (the
/// request's own attempt then cools it down, which the gate does read).
#[test]
fn an_unhealthy_group_is_what_the_pick_says_it_is() {
    let settings = RouterSettings { enable_health_check_routing: true, ..RouterSettings::default() };
    let snap = snap_with(settings, |_| {});
    let mut state = State::new(&snap);
    let now = Instant::now();
    state.record_health(DeploymentIdx(0), false, now);
    let f = facts();
    let gate = Gate { snap: &snap, state: &state, facts: &f, now };
    let mut scratch = PickScratch::new();
    assert!(gate.can_serve(g(&snap, "dead"), &mut scratch));
    assert!(state.record_failure(&snap, DeploymentIdx(0), Failure::Connect, now).is_some());
    let gate = Gate { snap: &snap, state: &state, facts: &f, now };
    assert!(!gate.can_serve(g(&snap, "dead"), &mut scratch));
}

#[test]
fn a_group_at_its_rpm_limit_fails_over() {
    let settings = RouterSettings { routing_strategy: RoutingStrategy::UsageBasedV2, ..RouterSettings::default() };
    let snap = snap_with(settings, |d| d[0].rpm = Some(1));
    let mut state = State::new(&snap);
    let now = Instant::now();
    state.set_minute_origin(now);
    state.record_usage(DeploymentIdx(0), now, 1, 10);
    assert_all_fail_over(&snap, &state, &facts());
}

#[test]
fn a_group_over_its_provider_budget_fails_over() {
    let budget = ProviderBudget { provider: Provider::OpenAi, budget_limit: 1.0, time_period: Duration::from_secs(60) };
    let settings = RouterSettings { provider_budgets: vec![budget], ..RouterSettings::default() };
    // `live` is on another provider here, so only `dead`'s budget is spent.
    let snap = snap_with(settings, |d| d[1].provider = Provider::Groq);
    let mut state = State::new(&snap);
    state.record_spend(Provider::OpenAi, 2.0, Instant::now(), Duration::from_secs(60));
    assert_all_fail_over(&snap, &state, &facts());
}

#[test]
fn a_group_whose_context_window_is_too_small_fails_over() {
    let settings = RouterSettings { enable_pre_call_checks: true, ..RouterSettings::default() };
    let snap = snap_with(settings, |d| {
        d[0].max_input_tokens = Some(100);
        d[1].max_input_tokens = Some(100_000);
    });
    let mut facts = facts();
    facts.estimated_prompt_tokens = 5_000;
    assert_all_fail_over(&snap, &State::new(&snap), &facts);
}

#[test]
fn a_group_without_the_requested_tag_fails_over() {
    let settings = RouterSettings { enable_tag_filtering: true, ..RouterSettings::default() };
    let snap = snap_with(settings, |d| {
        d[0].tags = vec!["us".into()];
        d[1].tags = vec!["eu".into()];
    });
    let mut facts = facts();
    facts.tags = vec!["eu".into()];
    assert_all_fail_over(&snap, &State::new(&snap), &facts);
}

#[test]
fn the_gate_fails_open_when_no_peer_can_serve_or_the_tier_has_one_group() {
    let snap = snap();
    let mut state = State::new(&snap);
    let now = Instant::now();
    for i in 0..2 {
        assert!(state.record_failure(&snap, DeploymentIdx(i), Failure::Connect, now).is_some());
    }
    // Both groups of the pool cool down: the decision stands (its own error will say why).
    let (groups, last) = place_many(&snap, &state, &facts(), 50);
    assert!(groups.contains(&g(&snap, "dead")) && groups.contains(&g(&snap, "live")));
    assert_eq!(last.cause, Cause::HeuristicScorer);
    // A single-group tier is never gated, even when its group is down.
    let r = AutoRouter::new(config([&["dead"], POOL, POOL, POOL]), &snap).unwrap();
    let gate = Gate { snap: &snap, state: &state, facts: &facts(), now };
    let routed = r.place(&gate, verdict(Tier::Simple), false, &mut Rng::new(1), &mut PickScratch::new());
    assert_eq!((routed.group, routed.cause), (g(&snap, "dead"), Cause::HeuristicScorer));
}

#[test]
fn the_gate_never_escalates_to_another_tier() {
    let snap = snap();
    let mut state = State::new(&snap);
    let now = Instant::now();
    assert!(state.record_failure(&snap, DeploymentIdx(0), Failure::Connect, now).is_some());
    // SIMPLE's pool is {dead, other}; `live` serves only MEDIUM and up.
    let r = AutoRouter::new(config([&["dead", "other"], &["live"], &["live"], &["live"]]), &snap).unwrap();
    let gate = Gate { snap: &snap, state: &state, facts: &facts(), now };
    let (mut rng, mut scratch) = (Rng::new(3), PickScratch::new());
    for _ in 0..30 {
        let routed = r.place(&gate, verdict(Tier::Simple), false, &mut rng, &mut scratch);
        assert_eq!(routed.group, g(&snap, "other"));
    }
}

#[test]
fn a_replayed_pin_fails_over_but_keeps_its_tier_and_is_not_rewritten() {
    let snap = snap();
    let mut state = State::new(&snap);
    let now = Instant::now();
    let r = router(&snap);
    let key = r.pin_key(b"p3", 0);
    state.pin(
        key,
        Pin { deployment: DeploymentIdx(0), until: now + Duration::from_secs(3600), tier: Some(Tier::Complex) },
        now,
    );
    let held = r.replay(&snap, &state, key, now).unwrap();
    assert_eq!(held, (g(&snap, "dead"), Some(Tier::Complex)));
    let gate = Gate { snap: &snap, state: &state, facts: &facts(), now };
    let (mut rng, mut scratch) = (Rng::new(1), PickScratch::new());
    let healthy = r.replayed(&gate, held, &mut rng, &mut scratch);
    assert_eq!((healthy.group, healthy.cause), (g(&snap, "dead"), Cause::SessionAffinityPin));
    assert!(state.record_failure(&snap, DeploymentIdx(0), Failure::Connect, now).is_some());
    let gate = Gate { snap: &snap, state: &state, facts: &facts(), now };
    let moved = r.replayed(&gate, held, &mut rng, &mut scratch);
    assert_eq!(moved.group, g(&snap, "live"));
    assert_eq!((moved.cause, moved.decided_by), (Cause::HealthFailover, Some(Cause::SessionAffinityPin)));
    assert_eq!((moved.tier, moved.displaced, moved.pin), (Some(Tier::Complex), Some(g(&snap, "dead")), None));
    // Another caller's session of the same id has a pin of its own; an expired pin is gone.
    assert_eq!(r.replay(&snap, &state, r.pin_key(b"p3", 42), now), None);
    assert_eq!(r.replay(&snap, &state, key, now + Duration::from_secs(3601)), None);
}

#[test]
fn the_tier_pick_in_order_and_weighted() {
    let snap = snap_with(RouterSettings::default(), |d| d[1].weight = Some(9));
    let pool = [g(&snap, "dead"), g(&snap, "live")];
    let mut rng = Rng::new(5);
    assert_eq!(tier_pick(&snap, &pool, TierSelection::InOrder, &mut rng, |_| true), Some(pool[0]));
    assert_eq!(tier_pick(&snap, &pool, TierSelection::InOrder, &mut rng, |x| x != pool[0]), Some(pool[1]));
    assert_eq!(tier_pick(&snap, &pool, TierSelection::Shuffle, &mut rng, |_| false), None);
    let live = (0..1000)
        .filter(|_| tier_pick(&snap, &pool, TierSelection::Weighted, &mut rng, |_| true) == Some(pool[1]))
        .count();
    assert!((850..950).contains(&live), "weights 1:9 → {live}");
}

#[test]
fn a_missing_tier_goes_to_the_default_model_else_medium_and_needs_one_of_them() {
    let snap = snap();
    let mut c = config([&[], &["live"], &["live"], &["live"]]);
    let r = AutoRouter::new(c.clone(), &snap).unwrap();
    assert_eq!(r.pool(Tier::Simple), &[g(&snap, "live")]);
    c.default_model = Some("other".into());
    let r = AutoRouter::new(c.clone(), &snap).unwrap();
    assert_eq!(r.pool(Tier::Simple), &[g(&snap, "other")]);
    c.default_model = None;
    c.tiers[Tier::Medium as usize].clear();
    assert!(AutoRouter::new(c.clone(), &snap).unwrap_err().contains("tier SIMPLE has no model"));
    c.tiers[Tier::Medium as usize] = vec!["nope".into()];
    assert!(AutoRouter::new(c, &snap).unwrap_err().contains("no model group \"nope\""));
}
