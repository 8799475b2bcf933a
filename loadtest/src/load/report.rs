//! The run's results: one [`Report`], printed as text and written as JSON (`--json`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

use hdrhistogram::Histogram;
use serde::Serialize;

use super::stats::{ErrorKind, Stats};

/// Percentiles of one histogram, in microseconds.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Percentiles {
    pub count: u64,
    pub min: f64,
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p99_9: f64,
    pub max: f64,
}

impl Percentiles {
    /// `None` for an empty histogram.
    pub fn of(histogram: &Histogram<u64>) -> Option<Percentiles> {
        if histogram.is_empty() {
            return None;
        }
        let micros = |nanos: u64| (nanos as f64 / 100.0).round() / 10.0;
        Some(Percentiles {
            count: histogram.len(),
            min: micros(histogram.min()),
            mean: (histogram.mean() / 100.0).round() / 10.0,
            p50: micros(histogram.value_at_quantile(0.5)),
            p90: micros(histogram.value_at_quantile(0.9)),
            p99: micros(histogram.value_at_quantile(0.99)),
            p99_9: micros(histogram.value_at_quantile(0.999)),
            max: micros(histogram.max()),
        })
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Requests {
    /// Requests that ended: `ok + errors`.
    pub total: u64,
    pub ok: u64,
    pub errors: u64,
    /// Open loop: scheduled within the run, never sent (every connection stayed busy).
    pub not_sent: u64,
    /// Still in flight when the drain grace after the run ran out.
    pub unfinished: u64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Errors {
    pub by_status: BTreeMap<String, u64>,
    pub by_kind: BTreeMap<&'static str, u64>,
    /// https: the first TLS failure in rustls's words (what a `certificate` or `tls` count is).
    pub first_tls_error: Option<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Connections {
    /// Connections opened, reconnects included.
    pub opened: u64,
    /// Idle connections the peer closed.
    pub closed_by_peer: u64,
}

/// https: the TLS handshakes of the run.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TlsReport {
    /// Handshakes completed (failed ones count in the errors).
    pub handshakes: u64,
    /// Of them, those that resumed a session (abbreviated handshakes).
    pub resumed: u64,
    /// The generator offered to resume sessions (`false` with `--no-resume`).
    pub resumption: bool,
    /// From the TCP connection's establishment to the handshake's end.
    pub handshake_us: Option<Percentiles>,
}

/// Idle mode: how the held connections fared.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Idle {
    pub requested: u64,
    /// Connections whose one request succeeded.
    pub ok: u64,
    /// Connections still open at the end of the hold.
    pub still_open: u64,
}

/// One target's share of a run with several (`--url` repeated).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TargetReport {
    pub url: String,
    /// The run's connections to this target.
    pub connections: usize,
    pub requests: Requests,
    /// Its successful requests per second of the run's `elapsed_s`.
    pub throughput_rps: f64,
    pub errors: Errors,
    pub latency_us: Option<Percentiles>,
}

/// Everything a run reports.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Report {
    /// The URL, or the URLs separated by single spaces (`--url` repeated).
    pub url: String,
    /// `closed`, `open` or `idle`.
    pub mode: &'static str,
    pub threads: usize,
    pub concurrency: usize,
    pub rate: Option<f64>,
    pub stream: bool,
    pub body_bytes: usize,
    /// `--new-connection`: every request on a connection of its own.
    pub new_connection: bool,
    pub duration_s: Option<f64>,
    pub requests_limit: Option<u64>,
    pub elapsed_s: f64,
    pub requests: Requests,
    /// Successful requests per second of `elapsed_s`.
    pub throughput_rps: f64,
    pub errors: Errors,
    /// Successful requests: (intended) start to the last byte.
    pub latency_us: Option<Percentiles>,
    /// Successful streams: (intended) start to the first byte of the first event.
    pub ttfb_us: Option<Percentiles>,
    /// Successful streams: between consecutive events.
    pub inter_event_us: Option<Percentiles>,
    /// Successful streams: events received (`[DONE]` not counted).
    pub events: Option<u64>,
    /// Open loop: how late requests were written after their intended start — the generator's
    /// own jitter, plus the wait for a free connection.
    pub send_lag_us: Option<Percentiles>,
    pub connections: Connections,
    /// https: the handshakes; `None` when no target is https.
    pub tls: Option<TlsReport>,
    pub idle: Option<Idle>,
    /// With several URLs, each one's share, in `--url` order (everything above is their total);
    /// `None` with one.
    pub targets: Option<Vec<TargetReport>>,
}

/// One target of a run with several: its URL, connections and what they recorded.
pub struct TargetInfo<'a> {
    pub url: String,
    pub connections: usize,
    pub stats: &'a Stats,
}

/// What the run was, besides what it measured.
pub struct RunInfo {
    pub url: String,
    pub mode: &'static str,
    pub threads: usize,
    pub concurrency: usize,
    pub rate: Option<f64>,
    pub stream: bool,
    pub body_bytes: usize,
    pub duration: Option<Duration>,
    pub requests_limit: Option<u64>,
    pub elapsed: Duration,
    pub idle_still_open: Option<u64>,
    pub new_connection: bool,
    /// https: whether sessions were offered for resumption; `None` when no target is https.
    pub tls_resumption: Option<bool>,
}

fn requests(stats: &Stats) -> Requests {
    Requests {
        total: stats.completed(),
        ok: stats.ok,
        errors: stats.errors(),
        not_sent: stats.not_sent,
        unfinished: stats.unfinished,
    }
}

fn errors(stats: &Stats) -> Errors {
    Errors {
        by_status: stats.by_status.iter().map(|(status, count)| (status.to_string(), *count)).collect(),
        by_kind: ErrorKind::ALL.iter().map(|&kind| (kind.name(), stats.kind(kind))).collect(),
        first_tls_error: stats.first_tls_error.clone(),
    }
}

fn throughput(ok: u64, elapsed: f64) -> f64 {
    if elapsed > 0.0 {
        (ok as f64 / elapsed * 10.0).round() / 10.0
    } else {
        0.0
    }
}

impl Report {
    pub fn new(info: RunInfo, stats: &Stats) -> Report {
        // Rounded once, so the total and every target's share divide by the same time.
        let elapsed = (info.elapsed.as_secs_f64() * 1e6).round() / 1e6;
        Report {
            url: info.url,
            mode: info.mode,
            threads: info.threads,
            concurrency: info.concurrency,
            rate: info.rate,
            stream: info.stream,
            body_bytes: info.body_bytes,
            new_connection: info.new_connection,
            duration_s: info.duration.map(|duration| duration.as_secs_f64()),
            requests_limit: info.requests_limit,
            elapsed_s: elapsed,
            requests: requests(stats),
            throughput_rps: throughput(stats.ok, elapsed),
            errors: errors(stats),
            latency_us: Percentiles::of(&stats.latency),
            ttfb_us: info.stream.then(|| Percentiles::of(&stats.ttfb)).flatten(),
            inter_event_us: info.stream.then(|| Percentiles::of(&stats.inter_event)).flatten(),
            events: info.stream.then_some(stats.events),
            send_lag_us: Percentiles::of(&stats.send_lag),
            connections: Connections { opened: stats.connections, closed_by_peer: stats.lost },
            tls: info.tls_resumption.map(|resumption| TlsReport {
                handshakes: stats.handshakes,
                resumed: stats.resumed,
                resumption,
                handshake_us: Percentiles::of(&stats.handshake),
            }),
            idle: info.idle_still_open.map(|still_open| Idle {
                requested: info.concurrency as u64,
                ok: stats.ok,
                still_open,
            }),
            targets: None,
        }
    }

    /// The report with each target's share (a run with several URLs).
    pub fn with_targets<'a>(mut self, targets: impl IntoIterator<Item = TargetInfo<'a>>) -> Report {
        let elapsed = self.elapsed_s;
        let targets = targets.into_iter().map(|target| TargetReport {
            url: target.url,
            connections: target.connections,
            requests: requests(target.stats),
            throughput_rps: throughput(target.stats.ok, elapsed),
            errors: errors(target.stats),
            latency_us: Percentiles::of(&target.stats.latency),
        });
        self.targets = Some(targets.collect());
        self
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a report always serialises")
    }

    /// The human-readable summary.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let what = match self.mode {
            "open" => format!("open loop at {} requests/s", self.rate.unwrap_or_default()),
            "idle" => "idle connections".to_owned(),
            _ => "closed loop".to_owned(),
        };
        let length = match (self.duration_s, self.requests_limit) {
            (_, Some(limit)) => format!("{limit} requests"),
            (Some(seconds), None) => format!("{seconds}s"),
            (None, None) => String::new(),
        };
        let to = match &self.targets {
            Some(targets) => format!("round-robin over {} URLs", targets.len()),
            None => self.url.clone(),
        };
        // Writing into a String cannot fail.
        let _ = writeln!(
            out,
            "pointwork-load: {what}, {} connections on {} threads, {length}{}{}, POST {to} ({}-byte body)",
            self.concurrency,
            self.threads,
            if self.stream { ", streaming" } else { "" },
            if self.new_connection { ", a new connection per request" } else { "" },
            self.body_bytes
        );
        if let Some(idle) = &self.idle {
            let _ = writeln!(
                out,
                "idle        {} requested, {} answered ok, {} still open after the hold",
                idle.requested, idle.ok, idle.still_open
            );
        }
        let requests = &self.requests;
        let _ = write!(out, "requests    {} ok, {} errors", requests.ok, requests.errors);
        if requests.not_sent > 0 {
            let _ = write!(out, ", {} not sent (every connection busy)", requests.not_sent);
        }
        if requests.unfinished > 0 {
            let _ = write!(out, ", {} unfinished", requests.unfinished);
        }
        let _ = writeln!(out, " in {:.3}s", self.elapsed_s);
        if self.idle.is_none() {
            let _ = writeln!(out, "throughput  {:.1} requests/s", self.throughput_rps);
        }
        let lines = [
            ("latency", &self.latency_us),
            ("ttfb", &self.ttfb_us),
            ("inter-event", &self.inter_event_us),
            ("send lag", &self.send_lag_us),
        ];
        for (name, percentiles) in lines {
            percentiles_line(&mut out, name, percentiles);
        }
        if let Some(events) = self.events {
            let _ = writeln!(out, "events      {events} in successful streams");
        }
        if requests.errors > 0 {
            let statuses = self.errors.by_status.iter().map(|(status, count)| format!("status {status}: {count}"));
            let kinds = self
                .errors
                .by_kind
                .iter()
                .filter(|(_, &count)| count > 0)
                .map(|(kind, count)| format!("{kind}: {count}"));
            let _ = write!(out, "errors      {}", statuses.chain(kinds).collect::<Vec<_>>().join(", "));
            if let Some(first) = &self.errors.first_tls_error {
                let _ = write!(out, " (first TLS error: {first})");
            }
            out.push('\n');
        }
        if let Some(tls) = &self.tls {
            let resumption = if tls.resumption { "resumption on" } else { "resumption off" };
            let _ = writeln!(out, "tls         {} handshakes, {} resumed ({resumption})", tls.handshakes, tls.resumed);
            percentiles_line(&mut out, "handshake", &tls.handshake_us);
        }
        let _ = writeln!(
            out,
            "connections {} opened, {} closed by the peer while idle",
            self.connections.opened, self.connections.closed_by_peer
        );
        for (index, target) in self.targets.iter().flatten().enumerate() {
            let _ = write!(
                out,
                "target {}    {} ({} connections): {} ok, {} errors, {:.1} requests/s",
                index + 1,
                target.url,
                target.connections,
                target.requests.ok,
                target.requests.errors,
                target.throughput_rps
            );
            if let Some(p) = &target.latency_us {
                let _ = write!(out, ", latency p50 {}  p99 {}", micros(p.p50), micros(p.p99));
            }
            out.push('\n');
        }
        out
    }
}

/// `NAME p50 …  p90 …  p99 …  p99.9 …  max …`, when there is something to show.
fn percentiles_line(out: &mut String, name: &str, percentiles: &Option<Percentiles>) {
    if let Some(p) = percentiles {
        // Writing into a String cannot fail.
        let _ = writeln!(
            out,
            "{name:<11} p50 {}  p90 {}  p99 {}  p99.9 {}  max {}",
            micros(p.p50),
            micros(p.p90),
            micros(p.p99),
            micros(p.p99_9),
            micros(p.max)
        );
    }
}

/// `123.4µs`, or `12.35ms` from 10 ms up.
fn micros(value: f64) -> String {
    if value >= 10_000.0 {
        format!("{:.2}ms", value / 1000.0)
    } else {
        format!("{value:.1}µs")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_in_microseconds() {
        let mut stats = Stats::default();
        for micros in 1..=1000u64 {
            stats.success(Duration::from_micros(micros));
        }
        let p = Percentiles::of(&stats.latency).unwrap();
        assert_eq!(p.count, 1000);
        assert!((p.p50 - 500.0).abs() < 1.0, "{p:?}");
        assert!((p.p99 - 990.0).abs() < 1.0, "{p:?}");
        assert!((p.max - 1000.0).abs() < 1.0, "{p:?}");
        assert!(Percentiles::of(&Stats::default().latency).is_none());
    }

    #[test]
    fn text_names_every_error() {
        let mut stats = Stats::default();
        stats.success(Duration::from_micros(50));
        stats.status_error(500);
        stats.error(ErrorKind::TruncatedStream);
        let info = RunInfo {
            url: "http://x/".into(),
            mode: "closed",
            threads: 1,
            concurrency: 1,
            rate: None,
            stream: true,
            body_bytes: 2,
            duration: Some(Duration::from_secs(1)),
            requests_limit: None,
            elapsed: Duration::from_secs(1),
            idle_still_open: None,
            new_connection: false,
            tls_resumption: None,
        };
        let report = Report::new(info, &stats);
        assert_eq!(report.requests, Requests { total: 3, ok: 1, errors: 2, not_sent: 0, unfinished: 0 });
        let text = report.to_text();
        assert!(text.contains("status 500: 1, truncated_stream: 1"), "{text}");
        assert!(text.contains("1 ok, 2 errors"), "{text}");
        assert_eq!(report.events, Some(0));
        assert!(report.tls.is_none() && !text.contains("tls"), "{text}");
    }

    #[test]
    fn https_runs_report_their_handshakes() {
        let mut stats = Stats::default();
        stats.success(Duration::from_micros(900));
        stats.handshake(Duration::from_micros(700), false);
        stats.handshake(Duration::from_micros(300), true);
        stats.error(ErrorKind::Certificate);
        stats.tls_failure(&"invalid peer certificate: UnknownIssuer");
        let info = RunInfo {
            url: "https://x/".into(),
            mode: "closed",
            threads: 1,
            concurrency: 1,
            rate: None,
            stream: false,
            body_bytes: 2,
            duration: None,
            requests_limit: Some(2),
            elapsed: Duration::from_secs(1),
            idle_still_open: None,
            new_connection: true,
            tls_resumption: Some(true),
        };
        let report = Report::new(info, &stats);
        let tls = report.tls.as_ref().expect("https");
        assert_eq!((tls.handshakes, tls.resumed, tls.resumption), (2, 1, true));
        assert_eq!(tls.handshake_us.as_ref().map(|p| p.count), Some(2));
        let text = report.to_text();
        assert!(text.contains("a new connection per request"), "{text}");
        assert!(text.contains("tls         2 handshakes, 1 resumed (resumption on)"), "{text}");
        assert!(text.contains("\nhandshake   p50 "), "{text}");
        assert!(text.contains("certificate: 1 (first TLS error: invalid peer certificate: UnknownIssuer)"), "{text}");
        let json: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
        assert_eq!(json["tls"]["resumed"], 1);
        assert_eq!(json["errors"]["by_kind"]["certificate"], 1);
    }
}
