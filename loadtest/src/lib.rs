//! Switchyard's load-testing tools: the mock OpenAI-compatible provider used by integration
//! tests, benchmarks and `switchyard demo`.

pub mod mock;
