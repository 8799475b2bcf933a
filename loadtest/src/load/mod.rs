//! `pointwork-load`: the bundled HTTP/1.1 (and HTTPS) load generator.
//!
//! One target or several (`--url` repeated): connection `i` talks to target `i mod n` (see
//! [`spread`]); the report covers them all, and each one apart when there are several.
//!
//! Closed loop (each connection sends its next request when the last one ends) or open loop
//! (`--rate`: requests on a fixed schedule, latency measured from each request's intended start),
//! keep-alive connections (or, with `--new-connection`, one per request) spread over one thread per
//! core, each thread an epoll loop of its own, HDR histograms per thread merged at the end.
//! `https://` targets speak TLS through rustls driven sans-IO over the same sockets (see [`tls`]),
//! with session resumption unless `--no-resume`. Streams are parsed as
//! server-sent events and count as successes only when they end with `data: [DONE]` and the last
//! chunk. See `loadtest/README.md`.

mod chunked;
pub mod cli;
mod conn;
pub mod options;
pub mod report;
pub mod request;
mod response;
mod run;
mod schedule;
pub mod spread;
mod sse;
pub mod stats;
mod sys;
mod tickets;
mod tls;
mod worker;

pub use cli::{parse_args, usage, Command};
pub use options::LoadOptions;
pub use report::Report;
pub use run::run;
