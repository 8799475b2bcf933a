//! OpenTelemetry traces over OTLP/HTTP with protobuf, in the GenAI semantic conventions: per
//! request a server span, and under it a client span per attempt; per MCP request a server span
//! in the MCP conventions (`otlp/mcp.rs`).

mod mcp;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue, ArrayValue, InstrumentationScope, KeyValue};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{
    span::SpanKind, status::StatusCode, ResourceSpans, ScopeSpans, Span, Status,
};
use pointwork_config::OtlpSettings;
use pointwork_core::RouteKind;
use prost::Message;

use super::details::{completion, request_details, RequestDetails};
use super::record::{AttemptRecord, Record, RequestRecord};
use super::sink::Sink;

pub(super) struct OtlpSink {
    settings: OtlpSettings,
    content: bool,
}

impl OtlpSink {
    pub(super) fn new(settings: OtlpSettings, content: bool) -> OtlpSink {
        OtlpSink { settings, content }
    }
}

impl Sink for OtlpSink {
    fn name(&self) -> &'static str {
        "otlp"
    }

    fn url(&self) -> &str {
        &self.settings.endpoint
    }

    fn headers(&self) -> &[(String, String)] {
        &self.settings.headers
    }

    fn timeout(&self) -> std::time::Duration {
        self.settings.timeout
    }

    fn encode(&self, batch: &[Arc<Record>]) -> (Vec<u8>, &'static str) {
        let spans = batch
            .iter()
            .flat_map(|r| match &**r {
                Record::Request(r) => spans(r, self.content),
                Record::Mcp(m) => vec![mcp::span(m)],
            })
            .collect();
        let request = ExportTraceServiceRequest {
            resource_spans: vec![ResourceSpans {
                resource: Some(Resource {
                    attributes: vec![
                        text("service.name", &self.settings.service_name),
                        text("service.version", env!("CARGO_PKG_VERSION")),
                        text("telemetry.sdk.name", "pointwork"),
                    ],
                    ..Resource::default()
                }),
                scope_spans: vec![ScopeSpans {
                    scope: Some(InstrumentationScope {
                        name: "pointwork".into(),
                        version: env!("CARGO_PKG_VERSION").into(),
                        ..InstrumentationScope::default()
                    }),
                    spans,
                    schema_url: String::new(),
                }],
                schema_url: String::new(),
            }],
        };
        (request.encode_to_vec(), "application/x-protobuf")
    }
}

/// GenAI's `gen_ai.operation.name` of an API surface.
fn operation(route: RouteKind) -> &'static str {
    match route {
        RouteKind::Embeddings => "embeddings",
        RouteKind::ChatCompletions | RouteKind::Messages | RouteKind::Responses => "chat",
    }
}

/// GenAI's `gen_ai.provider.name` of a LiteLLM provider, where the conventions name one; the
/// LiteLLM name otherwise.
pub(super) fn provider_name(litellm: &'static str) -> &'static str {
    match litellm {
        "bedrock" => "aws.bedrock",
        "vertex_ai" => "gcp.vertex_ai",
        "gemini" => "gcp.gemini",
        "azure" => "azure.ai.openai",
        "azure_ai" => "azure.ai.inference",
        "mistral" | "codestral" => "mistral_ai",
        "xai" => "x_ai",
        "cohere" | "cohere_chat" => "cohere",
        other => other,
    }
}

/// The request's server span and its attempts' client spans.
fn spans(r: &RequestRecord, content: bool) -> Vec<Span> {
    let details = r.request_body.as_deref().map(|b| request_details(r.route, b, content)).unwrap_or_default();
    let op = operation(r.route);
    let mut attributes = vec![
        text("gen_ai.operation.name", op),
        text("gen_ai.request.model", &r.requested_model),
        text("http.request.method", "POST"),
        text("url.path", &r.path),
        int("http.response.status_code", i64::from(r.status)),
        boolean("gen_ai.request.stream", r.stream),
        int("pointwork.attempts", r.attempts.len() as i64),
        boolean("pointwork.cache_hit", r.cache_hit),
        double("pointwork.overhead_ms", r.overhead.as_secs_f64() * 1e3),
    ];
    let optional = [
        ("gen_ai.provider.name", r.provider.map(provider_name)),
        ("gen_ai.response.model", r.response_model.as_deref()),
        ("pointwork.model_group", r.model_group.as_deref()),
        ("pointwork.deployment", r.deployment.as_deref()),
        ("pointwork.route_reason", r.route_reason.as_deref()),
        ("pointwork.cause", r.cause.as_deref()),
        ("pointwork.policy", r.policy.as_deref()),
        ("pointwork.key_alias", r.key_alias.as_deref()),
        ("pointwork.team_id", r.team_id.as_deref()),
        ("pointwork.user_id", r.user_id.as_deref()),
    ];
    attributes.extend(optional.into_iter().filter_map(|(k, v)| v.map(|v| text(k, v))));
    if let Some(u) = r.usage {
        attributes.push(int("gen_ai.usage.input_tokens", u.prompt_tokens as i64));
        attributes.push(int("gen_ai.usage.output_tokens", u.completion_tokens as i64));
    }
    if let Some(cost) = r.cost {
        attributes.push(double("pointwork.cost_usd", cost));
    }
    if !r.finish_reasons.is_empty() {
        attributes.push(texts("gen_ai.response.finish_reasons", &r.finish_reasons));
    }
    if let Some(first) = r.first_token {
        attributes.push(double("gen_ai.server.time_to_first_token", first.as_secs_f64()));
    }
    request_attributes(&details, &mut attributes);
    if content {
        if let Some(input) = &details.input {
            attributes.push(text("gen_ai.input.messages", &input.to_string()));
        }
        let output = r.response_body.as_deref().and_then(|b| completion(r.route, r.stream, b));
        if let Some(output) = output {
            attributes.push(text("gen_ai.output.messages", &serde_json::Value::Array(vec![output]).to_string()));
        }
    }
    if let Some(error) = &r.error {
        attributes.push(text("error.type", &r.status.to_string()));
        attributes.push(text("pointwork.error", error));
    }
    let mut spans = Vec::with_capacity(1 + r.attempts.len());
    spans.push(Span {
        trace_id: r.trace_id.to_vec(),
        span_id: r.span_id.to_vec(),
        trace_state: r.trace_state.clone().unwrap_or_default(),
        parent_span_id: r.parent_span_id.map(|p| p.to_vec()).unwrap_or_default(),
        flags: 0x100 | u32::from(r.parent_span_id.is_some()) << 9,
        name: format!("{op} {}", r.requested_model),
        kind: SpanKind::Server as i32,
        start_time_unix_nano: r.start_unix_nanos,
        end_time_unix_nano: r.end_unix_nanos,
        attributes,
        status: Some(status(r.failed(), r.error.as_deref())),
        ..Span::default()
    });
    spans.extend(r.attempts.iter().map(|a| attempt_span(r, a, op)));
    spans
}

/// GenAI's request parameters and LiteLLM's metadata that tools group by.
fn request_attributes(d: &RequestDetails, out: &mut Vec<KeyValue>) {
    let numbers = [
        ("gen_ai.request.temperature", d.temperature),
        ("gen_ai.request.top_p", d.top_p),
        ("gen_ai.request.top_k", d.top_k),
        ("gen_ai.request.presence_penalty", d.presence_penalty),
        ("gen_ai.request.frequency_penalty", d.frequency_penalty),
    ];
    out.extend(numbers.into_iter().filter_map(|(k, v)| v.map(|v| double(k, v))));
    if let Some(max) = d.max_tokens {
        out.push(int("gen_ai.request.max_tokens", max as i64));
    }
    if let Some(seed) = d.seed {
        out.push(int("gen_ai.request.seed", seed));
    }
    if let Some(n) = d.choices {
        out.push(int("gen_ai.request.choice.count", n as i64));
    }
    if !d.stop.is_empty() {
        out.push(texts("gen_ai.request.stop_sequences", &d.stop));
    }
    if let Some(session) = d.meta("session_id") {
        out.push(text("gen_ai.conversation.id", session));
    }
    if let Some(user) = d.meta("trace_user_id").or(d.user.as_deref()) {
        out.push(text("user.id", user));
    }
    if !d.tags.is_empty() {
        out.push(texts("pointwork.tags", &d.tags));
    }
}

fn attempt_span(r: &RequestRecord, a: &AttemptRecord, op: &str) -> Span {
    let mut attributes = vec![
        text("gen_ai.operation.name", op),
        text("gen_ai.provider.name", provider_name(a.provider)),
        text("gen_ai.request.model", &a.upstream_model),
        text("server.address", &a.server),
        text("pointwork.deployment", &a.deployment),
        text("pointwork.attempt.cause", a.cause),
    ];
    if let Some(status) = a.status {
        attributes.push(int("http.response.status_code", i64::from(status)));
    }
    if let Some(failure) = a.failure {
        attributes.push(text("error.type", failure));
        attributes.push(text("pointwork.failure", failure));
    }
    if let Some(first) = a.first_token {
        attributes.push(double("gen_ai.server.time_to_first_token", first.as_secs_f64()));
    }
    Span {
        trace_id: r.trace_id.to_vec(),
        span_id: a.span_id.to_vec(),
        parent_span_id: r.span_id.to_vec(),
        flags: 0x100,
        name: format!("{op} {}", a.upstream_model),
        kind: SpanKind::Client as i32,
        start_time_unix_nano: a.start_unix_nanos,
        end_time_unix_nano: a.end_unix_nanos,
        attributes,
        status: Some(status(a.failure.is_some(), a.error.as_deref())),
        ..Span::default()
    }
}

fn status(failed: bool, message: Option<&str>) -> Status {
    match failed {
        true => Status { message: message.unwrap_or_default().to_string(), code: StatusCode::Error as i32 },
        false => Status { message: String::new(), code: StatusCode::Unset as i32 },
    }
}

fn value(v: any_value::Value) -> Option<AnyValue> {
    Some(AnyValue { value: Some(v) })
}

fn text(key: &str, v: &str) -> KeyValue {
    KeyValue { key: key.into(), key_strindex: 0, value: value(any_value::Value::StringValue(v.into())) }
}

fn texts(key: &str, v: &[String]) -> KeyValue {
    let values = v.iter().map(|s| AnyValue { value: Some(any_value::Value::StringValue(s.clone())) }).collect();
    KeyValue { key: key.into(), key_strindex: 0, value: value(any_value::Value::ArrayValue(ArrayValue { values })) }
}

fn int(key: &str, v: i64) -> KeyValue {
    KeyValue { key: key.into(), key_strindex: 0, value: value(any_value::Value::IntValue(v)) }
}

fn double(key: &str, v: f64) -> KeyValue {
    KeyValue { key: key.into(), key_strindex: 0, value: value(any_value::Value::DoubleValue(v)) }
}

fn boolean(key: &str, v: bool) -> KeyValue {
    KeyValue { key: key.into(), key_strindex: 0, value: value(any_value::Value::BoolValue(v)) }
}
