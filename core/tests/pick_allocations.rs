//! The hot-path rule "no allocation per candidate", checked with a counting allocator: once the
//! scratch has grown, a pick that rejects nothing allocates nothing, whatever the group's size.
//! Only allocations made by the measuring thread count: the test harness's own threads allocate
//! whenever they like. (The `unsafe` below is the `GlobalAlloc` contract, forwarded to `System`
//! unchanged; test-only.)

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::time::Instant;

use pointwork_core::{
    pick_with_scratch, Deployment, Failure, PickRequest, PickScratch, Provider, Rng, RouterSettings, Snapshot, State,
};

struct CountingAllocator;

thread_local! {
    /// Set while this thread measures; `const` so reading it never allocates.
    static MEASURING: Cell<bool> = const { Cell::new(false) };
    /// This thread's allocations while measuring: per thread, so that tests measuring in
    /// parallel do not count each other's.
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if MEASURING.with(Cell::get) {
            ALLOCATIONS.with(|n| n.set(n.get() + 1));
        }
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

fn allocations_during(f: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.with(Cell::get);
    MEASURING.with(|m| m.set(true));
    f();
    MEASURING.with(|m| m.set(false));
    ALLOCATIONS.with(Cell::get) - before
}

#[test]
fn a_warm_pick_allocates_only_when_it_rejects() {
    let deployments = (0..64)
        .map(|i| {
            let mut d = Deployment::new(&format!("d{i}"), "g", Provider::OpenAi, "m", "http://h");
            d.weight = Some(1 + i % 5);
            d
        })
        .collect();
    let settings = RouterSettings { allowed_fails: Some(0), ..RouterSettings::default() };
    let snap = Snapshot::build(deployments, settings).unwrap();
    let mut state = State::new(&snap);
    let now = Instant::now();
    let mut rng = Rng::new(1);
    let mut scratch = PickScratch::new();
    let fresh = PickRequest {
        model: "g",
        failed: &[],
        stream: false,
        input_tokens: 0,
        excluded: &[],
        order: None,
        facts: &pointwork_core::NO_FACTS,
    };
    pick_with_scratch(&snap, &state, &fresh, now, &mut rng, &mut scratch).unwrap();

    let n = allocations_during(|| {
        for _ in 0..1000 {
            let d = pick_with_scratch(&snap, &state, &fresh, now, &mut rng, &mut scratch).unwrap();
            std::hint::black_box(d);
        }
    });
    assert_eq!(n, 0);

    // With rejections, the decision's `rejected` list allocates: once per rejecting filter at
    // most, never once per candidate.
    for i in 0..32 {
        let idx = snap.groups[0].members[i];
        state.record_failure(&snap, idx, Failure::Connect, now);
    }
    let n = allocations_during(|| {
        let d = pick_with_scratch(&snap, &state, &fresh, now, &mut rng, &mut scratch).unwrap();
        assert_eq!(d.rejected.len(), 32);
    });
    assert_eq!(n, 1);
}

#[test]
fn the_stateful_strategies_and_filters_allocate_nothing_per_candidate() {
    use pointwork_core::{Event, LatencySample, RoutingStrategy};
    use std::time::Duration;

    for strategy in RoutingStrategy::ALL {
        let deployments = (0..200)
            .map(|i| {
                let mut d = Deployment::new(&format!("d{i}"), "g", Provider::OpenAi, "m", "http://h");
                d.rpm = Some(1000);
                d.tpm = Some(1_000_000);
                d.input_cost_per_token = (i % 7 != 0).then_some(1e-6 * (1 + i % 3) as f64);
                d.output_cost_per_token = Some(2e-6);
                d
            })
            .collect();
        let settings = RouterSettings {
            routing_strategy: strategy,
            enable_health_check_routing: true,
            lowest_latency_buffer: 0.2,
            ..RouterSettings::default()
        };
        let snap = Snapshot::build(deployments, settings).unwrap();
        let mut state = State::new(&snap);
        let now = Instant::now();
        for i in 0..200u32 {
            let idx = pointwork_core::DeploymentIdx(i);
            state.request_started(idx);
            let total = Duration::from_millis(u64::from(10 + i % 13));
            state
                .record_latency(idx, LatencySample { stream: false, total, first_token: None, output_tokens: Some(9) });
            state.record_usage(idx, now, 1, u64::from(i % 5) * 100);
            state.apply(&Event::Health { idx, healthy: true, checked_at: now });
        }
        let mut rng = Rng::new(1);
        let mut scratch = PickScratch::new();
        let req = PickRequest {
            model: "g",
            failed: &[],
            stream: false,
            input_tokens: 50,
            excluded: &[],
            order: None,
            facts: &pointwork_core::NO_FACTS,
        };
        pick_with_scratch(&snap, &state, &req, now, &mut rng, &mut scratch).unwrap();
        let n = allocations_during(|| {
            for _ in 0..200 {
                let d = pick_with_scratch(&snap, &state, &req, now, &mut rng, &mut scratch).unwrap();
                std::hint::black_box(d);
            }
        });
        assert_eq!(n, 0, "{strategy:?}");

        // Filters that reject: the decision's list, once per pick, whatever the number rejected.
        for i in 0..100u32 {
            let idx = pointwork_core::DeploymentIdx(i);
            if i % 2 == 0 {
                state.apply(&Event::Health { idx, healthy: false, checked_at: now });
            } else {
                state.record_usage(idx, now, 0, 2_000_000);
            }
        }
        pick_with_scratch(&snap, &state, &req, now, &mut rng, &mut scratch).unwrap();
        let n = allocations_during(|| {
            let d = pick_with_scratch(&snap, &state, &req, now, &mut rng, &mut scratch).unwrap();
            assert!(d.rejected.len() >= 50, "{strategy:?}");
        });
        assert_eq!(n, 1, "{strategy:?}");
    }
}

#[test]
fn the_full_chain_allocates_nothing_per_candidate() {
    use pointwork_core::{Event, Param, RequestFacts, RouteKind};

    // 200 deployments: tagged, ordered, in regions, with windows and vision; every filter of
    // the chain is on and has work to do.
    let deployments = (0..200)
        .map(|i| {
            let provider = if i % 9 == 0 { Provider::Groq } else { Provider::OpenAi };
            let mut d = Deployment::new(&format!("d{i}"), "g", provider, "m", "http://h");
            d.tags = vec![["x", "y", "default"][i % 3].to_string(), "eu".into()];
            d.order = Some(1 + (i % 2) as u32);
            d.region_name = Some(["eu-west-1", "us-east-1"][i % 2].into());
            d.max_input_tokens = Some(if i % 5 == 0 { 10 } else { 100_000 });
            d.supports_vision = Some(i % 4 != 0);
            d.blocked = i % 17 == 0;
            if i % 7 == 0 {
                d.unsupported_params.insert(Param::Tools);
            }
            d
        })
        .collect();
    let settings = RouterSettings {
        enable_health_check_routing: true,
        enable_pre_call_checks: true,
        enable_tag_filtering: true,
        ..RouterSettings::default()
    };
    let snap = Snapshot::build(deployments, settings).unwrap();
    let mut state = State::new(&snap);
    let now = Instant::now();
    for i in 0..200u32 {
        let healthy = i % 11 != 0;
        state.apply(&Event::Health { idx: pointwork_core::DeploymentIdx(i), healthy, checked_at: now });
    }
    let mut facts = RequestFacts::new(RouteKind::Embeddings, "g".into());
    facts.estimated_prompt_tokens = 500;
    facts.has_image = true;
    facts.params.insert(Param::Tools);
    facts.allowed_model_region = Some("eu".into());
    facts.tags = vec!["x".into(), "!y".into(), "&eu".into()];
    let excluded = [pointwork_core::DeploymentIdx(2)];
    let failed = [pointwork_core::DeploymentIdx(4)];
    let req = PickRequest { excluded: &excluded, failed: &failed, ..PickRequest::new("g", &facts) };
    let mut rng = Rng::new(1);
    let mut scratch = PickScratch::new();
    let d = pick_with_scratch(&snap, &state, &req, now, &mut rng, &mut scratch).unwrap();
    let reasons: std::collections::BTreeSet<&str> = d.rejected.iter().map(|(_, r)| r.as_str()).collect();
    for r in ["route_unsupported", "unhealthy", "blocked", "context_window", "region", "unsupported_params"] {
        assert!(reasons.contains(r), "{r} in {reasons:?}");
    }
    // Rejections: the decision's list, once per pick.
    let n = allocations_during(|| {
        let d = pick_with_scratch(&snap, &state, &req, now, &mut rng, &mut scratch).unwrap();
        std::hint::black_box(d);
    });
    assert_eq!(n, 1);
    // A request that every filter examines and none rejects from: nothing at all.
    let plain: Vec<Deployment> = (0..200)
        .map(|i| {
            let mut d = Deployment::new(&format!("d{i}"), "g", Provider::OpenAi, "m", "http://h");
            d.tags = vec!["x".into(), "eu".into()];
            d.order = Some(1);
            d.region_name = Some("eu-west-1".into());
            d.max_input_tokens = Some(100_000);
            d.supports_vision = Some(true);
            d
        })
        .collect();
    let snap = Snapshot::build(plain, snap.settings.clone()).unwrap();
    let state = State::new(&snap);
    facts.tags = vec!["x".into(), "!y".into(), "&eu".into()];
    let req = PickRequest::new("g", &facts);
    pick_with_scratch(&snap, &state, &req, now, &mut rng, &mut scratch).unwrap();
    let n = allocations_during(|| {
        for _ in 0..100 {
            let d = pick_with_scratch(&snap, &state, &req, now, &mut rng, &mut scratch).unwrap();
            assert!(d.rejected.is_empty());
        }
    });
    assert_eq!(n, 0);
}
