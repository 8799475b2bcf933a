//! What is exported of one request: plain owned data, built on the shard when the request ends
//! (only when an exporter is on) and read by the exporter thread. Everything that costs parsing
//! — the request's parameters and metadata, the content — is read there, from the kept bodies
//! ([`crate::export::details`]).

use std::time::Duration;

use pointwork_core::RouteKind;

use crate::usage::Usage;

/// One proxied request: the server span of its trace.
#[derive(Clone, Debug)]
pub struct RequestRecord {
    pub trace_id: [u8; 16],
    /// The request's own span.
    pub span_id: [u8; 8],
    /// The caller's span, when its `traceparent` was continued.
    pub parent_span_id: Option<[u8; 8]>,
    /// The caller's `tracestate`, kept with the trace.
    pub trace_state: Option<String>,
    pub start_unix_nanos: u64,
    pub end_unix_nanos: u64,
    /// The API surface called.
    pub route: RouteKind,
    pub path: String,
    /// The status the client got.
    pub status: u16,
    pub stream: bool,
    /// The model name the request asked for.
    pub requested_model: String,
    pub model_group: Option<String>,
    /// The deployment whose answer the client got (the last attempt's).
    pub deployment: Option<String>,
    /// LiteLLM's provider name of that deployment (`openai`, `anthropic`, …).
    pub provider: Option<&'static str>,
    /// The model that deployment was asked for (`gpt-4o-mini`).
    pub upstream_model: Option<String>,
    /// The caller's key by name or alias (`master`, a virtual key's name): never the key.
    pub key_alias: Option<String>,
    /// A database key's team and user, when the caller has one.
    pub team_id: Option<String>,
    pub user_id: Option<String>,
    /// The routing decision's one-line reason (`x-pointwork-route`).
    pub route_reason: Option<String>,
    /// Why the decision was made (`fresh`, `retry`, `fallback`, …).
    pub cause: Option<String>,
    /// The policy the request ran under, if any.
    pub policy: Option<String>,
    /// Every attempt, in order: a child span each.
    pub attempts: Vec<AttemptRecord>,
    pub usage: Option<Usage>,
    /// What the answer cost, by the deployment's prices.
    pub cost: Option<f64>,
    /// Streams: from the request's start to the first token relayed.
    pub first_token: Option<Duration>,
    /// The gateway's own time (`x-pointwork-overhead-ms`).
    pub overhead: Duration,
    /// The answer's `model`, as the provider named it.
    pub response_model: Option<String>,
    /// The answer's finish (stop) reasons, as the provider named them.
    pub finish_reasons: Vec<String>,
    /// The error the client got, when the request failed (its message).
    pub error: Option<String>,
    /// The answer came from the response cache (issue 35).
    pub cache_hit: bool,
    /// The request's body, for its parameters, metadata and (when configured) content; `None`
    /// when larger than [`MAX_KEPT_BODY`].
    pub request_body: Option<Vec<u8>>,
    /// The answer's body as the client got it, only when content is exported (up to
    /// [`MAX_KEPT_BODY`]).
    pub response_body: Option<Vec<u8>>,
}

/// The largest body kept for the exporters.
pub const MAX_KEPT_BODY: usize = 1 << 20;

/// One attempt at one deployment: a client span under the request's.
#[derive(Clone, Debug)]
pub struct AttemptRecord {
    pub span_id: [u8; 8],
    pub start_unix_nanos: u64,
    pub end_unix_nanos: u64,
    pub deployment: String,
    pub provider: &'static str,
    pub upstream_model: String,
    /// The upstream's host and port (never its credentials).
    pub server: String,
    /// The upstream's status, when it answered.
    pub status: Option<u16>,
    /// The failure's class (`status_429`, `timeout`, `connect`, …), when the attempt failed.
    pub failure: Option<&'static str>,
    /// Why this attempt went where it did (`fresh`, `retry`, `fallback`, …).
    pub cause: &'static str,
    /// Streams: from the attempt's start to its first body bytes.
    pub first_token: Option<Duration>,
    /// The upstream's error message, when it failed.
    pub error: Option<String>,
}

impl RequestRecord {
    /// Whether the request failed (for Langfuse's `failure_callback` and the span's status).
    pub fn failed(&self) -> bool {
        self.status >= 400
    }
}

/// What a shard hands the exporter thread: a proxied request, or an MCP request sent on to a
/// server. Boxed, so that the hand-over moves a pointer whatever the kind.
#[derive(Debug)]
pub enum Record {
    Request(Box<RequestRecord>),
    Mcp(Box<super::mcp_record::McpCallRecord>),
}

impl Record {
    /// The record's own span (every event id of it derives from this).
    pub fn span_id(&self) -> [u8; 8] {
        match self {
            Record::Request(r) => r.span_id,
            Record::Mcp(m) => m.span_id,
        }
    }
}
