//! The upstream side: targets, connections, the keep-alive pool, and one request/response exchange.

pub mod body_block;
pub mod conn;
pub mod exchange;
pub mod fetch;
pub mod pool;
pub mod target;
