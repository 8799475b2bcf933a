//! Pointwork's IO shell: thread-per-core HTTP/1.1 server, upstream pools, TLS, and the CLI.

pub mod access_log;
pub mod app;
pub mod buffers;
pub(crate) mod cache;
pub mod cli;
pub mod clock;
pub mod cluster;
pub mod control;
pub mod credentials;
pub mod database;
pub mod demo;
pub mod errors;
pub mod events;
pub mod export;
pub mod facts;
mod facts_scan;
pub mod health;
pub mod hub;
pub mod keys;
pub mod launch;
pub mod line_log;
pub mod mcp;
pub mod metrics;
pub mod model_info;
pub mod models_list;
mod output;
pub mod pareto_poller;
pub mod pipeline;
pub mod providers;
pub mod request;
pub mod respond;
pub mod responses;
pub mod route;
pub mod routers;
pub mod routes;
pub mod server;
pub mod shard;
pub mod spend_file;
pub mod start;
pub mod tcp_or_tls;
pub mod tls;
pub mod ui;
pub mod upstream;
pub mod usage;

pub use app::run;
/// The dialect translators, their own crate: `crate::dialect::…` paths read as before.
pub use pointwork_dialect as dialect;
/// The HTTP/1.1 codec, its own crate: `crate::http::…` paths read as before.
pub use pointwork_http1 as http;
