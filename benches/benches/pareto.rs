//! The OpenRouter best-value walk (issue 13, `core/src/pareto`), over 5 and 50 providers of one
//! model (`pareto_setup`: every row passes the hard filters, the frontier has many steps, the
//! walk stops mid-frontier), with availability read from a real `ProviderCooldowns` as the
//! shard reads it (`is_hot`, `is_input_capped`):
//!
//! - `winner`: wildcard mode's per-request `choose`, the promoted winner usable (nothing hot;
//!   the winner has 429s below the threshold). Goal ≤ 300 ns.
//! - `hot3`: the winner and the next two of the ranked order hot, so the walk re-runs without
//!   them and chooses the fourth (`safe_set`). Goal ≤ 2 µs at 50.
//! - `pinned`: pinned mode's `narrow` over 5 / 50 deployments, one per provider, winner usable.
//! - `rebuild`: one poll's work for 50 providers, `select` over the telemetry rows and
//!   `Verdict::after_poll`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use pointwork_benches::pareto_setup::{slug, walk_setup, MODEL, PROVIDER_COUNTS};
use pointwork_core::pareto::{availability, choose, narrow, region_allows, select, Reason, Verdict};

fn walk(c: &mut Criterion) {
    let mut group = c.benchmark_group("pareto");
    for n in PROVIDER_COUNTS {
        for (name, hot, reason, served) in [("winner", 0, Reason::Winner, 0), ("hot3", 3, Reason::SafeSet, 3)] {
            let s = walk_setup(n, hot);
            let available = |slug: &str| s.availability(slug);
            let region = |slug: &str| region_allows(&s.rule, Some(&s.verdict), slug);
            let chosen = choose(Some(&s.verdict), &s.rule, &available, &region);
            assert_eq!((chosen.reason, chosen.slug), (reason, Some(s.ranked[served].as_str())), "{name}/{n}");
            assert_eq!(s.cooldowns.hot_count(MODEL, s.now), hot);
            // Per request, as the shard does: the model's marks looked up once, then the walk.
            group.bench_with_input(BenchmarkId::new(name, n), &n, |b, _| {
                b.iter(|| {
                    let available = availability(s.cooldowns.model(black_box(MODEL)), None, s.now);
                    choose(Some(black_box(&s.verdict)), &s.rule, &available, &region)
                })
            });
        }

        let s = walk_setup(n, 0);
        let pins: Vec<Vec<Box<str>>> = (0..n).map(|i| vec![slug(i).into()]).collect();
        let refs: Vec<&[Box<str>]> = pins.iter().map(Vec::as_slice).collect();
        let available = |slug: &str| s.availability(slug);
        let narrowed = narrow(Some(&s.verdict), &s.rule, &refs, &available);
        assert_eq!((narrowed.reason, narrowed.slug), (Reason::Winner, Some(s.ranked[0].as_str())));
        assert_eq!(narrowed.keep.iter().filter(|&&k| k).count(), 1);
        group.bench_with_input(BenchmarkId::new("pinned", n), &n, |b, _| {
            b.iter(|| {
                let available = availability(s.cooldowns.model(black_box(MODEL)), None, s.now);
                narrow(Some(black_box(&s.verdict)), &s.rule, black_box(&refs), &available)
            })
        });
    }

    let s = walk_setup(50, 0);
    let rebuilt = Verdict::after_poll(Some(&s.verdict), select(&s.stats, &s.uptime, &s.rule, None), &s.rule);
    assert_eq!(rebuilt, Verdict { streak: s.verdict.streak + 1, ..s.verdict.clone() });
    assert!(rebuilt.selection.frontier.len() >= 10 && rebuilt.selection.dropped.is_empty());
    group.bench_function(BenchmarkId::new("rebuild", 50), |b| {
        b.iter(|| {
            let selection = select(black_box(&s.stats), black_box(&s.uptime), &s.rule, None);
            Verdict::after_poll(Some(&s.verdict), selection, &s.rule)
        })
    });
    group.finish();
}

criterion_group!(benches, walk);
criterion_main!(benches);
