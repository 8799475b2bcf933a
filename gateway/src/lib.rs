//! Switchyard's IO shell: thread-per-core HTTP/1.1 server, upstream pools, TLS, and the CLI.

pub mod app;
pub mod cli;
pub mod demo;
pub mod errors;
pub mod facts;
pub mod http;
pub mod proxy;
pub mod respond;
pub mod routes;
pub mod server;
pub mod shard;
pub mod upstream;

pub use app::run;
