//! An MCP request's span, in OpenTelemetry's MCP semantic conventions: a server span (the
//! gateway serves its caller's request), named `{mcp.method.name} {target}` for a tool or a
//! prompt, with the tool, prompt or resource, the session, and `error.type` when it failed;
//! the server it went to and the caller's key in `pointwork.*`.

use opentelemetry_proto::tonic::common::v1::KeyValue;
use opentelemetry_proto::tonic::trace::v1::{span::SpanKind, Span};

use super::{status, text};
use crate::export::mcp_record::McpCallRecord;

/// `m`'s span.
pub(super) fn span(m: &McpCallRecord) -> Span {
    let mut attributes = vec![
        text("mcp.method.name", &m.method),
        text("url.path", &m.path),
        text("network.transport", "tcp"),
        text("network.protocol.name", "http"),
        text("pointwork.mcp.server", &m.server),
        text("pointwork.mcp.transport", m.transport),
        text("pointwork.mcp.target", &m.target),
        text("pointwork.mcp.outcome", m.outcome.name()),
    ];
    attributes.extend(target(m));
    let optional = [
        ("mcp.session.id", m.session.as_deref()),
        ("jsonrpc.request.id", m.request_id.as_deref()),
        ("pointwork.key_alias", m.key_alias.as_deref()),
    ];
    attributes.extend(optional.into_iter().filter_map(|(k, v)| v.map(|v| text(k, v))));
    if let Some(e) = &m.error {
        attributes.push(text("error.type", &e.kind));
        if e.kind.parse::<i64>().is_ok() {
            attributes.push(text("rpc.response.status_code", &e.kind));
        }
    }
    Span {
        trace_id: m.trace_id.to_vec(),
        span_id: m.span_id.to_vec(),
        trace_state: m.trace_state.clone().unwrap_or_default(),
        parent_span_id: m.parent_span_id.map(|p| p.to_vec()).unwrap_or_default(),
        flags: 0x100 | u32::from(m.parent_span_id.is_some()) << 9,
        name: m.span_name(),
        kind: SpanKind::Server as i32,
        start_time_unix_nano: m.start_unix_nanos,
        end_time_unix_nano: m.end_unix_nanos,
        attributes,
        status: Some(status(m.failed(), m.error.as_ref().map(|e| e.message.as_str()))),
        ..Span::default()
    }
}

/// What the request is about, as the conventions name it per method.
fn target(m: &McpCallRecord) -> Vec<KeyValue> {
    match m.method.as_str() {
        "tools/call" => vec![text("gen_ai.operation.name", "execute_tool"), text("gen_ai.tool.name", &m.target)],
        "prompts/get" => vec![text("gen_ai.prompt.name", &m.target)],
        "resources/read" => vec![text("mcp.resource.uri", &m.target)],
        _ => Vec::new(),
    }
}
