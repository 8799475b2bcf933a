//! The access log: one JSON line per request, to stdout or a file. Each shard buffers its lines
//! and writes them in whole-line batches (when the buffer fills, and a few times a second), so
//! a request costs a few hundred bytes of formatting and no syscall. Never a key, never a prompt:
//! only names, numbers and the routing decision.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use pointwork_config::AccessLogTarget;

/// Where lines go.
pub enum Sink {
    Stdout,
    File(File),
}

impl Sink {
    /// Opens the configured target; `None` when the log is off. A file is created owner-only
    /// (0600), appended to, and never reached through a symlink.
    pub fn open(target: &AccessLogTarget) -> std::io::Result<Option<Arc<Sink>>> {
        Ok(match target {
            AccessLogTarget::Off => None,
            AccessLogTarget::Stdout => Some(Arc::new(Sink::Stdout)),
            AccessLogTarget::File(path) => Some(Arc::new(Sink::File(open_private_append(path)?))),
        })
    }

    fn write_all(&self, bytes: &[u8]) -> std::io::Result<()> {
        match self {
            Sink::Stdout => std::io::stdout().lock().write_all(bytes),
            Sink::File(f) => (&*f).write_all(bytes),
        }
    }
}

fn open_private_append(path: &Path) -> std::io::Result<File> {
    OpenOptions::new().append(true).create(true).mode(0o600).custom_flags(libc::O_NOFOLLOW).open(path)
}

/// Buffered bytes written once this many are waiting.
const FLUSH_AT: usize = 32 * 1024;

/// One shard's access log.
#[derive(Default)]
pub struct AccessLog {
    sink: Option<Arc<Sink>>,
    buf: Vec<u8>,
}

/// One request's line.
pub struct Entry<'a> {
    pub time: SystemTime,
    pub shard: usize,
    pub path: &'a str,
    /// The requested model name (empty when the body named none).
    pub model: &'a str,
    /// The caller's key by name, never the key (`master` for the master key).
    pub key: Option<&'a str>,
    pub model_group: Option<&'a str>,
    pub deployment: Option<&'a str>,
    pub attempts: u32,
    pub status: u16,
    pub stream: bool,
    /// Time spent on the last attempt's upstream exchange.
    pub upstream: Option<Duration>,
    pub total: Duration,
    pub bytes_in: u64,
    pub bytes_out: u64,
    /// The policy the request ran under (the policy router).
    pub policy: Option<&'a str>,
    /// The deployments whose attempts failed before the one that answered (policy failover).
    pub failed_over: &'a [&'a str],
    /// The decision's cause (`fresh`, `retry`, …) and its one-line reason.
    pub cause: Option<&'a str>,
    pub route: Option<&'a str>,
    /// The complexity router's record, a JSON object.
    pub routing_decision: Option<&'a str>,
    /// The request's trace (32 hex digits), when an exporter is on.
    pub trace_id: Option<&'a str>,
    /// The answer came from the response cache.
    pub cache_hit: bool,
}

/// One request sent on to an MCP server (`/mcp`, `/mcp-rest`): its own line.
pub struct McpEntry<'a> {
    pub time: SystemTime,
    pub shard: usize,
    pub path: &'a str,
    /// The server's name (`mcp_servers.NAME`).
    pub server: &'a str,
    /// `tools/call`, `prompts/get`, `resources/read`, ….
    pub method: &'a str,
    /// The tool, prompt or resource as the server knows it.
    pub target: &'a str,
    /// The caller's key by name.
    pub key: Option<&'a str>,
    /// `ok`, `tool_error`, `error`, `failed`, `cancelled`.
    pub outcome: &'a str,
    pub total: Duration,
}

impl AccessLog {
    pub fn new(sink: Option<Arc<Sink>>) -> AccessLog {
        AccessLog { sink, buf: Vec::new() }
    }

    pub fn is_on(&self) -> bool {
        self.sink.is_some()
    }

    pub fn write(&mut self, e: &Entry<'_>) {
        if self.sink.is_none() {
            return;
        }
        let b = &mut self.buf;
        line_start(b, e.time, e.shard, e.path);
        field_str(b, "model", e.model);
        field_opt_str(b, "key", e.key);
        field_opt_str(b, "model_group", e.model_group);
        field_opt_str(b, "deployment", e.deployment);
        b.extend_from_slice(b",\"attempts\":");
        number(b, u64::from(e.attempts));
        b.extend_from_slice(b",\"status\":");
        number(b, u64::from(e.status));
        b.extend_from_slice(if e.stream { b",\"stream\":true" } else { b",\"stream\":false" });
        b.extend_from_slice(b",\"upstream_ms\":");
        match e.upstream {
            Some(d) => millis(b, d),
            None => b.extend_from_slice(b"null"),
        }
        b.extend_from_slice(b",\"total_ms\":");
        millis(b, e.total);
        b.extend_from_slice(b",\"bytes_in\":");
        number(b, e.bytes_in);
        b.extend_from_slice(b",\"bytes_out\":");
        number(b, e.bytes_out);
        if e.policy.is_some() {
            field_opt_str(b, "policy", e.policy);
        }
        if !e.failed_over.is_empty() {
            b.extend_from_slice(b",\"failed_over\":[");
            for (i, id) in e.failed_over.iter().enumerate() {
                if i > 0 {
                    b.push(b',');
                }
                // Writing a str into a Vec cannot fail.
                let _ = serde_json::to_writer(&mut *b, id);
            }
            b.push(b']');
        }
        field_opt_str(b, "cause", e.cause);
        field_opt_str(b, "route", e.route);
        if e.trace_id.is_some() {
            field_opt_str(b, "trace_id", e.trace_id);
        }
        if e.cache_hit {
            b.extend_from_slice(b",\"cache_hit\":true");
        }
        if let Some(record) = e.routing_decision {
            b.extend_from_slice(b",\"routing_decision\":");
            b.extend_from_slice(record.as_bytes());
        }
        self.end_line();
    }

    pub fn write_mcp(&mut self, e: &McpEntry<'_>) {
        if self.sink.is_none() {
            return;
        }
        let b = &mut self.buf;
        line_start(b, e.time, e.shard, e.path);
        field_str(b, "mcp_server", e.server);
        field_str(b, "mcp_method", e.method);
        let target = if e.method == "tools/call" { "tool" } else { "target" };
        field_str(b, target, e.target);
        field_opt_str(b, "key", e.key);
        field_str(b, "outcome", e.outcome);
        b.extend_from_slice(b",\"total_ms\":");
        millis(b, e.total);
        self.end_line();
    }

    /// Ends the line being written; writes the buffer once it is full.
    #[inline]
    fn end_line(&mut self) {
        self.buf.extend_from_slice(b"}\n");
        if self.buf.len() >= FLUSH_AT {
            self.flush();
        }
    }

    /// Writes the buffered lines.
    pub fn flush(&mut self) {
        if self.buf.is_empty() {
            return;
        }
        if let Some(sink) = &self.sink {
            if let Err(e) = sink.write_all(&self.buf) {
                eprintln!("pointwork: access log: write failed, {} bytes dropped: {e}", self.buf.len());
            }
        }
        self.buf.clear();
    }
}

/// What every line starts with: `{"time":"…","shard":N,"path":"…"`.
#[inline]
fn line_start(b: &mut Vec<u8>, time: SystemTime, shard: usize, path: &str) {
    b.extend_from_slice(b"{\"time\":\"");
    rfc3339_millis(b, time);
    b.extend_from_slice(b"\",\"shard\":");
    number(b, shard as u64);
    field_str(b, "path", path);
}

// Writing into a Vec cannot fail: the results below are ignored for that reason.
fn number(b: &mut Vec<u8>, n: u64) {
    let _ = write!(b, "{n}");
}

fn millis(b: &mut Vec<u8>, d: Duration) {
    let micros = d.as_micros();
    let _ = write!(b, "{}.{:03}", micros / 1000, micros % 1000);
}

fn field_str(b: &mut Vec<u8>, name: &str, value: &str) {
    b.extend_from_slice(b",\"");
    b.extend_from_slice(name.as_bytes());
    b.extend_from_slice(b"\":");
    // Writing a str into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *b, value);
}

fn field_opt_str(b: &mut Vec<u8>, name: &str, value: Option<&str>) {
    match value {
        Some(v) => field_str(b, name, v),
        None => {
            b.extend_from_slice(b",\"");
            b.extend_from_slice(name.as_bytes());
            b.extend_from_slice(b"\":null");
        }
    }
}

/// `2026-11-29T18:40:01.123Z`.
pub fn rfc3339_millis(b: &mut Vec<u8>, t: SystemTime) {
    let since = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    let _ = write!(
        b,
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        since.subsec_millis()
    );
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
pub(crate) fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        let mut b = Vec::new();
        rfc3339_millis(&mut b, UNIX_EPOCH + Duration::from_millis(1_795_977_601_123));
        assert_eq!(String::from_utf8(b).unwrap(), "2026-11-29T18:40:01.123Z");
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
    }

    #[test]
    fn a_line_is_json_with_every_field() {
        let dir = std::env::temp_dir().join(format!("sy-log-{}", std::process::id()));
        let _ = std::fs::remove_file(&dir);
        let sink = Sink::open(&AccessLogTarget::File(dir.clone())).unwrap();
        let mut log = AccessLog::new(sink);
        log.write(&Entry {
            time: UNIX_EPOCH,
            shard: 1,
            path: "/v1/chat/completions",
            model: "gpt \"x\"",
            key: Some("team-a"),
            model_group: Some("gpt"),
            deployment: None,
            attempts: 2,
            status: 200,
            stream: true,
            upstream: Some(Duration::from_micros(12_345)),
            total: Duration::from_micros(13_000),
            bytes_in: 10,
            bytes_out: 20,
            policy: None,
            failed_over: &[],
            cause: Some("retry"),
            route: None,
            routing_decision: None,
            cache_hit: false,
            trace_id: Some("4bf92f3577b34da6a3ce929d0e0e4736"),
        });
        log.flush();
        let text = std::fs::read_to_string(&dir).unwrap();
        let v: serde_json::Value = serde_json::from_str(text.trim_end()).unwrap();
        assert_eq!(v["model"], "gpt \"x\"");
        assert_eq!(v["key"], "team-a");
        assert_eq!(v["deployment"], serde_json::Value::Null);
        assert_eq!(v["upstream_ms"], 12.345);
        assert_eq!(v["trace_id"], "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(v["time"], "1970-01-01T00:00:00.000Z");
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o600);
        std::fs::remove_file(&dir).unwrap();
    }

    #[test]
    fn a_symlink_is_never_followed() {
        let base = std::env::temp_dir().join(format!("sy-link-{}", std::process::id()));
        let target = base.with_extension("target");
        let link = base.with_extension("link");
        let _ = std::fs::remove_file(&link);
        std::fs::write(&target, b"").unwrap();
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(Sink::open(&AccessLogTarget::File(link.clone())).is_err());
        std::fs::remove_file(&link).unwrap();
        std::fs::remove_file(&target).unwrap();
    }
}
