//! An MCP request's Langfuse events: a `span-create` observation named as its OpenTelemetry
//! span (`tools/call echo`), in the trace its caller continues (the same trace id as the model
//! requests of that trace), `level: ERROR` with the error as `statusMessage` when it failed, and
//! what it went to in its metadata. Langfuse's ingestion API takes spans, generations and
//! events (its `tool` type comes only through its OpenTelemetry endpoint), so a span it is.
//! A request that starts a trace of its own also gets its `trace-create`; one that continues
//! its caller's trace leaves the trace to the caller.

use serde_json::{json, Map, Value};

use super::super::mcp_record::McpCallRecord;
use super::super::trace_context::hex;
use super::event::Options;
use super::secrets::scrub_text;
use super::{envelope, event_id, iso8601};

/// `m`'s events (`{"id", "timestamp", "type", "body"}`).
pub(super) fn events(m: &McpCallRecord, o: &Options<'_>) -> Vec<Value> {
    let timestamp = iso8601(m.end_unix_nanos);
    let trace_id = hex(&m.trace_id);
    let name = m.span_name();
    let mut events = Vec::with_capacity(2);
    if m.parent_span_id.is_none() {
        let mut t = Map::new();
        t.insert("id".into(), trace_id.clone().into());
        t.insert("timestamp".into(), iso8601(m.start_unix_nanos).into());
        t.insert("name".into(), name.clone().into());
        put(&mut t, "sessionId", m.session.as_deref());
        put(&mut t, "release", o.release);
        put(&mut t, "environment", o.environment);
        events.push(envelope(event_id(&m.span_id, "trace"), &timestamp, "trace-create", &t));
    }
    let mut s = Map::new();
    s.insert("id".into(), hex(&m.span_id).into());
    s.insert("traceId".into(), trace_id.into());
    s.insert("name".into(), name.into());
    s.insert("startTime".into(), iso8601(m.start_unix_nanos).into());
    s.insert("endTime".into(), iso8601(m.end_unix_nanos).into());
    s.insert("level".into(), if m.failed() { "ERROR" } else { "DEFAULT" }.into());
    if let Some(e) = &m.error {
        let message = if e.message.is_empty() { e.kind.clone() } else { scrub_text(&e.message) };
        s.insert("statusMessage".into(), message.into());
    }
    s.insert("metadata".into(), Value::Object(metadata(m)));
    put(&mut s, "environment", o.environment);
    events.push(envelope(event_id(&m.span_id, "span"), &timestamp, "span-create", &s));
    events
}

fn put(map: &mut Map<String, Value>, key: &str, value: Option<&str>) {
    if let Some(v) = value {
        map.insert(key.into(), v.into());
    }
}

/// The span's metadata: the MCP request's facts (as the OpenTelemetry span's attributes), the
/// caller's key by alias (LiteLLM's name; the master key has none), and the trace's ids.
fn metadata(m: &McpCallRecord) -> Map<String, Value> {
    let mut meta = Map::new();
    meta.insert("mcp_method".into(), m.method.clone().into());
    meta.insert("mcp_server".into(), m.server.clone().into());
    meta.insert("mcp_transport".into(), m.transport.into());
    meta.insert("mcp_target".into(), m.target.clone().into());
    meta.insert("outcome".into(), m.outcome.name().into());
    put(&mut meta, "mcp_session_id", m.session.as_deref());
    put(&mut meta, "jsonrpc_request_id", m.request_id.as_deref());
    put(&mut meta, "error_type", m.error.as_ref().map(|e| e.kind.as_str()));
    put(&mut meta, "user_api_key_alias", m.key_alias.as_deref().filter(|a| *a != "master"));
    let mut pointwork = json!({
        "otel_trace_id": hex(&m.trace_id),
        "otel_span_id": hex(&m.span_id),
        "path": m.path,
    });
    if let Some(alias) = &m.key_alias {
        pointwork["key_alias"] = alias.clone().into();
    }
    meta.insert("pointwork".into(), pointwork);
    meta
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use pointwork_config::LangfuseSettings;

    use super::super::LangfuseSink;
    use crate::export::mcp_record::{McpCallRecord, McpError};
    use crate::export::record::Record;
    use crate::export::sink::Sink;
    use crate::mcp::outcome::Outcome;
    use serde_json::Value;

    fn sink(successes: bool, failures: bool) -> LangfuseSink {
        LangfuseSink::new(
            LangfuseSettings {
                host: "http://lf.test:3000".into(),
                public_key: "pk-lf-public".into(),
                secret_key: "sk-lf-secret".into(),
                successes,
                failures,
                timeout: Duration::from_secs(20),
                environment: Some("staging".into()),
                release: Some("r7".into()),
            },
            false,
        )
    }

    fn call(parent: Option<[u8; 8]>, error: Option<McpError>) -> McpCallRecord {
        McpCallRecord {
            trace_id: [0xab; 16],
            span_id: [1, 2, 3, 4, 5, 6, 7, 8],
            parent_span_id: parent,
            trace_state: None,
            start_unix_nanos: 1_796_551_090_123_456_789,
            end_unix_nanos: 1_796_551_090_173_456_789,
            path: "/mcp".into(),
            method: "tools/call".into(),
            target: "echo".into(),
            server: "tools_box".into(),
            transport: "http",
            session: Some("sess-1".into()),
            request_id: Some("7".into()),
            key_alias: Some("team-a-key".into()),
            outcome: if error.is_some() { Outcome::Error } else { Outcome::Ok },
            error,
        }
    }

    fn events(sink: &LangfuseSink, m: McpCallRecord) -> Vec<Value> {
        let (bytes, _) = sink.encode(&[Arc::new(Record::Mcp(Box::new(m)))]);
        let parsed: Value = serde_json::from_slice(&bytes).unwrap();
        parsed["batch"].as_array().unwrap().clone()
    }

    #[test]
    fn a_call_in_its_callers_trace_is_one_span() {
        let events = events(&sink(true, true), call(Some([9; 8]), None));
        assert_eq!(events.len(), 1, "the caller's trace is the caller's to create");
        let (e, s) = (&events[0], &events[0]["body"]);
        assert_eq!(e["type"], "span-create");
        assert_eq!(e["id"], "0102030405060708-span");
        assert_eq!(s["id"], "0102030405060708");
        assert_eq!(s["traceId"], "ab".repeat(16));
        assert_eq!(s["name"], "tools/call echo");
        assert_eq!(s["level"], "DEFAULT");
        assert_eq!(s["startTime"], "2026-12-06T09:58:10.123456Z");
        assert_eq!(s["endTime"], "2026-12-06T09:58:10.173456Z");
        assert_eq!(s["environment"], "staging");
        let m = &s["metadata"];
        assert_eq!(
            (&m["mcp_server"], &m["mcp_method"], &m["mcp_target"]),
            (&"tools_box".into(), &"tools/call".into(), &"echo".into())
        );
        assert_eq!(
            (&m["mcp_session_id"], &m["user_api_key_alias"], &m["outcome"]),
            (&"sess-1".into(), &"team-a-key".into(), &"ok".into())
        );
        assert!(s.get("statusMessage").is_none());
    }

    #[test]
    fn a_call_that_starts_a_trace_creates_it_and_a_failure_is_an_error() {
        let error = McpError { kind: "-32602".into(), message: "bad arguments for sk-abcdefghijklmnopqrstuvwx".into() };
        let events = events(&sink(true, true), call(None, Some(error)));
        let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert_eq!(types, ["trace-create", "span-create"]);
        let t = &events[0]["body"];
        assert_eq!(
            (&t["id"], &t["name"], &t["sessionId"]),
            (&Value::from("ab".repeat(16)), &"tools/call echo".into(), &"sess-1".into())
        );
        assert_eq!(t["release"], "r7");
        let s = &events[1]["body"];
        assert_eq!(s["level"], "ERROR");
        assert_eq!(s["metadata"]["error_type"], "-32602");
        let message = s["statusMessage"].as_str().unwrap();
        assert!(message.starts_with("bad arguments") && !message.contains("sk-abcdefghijklmnopqrstuvwx"), "{message}");
    }

    #[test]
    fn callbacks_choose_successes_or_failures() {
        let ok = Record::Mcp(Box::new(call(None, None)));
        let failed =
            Record::Mcp(Box::new(call(None, Some(McpError { kind: "failed".into(), message: String::new() }))));
        assert!(sink(true, false).wants(&ok) && !sink(true, false).wants(&failed));
        assert!(!sink(false, true).wants(&ok) && sink(false, true).wants(&failed));
    }
}
