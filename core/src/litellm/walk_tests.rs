use std::time::{Duration, Instant};

use super::*;
use crate::fallback::FallbackList;
use crate::{Deployment, Provider, RouterSettings};

/// `(id, group, order)` deployments.
fn snap(deps: &[(&str, &str, Option<u32>)]) -> Snapshot {
    snap_with(deps, RouterSettings::default())
}

fn snap_with(deps: &[(&str, &str, Option<u32>)], settings: RouterSettings) -> Snapshot {
    let deployments = deps
        .iter()
        .map(|(id, group, order)| {
            let mut d = Deployment::new(id, group, Provider::OpenAi, "m", "http://127.0.0.1:1/v1");
            d.order = *order;
            d
        })
        .collect();
    Snapshot::build(deployments, settings).unwrap()
}

fn list(entries: &[(&str, &[&str])]) -> FallbackList {
    FallbackList::new(entries.iter().map(|(k, v)| (k.to_string(), v.iter().map(|s| s.to_string()).collect())).collect())
}

fn rules(generic: &[(&str, &[&str])], context_window: &[(&str, &[&str])]) -> Fallbacks {
    Fallbacks { generic: list(generic), context_window: list(context_window), ..Fallbacks::default() }
}

fn idx(snap: &Snapshot, id: &str) -> DeploymentIdx {
    snap.deployment_by_id(id).unwrap()
}

const E503: Failure = Failure::Status(503);

fn fail(walk: &mut Walk, snap: &Snapshot, id: &str, failure: Failure) -> Step {
    let class = ErrorClass::of(failure, "");
    walk.after_failure(snap, &State::new(snap), Some((idx(snap, id), failure)), class, Instant::now())
}

#[test]
fn a_group_gets_one_plus_num_retries_attempts_then_stops_without_fallbacks() {
    let s = snap(&[("a1", "a", None), ("a2", "a", None)]);
    let (r, p) = (Fallbacks::default(), RetryPolicy::default());
    let mut w = Walk::new("a", &r, &p, 2);
    assert_eq!(fail(&mut w, &s, "a1", E503), Step::Retry);
    assert_eq!(fail(&mut w, &s, "a2", E503), Step::Retry);
    assert_eq!(fail(&mut w, &s, "a1", E503), Step::Stop);
    assert_eq!(w.failed_attempts(), 3);
    assert_eq!(w.failed(), [idx(&s, "a1"), idx(&s, "a2")]);
}

#[test]
fn after_its_retries_a_group_falls_back_in_order_and_each_fallback_retries() {
    let s = snap(&[("a1", "a", None), ("b1", "b", None), ("c1", "c", None)]);
    let r = rules(&[("a", &["b", "c"])], &[]);
    let p = RetryPolicy::default();
    let mut w = Walk::new("a", &r, &p, 1);
    assert_eq!(fail(&mut w, &s, "a1", E503), Step::Retry);
    assert_eq!(fail(&mut w, &s, "a1", E503), Step::Fallback("b".into()));
    assert_eq!(w.target(), "b");
    assert_eq!(fail(&mut w, &s, "b1", E503), Step::Retry);
    assert_eq!(fail(&mut w, &s, "b1", E503), Step::Fallback("c".into()));
    assert_eq!(fail(&mut w, &s, "c1", Failure::Status(400)), Step::Stop);
    assert_eq!(w.fallbacks_taken(), 2);
}

#[test]
fn fallbacks_of_fallbacks_go_depth_first_up_to_max_fallbacks_and_never_repeat_a_group() {
    let s = snap(&[("a1", "a", None), ("b1", "b", None), ("c1", "c", None), ("d1", "d", None)]);
    let mut r = rules(&[("a", &["b", "d"]), ("b", &["c", "a"]), ("c", &["a"])], &[]);
    let p = RetryPolicy::default();
    let mut w = Walk::new("a", &r, &p, 0);
    assert_eq!(fail(&mut w, &s, "a1", E503), Step::Fallback("b".into()));
    // b's own fallbacks come before a's second one; a (tried) is skipped.
    assert_eq!(fail(&mut w, &s, "b1", E503), Step::Fallback("c".into()));
    assert_eq!(fail(&mut w, &s, "c1", E503), Step::Fallback("d".into()));
    assert_eq!(fail(&mut w, &s, "d1", E503), Step::Stop);

    r.max_fallbacks = 1;
    let mut w = Walk::new("a", &r, &p, 0);
    assert_eq!(fail(&mut w, &s, "a1", E503), Step::Fallback("b".into()));
    // One hop deep: b's fallbacks are not taken, a's second one is.
    assert_eq!(fail(&mut w, &s, "b1", E503), Step::Fallback("d".into()));
    assert_eq!(fail(&mut w, &s, "d1", E503), Step::Stop);
}

#[test]
fn a_context_window_error_takes_only_the_context_window_fallbacks() {
    let s = snap(&[("a1", "a", None), ("big1", "big", None), ("g1", "g", None)]);
    let cw = Failure::Status(400);
    let body = r#"{"error":{"code":"context_length_exceeded"}}"#;
    let r = rules(&[("a", &["g"])], &[("a", &["big"])]);
    let p = RetryPolicy::default();
    let mut w = Walk::new("a", &r, &p, 3);
    let class = ErrorClass::of(cw, body);
    let step = w.after_failure(&s, &State::new(&s), Some((idx(&s, "a1"), cw)), class, Instant::now());
    assert_eq!(step, Step::Fallback("big".into()), "not retried (a 400), straight to the larger group");

    let r = rules(&[("a", &["g"])], &[]);
    let mut w = Walk::new("a", &r, &p, 3);
    let step = w.after_failure(&s, &State::new(&s), Some((idx(&s, "a1"), cw)), class, Instant::now());
    assert_eq!(step, Step::Stop, "no context_window_fallbacks: the error stands");
}

#[test]
fn nothing_to_pick_counts_as_a_rate_limit_and_falls_back_at_once() {
    let s = snap(&[("a1", "a", None), ("b1", "b", None)]);
    let r = rules(&[("a", &["b"])], &[]);
    let p = RetryPolicy::default();
    let mut w = Walk::new("a", &r, &p, 3);
    let step = w.after_failure(&s, &State::new(&s), None, ErrorClass::RateLimit, Instant::now());
    assert_eq!(step, Step::Fallback("b".into()));
    assert_eq!(w.failed_attempts(), 0);
}

#[test]
fn the_retry_policy_sets_the_retries_per_error_class() {
    let s = snap(&[("a1", "a", None), ("a2", "a", None)]);
    let r = Fallbacks::default();
    let mut p = RetryPolicy::default();
    p.set(ErrorClass::RateLimit, 0);
    p.set(ErrorClass::InternalServer, 1);
    let mut w = Walk::new("a", &r, &p, 5);
    assert_eq!(fail(&mut w, &s, "a1", Failure::Status(429)), Step::Stop);
    let mut w = Walk::new("a", &r, &p, 5);
    assert_eq!(fail(&mut w, &s, "a1", E503), Step::Retry);
    assert_eq!(fail(&mut w, &s, "a2", E503), Step::Stop);
}

#[test]
fn order_two_serves_once_every_order_one_deployment_failed() {
    let s = snap(&[("p1", "a", Some(1)), ("p2", "a", Some(1)), ("s1", "a", Some(2)), ("t1", "a", Some(3))]);
    let (r, p) = (Fallbacks::default(), RetryPolicy::default());
    let mut w = Walk::new("a", &r, &p, 5);
    assert_eq!(w.order(), None);
    assert_eq!(fail(&mut w, &s, "p1", E503), Step::Retry, "p2 of order 1 is untried");
    assert_eq!(fail(&mut w, &s, "p2", E503), Step::NextOrder(2), "every order-1 deployment failed");
    assert_eq!(w.order(), Some(2));
    assert_eq!(fail(&mut w, &s, "s1", E503), Step::NextOrder(3));
    // The last tier: retries (the same deployment may recover) until the budget is spent.
    for _ in 0..5 {
        assert_eq!(fail(&mut w, &s, "t1", E503), Step::Retry);
    }
    assert_eq!(fail(&mut w, &s, "t1", E503), Step::Stop);
}

#[test]
fn without_retries_a_tier_falls_to_the_next_order_after_one_failure() {
    let s = snap(&[("p1", "a", Some(1)), ("p2", "a", Some(1)), ("s1", "a", Some(2))]);
    let (r, p) = (Fallbacks::default(), RetryPolicy::default());
    let mut w = Walk::new("a", &r, &p, 0);
    assert_eq!(fail(&mut w, &s, "p1", E503), Step::NextOrder(2));
    assert_eq!(fail(&mut w, &s, "s1", E503), Step::Stop);
}

#[test]
fn a_bad_request_is_not_retried_nor_sent_to_the_next_order() {
    let s = snap(&[("p1", "a", Some(1)), ("p2", "a", Some(1)), ("s1", "a", Some(2))]);
    let (r, p) = (Fallbacks::default(), RetryPolicy::default());
    let mut w = Walk::new("a", &r, &p, 3);
    assert_eq!(fail(&mut w, &s, "p1", Failure::Status(400)), Step::Stop);
}

#[test]
fn unauthorized_retries_only_while_another_deployment_of_the_tier_is_untried() {
    let s = snap(&[("a1", "a", None), ("a2", "a", None)]);
    let (r, p) = (Fallbacks::default(), RetryPolicy::default());
    let mut w = Walk::new("a", &r, &p, 3);
    assert_eq!(fail(&mut w, &s, "a1", Failure::Status(401)), Step::Retry);
    assert_eq!(fail(&mut w, &s, "a2", Failure::Status(401)), Step::Stop);
}

#[test]
fn a_pick_emptied_by_the_context_window_check_takes_the_context_window_fallbacks() {
    let s = snap(&[("a1", "a", None), ("big1", "big", None), ("g1", "g", None)]);
    let r = rules(&[("a", &["g"])], &[("a", &["big"])]);
    let p = RetryPolicy::default();
    let mut w = Walk::new("a", &r, &p, 3);
    let e = crate::RouteError::NoDeployments {
        model: "a".into(),
        cooldown_ids: Vec::new(),
        retry_after_secs: 0,
        pre_call_checks: true,
        over_limit: Vec::new(),
        emptied_by: Some(crate::Emptied::ContextWindow {
            estimated_tokens: 900,
            max_tokens: None,
            largest_window: Some(100),
        }),
    };
    let class = ErrorClass::of_route_error(&e);
    assert_eq!(class, ErrorClass::ContextWindow);
    assert_eq!(w.after_failure(&s, &State::new(&s), None, class, Instant::now()), Step::Fallback("big".into()));
}

/// Group `a` with two order tiers, and group `b`, its fallback. `cooling`: each failure starts a
/// cooldown (`allowed_fails: 0`, as in issue 11); else cooldowns are disabled.
fn tiered(order_one: &[&str], cooling: bool) -> Snapshot {
    let mut deps: Vec<_> = order_one.iter().map(|id| (*id, "a", Some(1))).collect();
    deps.extend([("s1", "a", Some(2)), ("b1", "b", None)]);
    let settings = if cooling {
        RouterSettings { allowed_fails: Some(0), ..RouterSettings::default() }
    } else {
        RouterSettings { disable_cooldowns: true, ..RouterSettings::default() }
    };
    snap_with(&deps, settings)
}

/// A failure as the gateway handles it: recorded in the state first (which may start the
/// deployment's cooldown), then the walk steps on that state.
fn fail_recorded(walk: &mut Walk, snap: &Snapshot, state: &mut State, id: &str, cooling: bool, now: Instant) -> Step {
    let i = idx(snap, id);
    state.record_failure(snap, i, E503, now);
    assert_eq!(state.is_cooling_down(i, now), cooling, "{id}: the case's cooldown setting took effect");
    walk.after_failure(snap, state, Some((i, E503)), ErrorClass::of(E503, ""), now)
}

#[test]
fn without_retries_a_failed_order_one_falls_to_order_two_whether_or_not_it_cools_down() {
    let (r, p) = (rules(&[("a", &["b"])], &[]), RetryPolicy::default());
    for cooling in [true, false] {
        let s = tiered(&["p1"], cooling);
        let (mut state, now) = (State::new(&s), Instant::now());
        let mut w = Walk::new("a", &r, &p, 0);
        let step = fail_recorded(&mut w, &s, &mut state, "p1", cooling, now);
        assert_eq!(step, Step::NextOrder(2), "cooling {cooling}: order 1 is spent, order 2 is next");
        let step = fail_recorded(&mut w, &s, &mut state, "s1", cooling, now);
        assert_eq!(step, Step::Fallback("b".into()), "cooling {cooling}: no tier after order 2");
    }
}

#[test]
fn with_retries_order_one_retries_its_untried_members_then_falls_to_order_two_whether_or_not_they_cool_down() {
    let (r, p) = (rules(&[("a", &["b"])], &[]), RetryPolicy::default());
    for cooling in [true, false] {
        let s = tiered(&["p1", "p2"], cooling);
        let (mut state, now) = (State::new(&s), Instant::now());
        let mut w = Walk::new("a", &r, &p, 2);
        let mut step = |id| fail_recorded(&mut w, &s, &mut state, id, cooling, now);
        assert_eq!(step("p1"), Step::Retry, "cooling {cooling}: p2 of order 1 is untried");
        assert_eq!(step("p2"), Step::NextOrder(2), "cooling {cooling}: every order-1 deployment failed");
        // Order 2, the last tier, with fresh retries: the same deployment may recover.
        assert_eq!(step("s1"), Step::Retry, "cooling {cooling}");
        assert_eq!(step("s1"), Step::Retry, "cooling {cooling}");
        assert_eq!(step("s1"), Step::Fallback("b".into()), "cooling {cooling}: order 2's retries are spent");
    }
}

#[test]
fn with_retries_spent_before_its_members_order_one_falls_to_order_two_whether_or_not_they_cool_down() {
    let (r, p) = (rules(&[("a", &["b"])], &[]), RetryPolicy::default());
    for cooling in [true, false] {
        let s = tiered(&["p1", "p2", "p3"], cooling);
        let (mut state, now) = (State::new(&s), Instant::now());
        let mut w = Walk::new("a", &r, &p, 1);
        let mut step = |id| fail_recorded(&mut w, &s, &mut state, id, cooling, now);
        assert_eq!(step("p1"), Step::Retry, "cooling {cooling}");
        assert_eq!(step("p2"), Step::NextOrder(2), "cooling {cooling}: p3 is untried but the retry is spent");
        assert_eq!(step("s1"), Step::Retry, "cooling {cooling}");
        assert_eq!(step("s1"), Step::Fallback("b".into()), "cooling {cooling}");
    }
}

#[test]
fn with_order_one_cooling_from_an_earlier_request_an_order_two_failure_takes_no_order_fallback() {
    let (r, p) = (rules(&[("a", &["b"])], &[]), RetryPolicy::default());
    for cooling in [true, false] {
        for num_retries in [0, 2] {
            let s = tiered(&["p1"], cooling);
            let (mut state, now) = (State::new(&s), Instant::now());
            // An earlier request (or another shard) cooled p1 down: this request's first pick
            // lands in order 2 directly.
            let until = now + Duration::from_secs(60);
            state.apply_cooldown(crate::CooldownStarted { idx: idx(&s, "p1"), until, cause: E503 });
            let mut w = Walk::new("a", &r, &p, num_retries);
            for _ in 0..num_retries {
                let step = fail_recorded(&mut w, &s, &mut state, "s1", cooling, now);
                assert_eq!(step, Step::Retry, "cooling {cooling}, num_retries {num_retries}");
            }
            let step = fail_recorded(&mut w, &s, &mut state, "s1", cooling, now);
            let case = format!("cooling {cooling}, num_retries {num_retries}");
            assert_eq!(step, Step::Fallback("b".into()), "{case}: order 2 was the tier that failed");
            assert_eq!(w.fallbacks_taken(), 1, "{case}: the group fallback only, no order fallback");
        }
    }
}
