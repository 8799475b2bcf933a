//! Request-facts extraction on chat bodies of 1 KB … 1 MB, with each JSON library DESIGN.md
//! asks us to compare. `serde_json_borrowed` is the gateway's own `facts::extract`;
//! the `+std_utf8` / `+simdutf8` variants add the whole-body UTF-8 check the other two make.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use pointwork_benches::bodies::{chat_body, SIZES};
use pointwork_benches::json::{
    serde_json_borrowed, serde_json_borrowed_simdutf8, serde_json_borrowed_std_utf8, serde_json_top, simd_json_tape,
    sonic_rs_lazy, SimdJsonScratch,
};

fn facts(c: &mut Criterion) {
    let mut group = c.benchmark_group("facts");
    for (label, size) in SIZES {
        let body = chat_body(size);
        group.throughput(Throughput::Bytes(body.len() as u64));
        group.bench_with_input(BenchmarkId::new("serde_json_borrowed", label), &body, |b, body| {
            b.iter(|| serde_json_borrowed(black_box(body)).expect("valid"))
        });
        group.bench_with_input(BenchmarkId::new("serde_json_top", label), &body, |b, body| {
            b.iter(|| serde_json_top(black_box(body)).expect("valid"))
        });
        group.bench_with_input(BenchmarkId::new("serde_json_borrowed+std_utf8", label), &body, |b, body| {
            b.iter(|| serde_json_borrowed_std_utf8(black_box(body)).expect("valid"))
        });
        group.bench_with_input(BenchmarkId::new("serde_json_borrowed+simdutf8", label), &body, |b, body| {
            b.iter(|| serde_json_borrowed_simdutf8(black_box(body)).expect("valid"))
        });
        group.bench_with_input(BenchmarkId::new("sonic_rs", label), &body, |b, body| {
            b.iter(|| sonic_rs_lazy(black_box(body)).expect("valid"))
        });
        let mut scratch = SimdJsonScratch::default();
        group.bench_with_input(BenchmarkId::new("simd_json", label), &body, |b, body| {
            b.iter(|| simd_json_tape(black_box(body), &mut scratch).expect("valid"))
        });
    }
    group.finish();
}

criterion_group!(benches, facts);
criterion_main!(benches);
