//! The pick: one group of 2 … 10 000 weighted deployments, ~10% of them cooling down, with a
//! reused `PickScratch` as a shard keeps it. `fresh` is a first attempt; `retry` has one failed
//! deployment in `PickRequest::failed`.
//!
//! `pick_prototype/*` is NOT the gateway's pick: it prices the one-pass, dense-array pick the
//! profile points at (`switchyard_benches::pick_prototype`), making the same decisions.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use switchyard_benches::pick_prototype::{fused_pick, Dense, PrototypeScratch};
use switchyard_benches::pick_setup::{pick_setup, GROUP, GROUP_SIZES};
use switchyard_core::{pick_with_scratch, PickRequest, PickScratch, Rng};

fn pick(c: &mut Criterion) {
    let mut group = c.benchmark_group("pick");
    for n in GROUP_SIZES {
        let setup = pick_setup(n);
        let mut rng = Rng::new(0x5eed);
        let mut scratch = PickScratch::new();
        for (variant, failed) in [("fresh", &[][..]), ("retry", &setup.failed[..])] {
            group.bench_with_input(BenchmarkId::new(variant, n), &n, |b, _| {
                b.iter(|| {
                    let req = PickRequest { model: black_box(GROUP), failed: black_box(failed) };
                    pick_with_scratch(&setup.snap, &setup.state, &req, setup.now, &mut rng, &mut scratch)
                        .expect("survivors remain")
                })
            });
        }
    }
    group.finish();
}

fn prototype(c: &mut Criterion) {
    let mut group = c.benchmark_group("pick_prototype");
    for n in [10, 10_000] {
        let setup = pick_setup(n);
        let members = &setup.snap.group(setup.snap.group_by_name(GROUP).expect("group")).members;
        let dense = Dense::new(&setup.snap, &setup.state, members, setup.now);
        let mut scratch = PrototypeScratch::default();
        let mut rng = Rng::new(0x5eed);
        for (variant, failed) in [("fresh", &[][..]), ("retry", &setup.failed[..])] {
            group.bench_with_input(BenchmarkId::new(format!("one_pass_dense/{variant}"), n), &n, |b, _| {
                b.iter(|| {
                    let req = PickRequest { model: black_box(GROUP), failed: black_box(failed) };
                    fused_pick(&setup.snap, &req, setup.now, &mut rng, &dense, &mut scratch).expect("survivors remain")
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, pick, prototype);
criterion_main!(benches);
