//! The policy router's decision (`core/src/policy`): filter every endpoint through the 14 steps,
//! score the survivors, rank them — over 20, 200 and 2 000 endpoints of a mixed catalogue (EU
//! and non-EU, catalogue rows, endpoints down, partners, priced), for the auto model and for a
//! pinned one. Goal: ≤ 2 µs at 20 endpoints.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use pointwork_core::policy::{
    decide, EndpointKind, Live, Policy, PolicyEndpoint, PolicyRequest, Residency, SovereigntyClass,
};
use pointwork_core::DeploymentIdx;

/// A catalogue of `n` endpoints over `n / 4` models: about half survive an EU policy.
fn catalogue(n: usize) -> Vec<PolicyEndpoint> {
    (0..n)
        .map(|i| {
            let mut e = PolicyEndpoint::new(
                DeploymentIdx(i as u32),
                &format!("ep-{i:05}"),
                &format!("model-{}", i / 4),
                "acme",
            );
            e.usd_per_1m = Some(0.2 + (i % 13) as f64 * 0.3);
            e.task_fit = vec![("coding".into(), (i % 5) as f64 / 4.0), ("chat".into(), 0.5)];
            e.language_fit = vec![("en".into(), 0.9), ("de".into(), (i % 3) as f64 / 2.0)];
            match i % 8 {
                1 => e.class = SovereigntyClass::NonEu,
                2 => e.class = SovereigntyClass::EuRegionOfNonEuParent,
                3 => e.kind = EndpointKind::CatalogueOnly,
                4 => e.status = "down".into(),
                5 => e.partner = true,
                6 => e.region = "fr-par".into(),
                _ => {}
            }
            e
        })
        .collect()
}

fn live(i: usize) -> Live<'static> {
    Live {
        status: None,
        latency_ms: (!i.is_multiple_of(3)).then_some(100.0 + (i % 7) as f64 * 40.0),
        error_rate: (i % 11) as f64 / 100.0,
    }
}

fn bench(c: &mut Criterion) {
    let policy = Policy { max_usd_per_1m: Some(3.5), ..Policy::new("eu") };
    let auto = PolicyRequest {
        residency: Residency::named("eu-hosted"),
        task: Some("coding".into()),
        language: Some("de".into()),
        needed_tokens: 2_000,
        ..PolicyRequest::default()
    };
    let pinned = PolicyRequest { model: Some("model-2".into()), ..auto.clone() };
    let mut group = c.benchmark_group("policy");
    for n in [20, 200, 2_000] {
        let endpoints = catalogue(n);
        group.bench_with_input(BenchmarkId::new("auto", n), &endpoints, |b, endpoints| {
            b.iter(|| black_box(decide(black_box(endpoints), &policy, &auto, &live).map(|d| d.chosen())))
        });
        group.bench_with_input(BenchmarkId::new("pinned", n), &endpoints, |b, endpoints| {
            b.iter(|| black_box(decide(black_box(endpoints), &policy, &pinned, &live).map(|d| d.chosen())))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
