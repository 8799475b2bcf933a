//! Switchyard's IO shell: thread-per-core HTTP/1.1 server, upstream pools, TLS, and the CLI.

pub mod http;
