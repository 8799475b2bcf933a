//! Shared helpers for the benches.
