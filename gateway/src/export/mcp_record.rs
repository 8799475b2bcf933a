//! What is exported of one MCP request the gateway sent on to a server (`tools/call`,
//! `prompts/get`, `resources/read`, `completion/complete`): plain owned data, built on the shard
//! as the request ends, only when an exporter is on.

use std::time::{Instant, SystemTime, UNIX_EPOCH};

use pointwork_config::{McpServer, McpTransport};
use pointwork_core::Rng;
use serde_json::Value;

use super::trace_context::{parse_traceparent, valid_tracestate, TraceContext};
use crate::mcp::outcome::Outcome;
use crate::mcp::upstream::Answer;

/// One MCP request sent on to a server: the server span of its trace.
#[derive(Clone, Debug)]
pub struct McpCallRecord {
    pub trace_id: [u8; 16],
    pub span_id: [u8; 8],
    /// The caller's span, when its `traceparent` was continued.
    pub parent_span_id: Option<[u8; 8]>,
    pub trace_state: Option<String>,
    pub start_unix_nanos: u64,
    pub end_unix_nanos: u64,
    /// `/mcp`, `/mcp-rest/tools/call`, ….
    pub path: String,
    /// `tools/call`, `prompts/get`, `resources/read`, `completion/complete`.
    pub method: String,
    /// The tool, prompt or resource as the server knows it.
    pub target: String,
    /// The server's name (`mcp_servers.NAME`).
    pub server: String,
    /// How the gateway reaches it: `http`, `sse` or `stdio`.
    pub transport: &'static str,
    /// The client's MCP session, when the request came in one.
    pub session: Option<String>,
    /// The client's JSON-RPC request id, as text, when it sent one.
    pub request_id: Option<String>,
    /// The caller's key by name (`master`, a virtual key's name): never the key.
    pub key_alias: Option<String>,
    pub outcome: Outcome,
    /// Why it failed, when it did.
    pub error: Option<McpError>,
}

/// Why a forwarded request failed, as its span says it.
#[derive(Clone, Debug, PartialEq)]
pub struct McpError {
    /// OpenTelemetry's `error.type`: the JSON-RPC error code, `tool_error`, or `failed` when
    /// the server gave no answer.
    pub kind: String,
    /// The JSON-RPC error's message, or why no answer came; empty for a tool's own error.
    pub message: String,
}

/// The largest error message kept for a span.
const MAX_MESSAGE: usize = 1024;

impl McpError {
    /// What `answer` says went wrong; `None` for a result that is no error.
    pub fn of(answer: &Answer) -> Option<McpError> {
        let kept = |s: &str| {
            let mut end = s.len().min(MAX_MESSAGE);
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            s[..end].to_string()
        };
        match answer {
            Answer::Result(r) if r["isError"] == true => {
                Some(McpError { kind: "tool_error".into(), message: String::new() })
            }
            Answer::Result(_) => None,
            Answer::Error(e) => Some(McpError {
                kind: e["code"].as_i64().map_or_else(|| "error".to_string(), |c| c.to_string()),
                message: kept(e["message"].as_str().unwrap_or_default()),
            }),
            Answer::Failed(why) => Some(McpError { kind: "failed".into(), message: kept(why) }),
            Answer::Notification(_) => {
                Some(McpError { kind: "failed".into(), message: "the MCP server sent no answer".into() })
            }
        }
    }
}

/// What the MCP face knows of a forwarded request as it ends.
pub struct McpCall<'a> {
    pub trace: &'a TraceContext<'a>,
    pub started: Instant,
    pub path: &'a str,
    pub method: &'a str,
    pub server: &'a McpServer,
    pub target: &'a str,
    pub session: Option<&'a str>,
    pub request_id: Option<&'a Value>,
    pub key_alias: Option<&'a str>,
    pub outcome: Outcome,
    pub error: Option<McpError>,
}

impl McpCallRecord {
    /// The record of `call`, in the caller's trace when its `traceparent` is valid, else in a
    /// new one (`ids` draws the new ids).
    pub fn new(call: McpCall<'_>, ids: &mut Rng) -> Box<McpCallRecord> {
        let caller = call.trace.parent.and_then(parse_traceparent);
        let trace_id = match caller {
            Some((trace, _, _)) => trace,
            None => super::trace_context::new_trace_id(ids),
        };
        let now = SystemTime::now();
        let end_unix_nanos = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
        Box::new(McpCallRecord {
            trace_id,
            span_id: super::trace_context::new_span_id(ids),
            parent_span_id: caller.map(|(_, parent, _)| parent),
            trace_state: caller.and(call.trace.state).and_then(valid_tracestate).map(str::to_string),
            start_unix_nanos: end_unix_nanos.saturating_sub(call.started.elapsed().as_nanos() as u64),
            end_unix_nanos,
            path: call.path.to_string(),
            method: call.method.to_string(),
            target: call.target.to_string(),
            server: call.server.name.clone(),
            transport: transport(&call.server.transport),
            session: call.session.map(str::to_string),
            request_id: call.request_id.map(|id| match id {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            }),
            key_alias: call.key_alias.map(str::to_string),
            outcome: call.outcome,
            error: call.error,
        })
    }

    /// Whether the request failed: the server's error, no answer, or the tool's own error.
    pub fn failed(&self) -> bool {
        self.error.is_some()
    }

    /// The span's name: `{mcp.method.name} {target}` for a tool or a prompt (names of few
    /// values), the method alone otherwise (a resource's URI is not).
    pub fn span_name(&self) -> String {
        match self.method.as_str() {
            "tools/call" | "prompts/get" if !self.target.is_empty() => format!("{} {}", self.method, self.target),
            _ => self.method.clone(),
        }
    }
}

/// The transport's name, as the config writes it.
fn transport(t: &McpTransport) -> &'static str {
    match t {
        McpTransport::Http { .. } => "http",
        McpTransport::Sse { .. } => "sse",
        McpTransport::Stdio { .. } => "stdio",
    }
}

/// The Trace Context a JSON-RPC request carries in `params._meta` (where OpenTelemetry's MCP
/// conventions put it), if it carries a `traceparent`.
pub fn in_meta(params: Option<&Value>) -> Option<TraceContext<'_>> {
    let meta = params?.get("_meta")?;
    let parent = meta.get("traceparent")?.as_str()?.as_bytes();
    Some(TraceContext {
        parent: Some(parent),
        state: meta.get("tracestate").and_then(Value::as_str).map(str::as_bytes),
    })
}
