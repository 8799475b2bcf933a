//! The HTTP/1.1 head parsers on the heads the gateway sees most: an OpenAI SDK request head and
//! an OpenAI response head, with the gateway's default limits.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use pointwork_benches::wire::{REQUEST_HEAD, RESPONSE_HEAD};
use pointwork_config::Limits;
use pointwork_http1::request::{parse_request_head, HeadLimits};
use pointwork_http1::response::parse_response_head;

/// The gateway's `MAX_RESPONSE_HEAD` (private in `upstream::exchange`).
const MAX_RESPONSE_HEAD: usize = 64 * 1024;

fn heads(c: &mut Criterion) {
    let defaults = Limits::default();
    let limits = HeadLimits {
        max_header_bytes: defaults.max_header_bytes,
        max_headers: defaults.max_headers,
        max_uri_bytes: defaults.max_uri_bytes,
    };
    let mut group = c.benchmark_group("http");
    group.throughput(Throughput::Bytes(REQUEST_HEAD.len() as u64));
    group.bench_function("parse_request_head/openai_python_17_fields", |b| {
        b.iter(|| parse_request_head(black_box(REQUEST_HEAD.as_bytes()), limits).expect("valid").expect("complete"))
    });
    group.throughput(Throughput::Bytes(RESPONSE_HEAD.len() as u64));
    group.bench_function("parse_response_head/openai_24_fields", |b| {
        b.iter(|| {
            let head = parse_response_head(black_box(RESPONSE_HEAD.as_bytes()), MAX_RESPONSE_HEAD);
            head.expect("valid").expect("complete").status
        })
    });
    group.finish();
}

criterion_group!(benches, heads);
criterion_main!(benches);
