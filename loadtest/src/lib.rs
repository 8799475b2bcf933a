//! Switchyard's load-testing tools: the load generator `switchyard-load` and the mock
//! OpenAI-compatible provider used by integration tests, benchmarks and `switchyard demo`.

pub mod load;
pub mod mock;
