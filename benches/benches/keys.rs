//! Virtual keys on the request path: who the caller is (SHA-256 of the presented key and a map
//! lookup, or the master key's constant-time compare) and a key's admission (rpm as one
//! compare-and-swap on a counter every shard shares), alone and with two threads contending.

use std::hint::black_box;
use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion};
use pointwork_config::load_str;
use pointwork_core::{KeyLimits, KeyMeter};
use pointwork_gateway::keys::{digest_hex, Keys};

const KEY: &[u8] = b"sk-team-a-0123456789abcdef0123456789abcdef";
const MASTER: &str = "sk-master-0123456789abcdef0123456789abcdef";

fn keys() -> Keys {
    let yaml = format!(
        "model_list:\n  - model_name: gpt\n    litellm_params: {{model: openai/x}}\ngeneral_settings: {{master_key: {MASTER}}}\npointwork:\n  auth:\n    virtual_keys:\n{}",
        (0..100)
            .map(|i| {
                let key = if i == 42 { KEY.to_vec() } else { format!("sk-other-{i}").into_bytes() };
                format!("      - {{name: k{i}, sha256: {}, rpm: 1000000000}}\n", digest_hex(&key))
            })
            .collect::<String>()
    );
    let config = load_str(&yaml, Path::new("."), &|_| None).expect("config").config;
    let snapshot = config.snapshot().expect("snapshot");
    Keys::new(&config.auth, config.master_key.clone(), &snapshot, None, false)
}

fn identify(c: &mut Criterion) {
    let keys = keys();
    let virtual_key = [b"Bearer ".as_slice(), KEY].concat();
    let master = format!("Bearer {MASTER}").into_bytes();
    let mut group = c.benchmark_group("keys");
    group.bench_function("virtual key: sha256 + lookup (100 keys)", |b| {
        b.iter(|| black_box(keys.api_caller(Some(black_box(&virtual_key)), None).is_ok()))
    });
    group.bench_function("master key: constant-time compare", |b| {
        b.iter(|| black_box(keys.api_caller(Some(black_box(&master)), None).is_ok()))
    });
    let limits = KeyLimits { rpm: Some(u64::MAX >> 1), ..KeyLimits::default() };
    let meter = KeyMeter::default();
    group.bench_function("admit (rpm, one thread)", |b| {
        b.iter(|| black_box(meter.admit(black_box(&limits), 1_800_000_000).is_ok()))
    });
    group.bench_function("admit (rpm, another thread admitting on the same key)", |b| {
        let stop = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let _ = meter.admit(&limits, 1_800_000_000);
                }
            });
            b.iter(|| black_box(meter.admit(black_box(&limits), 1_800_000_000).is_ok()));
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
        });
    });
    group.finish();
}

criterion_group!(benches, identify);
criterion_main!(benches);
