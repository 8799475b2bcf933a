//! Langfuse's ingestion API (`POST {host}/api/public/ingestion`, HTTP Basic auth with the
//! project's public and secret key): per request a `trace-create` and a `generation-create`
//! event, shaped as LiteLLM's Langfuse callback shapes them (`langfuse/event.rs`); per MCP
//! request a `span-create` (and a `trace-create` when it starts its own trace: `langfuse/mcp.rs`).
//!
//! Langfuse takes at most 3.5 MB per request: a batch carries at most [`max_batch`] records and
//! each record's events stay within its share of [`MAX_BODY`] (the largest parts — the trace's
//! copy of the content, then the generation's, then the caller's metadata — are left out of a
//! record that would not fit). Langfuse answers 207 with an error per event it refused: refusals
//! (4xx) are counted as dropped, its own failures (5xx) retry the batch (event ids are stable,
//! and Langfuse drops an event id it has seen).

mod event;
mod mcp;
mod secrets;
#[cfg(test)]
mod tests;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use pointwork_config::LangfuseSettings;
use serde_json::{Map, Value};

use super::record::{Record, RequestRecord};
use super::sink::{Sink, Verdict};
use super::trace_context::hex;
use crate::access_log::civil_from_days;
use event::{bodies, Bodies, Options};

/// The most bytes one export carries (Langfuse refuses batches over 3.5 MB).
const MAX_BODY: usize = 3 << 20;
/// Records per export without content (a record's events are about 3 KB).
const BATCH_PLAIN: usize = 200;
/// Records per export with content (prompts and completions make records large).
const BATCH_CONTENT: usize = 16;

pub(super) struct LangfuseSink {
    settings: LangfuseSettings,
    url: String,
    /// Basic auth and Langfuse's SDK headers (never logged).
    headers: Vec<(String, String)>,
    content: bool,
}

impl LangfuseSink {
    pub(super) fn new(settings: LangfuseSettings, content: bool) -> LangfuseSink {
        let url = format!("{}/api/public/ingestion", settings.host.trim_end_matches('/'));
        let credentials = format!("{}:{}", settings.public_key, settings.secret_key);
        let basic = base64::engine::general_purpose::STANDARD.encode(credentials);
        let headers = vec![
            ("authorization".to_string(), format!("Basic {basic}")),
            ("x-langfuse-sdk-name".to_string(), "pointwork".to_string()),
            ("x-langfuse-sdk-version".to_string(), env!("CARGO_PKG_VERSION").to_string()),
            ("x-langfuse-public-key".to_string(), settings.public_key.clone()),
        ];
        LangfuseSink { settings, url, headers, content }
    }

    fn options(&self) -> Options<'_> {
        Options {
            content: self.content,
            environment: self.settings.environment.as_deref(),
            release: self.settings.release.as_deref(),
        }
    }

    /// `r`'s events, comma-separated, within `budget` bytes where leaving parts out allows it.
    fn record_events(&self, r: &RequestRecord, budget: usize, out: &mut Vec<u8>) {
        let mut b = bodies(r, &self.options());
        let mut events = envelopes(r, &b);
        for shrink in [drop_trace_content, drop_generation_content, drop_requester_metadata] {
            if events.len() <= budget {
                break;
            }
            shrink(&mut b);
            events = envelopes(r, &b);
        }
        out.extend_from_slice(&events);
    }
}

impl Sink for LangfuseSink {
    fn name(&self) -> &'static str {
        "langfuse"
    }

    /// `success_callback` takes the successful requests, `failure_callback` the failed ones
    /// that reached a model: a request the gateway refused itself (a bad key, a limit, nothing
    /// to route to) is no generation.
    fn wants(&self, record: &Record) -> bool {
        match record {
            Record::Request(r) if r.failed() => self.settings.failures && !r.attempts.is_empty(),
            Record::Mcp(m) if m.failed() => self.settings.failures,
            _ => self.settings.successes,
        }
    }

    fn url(&self) -> &str {
        &self.url
    }

    fn headers(&self) -> &[(String, String)] {
        &self.headers
    }

    fn timeout(&self) -> Duration {
        self.settings.timeout
    }

    fn encode(&self, batch: &[Arc<Record>]) -> (Vec<u8>, &'static str) {
        let budget = MAX_BODY / batch.len().max(1);
        let mut out = Vec::with_capacity(batch.len() * 3072);
        out.extend_from_slice(b"{\"batch\":[");
        for (i, r) in batch.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            match &**r {
                Record::Request(r) => self.record_events(r, budget, &mut out),
                Record::Mcp(m) => out.extend_from_slice(&joined(&mcp::events(m, &self.options()))),
            }
        }
        out.extend_from_slice(b"]}");
        (out, "application/json")
    }

    fn max_batch(&self) -> usize {
        max_batch(self.content)
    }

    fn judge(&self, _batch: &[Arc<Record>], answer: &[u8]) -> Verdict {
        judge(answer)
    }
}

/// Records per export.
fn max_batch(content: bool) -> usize {
    if content {
        BATCH_CONTENT
    } else {
        BATCH_PLAIN
    }
}

/// The event ids of a record: its span id and the event's kind (unique per request, and the
/// same when a batch is sent again).
fn event_id(span_id: &[u8; 8], kind: &str) -> String {
    format!("{}-{kind}", hex(span_id))
}

/// `b` as events (`{"id", "timestamp", "type", "body"}`), comma-separated.
fn envelopes(r: &RequestRecord, b: &Bodies) -> Vec<u8> {
    let timestamp = iso8601(r.end_unix_nanos);
    let mut events = Vec::with_capacity(2);
    if let Some(trace) = &b.trace {
        events.push(envelope(event_id(&r.span_id, "trace"), &timestamp, "trace-create", trace));
    }
    events.push(envelope(event_id(&r.span_id, "generation"), &timestamp, "generation-create", &b.generation));
    joined(&events)
}

/// `events`, serialised and comma-separated.
fn joined(events: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, e) in events.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        // A map of plain JSON values always serialises.
        let _ = serde_json::to_writer(&mut out, e);
    }
    out
}

fn envelope(id: String, timestamp: &str, kind: &str, body: &Map<String, Value>) -> Value {
    serde_json::json!({"id": id, "timestamp": timestamp, "type": kind, "body": body})
}

/// What a record too large for its share of a batch gives up, in order.
const LEFT_OUT: &str = "[pointwork: left out: the record is over its share of Langfuse's batch size]";

fn drop_trace_content(b: &mut Bodies) {
    if let Some(trace) = &mut b.trace {
        trace.remove("input");
        trace.remove("output");
    }
}

fn drop_generation_content(b: &mut Bodies) {
    b.generation.insert("input".into(), LEFT_OUT.into());
    b.generation.insert("output".into(), LEFT_OUT.into());
}

fn drop_requester_metadata(b: &mut Bodies) {
    if let Some(Value::Object(m)) = b.generation.get_mut("metadata") {
        m.insert("requester_metadata".into(), LEFT_OUT.into());
        if let Some(Value::Object(p)) = m.get_mut("pointwork") {
            p.remove("attempts");
        }
    }
    if let Some(trace) = &mut b.trace {
        trace.remove("metadata");
    }
}

/// Langfuse's word on a batch: its 207 answer lists an error per refused event
/// (`{"successes": […], "errors": [{"id", "status", "message"}]}`).
fn judge(answer: &[u8]) -> Verdict {
    let Ok(answer) = serde_json::from_slice::<Value>(answer) else { return Verdict::Accepted };
    let Some(errors) = answer.get("errors").and_then(Value::as_array).filter(|e| !e.is_empty()) else {
        return Verdict::Accepted;
    };
    let status = |e: &Value| e.get("status").and_then(Value::as_u64).unwrap_or(500);
    let message = |e: &Value| {
        let m = e
            .get("message")
            .or_else(|| e.get("error"))
            .map(|m| m.as_str().map_or_else(|| m.to_string(), str::to_string));
        format!("HTTP {} {}", status(e), m.unwrap_or_default())
    };
    if let Some(failed) = errors.iter().find(|e| status(e) >= 500) {
        return Verdict::Retry(format!("Langfuse could not store {} event(s): {}", errors.len(), message(failed)));
    }
    // An event id is `<span id>-<kind>`: one record per span id.
    let records: HashSet<&str> = errors
        .iter()
        .filter_map(|e| e.get("id").and_then(Value::as_str))
        .map(|id| id.split_once('-').map_or(id, |(span, _)| span))
        .collect();
    Verdict::Rejected { records: records.len().max(1), why: message(&errors[0]) }
}

/// `unix_nanos` as ISO 8601 in UTC with microseconds (`2026-12-06T10:18:10.123456Z`).
pub(crate) fn iso8601(unix_nanos: u64) -> String {
    let secs = unix_nanos / 1_000_000_000;
    let micros = unix_nanos % 1_000_000_000 / 1_000;
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    let s = secs % 86_400;
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{micros:06}Z", s / 3_600, s / 60 % 60, s % 60)
}
