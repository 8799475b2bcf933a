//! What a TLS listener shares between the shards and the control thread: the certificates in
//! service and the handshakes' outcomes.

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};

use super::TlsCerts;
use crate::metrics::render::gauge;

/// What a TLS listener needs on every shard: the certificates in service (replaced by a
/// reload) and the handshakes' outcomes for `/metrics`.
pub struct TlsListener {
    pub certs: TlsCerts,
    pub handshakes: HandshakeCounts,
}

/// Handshakes by outcome, all shards together (touched once per connection, never per request).
#[derive(Default)]
pub struct HandshakeCounts {
    pub ok: AtomicU64,
    /// Refused by TLS: garbage, a truncated hello, no shared version or cipher, a client
    /// certificate missing or not signed by `client_ca`.
    pub failed: AtomicU64,
    /// Not finished within `timeouts.request_head` of its first byte.
    pub timed_out: AtomicU64,
    /// A plain HTTP request on the HTTPS port (answered 400).
    pub plain_http: AtomicU64,
}

impl TlsListener {
    /// The certificate's expiry and the handshakes, for `/metrics`.
    pub fn render(&self, out: &mut String) {
        let left = self.certs.seconds_until_expiry(std::time::SystemTime::now());
        let name = "pointwork_tls_certificate_expiry_seconds";
        gauge(out, name, "Seconds until the listener's certificate expires (negative: expired).", left);
        let name = "pointwork_tls_handshakes_total";
        let _ = writeln!(out, "# HELP {name} TLS handshakes on the listener, by outcome.\n# TYPE {name} counter");
        for (outcome, n) in self.handshakes.by_outcome() {
            let _ = writeln!(out, "{name}{{outcome=\"{outcome}\"}} {n}");
        }
    }
}

impl HandshakeCounts {
    /// `(outcome label, count)` for `/metrics`.
    pub fn by_outcome(&self) -> [(&'static str, u64); 4] {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        [
            ("ok", get(&self.ok)),
            ("failed", get(&self.failed)),
            ("timeout", get(&self.timed_out)),
            ("plain_http", get(&self.plain_http)),
        ]
    }
}
