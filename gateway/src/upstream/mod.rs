//! The upstream side: targets, connections, the keep-alive pool, and one request/response exchange.

pub mod attempt_error;
pub mod body_block;
pub mod conn;
pub mod exchange;
pub mod fetch;
pub mod pool;
pub mod side;
pub mod target;
pub mod tee;
