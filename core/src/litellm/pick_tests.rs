//! The pick, as documented in `docs/routing.md` (the filter chain, the strategies).

use super::*;
use crate::{CooldownStarted, Deployment, Failure, Provider, RejectReason, RouterSettings};

const A: DeploymentIdx = DeploymentIdx(0);
const B: DeploymentIdx = DeploymentIdx(1);
const C: DeploymentIdx = DeploymentIdx(2);

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

fn dep(id: &str, group: &str) -> Deployment {
    Deployment::new(id, group, Provider::OpenAi, "m", "http://127.0.0.1:1/v1")
}

/// Group `pair` = {a, b}, group `other` = {c}; any failure cools down at once.
fn snap() -> Snapshot {
    snap_with(vec![dep("a", "pair"), dep("b", "pair"), dep("c", "other")])
}

fn snap_with(deployments: Vec<Deployment>) -> Snapshot {
    let settings = RouterSettings { allowed_fails: Some(0), ..RouterSettings::default() };
    Snapshot::build(deployments, settings).unwrap()
}

fn request(model: &str) -> PickRequest<'_> {
    PickRequest {
        model,
        failed: &[],
        stream: false,
        input_tokens: 0,
        excluded: &[],
        order: None,
        facts: &crate::NO_FACTS,
    }
}

fn cool(snap: &Snapshot, state: &mut State, idx: DeploymentIdx, at: Instant) {
    assert!(state.record_failure(snap, idx, Failure::Status(503), at).is_some());
}

#[test]
fn a_group_name_picks_among_its_members() {
    let snap = snap();
    let state = State::new(&snap);
    let mut rng = Rng::new(1);
    let d = pick(&snap, &state, &request("pair"), Instant::now(), &mut rng).unwrap();
    assert!(d.deployment == A || d.deployment == B);
    assert_eq!(d.group, GroupIdx(0));
    assert_eq!(d.cause, Cause::Fresh);
    assert_eq!(d.candidates, 2);
    assert!(d.rejected.is_empty());
    let id = &snap.deployment(d.deployment).id;
    assert_eq!(d.route_reason(&snap), format!("simple-shuffle picked {id} of 2 candidates"));
}

#[test]
fn an_unknown_name_is_a_400_with_litellms_text() {
    let snap = snap();
    let err = pick(&snap, &State::new(&snap), &request("gpt-9"), Instant::now(), &mut Rng::new(0)).unwrap_err();
    assert_eq!(err.status(), 400);
    assert_eq!(
        err.to_string(),
        "Invalid model name passed in model=gpt-9. Call `/v1/models` to view available models for your key."
    );
}

#[test]
fn a_deployment_cooling_down_is_never_picked() {
    let snap = snap();
    let mut state = State::new(&snap);
    let t0 = Instant::now();
    cool(&snap, &mut state, A, t0);
    let mut rng = Rng::new(2);
    for _ in 0..200 {
        let d = pick(&snap, &state, &request("pair"), t0, &mut rng).unwrap();
        assert_eq!(d.deployment, B);
        assert_eq!(d.rejected, [(A, RejectReason::CoolingDown)]);
    }
    let d = pick(&snap, &state, &request("pair"), t0, &mut rng).unwrap();
    assert_eq!(d.route_reason(&snap), "simple-shuffle picked b of 2 candidates (1 in cooldown)");
    // Once the cooldown ends, `a` is a candidate again.
    let later = pick(&snap, &state, &request("pair"), t0 + secs(5), &mut rng).unwrap();
    assert!(later.rejected.is_empty());
}

#[test]
fn a_deployment_id_is_served_even_while_cooling_down() {
    let snap = snap();
    let mut state = State::new(&snap);
    let t0 = Instant::now();
    cool(&snap, &mut state, A, t0);
    cool(&snap, &mut state, B, t0);
    let failed = [A];
    let req = PickRequest {
        model: "a",
        failed: &failed,
        stream: false,
        input_tokens: 0,
        excluded: &[],
        order: None,
        facts: &crate::NO_FACTS,
    };
    let d = pick(&snap, &state, &req, t0, &mut Rng::new(3)).unwrap();
    assert_eq!(
        d,
        Decision {
            deployment: A,
            group: GroupIdx(0),
            cause: Cause::DeploymentId,
            candidates: 1,
            rejected: vec![],
            basis: Basis::None,
            wildcard: None,
        }
    );
    assert_eq!(d.route_reason(&snap), "a requested by deployment id (filters and strategy skipped)");
}

#[test]
fn a_group_name_wins_over_a_deployment_id() {
    let snap = snap_with(vec![dep("pair", "x"), dep("b", "pair")]);
    let d = pick(&snap, &State::new(&snap), &request("pair"), Instant::now(), &mut Rng::new(0)).unwrap();
    assert_eq!((d.deployment, d.cause), (B, Cause::Fresh));
}

#[test]
fn a_retry_skips_the_deployments_that_failed() {
    let snap = snap_with(vec![dep("a", "g"), dep("b", "g"), dep("c", "g")]);
    let state = State::new(&snap);
    let failed = [A, C];
    let req = PickRequest {
        model: "g",
        failed: &failed,
        stream: false,
        input_tokens: 0,
        excluded: &[],
        order: None,
        facts: &crate::NO_FACTS,
    };
    let mut rng = Rng::new(4);
    for _ in 0..100 {
        let d = pick(&snap, &state, &req, Instant::now(), &mut rng).unwrap();
        assert_eq!(d.deployment, B);
        assert_eq!(d.cause, Cause::Retry);
        assert_eq!(d.rejected, [(A, RejectReason::RetrySkipped), (C, RejectReason::RetrySkipped)]);
    }
    let d = pick(&snap, &state, &req, Instant::now(), &mut rng).unwrap();
    assert_eq!(d.route_reason(&snap), "simple-shuffle picked b of 3 candidates on retry (2 retry-skipped)");
}

#[test]
fn the_retry_skip_fails_open_when_nothing_else_remains() {
    let snap = snap();
    let mut state = State::new(&snap);
    let t0 = Instant::now();
    // `a` cools down and `b` already failed: `b` is tried again rather than nothing.
    cool(&snap, &mut state, A, t0);
    let failed = [B];
    let req = PickRequest {
        model: "pair",
        failed: &failed,
        stream: false,
        input_tokens: 0,
        excluded: &[],
        order: None,
        facts: &crate::NO_FACTS,
    };
    let d = pick(&snap, &state, &req, t0, &mut Rng::new(5)).unwrap();
    assert_eq!(d.deployment, B);
    assert_eq!(d.cause, Cause::Retry);
    assert_eq!(d.rejected, [(A, RejectReason::CoolingDown)]);
    assert_eq!(d.route_reason(&snap), "simple-shuffle picked b of 2 candidates on retry (1 in cooldown)");
}

#[test]
fn everything_cooling_down_is_a_429_naming_the_cooldowns_and_the_soonest_end() {
    let mut deployments = vec![dep("id1", "gpt-4o"), dep("id2", "gpt-4o"), dep("c", "x")];
    deployments[1].cooldown_time = Some(secs(3));
    let snap = snap_with(deployments);
    let mut state = State::new(&snap);
    let t0 = Instant::now();
    cool(&snap, &mut state, A, t0); // until t0 + 5 s
    cool(&snap, &mut state, B, t0 + Duration::from_millis(500)); // until t0 + 3.5 s
    cool(&snap, &mut state, C, t0); // another group: not listed
    let err = pick(&snap, &state, &request("gpt-4o"), t0 + secs(1), &mut Rng::new(6)).unwrap_err();
    assert_eq!(err.status(), 429);
    // The soonest cooldown ends in 2.5 s, rounded up to 3.
    assert_eq!(err.retry_after_secs(), Some(3));
    assert_eq!(
        err.to_string(),
        "No deployments available for selected model, Try again in 3 seconds. Passed model=gpt-4o. pre-call-checks=False, cooldown_list=['id1', 'id2']"
    );
}

#[test]
fn a_cooldown_ending_within_the_second_still_says_one_second() {
    let snap = snap();
    let mut state = State::new(&snap);
    let t0 = Instant::now();
    cool(&snap, &mut state, C, t0);
    let err = pick(&snap, &state, &request("other"), t0 + Duration::from_millis(4999), &mut Rng::new(0)).unwrap_err();
    assert_eq!(err.retry_after_secs(), Some(1));
}

#[test]
fn the_error_reports_pre_call_checks() {
    let mut snap = snap();
    snap.settings.enable_pre_call_checks = true;
    let mut state = State::new(&snap);
    let t0 = Instant::now();
    cool(&snap, &mut state, C, t0);
    let err = pick(&snap, &state, &request("other"), t0, &mut Rng::new(0)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "No deployments available for selected model, Try again in 5 seconds. Passed model=other. pre-call-checks=True, cooldown_list=['c']"
    );
}

#[test]
fn equal_seeds_give_equal_decisions_and_the_scratch_changes_nothing() {
    let mut deployments: Vec<_> = (0..8).map(|i| dep(&format!("d{i}"), "g")).collect();
    for (i, d) in deployments.iter_mut().enumerate() {
        d.weight = Some(i as u64);
    }
    let snap = snap_with(deployments);
    let state = State::new(&snap);
    let now = Instant::now();
    let mut with_pick = Rng::new(77);
    let mut with_scratch = Rng::new(77);
    let mut scratch = PickScratch::new();
    for _ in 0..1000 {
        let a = pick(&snap, &state, &request("g"), now, &mut with_pick).unwrap();
        let b = pick_with_scratch(&snap, &state, &request("g"), now, &mut with_scratch, &mut scratch).unwrap();
        assert_eq!(a, b);
        assert_ne!(a.deployment, DeploymentIdx(0), "d0 weighs 0");
    }
}

#[test]
fn weighted_picks_skip_cooldowns_and_keep_the_others_proportions() {
    let mut deployments = vec![dep("a", "g"), dep("b", "g"), dep("c", "g")];
    deployments[0].rpm = Some(100);
    deployments[1].rpm = Some(100);
    deployments[2].rpm = Some(300);
    let snap = snap_with(deployments);
    let mut state = State::new(&snap);
    let t0 = Instant::now();
    cool(&snap, &mut state, A, t0);
    let mut rng = Rng::new(8);
    let mut counts = [0u32; 3];
    for _ in 0..10_000 {
        let d = pick(&snap, &state, &request("g"), t0, &mut rng).unwrap();
        counts[d.deployment.get()] += 1;
    }
    assert_eq!(counts[0], 0);
    // b : c = 1 : 3, so b expects 2500 (4 standard deviations ≈ ±175).
    assert!((2325..=2675).contains(&counts[1]), "{counts:?}");
}

/// Random groups, weights, cooldowns and failed lists, drawn from a seeded `Rng`: the pick's
/// invariants hold for every one of them.
#[test]
fn invariants_hold_over_random_situations() {
    let mut gen = Rng::new(2024);
    let t0 = Instant::now();
    for case in 0..500 {
        let size = 1 + gen.below(6) as usize;
        let deployments = (0..size)
            .map(|i| {
                let mut d = dep(&format!("d{i}"), "g");
                d.weight = Some(gen.below(4));
                d
            })
            .collect();
        let snap = snap_with(deployments);
        let mut state = State::new(&snap);
        let members = snap.groups[0].members.clone();
        for &idx in &members {
            if gen.below(3) == 0 {
                cool(&snap, &mut state, idx, t0);
            }
        }
        let failed: Vec<_> = members.iter().copied().filter(|_| gen.below(3) == 0).collect();
        let req = PickRequest {
            model: "g",
            failed: &failed,
            stream: false,
            input_tokens: 0,
            excluded: &[],
            order: None,
            facts: &crate::NO_FACTS,
        };
        let cooling = |idx: DeploymentIdx| state.is_cooling_down(idx, t0);
        match pick(&snap, &state, &req, t0, &mut Rng::new(case)) {
            Ok(d) => {
                assert!(!cooling(d.deployment), "case {case}");
                let untried_left = members.iter().any(|m| !cooling(*m) && !failed.contains(m));
                assert_eq!(failed.contains(&d.deployment), !untried_left, "case {case}");
                // Every member is either rejected once or a survivor.
                for m in &members {
                    let times = d.rejected.iter().filter(|(r, _)| r == m).count();
                    assert!(times <= 1, "case {case}");
                }
                let survivors: Vec<_> = members.iter().filter(|m| !d.rejected.iter().any(|(r, _)| r == *m)).collect();
                assert!(survivors.contains(&&d.deployment), "case {case}");
                let any_weight = survivors.iter().any(|m| snap.deployment(**m).shuffle_weight > 0);
                if any_weight {
                    assert!(snap.deployment(d.deployment).shuffle_weight > 0, "case {case}");
                }
            }
            Err(RouteError::NoDeployments { cooldown_ids, .. }) => {
                assert!(members.iter().all(|m| cooling(*m)), "case {case}");
                assert_eq!(cooldown_ids.len(), members.len(), "case {case}");
            }
            Err(other) => panic!("case {case}: {other}"),
        }
    }
}

#[test]
fn the_route_reason_counts_each_reason_in_chain_order() {
    let snap = snap_with(vec![dep("a", "g"), dep("b", "g"), dep("c", "g")]);
    let mut state = State::new(&snap);
    let t0 = Instant::now();
    cool(&snap, &mut state, C, t0);
    let failed = [A];
    let req = PickRequest {
        model: "g",
        failed: &failed,
        stream: false,
        input_tokens: 0,
        excluded: &[],
        order: None,
        facts: &crate::NO_FACTS,
    };
    let d = pick(&snap, &state, &req, t0, &mut Rng::new(0)).unwrap();
    assert_eq!(d.rejected, [(C, RejectReason::CoolingDown), (A, RejectReason::RetrySkipped)]);
    assert_eq!(
        d.route_reason(&snap),
        "simple-shuffle picked b of 3 candidates on retry (1 in cooldown, 1 retry-skipped)"
    );
}

/// The pick as it was before the bitsets, kept as the reference: the members copied into a
/// list, each filter a `retain` in chain order, the retry skip failing open, and the simple
/// shuffle walking the survivors in member order with one draw.
fn reference_pick(
    snap: &Snapshot,
    state: &State,
    req: &PickRequest<'_>,
    now: Instant,
    rng: &mut Rng,
) -> Result<Decision, RouteError> {
    let Some(group) = snap.group_by_name(req.model) else {
        return pick(snap, state, req, now, rng);
    };
    let members = &snap.group(group).members;
    let mut live = members.clone();
    let mut rejected = Vec::new();
    live.retain(|&m| {
        let cooling = state.is_cooling_down(m, now);
        if cooling {
            rejected.push((m, RejectReason::CoolingDown));
        }
        !cooling
    });
    if live.iter().any(|m| !req.failed.contains(m)) {
        live.retain(|m| {
            let failed = req.failed.contains(m);
            if failed {
                rejected.push((*m, RejectReason::RetrySkipped));
            }
            !failed
        });
    }
    let weight = |m: &DeploymentIdx| snap.deployment(*m).shuffle_weight;
    let total = live.iter().map(weight).fold(0u64, u64::saturating_add);
    let chosen = if total == 0 {
        live.get(rng.below(live.len() as u64) as usize).copied()
    } else {
        let mut ticket = rng.below(total);
        live.iter().copied().find(|m| {
            let found = ticket < weight(m);
            ticket -= if found { 0 } else { weight(m) };
            found
        })
    };
    let Some(deployment) = chosen else {
        let cooling: Vec<_> =
            members.iter().filter_map(|&m| state.cooldown_remaining(m, now).map(|r| (m, r))).collect();
        let soonest = cooling.iter().map(|(_, r)| *r).min();
        return Err(RouteError::NoDeployments {
            model: req.model.to_string(),
            cooldown_ids: cooling.iter().map(|(m, _)| snap.deployment(*m).id.clone()).collect(),
            retry_after_secs: soonest.map_or(0, whole_seconds_rounded_up),
            pre_call_checks: snap.settings.enable_pre_call_checks,
            over_limit: Vec::new(),
            emptied_by: None,
        });
    };
    Ok(Decision {
        deployment,
        group,
        cause: if req.failed.is_empty() { Cause::Fresh } else { Cause::Retry },
        candidates: members.len() as u32,
        rejected,
        basis: Basis::Weight(snap.deployment(deployment).shuffle_weight),
        wildcard: None,
    })
}

/// Random snapshots (interleaved groups of up to 300 members, so several blocks, weights from
/// 0 to giants that saturate), cooldowns live, expired and not yet reached, failed lists with
/// repeats and other groups' members: the pick decides as the reference does, error for error,
/// and leaves the rng where the reference leaves it.
#[test]
fn the_pick_decides_as_the_reference_chain_does() {
    let mut gen = Rng::new(99);
    let t0 = Instant::now() + secs(3600);
    let mut scratch = PickScratch::new();
    for case in 0..400u64 {
        let groups = 1 + gen.below(3);
        let size = 1 + gen.below(if case % 4 == 0 { 300 } else { 12 }) as usize;
        let giants = case % 7 == 0;
        let zeros = case % 5 == 0;
        let deployments = (0..size)
            .map(|i| {
                let mut d = dep(&format!("d{i}"), &format!("g{}", gen.below(groups)));
                d.weight = match gen.below(10) {
                    0 if giants => Some(u64::MAX - gen.below(2)),
                    w if zeros && w < 7 => Some(0),
                    w => Some(w),
                };
                d
            })
            .collect();
        let snap = snap_with(deployments);
        let mut state = State::new(&snap);
        for i in 0..size {
            let idx = DeploymentIdx(i as u32);
            match gen.below(6) {
                0 => cool(&snap, &mut state, idx, t0 - secs(gen.below(10))), // live or over
                1 => state.apply_cooldown(CooldownStarted {
                    idx,
                    until: t0 + secs(gen.below(5)) - secs(gen.below(5)),
                    cause: Failure::Status(429),
                }),
                _ => {}
            }
        }
        let failed: Vec<_> = (0..gen.below(4)).map(|_| DeploymentIdx(gen.below(size as u64 + 2) as u32)).collect();
        for g in 0..groups {
            let model = format!("g{g}");
            let req = PickRequest {
                model: &model,
                failed: &failed,
                stream: false,
                input_tokens: 0,
                excluded: &[],
                order: None,
                facts: &crate::NO_FACTS,
            };
            for now in [t0 - secs(3), t0, t0 + secs(2), t0 + secs(10)] {
                let (mut a, mut b) = (Rng::new(case), Rng::new(case));
                for _ in 0..5 {
                    let got = pick_with_scratch(&snap, &state, &req, now, &mut a, &mut scratch);
                    assert_eq!(got, reference_pick(&snap, &state, &req, now, &mut b), "case {case}");
                }
                assert_eq!(a, b, "case {case}");
            }
        }
    }
}

#[test]
fn a_pass_through_group_sends_a_name_to_its_providers_deployment_only() {
    let pass =
        |id: &str, provider| Deployment { pass_through: true, ..Deployment::new(id, "*", provider, "*", "http://h") };
    let snap = snap_with(vec![pass("oa", Provider::OpenAi), pass("ant", Provider::Anthropic)]);
    let state = State::new(&snap);
    let mut rng = Rng::new(1);
    for (name, winner) in [("claude-3-5-haiku", B), ("anthropic/x", B), ("gpt-4o", A), ("openai/x", A)] {
        let d = pick(&snap, &state, &request(name), Instant::now(), &mut rng).unwrap();
        assert_eq!(d.deployment, winner, "{name}");
        let loser = if winner == A { B } else { A };
        assert_eq!(d.rejected, [(loser, RejectReason::OtherProvider)], "{name}");
    }
    let e = pick(&snap, &state, &request("groq/llama"), Instant::now(), &mut rng).unwrap_err();
    assert_eq!(e.emptied_by(), Some(&crate::Emptied::PassThrough { provider: Some(Provider::Groq) }));
    assert_eq!(e.status(), 400);
    let e = pick(&snap, &state, &request("llama"), Instant::now(), &mut rng).unwrap_err();
    assert_eq!(e.emptied_by(), Some(&crate::Emptied::PassThrough { provider: None }));
}
