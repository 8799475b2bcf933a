//! SSE pass-through per event: what the gateway does for each chunk an upstream streams
//! (`BodyProgress::relay` in `upstream::exchange`): decode the chunk into a scratch buffer,
//! re-encode it as one chunk for the client. One decoder lives for the whole stream.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use pointwork_benches::wire::{sse_chunk, sse_event};
use pointwork_http1::chunked::{encode_chunk, ChunkedDecoder};

fn relay(c: &mut Criterion) {
    let event = sse_event();
    let chunk = sse_chunk(&event);
    let mut decoder = ChunkedDecoder::new();
    let mut scratch = Vec::with_capacity(16 * 1024);
    let mut out = Vec::with_capacity(16 * 1024);
    let mut group = c.benchmark_group("sse");
    group.throughput(Throughput::Bytes(chunk.len() as u64));
    group.bench_function(format!("relay_event/{}B", event.len()), |b| {
        b.iter(|| {
            scratch.clear();
            out.clear();
            let used = decoder.feed(black_box(&chunk), &mut scratch).expect("valid chunk");
            encode_chunk(&scratch, &mut out);
            black_box(&out);
            used
        })
    });
    group.finish();
}

criterion_group!(benches, relay);
criterion_main!(benches);
