//! The pick: one group of 2 … 10 000 weighted deployments, ~10% of them cooling down, with a
//! reused `PickScratch` as a shard keeps it. `fresh` is a first attempt; `retry` has one failed
//! deployment in `PickRequest::failed`; `ended` is a first attempt where another 10% of the
//! group had cooldowns that are over, so that every block of 64 members mixes live and ended
//! cooldowns and the cooldown filter compares each member's end (in `fresh`, every recorded
//! cooldown is live and each block's summary answers for it).
//!
//! `pick-strategy` runs the stateful strategies over 10 and 10 000 deployments (10% cooling
//! down; in-flight counts, latency averages, usage and prices set for all, see
//! `pick_setup::strategy_setup`).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use pointwork_benches::pick_setup::{
    pick_setup_with, strategy_setup, GROUP, GROUP_SIZES, STRATEGIES, STRATEGY_GROUP_SIZES,
};
use pointwork_core::{pick_with_scratch, PickRequest, PickScratch, Rng};

fn pick(c: &mut Criterion) {
    let mut group = c.benchmark_group("pick");
    for n in GROUP_SIZES {
        let setup = pick_setup_with(n, false);
        let with_ended = pick_setup_with(n, true);
        let mut rng = Rng::new(0x5eed);
        let mut scratch = PickScratch::new();
        for (variant, setup, failed) in
            [("fresh", &setup, &[][..]), ("retry", &setup, &setup.failed[..]), ("ended", &with_ended, &[][..])]
        {
            group.bench_with_input(BenchmarkId::new(variant, n), &n, |b, _| {
                b.iter(|| {
                    let req = PickRequest {
                        model: black_box(GROUP),
                        failed: black_box(failed),
                        stream: false,
                        input_tokens: 100,
                        excluded: &[],
                        order: None,
                        facts: &pointwork_core::NO_FACTS,
                    };
                    pick_with_scratch(&setup.snap, &setup.state, &req, setup.now, &mut rng, &mut scratch)
                        .expect("survivors remain")
                })
            });
        }
    }
    group.finish();
}

fn pick_strategy(c: &mut Criterion) {
    let mut group = c.benchmark_group("pick-strategy");
    for n in STRATEGY_GROUP_SIZES {
        for (name, strategy) in STRATEGIES {
            let setup = strategy_setup(n, strategy);
            let mut rng = Rng::new(0x5eed);
            let mut scratch = PickScratch::new();
            group.bench_with_input(BenchmarkId::new(name, n), &n, |b, _| {
                b.iter(|| {
                    let req = PickRequest {
                        model: black_box(GROUP),
                        failed: &[],
                        stream: false,
                        input_tokens: 100,
                        excluded: &[],
                        order: None,
                        facts: &pointwork_core::NO_FACTS,
                    };
                    pick_with_scratch(&setup.snap, &setup.state, &req, setup.now, &mut rng, &mut scratch)
                        .expect("survivors remain")
                })
            });
        }
    }
    group.finish();
}

/// Every filter of the chain on and busy: tag filtering (plain, `!` and `&` tags), pre-call
/// checks (context windows, regions, declined params), an image, order tiers, health results;
/// 10 and 1 000 deployments, every member a survivor candidate of some filter.
fn pick_full_chain(c: &mut Criterion) {
    use pointwork_core::{Deployment, Param, Provider, RequestFacts, RouteKind, RouterSettings, Snapshot, State};
    let mut group = c.benchmark_group("pick-chain");
    for n in [10usize, 1_000] {
        let deployments = (0..n)
            .map(|i| {
                let mut d = Deployment::new(&format!("d{i}"), GROUP, Provider::OpenAi, "m", "http://h/v1");
                d.tags = vec![["x", "y", "default"][i % 3].to_string(), "eu".into()];
                d.order = Some(1 + (i % 2) as u32);
                d.region_name = Some(["eu-west-1", "us-east-1", "westeurope"][i % 3].into());
                d.max_input_tokens = Some(if i % 5 == 0 { 10 } else { 100_000 });
                d.supports_vision = Some(i % 4 != 0);
                if i % 7 == 0 {
                    d.unsupported_params.insert(Param::Tools);
                }
                d
            })
            .collect();
        let settings =
            RouterSettings { enable_pre_call_checks: true, enable_tag_filtering: true, ..RouterSettings::default() };
        let snap = Snapshot::build(deployments, settings).expect("unique ids");
        let state = State::new(&snap);
        let mut facts = RequestFacts::new(RouteKind::ChatCompletions, GROUP.into());
        facts.estimated_prompt_tokens = 500;
        facts.has_image = true;
        facts.params.insert(Param::Tools);
        facts.allowed_model_region = Some("eu".into());
        facts.tags = vec!["x".into(), "!y".into(), "&eu".into()];
        let now = std::time::Instant::now();
        let mut rng = Rng::new(0x5eed);
        let mut scratch = PickScratch::new();
        group.bench_with_input(BenchmarkId::new("all-filters", n), &n, |b, _| {
            b.iter(|| {
                let req = PickRequest::new(black_box(GROUP), black_box(&facts));
                pick_with_scratch(&snap, &state, &req, now, &mut rng, &mut scratch).expect("survivors remain")
            })
        });
    }
    group.finish();
}

criterion_group!(benches, pick, pick_strategy, pick_full_chain);
criterion_main!(benches);
