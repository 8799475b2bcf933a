//! Pointwork's load-testing tools: the load generator `pointwork-load` and the mock
//! OpenAI-compatible provider used by integration tests, benchmarks and `pointwork demo`.

pub mod load;
pub mod mock;
