//! The complexity router's health gate (issue 15, `core/src/complexity/router.rs`) on a
//! 20-deployment router (groups `dead` and `live` of 10 deployments each; every tier's pool is
//! both), per request as the shard runs it:
//!
//! - `place/healthy`: a fresh decision whose group can serve: the tier pick and one pick of the
//!   decided group without side effects (the gate's check).
//! - `place/failover`: the decided group fully cooled down: its check, the peer's check, the
//!   tier pick of the peer (about half the draws; the other half are `healthy`'s cost).
//! - `place/single`: a one-group tier: no check at all (the gate returns at once).
//! - `can_serve`: the gate's check alone.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use pointwork_core::complexity::{
    AutoRouter, Cause, ClassifierFallback, ClassifierSettings, Gate, RouterConfig, Tier, TierSelection, Verdict,
};
use pointwork_core::{
    Deployment, DeploymentIdx, Failure, PickScratch, Provider, RequestFacts, Rng, RouteKind, RouterSettings, Snapshot,
    State,
};

const PER_GROUP: usize = 10;

fn snapshot() -> Snapshot {
    let deps = ["dead", "live"]
        .iter()
        .flat_map(|g| {
            (0..PER_GROUP)
                .map(move |i| Deployment::new(&format!("{g}-{i}"), g, Provider::OpenAi, "m", "http://127.0.0.1:1/v1"))
        })
        .collect();
    let settings = RouterSettings { allowed_fails: Some(0), ..RouterSettings::default() };
    Snapshot::build(deps, settings).unwrap()
}

fn router(snap: &Snapshot, simple: &[&str]) -> AutoRouter {
    let pool = |groups: &[&str]| groups.iter().map(|g| g.to_string()).collect::<Vec<_>>();
    let both = pool(&["dead", "live"]);
    let config = RouterConfig {
        name: "auto".into(),
        tiers: [pool(simple), both.clone(), both.clone(), both],
        default_model: None,
        selection: TierSelection::Shuffle,
        session_affinity: false,
        session_ttl: Duration::from_secs(3600),
        classifier: ClassifierSettings::default(),
        llm: None,
        fallback: ClassifierFallback::Heuristic,
    };
    AutoRouter::new(config, snap).unwrap()
}

fn verdict(tier: Tier) -> Verdict {
    Verdict { tier: Some(tier), cause: Cause::HeuristicScorer, score: Some(0.0), signals: Default::default() }
}

fn gate(c: &mut Criterion) {
    let snap = snapshot();
    let now = Instant::now();
    let healthy = State::new(&snap);
    let mut cooled = State::new(&snap);
    for i in 0..PER_GROUP {
        cooled.record_failure(&snap, DeploymentIdx(i as u32), Failure::Connect, now);
    }
    let facts = RequestFacts::new(RouteKind::ChatCompletions, "auto".into());
    let router = router(&snap, &["live"]);
    let mut group = c.benchmark_group("auto_router");
    let (mut rng, mut scratch) = (Rng::new(1), PickScratch::new());
    for (name, state, tier) in [
        ("place/healthy", &healthy, Tier::Medium),
        ("place/failover", &cooled, Tier::Medium),
        ("place/single", &cooled, Tier::Simple),
    ] {
        let gate = Gate { snap: &snap, state, facts: &facts, now };
        group.bench_function(name, |b| {
            b.iter(|| router.place(&gate, black_box(verdict(tier)), false, &mut rng, &mut scratch))
        });
    }
    let gate = Gate { snap: &snap, state: &healthy, facts: &facts, now };
    let live = snap.group_by_name("live").unwrap();
    group.bench_function("can_serve", |b| b.iter(|| gate.can_serve(black_box(live), &mut scratch)));
    group.finish();
}

criterion_group!(benches, gate);
criterion_main!(benches);
