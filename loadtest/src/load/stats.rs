//! What one thread measured: HDR histograms (nanoseconds) and counters, merged at the end.

use std::collections::BTreeMap;
use std::time::Duration;

use hdrhistogram::Histogram;

/// Why a request failed without a status to show for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ErrorKind {
    /// The connection could not be opened (refused, unreachable, connect timeout).
    Connect,
    /// No complete response within `--timeout` of the send.
    Timeout,
    /// The peer reset the connection (`ECONNRESET`, `EPIPE`).
    Reset,
    /// The peer closed the connection before a whole response arrived (not a stream).
    Closed,
    /// A response that is not HTTP/1.1 as it must be: bad head or framing, bytes after the end,
    /// a 2xx answer to a stream request that is not a chunked event stream.
    BadResponse,
    /// A 2xx stream that ended without `data: [DONE]` or without its last chunk.
    TruncatedStream,
    /// https: the server's certificate was refused (untrusted issuer, wrong name, expired).
    Certificate,
    /// https: any other TLS failure — an alert from the server, a protocol error, a connection
    /// closed during the handshake, a record that does not decrypt.
    Tls,
}

impl ErrorKind {
    pub const ALL: [ErrorKind; 8] = [
        ErrorKind::Connect,
        ErrorKind::Timeout,
        ErrorKind::Reset,
        ErrorKind::Closed,
        ErrorKind::BadResponse,
        ErrorKind::TruncatedStream,
        ErrorKind::Certificate,
        ErrorKind::Tls,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Connect => "connect",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Reset => "reset",
            ErrorKind::Closed => "closed",
            ErrorKind::BadResponse => "bad_response",
            ErrorKind::TruncatedStream => "truncated_stream",
            ErrorKind::Certificate => "certificate",
            ErrorKind::Tls => "tls",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// A histogram of nanoseconds, 3 significant digits, growing as needed.
pub fn histogram() -> Histogram<u64> {
    let mut histogram = Histogram::new(3).expect("3 significant digits are valid");
    histogram.auto(true);
    histogram
}

fn record(histogram: &mut Histogram<u64>, value: Duration) {
    let nanos = u64::try_from(value.as_nanos()).unwrap_or(u64::MAX).max(1);
    // Auto-resizing: recording never fails for values in range, and every u64 is.
    let _ = histogram.record(nanos);
}

#[derive(Debug, Clone)]
pub struct Stats {
    /// Requests that got a 2xx answer, complete (streams ended properly).
    pub ok: u64,
    /// Complete answers with another status, by status.
    pub by_status: BTreeMap<u16, u64>,
    pub by_kind: [u64; ErrorKind::ALL.len()],
    /// The first TLS failure's own words (rustls's error), to say what a `certificate` or `tls`
    /// count means.
    pub first_tls_error: Option<String>,
    /// Open loop: requests scheduled in the run but never sent (all connections stayed busy).
    pub not_sent: u64,
    /// Requests still in flight when the drain grace after the run ran out.
    pub unfinished: u64,
    /// Idle connections the peer closed (not errors: the next request reconnects).
    pub lost: u64,
    /// Connections opened (reconnects included).
    pub connections: u64,
    /// Stream events (besides `[DONE]`) in successful streams.
    pub events: u64,
    /// https: TLS handshakes completed, and how many of them resumed a session.
    pub handshakes: u64,
    pub resumed: u64,
    /// https: each completed handshake, from the TCP connection's establishment to rustls done.
    pub handshake: Histogram<u64>,
    /// Successful requests: from the (intended) start to the last byte.
    pub latency: Histogram<u64>,
    /// Successful streams: from the (intended) start to the first byte of the first event.
    pub ttfb: Histogram<u64>,
    /// Successful streams: between the arrival of consecutive events.
    pub inter_event: Histogram<u64>,
    /// Open loop: how late each request was written after its intended start.
    pub send_lag: Histogram<u64>,
}

impl Default for Stats {
    fn default() -> Self {
        Stats {
            ok: 0,
            by_status: BTreeMap::new(),
            by_kind: [0; ErrorKind::ALL.len()],
            first_tls_error: None,
            not_sent: 0,
            unfinished: 0,
            lost: 0,
            connections: 0,
            events: 0,
            handshakes: 0,
            resumed: 0,
            handshake: histogram(),
            latency: histogram(),
            ttfb: histogram(),
            inter_event: histogram(),
            send_lag: histogram(),
        }
    }
}

impl Stats {
    pub fn success(&mut self, latency: Duration) {
        self.ok += 1;
        record(&mut self.latency, latency);
    }

    pub fn status_error(&mut self, status: u16) {
        *self.by_status.entry(status).or_default() += 1;
    }

    pub fn error(&mut self, kind: ErrorKind) {
        self.by_kind[kind.index()] += 1;
    }

    pub fn ttfb(&mut self, value: Duration) {
        record(&mut self.ttfb, value);
    }

    pub fn inter_event(&mut self, value: Duration) {
        record(&mut self.inter_event, value);
    }

    pub fn send_lag(&mut self, value: Duration) {
        record(&mut self.send_lag, value);
    }

    /// A TLS handshake completed in `duration`.
    pub fn handshake(&mut self, duration: Duration, resumed: bool) {
        self.handshakes += 1;
        self.resumed += u64::from(resumed);
        record(&mut self.handshake, duration);
    }

    /// Keeps the first TLS failure's message (the count is kept by [`Stats::error`]).
    pub fn tls_failure(&mut self, error: &dyn std::fmt::Display) {
        if self.first_tls_error.is_none() {
            self.first_tls_error = Some(error.to_string());
        }
    }

    pub fn kind(&self, kind: ErrorKind) -> u64 {
        self.by_kind[kind.index()]
    }

    /// Every failed request: non-2xx answers and failures of every kind.
    pub fn errors(&self) -> u64 {
        self.by_status.values().sum::<u64>() + self.by_kind.iter().sum::<u64>()
    }

    /// Requests that ended one way or the other.
    pub fn completed(&self) -> u64 {
        self.ok + self.errors()
    }

    pub fn merge(&mut self, other: &Stats) {
        self.ok += other.ok;
        for (status, count) in &other.by_status {
            *self.by_status.entry(*status).or_default() += count;
        }
        for (mine, theirs) in self.by_kind.iter_mut().zip(other.by_kind) {
            *mine += theirs;
        }
        self.not_sent += other.not_sent;
        self.unfinished += other.unfinished;
        self.lost += other.lost;
        self.connections += other.connections;
        self.events += other.events;
        self.handshakes += other.handshakes;
        self.resumed += other.resumed;
        if self.first_tls_error.is_none() {
            self.first_tls_error.clone_from(&other.first_tls_error);
        }
        // All auto-resize: adding never fails.
        let _ = self.handshake.add(&other.handshake);
        let _ = self.latency.add(&other.latency);
        let _ = self.ttfb.add(&other.ttfb);
        let _ = self.inter_event.add(&other.inter_event);
        let _ = self.send_lag.add(&other.send_lag);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_adds_everything() {
        let mut one = Stats::default();
        one.success(Duration::from_micros(100));
        one.status_error(500);
        one.error(ErrorKind::Reset);
        let mut two = Stats::default();
        two.success(Duration::from_micros(300));
        two.status_error(500);
        two.status_error(429);
        two.error(ErrorKind::TruncatedStream);
        two.events = 7;
        two.handshake(Duration::from_micros(900), true);
        two.handshake(Duration::from_micros(1900), false);
        two.first_tls_error = Some("invalid peer certificate: UnknownIssuer".to_owned());
        one.merge(&two);
        assert_eq!((one.handshakes, one.resumed, one.handshake.len()), (2, 1, 2));
        assert_eq!(one.first_tls_error.as_deref(), Some("invalid peer certificate: UnknownIssuer"));
        assert_eq!(one.ok, 2);
        assert_eq!(one.by_status, BTreeMap::from([(429, 1), (500, 2)]));
        assert_eq!(one.kind(ErrorKind::Reset), 1);
        assert_eq!(one.kind(ErrorKind::TruncatedStream), 1);
        assert_eq!(one.errors(), 5);
        assert_eq!(one.completed(), 7);
        assert_eq!(one.events, 7);
        assert_eq!(one.latency.len(), 2);
        assert!(one.latency.max() >= 299_000);
    }
}
