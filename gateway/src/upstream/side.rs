//! What a shard's attempts share on the upstream side: the keep-alive pool, the TLS client
//! configuration, the connect timeout, and the byte buffers the upstream request, the answer's
//! read buffer and the client's response reuse.

use std::cell::RefCell;
use std::time::Duration;

use monoio_rustls::TlsConnector;

use super::pool::Pool;
use crate::buffers::Buffers;

pub struct Upstreams {
    pub pool: RefCell<Pool>,
    pub tls: TlsConnector,
    /// `pointwork.timeouts.connect`.
    pub connect_timeout: Duration,
    pub buffers: Buffers,
}
