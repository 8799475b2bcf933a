//! Pointwork's load generator `pointwork-load`. The mock provider it is usually pointed at
//! in tests and benchmarks is its own crate, `pointwork-mock`.

pub mod load;
