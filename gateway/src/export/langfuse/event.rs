//! The bodies of one request's Langfuse events, shaped as LiteLLM's Langfuse callback shapes
//! them (so a team that moves from LiteLLM finds its traces where it left them):
//!
//! - the trace: `litellm-<call type>` (or the metadata's `trace_name`), `sessionId` from
//!   `session_id`, `userId` from `trace_user_id` (else the request's end user), the request's
//!   tags, input and output; none when the caller continues a trace (`existing_trace_id`);
//! - the generation: `generation_name` (else `litellm:<key alias>`, else `litellm-<call type>`),
//!   the deployment's model, its parameters, usage and cost, start, end and first-token times,
//!   `level: ERROR` with the error as `statusMessage` for a failed request, and LiteLLM's
//!   metadata: the key's alias, team and user (never the key), the caller's metadata as
//!   `requester_metadata` (credentials taken out), the cost, and Pointwork's routing facts.

use pointwork_core::RouteKind;
use serde_json::{json, Map, Value};

use super::super::details::{completion, request_details, RequestDetails};
use super::super::record::RequestRecord;
use super::super::trace_context::hex;
use super::secrets::{clean_metadata, scrub_text};

/// LiteLLM's stand-in for content that is not logged (`turn_off_message_logging`, `mask_*`).
pub(crate) const REDACTED: &str = "redacted-by-litellm";

/// What every record's events share.
pub(crate) struct Options<'a> {
    pub content: bool,
    pub environment: Option<&'a str>,
    pub release: Option<&'a str>,
}

/// One request's event bodies.
pub(crate) struct Bodies {
    /// `None` when the caller continues a trace of its own (`existing_trace_id`).
    pub trace: Option<Map<String, Value>>,
    pub generation: Map<String, Value>,
}

/// LiteLLM's `call_type` of an API surface, as its proxy names it.
pub(crate) fn call_type(route: RouteKind) -> &'static str {
    match route {
        RouteKind::ChatCompletions => "acompletion",
        RouteKind::Embeddings => "aembedding",
        RouteKind::Messages => "anthropic_messages",
        RouteKind::Responses => "aresponses",
    }
}

/// The events' bodies of `r`.
pub(crate) fn bodies(r: &RequestRecord, o: &Options<'_>) -> Bodies {
    let d = r.request_body.as_deref().map(|b| request_details(r.route, b, o.content)).unwrap_or_default();
    let call = call_type(r.route);
    let existing = d.meta("existing_trace_id");
    let trace_id = existing.or(d.meta("trace_id")).map_or_else(|| hex(&r.trace_id), str::to_string);
    let flag = |k: &str| match d.metadata.get(k) {
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => s.eq_ignore_ascii_case("true"),
        _ => false,
    };
    let input = if flag("mask_input") { Value::from(REDACTED) } else { input(r, &d, o.content) };
    let output = if flag("mask_output") { Value::from(REDACTED) } else { output(r, o.content) };
    let version = d.meta("version");
    let trace = existing.is_none().then(|| {
        let mut t = Map::new();
        t.insert("id".into(), trace_id.clone().into());
        t.insert("timestamp".into(), super::iso8601(r.start_unix_nanos).into());
        let name = d.meta("trace_name").map_or_else(|| format!("litellm-{call}"), str::to_string);
        t.insert("name".into(), name.into());
        put(&mut t, "userId", d.meta("trace_user_id").or(d.user.as_deref()));
        put(&mut t, "sessionId", d.meta("session_id"));
        t.insert("input".into(), input.clone());
        t.insert("output".into(), output.clone());
        t.insert("tags".into(), d.tags.clone().into());
        put(&mut t, "version", d.meta("trace_version").or(version));
        put(&mut t, "release", d.meta("trace_release").or(o.release));
        if let Some(Value::Object(m)) = d.metadata.get("trace_metadata") {
            t.insert("metadata".into(), Value::Object(clean_metadata(m)));
        }
        put(&mut t, "environment", o.environment);
        t
    });
    let mut g = Map::new();
    let id = d.meta("generation_id").map_or_else(|| hex(&r.span_id), str::to_string);
    g.insert("id".into(), id.into());
    g.insert("traceId".into(), trace_id.into());
    g.insert("name".into(), generation_name(r, &d, call).into());
    g.insert("startTime".into(), super::iso8601(r.start_unix_nanos).into());
    g.insert("endTime".into(), super::iso8601(r.end_unix_nanos).into());
    if !r.failed() {
        // As LiteLLM: a whole answer's first token is its end.
        let first = r.first_token.map_or(r.end_unix_nanos, |f| r.start_unix_nanos + f.as_nanos() as u64);
        g.insert("completionStartTime".into(), super::iso8601(first).into());
    }
    g.insert("model".into(), model(r).into());
    g.insert("modelParameters".into(), Value::Object(parameters(r, &d)));
    g.insert("input".into(), input);
    g.insert("output".into(), output);
    g.insert("level".into(), if r.failed() { "ERROR" } else { "DEFAULT" }.into());
    if r.failed() {
        g.insert("statusMessage".into(), failure(r).into());
    }
    if let Some(u) = r.usage {
        let (p, c, t) = (u.prompt_tokens, u.completion_tokens, u.total_tokens);
        let mut usage = json!({"input": p, "output": c, "total": t, "unit": "TOKENS"});
        if let Some(cost) = r.cost {
            usage["totalCost"] = cost.into();
            g.insert("costDetails".into(), json!({"total": cost}));
        }
        g.insert("usage".into(), usage);
        g.insert("usageDetails".into(), json!({"input": p, "output": c, "total": t}));
    }
    g.insert("metadata".into(), Value::Object(metadata(r, &d)));
    put(&mut g, "version", version);
    put(&mut g, "parentObservationId", d.meta("parent_observation_id"));
    put(&mut g, "environment", o.environment);
    Bodies { trace, generation: g }
}

fn put(map: &mut Map<String, Value>, key: &str, value: Option<&str>) {
    if let Some(v) = value {
        map.insert(key.into(), v.into());
    }
}

/// The caller's key by alias: the master key has none (as in LiteLLM).
fn alias(r: &RequestRecord) -> Option<&str> {
    r.key_alias.as_deref().filter(|a| *a != "master")
}

fn generation_name(r: &RequestRecord, d: &RequestDetails, call: &str) -> String {
    match (d.meta("generation_name"), alias(r)) {
        (Some(name), _) => name.to_string(),
        (None, Some(alias)) => format!("litellm:{alias}"),
        (None, None) => format!("litellm-{call}"),
    }
}

/// The model as LiteLLM names it: the deployment's `provider/model`; the requested name when no
/// deployment was tried.
fn model(r: &RequestRecord) -> String {
    match (r.provider, r.upstream_model.as_deref()) {
        (Some(provider), Some(m)) if !m.contains('/') => format!("{provider}/{m}"),
        (_, Some(m)) => m.to_string(),
        (_, None) => r.requested_model.clone(),
    }
}

/// The request's parameters (LiteLLM's `optional_params`).
fn parameters(r: &RequestRecord, d: &RequestDetails) -> Map<String, Value> {
    let mut p = Map::new();
    let numbers = [
        ("temperature", d.temperature),
        ("top_p", d.top_p),
        ("top_k", d.top_k),
        ("presence_penalty", d.presence_penalty),
        ("frequency_penalty", d.frequency_penalty),
    ];
    for (k, v) in numbers {
        if let Some(v) = v {
            p.insert(k.into(), v.into());
        }
    }
    if let Some(max) = d.max_tokens {
        p.insert("max_tokens".into(), max.into());
    }
    if let Some(seed) = d.seed {
        p.insert("seed".into(), seed.into());
    }
    if let Some(n) = d.choices {
        p.insert("n".into(), n.into());
    }
    if !d.stop.is_empty() {
        // Langfuse takes scalars: LiteLLM sends a list as its text.
        p.insert("stop".into(), Value::from(d.stop.clone()).to_string().into());
    }
    if r.stream {
        p.insert("stream".into(), true.into());
    }
    p
}

/// The prompt as LiteLLM logs it (`{"messages": …}`), or its stand-in without content.
fn input(r: &RequestRecord, d: &RequestDetails, content: bool) -> Value {
    if !content {
        return json!({"messages": [{"role": "user", "content": REDACTED}]});
    }
    match &d.input {
        Some(messages) => json!({"messages": messages}),
        None if r.request_body.is_none() => Value::from("[pointwork: the request body was too large to keep]"),
        None => Value::Null,
    }
}

/// The answer's message, the error of a failed request, or the stand-in without content.
fn output(r: &RequestRecord, content: bool) -> Value {
    if r.failed() {
        return failure(r).into();
    }
    if r.route == RouteKind::Embeddings {
        return Value::Null;
    }
    if !content {
        return json!({"role": "assistant", "content": REDACTED});
    }
    r.response_body.as_deref().and_then(|b| completion(r.route, r.stream, b)).unwrap_or(Value::Null)
}

/// A failed request's error, without anything that looks like a key.
fn failure(r: &RequestRecord) -> String {
    r.error.as_deref().map_or_else(|| format!("HTTP {}", r.status), error_text)
}

/// An error body's message (OpenAI's and Anthropic's `error.message`), else the text itself;
/// without anything that looks like a key.
fn error_text(error: &str) -> String {
    let parsed = serde_json::from_str::<Value>(error).ok();
    let message = parsed.as_ref().and_then(|e| e.pointer("/error/message").or_else(|| e.get("message")));
    scrub_text(message.and_then(Value::as_str).unwrap_or(error))
}

/// The generation's metadata: LiteLLM's standard fields, then Pointwork's routing facts.
fn metadata(r: &RequestRecord, d: &RequestDetails) -> Map<String, Value> {
    let mut m = Map::new();
    put(&mut m, "user_api_key_alias", alias(r));
    put(&mut m, "user_api_key_team_id", r.team_id.as_deref());
    put(&mut m, "user_api_key_user_id", r.user_id.as_deref());
    put(&mut m, "user_api_key_end_user_id", d.user.as_deref());
    m.insert("requester_metadata".into(), Value::Object(clean_metadata(&d.metadata)));
    m.insert("litellm_response_cost".into(), r.cost.into());
    m.insert("cache_hit".into(), r.cache_hit.into());
    let overhead_ms = r.overhead.as_secs_f64() * 1e3;
    m.insert(
        "hidden_params".into(),
        json!({
            "model_id": r.deployment,
            "litellm_model_name": r.upstream_model,
            "response_cost": r.cost,
            "litellm_overhead_time_ms": overhead_ms,
        }),
    );
    let attempts: Vec<Value> = r
        .attempts
        .iter()
        .map(|a| {
            let mut at = json!({
                "deployment": a.deployment,
                "provider": a.provider,
                "model": a.upstream_model,
                "server": a.server,
                "cause": a.cause,
                "status": a.status,
                "duration_ms": a.end_unix_nanos.saturating_sub(a.start_unix_nanos) as f64 / 1e6,
            });
            if let Some(failure) = a.failure {
                at["failure"] = failure.into();
            }
            if let Some(error) = &a.error {
                at["error"] = error_text(error).into();
            }
            at
        })
        .collect();
    let mut routing = json!({
        "otel_trace_id": hex(&r.trace_id),
        "otel_span_id": hex(&r.span_id),
        "status": r.status,
        "stream": r.stream,
        "requested_model": r.requested_model,
        "overhead_ms": overhead_ms,
        "attempts": attempts,
    });
    let optional = [
        ("model_group", r.model_group.as_deref()),
        ("deployment", r.deployment.as_deref()),
        ("provider", r.provider),
        ("route_reason", r.route_reason.as_deref()),
        ("cause", r.cause.as_deref()),
        ("policy", r.policy.as_deref()),
        ("key_alias", r.key_alias.as_deref()),
        ("response_model", r.response_model.as_deref()),
    ];
    for (k, v) in optional {
        if let Some(v) = v {
            routing[k] = v.into();
        }
    }
    if !r.finish_reasons.is_empty() {
        routing["finish_reasons"] = r.finish_reasons.clone().into();
    }
    m.insert("pointwork".into(), routing);
    m
}
