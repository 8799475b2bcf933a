//! The stateful strategies, through the pick.

use std::time::{Duration, Instant};

use crate::{
    pick, Basis, Deployment, DeploymentIdx, LatencyMeasure, LatencySample, PickRequest, Provider, RejectReason, Rng,
    RouteError, RouterSettings, RoutingStrategy, Snapshot, State,
};

fn dep(id: &str) -> Deployment {
    Deployment::new(id, "g", Provider::OpenAi, "m", "http://h")
}

fn snap_of(strategy: RoutingStrategy, deployments: Vec<Deployment>) -> Snapshot {
    let settings = RouterSettings { routing_strategy: strategy, allowed_fails: Some(0), ..RouterSettings::default() };
    Snapshot::build(deployments, settings).unwrap()
}

fn snap(strategy: RoutingStrategy, n: usize) -> Snapshot {
    snap_of(strategy, (0..n).map(|i| dep(&format!("d{i}"))).collect())
}

fn req(stream: bool, input_tokens: u64) -> PickRequest<'static> {
    PickRequest { model: "g", failed: &[], stream, input_tokens, excluded: &[], order: None, facts: &crate::NO_FACTS }
}

/// How often each deployment wins in `n` picks.
fn wins(snap: &Snapshot, state: &State, r: &PickRequest<'_>, now: Instant, n: usize) -> Vec<usize> {
    let mut rng = Rng::new(17);
    let mut counts = vec![0; snap.deployments.len()];
    for _ in 0..n {
        counts[pick(snap, state, r, now, &mut rng).unwrap().deployment.get()] += 1;
    }
    counts
}

fn d(i: u32) -> DeploymentIdx {
    DeploymentIdx(i)
}

fn plain(ms: u64) -> LatencySample {
    LatencySample { stream: false, total: Duration::from_millis(ms), first_token: None, output_tokens: None }
}

// --- least-busy ------------------------------------------------------------------------------

#[test]
fn least_busy_picks_the_fewest_in_flight_and_breaks_ties_at_random() {
    let snap = snap(RoutingStrategy::LeastBusy, 4);
    let mut state = State::new(&snap);
    let now = Instant::now();
    for (i, n) in [(0, 2), (1, 1), (2, 3), (3, 1)] {
        for _ in 0..n {
            state.request_started(d(i));
        }
    }
    let c = wins(&snap, &state, &req(false, 0), now, 400);
    assert_eq!((c[0], c[2]), (0, 0));
    assert!(c[1] > 150 && c[3] > 150, "{c:?}");
    state.request_ended(d(3));
    state.request_ended(d(3));
    assert_eq!(state.in_flight(d(3)), 0, "ending saturates at 0");
    let decision = pick(&snap, &state, &req(false, 0), now, &mut Rng::new(1)).unwrap();
    assert_eq!((decision.deployment, decision.basis), (d(3), Basis::InFlight(0)));
    assert_eq!(decision.route_reason(&snap), "least-busy picked d3 of 4 candidates (fewest in flight: 0 requests)");
}

// --- latency ---------------------------------------------------------------------------------

#[test]
fn latency_picks_the_lowest_average_and_explores_untried_first() {
    let snap = snap(RoutingStrategy::LatencyBased, 3);
    let mut state = State::new(&snap);
    let now = Instant::now();
    state.record_latency(d(0), plain(30));
    state.record_latency(d(1), plain(10));
    // d2 has no sample: it counts as 0 and is tried first.
    let first = pick(&snap, &state, &req(false, 0), now, &mut Rng::new(1)).unwrap();
    assert_eq!(first.deployment, d(2));
    assert_eq!(first.route_reason(&snap), "latency-based-routing picked d2 of 3 candidates (untried, explored first)");
    state.record_latency(d(2), plain(20));
    let next = pick(&snap, &state, &req(false, 0), now, &mut Rng::new(1)).unwrap();
    assert_eq!(next.deployment, d(1));
    assert_eq!(next.basis, Basis::Latency { latency: Duration::from_millis(10), measure: LatencyMeasure::Total });
    assert_eq!(next.route_reason(&snap), "latency-based-routing picked d1 of 3 candidates (lowest latency 10.0 ms)");
}

#[test]
fn latency_buffer_makes_near_ties_eligible() {
    let with_buffer = |buffer: f64| {
        let mut s = snap(RoutingStrategy::LatencyBased, 3);
        s.settings.lowest_latency_buffer = buffer;
        s
    };
    let now = Instant::now();
    let fill = |snap: &Snapshot| {
        let mut state = State::new(snap);
        state.record_latency(d(0), plain(100));
        state.record_latency(d(1), plain(140));
        state.record_latency(d(2), plain(160));
        state
    };
    let s0 = with_buffer(0.0);
    assert_eq!(wins(&s0, &fill(&s0), &req(false, 0), now, 300), [300, 0, 0]);
    // Within 100 × 1.5 = 150 ms: d0 and d1, at random.
    let s50 = with_buffer(0.5);
    let c = wins(&s50, &fill(&s50), &req(false, 0), now, 300);
    assert_eq!(c[2], 0);
    assert!(c[0] > 100 && c[1] > 100, "{c:?}");
}

#[test]
fn a_stream_compares_time_to_first_token() {
    let snap = snap(RoutingStrategy::LatencyBased, 2);
    let mut state = State::new(&snap);
    let now = Instant::now();
    // d0 answers whole requests fast but streams start slowly; d1 the other way round.
    state.record_latency(d(0), plain(100));
    state.record_latency(d(1), plain(900));
    let stream = |ttft: u64| LatencySample {
        stream: true,
        total: Duration::from_millis(2000),
        first_token: Some(Duration::from_millis(ttft)),
        output_tokens: Some(100),
    };
    state.record_latency(d(0), stream(400));
    state.record_latency(d(1), stream(50));
    assert_eq!(pick(&snap, &state, &req(false, 0), now, &mut Rng::new(1)).unwrap().deployment, d(0));
    let s = pick(&snap, &state, &req(true, 0), now, &mut Rng::new(1)).unwrap();
    assert_eq!(s.deployment, d(1));
    assert_eq!(
        s.route_reason(&snap),
        "latency-based-routing picked d1 of 2 candidates (lowest time to first token 50.0 ms)"
    );
}

// --- usage-based-routing-v2 ------------------------------------------------------------------

fn limited(rpm: Option<u64>, tpm: Option<u64>, id: &str) -> Deployment {
    let mut d = dep(id);
    d.rpm = rpm;
    d.tpm = tpm;
    d
}

#[test]
fn usage_picks_the_lowest_tokens_this_minute_and_rolls_over() {
    let snap = snap(RoutingStrategy::UsageBasedV2, 3);
    let mut state = State::new(&snap);
    let t0 = Instant::now();
    state.set_minute_origin(t0);
    state.record_usage(d(0), t0, 1, 500);
    state.record_usage(d(1), t0, 1, 100);
    state.record_usage(d(2), t0, 1, 300);
    let p = pick(&snap, &state, &req(false, 10), t0 + Duration::from_secs(59), &mut Rng::new(1)).unwrap();
    assert_eq!((p.deployment, p.basis), (d(1), Basis::Usage { tokens: 100, requests: 1 }));
    assert_eq!(
        p.route_reason(&snap),
        "usage-based-routing-v2 picked d1 of 3 candidates (lowest usage this minute: 100 tokens, 1 requests)"
    );
    // The next minute starts from zero for everyone: a tie, broken at random.
    state.record_usage(d(2), t0 + Duration::from_secs(60), 1, 50);
    let c = wins(&snap, &state, &req(false, 10), t0 + Duration::from_secs(61), 300);
    assert_eq!(c[2], 0);
    assert!(c[0] > 100 && c[1] > 100, "{c:?}");
}

#[test]
fn usage_removes_deployments_past_their_limits_with_reasons() {
    let snap = snap_of(
        RoutingStrategy::UsageBasedV2,
        vec![limited(None, Some(1000), "tpm"), limited(Some(2), None, "rpm"), limited(Some(5), Some(5000), "ok")],
    );
    let mut state = State::new(&snap);
    let t0 = Instant::now();
    state.record_usage(d(0), t0, 1, 900);
    state.record_usage(d(1), t0, 2, 10);
    state.record_usage(d(2), t0, 1, 2000);
    // 900 + 100 ≤ 1000 still fits; 2 + 1 > 2 requests does not.
    let p = pick(&snap, &state, &req(false, 100), t0, &mut Rng::new(1)).unwrap();
    assert_eq!(p.deployment, d(0));
    assert_eq!(p.rejected, [(d(1), RejectReason::RpmLimit)]);
    let p = pick(&snap, &state, &req(false, 101), t0, &mut Rng::new(1)).unwrap();
    assert_eq!(p.deployment, d(2));
    assert_eq!(p.rejected, [(d(0), RejectReason::TpmLimit), (d(1), RejectReason::RpmLimit)]);
    assert_eq!(
        p.route_reason(&snap),
        "usage-based-routing-v2 picked ok of 3 candidates (lowest usage this minute: 2000 tokens, 1 requests; \
         1 at tpm limit, 1 at rpm limit)"
    );
}

#[test]
fn usage_with_every_deployment_at_its_limit_is_no_deployments_until_the_next_minute() {
    let snap = snap_of(RoutingStrategy::UsageBasedV2, vec![limited(Some(1), None, "a"), limited(None, Some(10), "b")]);
    let mut state = State::new(&snap);
    let t0 = Instant::now();
    state.set_minute_origin(t0);
    state.record_usage(d(0), t0, 1, 1);
    let at = t0 + Duration::from_millis(44_500);
    let err = pick(&snap, &state, &req(false, 11), at, &mut Rng::new(1)).unwrap_err();
    match &err {
        RouteError::NoDeployments { over_limit, retry_after_secs, cooldown_ids, .. } => {
            assert_eq!(
                over_limit,
                &[("b".to_string(), RejectReason::TpmLimit), ("a".to_string(), RejectReason::RpmLimit)]
            );
            assert_eq!(*retry_after_secs, 16);
            assert!(cooldown_ids.is_empty());
        }
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().ends_with("usage_limit_list=[('b', 'tpm_limit'), ('a', 'rpm_limit')]"), "{err}");
    // Limits are only checked under usage-based routing.
    let mut shuffle = snap.clone();
    shuffle.settings.routing_strategy = RoutingStrategy::SimpleShuffle;
    assert!(pick(&shuffle, &state, &req(false, 11), at, &mut Rng::new(1)).is_ok());
}

// --- cost ------------------------------------------------------------------------------------

fn priced(id: &str, input: Option<f64>, output: Option<f64>) -> Deployment {
    let mut d = dep(id);
    d.input_cost_per_token = input;
    d.output_cost_per_token = output;
    d
}

#[test]
fn cost_picks_the_cheapest_and_unknown_prices_last() {
    let snap = snap_of(
        RoutingStrategy::CostBased,
        vec![
            priced("unknown", None, None),
            priced("dear", Some(5e-6), Some(15e-6)),
            priced("cheap", Some(1.5e-7), Some(6e-7)),
            priced("half", Some(1e-9), None),
        ],
    );
    let state = State::new(&snap);
    let now = Instant::now();
    let p = pick(&snap, &state, &req(false, 0), now, &mut Rng::new(1)).unwrap();
    assert_eq!(p.deployment, d(2));
    assert_eq!(
        p.route_reason(&snap),
        "cost-based-routing picked cheap of 4 candidates (cheapest: $0.75 per 1M input+output tokens)"
    );
    // With the known ones gone, the unknown ones tie.
    let failed = [d(1), d(2)];
    let r = PickRequest {
        model: "g",
        failed: &failed,
        stream: false,
        input_tokens: 0,
        excluded: &[],
        order: None,
        facts: &crate::NO_FACTS,
    };
    let mut rng = Rng::new(3);
    let mut seen = [false; 4];
    for _ in 0..100 {
        let p = pick(&snap, &state, &r, now, &mut rng).unwrap();
        assert_eq!(p.basis, Basis::Price(None));
        seen[p.deployment.get()] = true;
    }
    assert_eq!(seen, [true, false, false, true]);
}

#[test]
fn cost_ties_are_broken_at_random() {
    let snap = snap_of(
        RoutingStrategy::CostBased,
        vec![
            priced("a", Some(1e-6), Some(1e-6)),
            priced("b", Some(1e-6), Some(1e-6)),
            priced("c", Some(1e-6), Some(2e-6)),
        ],
    );
    let c = wins(&snap, &State::new(&snap), &req(false, 0), Instant::now(), 300);
    assert_eq!(c[2], 0);
    assert!(c[0] > 100 && c[1] > 100, "{c:?}");
}

// --- every strategy --------------------------------------------------------------------------

#[test]
fn equal_seeds_give_equal_picks_and_filters_still_apply() {
    for strategy in RoutingStrategy::ALL {
        let snap = snap(strategy, 70);
        let mut state = State::new(&snap);
        let t0 = Instant::now();
        for i in 0..70 {
            if i % 3 == 0 {
                state.record_latency(d(i), plain(u64::from(i % 5) * 10));
                state.request_started(d(i));
            }
        }
        state.apply_cooldown(crate::CooldownStarted {
            idx: d(66),
            until: t0 + Duration::from_secs(5),
            cause: crate::Failure::Connect,
        });
        let run = |seed| {
            let mut rng = Rng::new(seed);
            (0..50).map(|_| pick(&snap, &state, &req(false, 5), t0, &mut rng).unwrap().deployment).collect::<Vec<_>>()
        };
        assert_eq!(run(9), run(9), "{strategy:?}");
        assert!(!run(9).contains(&d(66)), "{strategy:?}");
    }
}
