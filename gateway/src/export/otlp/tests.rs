//! The spans as a receiver reads them: each batch decoded with the OpenTelemetry protobuf types.

use std::sync::Arc;
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value;
use opentelemetry_proto::tonic::trace::v1::{span::SpanKind, status::StatusCode, Span};
use pointwork_config::{McpAuth, McpServer, McpTransport, OtlpSettings};
use pointwork_core::{Rng, RouteKind};
use prost::Message;
use serde_json::{json, Value};

use super::OtlpSink;
use crate::export::mcp_record::{in_meta, McpCall, McpCallRecord, McpError};
use crate::export::record::{Record, RequestRecord};
use crate::export::sink::Sink;
use crate::export::trace_context::{hex, TraceContext};
use crate::mcp::relay::Outcome;
use crate::mcp::upstream::Answer;

const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

fn server(transport: McpTransport) -> McpServer {
    McpServer {
        name: "tools_box".into(),
        prefix: "tools_box".into(),
        server_id: "tools_box".into(),
        description: None,
        transport,
        auth: McpAuth::Bearer("sk-mcp-server-secret".into()),
        static_headers: Vec::new(),
        forwarded_headers: Vec::new(),
        allowed_tools: None,
        disallowed_tools: Vec::new(),
        access_groups: Vec::new(),
        allow_all_keys: false,
        timeout: Duration::from_secs(30),
        path: "mcp_servers.tools_box".into(),
    }
}

fn http() -> McpServer {
    server(McpTransport::Http { url: "http://127.0.0.1:9/mcp?token=url-secret".into() })
}

/// A record of `method` on `target`, ended with `answer` (`None`: cancelled).
fn mcp(
    trace: TraceContext<'_>,
    srv: &McpServer,
    (method, target): (&str, &str),
    session: Option<&str>,
    answer: Option<Answer>,
) -> Box<McpCallRecord> {
    let id = json!(7);
    let call = McpCall {
        trace: &trace,
        started: Instant::now() - Duration::from_millis(25),
        path: "/mcp",
        method,
        server: srv,
        target,
        session,
        request_id: session.map(|_| &id),
        key_alias: Some("team-a-key"),
        outcome: answer.as_ref().map_or(Outcome::Cancelled, |a| match a {
            Answer::Result(r) if r["isError"] == true => Outcome::ToolError,
            Answer::Result(_) => Outcome::Ok,
            Answer::Error(_) => Outcome::Error,
            _ => Outcome::Failed,
        }),
        error: answer.as_ref().and_then(McpError::of),
    };
    McpCallRecord::new(call, &mut Rng::new(42))
}

fn caller() -> TraceContext<'static> {
    TraceContext { parent: Some(TRACEPARENT.as_bytes()), state: Some(b"congo=t61rcWkgMzE") }
}

fn sink() -> OtlpSink {
    let settings = OtlpSettings {
        endpoint: "http://collector.test:4318/v1/traces".into(),
        headers: Vec::new(),
        service_name: "edge".into(),
        timeout: Duration::from_secs(10),
    };
    OtlpSink::new(settings, false)
}

/// The spans `records` export as, decoded.
fn exported(records: Vec<Record>) -> (Vec<Span>, Vec<u8>) {
    let batch: Vec<Arc<Record>> = records.into_iter().map(Arc::new).collect();
    let (bytes, content_type) = sink().encode(&batch);
    assert_eq!(content_type, "application/x-protobuf");
    let request = ExportTraceServiceRequest::decode(bytes.as_slice()).expect("valid protobuf");
    let spans = request.resource_spans.into_iter().flat_map(|r| r.scope_spans).flat_map(|s| s.spans).collect();
    (spans, bytes)
}

fn one(record: Box<McpCallRecord>) -> Span {
    let (mut spans, _) = exported(vec![Record::Mcp(record)]);
    assert_eq!(spans.len(), 1, "one span per MCP request");
    spans.remove(0)
}

/// The attribute `key`'s value as text (`None` when absent).
fn attr(span: &Span, key: &str) -> Option<String> {
    let kv = span.attributes.iter().find(|kv| kv.key == key)?;
    match kv.value.as_ref()?.value.as_ref()? {
        any_value::Value::StringValue(s) => Some(s.clone()),
        any_value::Value::IntValue(i) => Some(i.to_string()),
        other => Some(format!("{other:?}")),
    }
}

#[test]
fn a_tool_call_continues_its_callers_trace_as_a_server_span() {
    let result = Answer::Result(json!({"content": [{"type": "text", "text": "hi"}]}));
    let span = one(mcp(caller(), &http(), ("tools/call", "echo"), Some("sess-1"), Some(result)));
    assert_eq!(span.name, "tools/call echo");
    assert_eq!(span.kind, SpanKind::Server as i32);
    assert_eq!(hex(&span.trace_id), "4bf92f3577b34da6a3ce929d0e0e4736");
    assert_eq!(hex(&span.parent_span_id), "00f067aa0ba902b7");
    assert_eq!(span.trace_state, "congo=t61rcWkgMzE");
    assert_eq!(span.flags, 0x300, "the parent is remote");
    assert_eq!(span.span_id.len(), 8);
    assert_ne!(span.span_id, span.parent_span_id);
    let took = span.end_time_unix_nano - span.start_time_unix_nano;
    assert!((25_000_000..5_000_000_000).contains(&took), "{took} ns");
    for (key, want) in [
        ("mcp.method.name", "tools/call"),
        ("gen_ai.operation.name", "execute_tool"),
        ("gen_ai.tool.name", "echo"),
        ("mcp.session.id", "sess-1"),
        ("jsonrpc.request.id", "7"),
        ("pointwork.mcp.server", "tools_box"),
        ("pointwork.mcp.transport", "http"),
        ("pointwork.mcp.target", "echo"),
        ("pointwork.mcp.outcome", "ok"),
        ("pointwork.key_alias", "team-a-key"),
        ("url.path", "/mcp"),
        ("network.transport", "tcp"),
    ] {
        assert_eq!(attr(&span, key).as_deref(), Some(want), "{key}");
    }
    for absent in ["error.type", "gen_ai.prompt.name", "mcp.resource.uri", "rpc.response.status_code"] {
        assert_eq!(attr(&span, absent), None, "{absent}");
    }
    assert_eq!(span.status.unwrap().code, StatusCode::Unset as i32);
}

#[test]
fn a_server_error_starts_a_new_trace_without_a_caller_and_is_an_error() {
    let error = Answer::Error(json!({"code": -32602, "message": "Unknown resource: file:///nope"}));
    let record = mcp(TraceContext::default(), &http(), ("resources/read", "file:///nope"), Some("s"), Some(error));
    let span = one(record);
    assert_eq!(span.name, "resources/read", "a URI is no span name");
    assert!(span.parent_span_id.is_empty() && span.trace_state.is_empty());
    assert_eq!(span.flags, 0x100);
    assert_eq!(span.trace_id.len(), 16);
    assert_ne!(span.trace_id, vec![0; 16]);
    assert_eq!(attr(&span, "mcp.resource.uri").as_deref(), Some("file:///nope"));
    assert_eq!(attr(&span, "gen_ai.operation.name"), None, "only a tool call executes a tool");
    assert_eq!(attr(&span, "error.type").as_deref(), Some("-32602"));
    assert_eq!(attr(&span, "rpc.response.status_code").as_deref(), Some("-32602"));
    assert_eq!(attr(&span, "pointwork.mcp.outcome").as_deref(), Some("error"));
    let status = span.status.unwrap();
    assert_eq!(status.code, StatusCode::Error as i32);
    assert_eq!(status.message, "Unknown resource: file:///nope");
}

#[test]
fn an_invalid_traceparent_starts_a_new_trace() {
    let bad =
        TraceContext { parent: Some(b"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01"), state: Some(b"a=b") };
    let span = one(mcp(bad, &http(), ("tools/call", "echo"), None, Some(Answer::Result(json!({})))));
    assert_ne!(hex(&span.trace_id), "4bf92f3577b34da6a3ce929d0e0e4736");
    assert!(span.parent_span_id.is_empty() && span.trace_state.is_empty(), "a tracestate goes with its parent only");
    assert_eq!(attr(&span, "mcp.session.id"), None, "no session, no session id");
    assert_eq!(attr(&span, "jsonrpc.request.id"), None);
}

#[test]
fn tool_errors_failures_and_cancellations() {
    let tool_error = Answer::Result(json!({"content": [{"type": "text", "text": "boom"}], "isError": true}));
    let span = one(mcp(caller(), &http(), ("tools/call", "fail"), Some("s"), Some(tool_error)));
    assert_eq!(attr(&span, "error.type").as_deref(), Some("tool_error"));
    assert_eq!(attr(&span, "rpc.response.status_code"), None);
    assert_eq!(span.status.as_ref().unwrap().code, StatusCode::Error as i32);
    assert!(!format!("{span:?}").contains("boom"), "a tool's output is content");

    let stdio = server(McpTransport::Stdio { command: "srv".into(), args: Vec::new(), env: Vec::new() });
    let failed = Answer::Failed("timed out after 30s".into());
    let span = one(mcp(caller(), &stdio, ("prompts/get", "summarize"), Some("s"), Some(failed)));
    assert_eq!(span.name, "prompts/get summarize");
    assert_eq!(attr(&span, "gen_ai.prompt.name").as_deref(), Some("summarize"));
    assert_eq!(attr(&span, "pointwork.mcp.transport").as_deref(), Some("stdio"));
    assert_eq!(attr(&span, "error.type").as_deref(), Some("failed"));
    assert_eq!(span.status.as_ref().unwrap().message, "timed out after 30s");

    let span = one(mcp(caller(), &http(), ("completion/complete", "summarize"), Some("s"), None));
    assert_eq!(span.name, "completion/complete");
    assert_eq!(attr(&span, "pointwork.mcp.outcome").as_deref(), Some("cancelled"));
    assert_eq!(attr(&span, "error.type"), None, "the client's own choice is no error");
    assert_eq!(span.status.unwrap().code, StatusCode::Unset as i32);
}

#[test]
fn a_batch_carries_both_kinds_and_no_credentials() {
    let request = RequestRecord {
        trace_id: [0xab; 16],
        span_id: [1; 8],
        parent_span_id: None,
        trace_state: None,
        start_unix_nanos: 1,
        end_unix_nanos: 2,
        route: RouteKind::ChatCompletions,
        path: "/v1/chat/completions".into(),
        status: 200,
        stream: false,
        requested_model: "gpt".into(),
        model_group: None,
        deployment: None,
        provider: None,
        upstream_model: None,
        key_alias: None,
        team_id: None,
        user_id: None,
        route_reason: None,
        cause: None,
        policy: None,
        attempts: Vec::new(),
        usage: None,
        cost: None,
        first_token: None,
        overhead: Duration::ZERO,
        response_model: None,
        finish_reasons: Vec::new(),
        error: None,
        cache_hit: false,
        request_body: None,
        response_body: None,
    };
    let tool = mcp(caller(), &http(), ("tools/call", "echo"), Some("s"), Some(Answer::Result(json!({}))));
    let (spans, bytes) = exported(vec![Record::Request(Box::new(request)), Record::Mcp(tool)]);
    let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["chat gpt", "tools/call echo"]);
    let text = String::from_utf8_lossy(&bytes);
    assert!(!text.contains("sk-mcp-server-secret") && !text.contains("url-secret"));
}

#[test]
fn errors_are_read_off_the_answer() {
    assert_eq!(McpError::of(&Answer::Result(json!({"content": []}))), None);
    assert_eq!(McpError::of(&Answer::Result(json!({"isError": false}))), None);
    let long = Answer::Error(json!({"code": -32000, "message": "é".repeat(2000)}));
    let e = McpError::of(&long).unwrap();
    assert_eq!(e.kind, "-32000");
    assert!(e.message.len() <= 1024 && e.message.chars().all(|c| c == 'é'));
    let odd = McpError::of(&Answer::Error(json!({"message": "no code"}))).unwrap();
    assert_eq!((odd.kind.as_str(), odd.message.as_str()), ("error", "no code"));
}

#[test]
fn a_trace_in_params_meta_is_read() {
    let params: Value = json!({"name": "x", "_meta": {"traceparent": TRACEPARENT, "tracestate": "k=v"}});
    let trace = in_meta(Some(&params)).unwrap();
    assert_eq!(trace.parent, Some(TRACEPARENT.as_bytes()));
    assert_eq!(trace.state, Some(&b"k=v"[..]));
    assert!(in_meta(Some(&json!({"name": "x", "_meta": {"progressToken": 1}}))).is_none());
    assert!(in_meta(None).is_none());
}
