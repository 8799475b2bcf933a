//! Shared helpers for the benches: request bodies built from the repository's fixtures, the JSON
//! extraction done with each candidate library, pick and pareto-walk set-ups, and the wire
//! samples for the codec benches. Each helper is tested here so that a bench never measures a
//! wrong answer.

pub mod bodies;
pub mod json;
pub mod pareto_setup;
pub mod pick_setup;
pub mod wire;

// The gateway binary runs on mimalloc; the benches measure with the same allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A file under `tests/fixtures/` at the repository root, read at run time.
pub fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/../tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("reading fixture {path}: {e}"))
}
