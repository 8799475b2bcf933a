//! The complexity router's heuristic classifier (issue 15, `core/src/complexity`) over one
//! prompt under the default settings: a 1 KB and a 32 KB user turn of mixed prose, code and
//! technical terms. Goals: ≤ 3 µs at 1 KB, ≤ 30 µs at 32 KB.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use pointwork_core::complexity::{classify, Classifier, ClassifierSettings};

const PARAGRAPH: &str = "Our checkout service times out under load. The handler reads the cart from the \
database, calls the pricing API and writes an order; p99 latency grows with traffic while CPU stays \
low. Here is the function: async fn place(order: Order) -> Result<Id, Error> { let cart = db.load(order.cart).await?; \
pricing.quote(&cart).await } What would you change first, and why? ";

fn prompt(len: usize) -> String {
    let mut text = String::with_capacity(len + PARAGRAPH.len());
    while text.len() < len {
        text.push_str(PARAGRAPH);
    }
    text.truncate(len);
    text
}

fn classify_prompt(c: &mut Criterion) {
    let classifier = Classifier::new(ClassifierSettings::default());
    let mut group = c.benchmark_group("complexity");
    for (name, len) in [("1KB", 1024), ("32KB", 32 * 1024)] {
        let text = prompt(len);
        group.throughput(Throughput::Bytes(len as u64));
        group.bench_with_input(BenchmarkId::new("classify", name), &text, |b, text| {
            b.iter(|| classify(black_box(text), &classifier).tier)
        });
    }
    group.finish();
}

criterion_group!(benches, classify_prompt);
criterion_main!(benches);
