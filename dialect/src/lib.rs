//! Translators between the OpenAI chat-completions dialect and the Anthropic Messages dialect.
//!
//! Pure functions and state machines over bytes: no IO, no gateway state, no clock of their own
//! (a response's `created` is an argument, or read once by the convenience wrappers). The
//! forwarder passes bytes through when the client's surface and the provider speak the same
//! dialect and otherwise runs one translator per pair direction and kind:
//!
//! | client → provider | request | answer (2xx) | stream |
//! |---|---|---|---|
//! | Anthropic → OpenAI | [`messages_request_to_chat`] | [`chat_response_to_messages`] | [`ChatToMessagesStream`] |
//! | OpenAI → Anthropic | [`chat_request_to_messages`] | [`messages_response_to_chat`] | [`MessagesToChatStream`] |
//! | OpenAI Responses → OpenAI chat | [`responses::responses_request_to_chat`] | [`responses::chat_response_to_responses`] | [`responses::ChatToResponsesStream`] |
//!
//! # The API
//!
//! - Requests: `(body, upstream_model) -> Result<Vec<u8>, Untranslatable>`, the whole body in,
//!   the translated body out with `model` set to `upstream_model` ([`messages_request_to_chat`]:
//!   a [`TranslatedRequest`], the body and what it dropped).
//!   [`chat_request_to_messages_with_default`] takes the `max_tokens` to use when the OpenAI
//!   request names none (otherwise [`DEFAULT_MAX_TOKENS`]).
//! - Answers: `(body, model) -> Result<Vec<u8>, String>`, `model` being what the client asked
//!   for; `Err` says why the upstream's 2xx body cannot be read (answer 502).
//!   [`messages_response_to_chat_at`] takes `created` instead of reading the clock.
//! - Streams: [`ChatToMessagesStream::new`]`(model)` and
//!   [`MessagesToChatStream::new`]`(model, include_usage)` (`include_usage`: the client's
//!   `stream_options.include_usage`; [`MessagesToChatStream::with_created`] takes `created`), both
//!   [`StreamTranslator`]s: `feed` the decoded body in any pieces, `finish` at its end, `usage`
//!   for `(prompt, completion)` tokens seen. The same bytes split anywhere give the same output.
//! - Errors: [`error_to_anthropic`] / [`error_to_openai`] turn an upstream error body (any shape,
//!   even HTML) into the client's, message kept (OpenAI's `context_length_exceeded` ⇄ Anthropic's
//!   `prompt is too long`); [`anthropic_error`] and [`anthropic_stream_error`] build the
//!   gateway's own errors on `/v1/messages`; [`anthropic_error_type`] and [`openai_error_type`] name a
//!   status's type.
//! - [`sse::SseSplitter`]: the incremental event splitter the streams run on.
//!
//! # What is dropped, what is refused
//!
//! Nothing is dropped silently. A body that is not a JSON object is refused as `body`.
//!
//! - Anthropic → OpenAI drops, and names in [`TranslatedRequest::dropped`], what chat
//!   completions cannot say — its clients (Claude Code) cannot leave their fields out: `top_k`;
//!   `thinking` of an unknown type or `enabled` without a budget; `output_config` keys other
//!   than `effort` (low/medium/high) and a `json_schema` `format`; `service_tier` other than
//!   `auto`; `metadata` keys other than `user_id` (and LiteLLM's `session_id`, which the gateway
//!   reads and drops); server tools (`tools[i].type` other than `custom`) and unknown tool keys;
//!   `tool_choice` of an unknown type; `system` blocks other than text; content blocks other
//!   than text, image (base64 or URL), document (base64 PDF), tool_use, tool_result and, in
//!   assistant turns, thinking; in a tool_result, blocks other than text and image; every other
//!   top-level field (`container`, `mcp_servers`, `context_management`, …). It refuses, with
//!   [`Untranslatable`] naming the path, only a body of the wrong shape (`messages` not an
//!   array, a role other than user/assistant, a tool that is not an object).
//! - OpenAI → Anthropic refuses with [`Untranslatable`] naming the field's path (the caller
//!   answers 400): `n` ≠ 1, `logprobs`, `top_logprobs`, non-zero `frequency_penalty` /
//!   `presence_penalty`, a non-empty `logit_bias`, `seed`, `store: true`, `response_format`
//!   `json_object`, `temperature` above 1 (Anthropic's range is 0–1), `reasoning_effort` other
//!   than none/minimal/low/medium/high/xhigh or one that leaves `max_tokens` no room,
//!   `service_tier` other than `auto`, `modalities` other than `["text"]`, `audio`,
//!   `prediction`, `web_search_options`, `verbosity`, legacy `functions` / `function_call` and
//!   the `function` role, `tool_choice` other than auto/required/none/a function, non-function
//!   tools and unknown function keys, `name` on a message, a non-null `refusal` or `audio` on an
//!   assistant message, content parts other than text, image_url and file (a
//!   `data:application/pdf` file), tool call arguments that are not a JSON object, and every
//!   unknown top-level field.
//!
//! What changes only cost, caching or resolution, never what the model may answer, is accepted
//! and not carried over, listed here so that it is not silent: `cache_control` on blocks and
//! tools (OpenAI-compatible providers cache by themselves), an image's `detail`, OpenAI's
//! `metadata` (it tags a stored completion or the gateway's own logs; Anthropic's holds only
//! `user_id`), `prompt_cache_key`, `store: false`, `n: 1`, `parallel_tool_calls: true`,
//! `stream_options` (the stream translator is told `include_usage`), `thinking` blocks in
//! assistant history (Anthropic itself leaves earlier turns' thinking out of the context), and
//! Anthropic `thinking` of type `disabled` (no reasoning is the default).
//!
//! # Mappings worth knowing
//!
//! - All `system`/`developer` messages become Anthropic's `system` text blocks in order (one
//!   string stays a string); Anthropic's `system` becomes one system message per block.
//! - Consecutive `tool` messages become one user turn of `tool_result` blocks; a tool_result with
//!   `is_error: true` becomes a tool message whose text starts with `Error: ` (OpenAI has no
//!   error flag), and its images (tool messages carry text only) go in the user message right
//!   after the tool messages, each after a text part `Image returned by tool call <id>:`.
//! - `thinking.budget_tokens` ⇄ `reasoning_effort` by LiteLLM's thresholds (1024 low, 2048
//!   medium, 4096 high; minimal → 1024, xhigh → 8192, none → thinking disabled; adaptive thinking
//!   → medium unless `output_config.effort` says), the budget kept below `max_tokens`.
//! - `tool_choice` auto/any/tool/none ⇄ auto/required/function/none;
//!   `disable_parallel_tool_use: true` ⇄ `parallel_tool_calls: false`; `stop_sequences` ⇄
//!   `stop`; `user` ⇄ `metadata.user_id` (`safety_identifier` too); `output_config.format` ⇄
//!   `response_format` `json_schema`; a base64 image ⇄ a `data:` URI, a URL image ⇄ its URL.
//! - An OpenAI request without `max_tokens` / `max_completion_tokens` gets
//!   [`DEFAULT_MAX_TOKENS`] (Anthropic requires one); Anthropic's `max_tokens` goes out as
//!   OpenAI's `max_tokens` (the field OpenAI-compatible servers know); a translated Anthropic
//!   stream asks for `stream_options.include_usage` so that usage arrives.
//!
//! # Answers and streams
//!
//! Text, tool calls (arguments string ⇄ input object), reasoning (`reasoning_content` ⇄
//! thinking blocks), stop reasons (end_turn/stop_sequence ⇄ stop, max_tokens ⇄ length,
//! tool_use ⇄ tool_calls, refusal ⇄ content_filter), usage (OpenAI's prompt tokens are
//! Anthropic's input, cache-write and cache-read tokens together; cached ⇄
//! `cache_read_input_tokens`), ids kept, `model` set to what the client asked for. A stream cut
//! short, an upstream error event or a garbled event ends the client's stream with an error in
//! its dialect (Anthropic `event: error`; OpenAI `data: {"error":…}` without `[DONE]`). Unknown
//! Anthropic event types and `ping` are skipped, as Anthropic's versioning policy asks of clients.

pub mod bedrock;
mod chat_chunks;
mod chat_to_messages_request;
mod chat_to_messages_response;
mod chat_to_messages_stream;
mod errors;
pub mod gemini;
pub mod json_plain;
mod json_write;
mod mapping;
mod messages_to_chat_request;
mod messages_to_chat_response;
mod messages_to_chat_stream;
pub mod responses;
pub mod sse;

#[cfg(test)]
mod fixture_tests;
#[cfg(test)]
mod garbage_tests;
#[cfg(test)]
mod roundtrip_tests;

pub use chat_to_messages_request::{chat_request_to_messages, chat_request_to_messages_with_default};
pub use chat_to_messages_response::chat_response_to_messages;
pub use chat_to_messages_stream::ChatToMessagesStream;
pub use errors::{
    anthropic_error, anthropic_error_type, anthropic_stream_error, error_to_anthropic, error_to_openai,
    openai_error_type,
};
pub use messages_to_chat_request::messages_request_to_chat;
pub use messages_to_chat_response::{messages_response_to_chat, messages_response_to_chat_at};
pub use messages_to_chat_stream::MessagesToChatStream;

use serde_json::{Map, Value};

/// `max_tokens` for an OpenAI request that names none: Anthropic requires the field, and 4096 is
/// what every current Claude model can produce (LiteLLM's default for Anthropic too).
pub const DEFAULT_MAX_TOKENS: u64 = 4096;

/// A translated request body, and the paths of the request's fields that were dropped because
/// the target dialect has no equivalent (the gateway names them in `x-pointwork-dropped`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TranslatedRequest {
    pub body: Vec<u8>,
    pub dropped: Vec<String>,
}

/// A request field that cannot be expressed in the other dialect: refused with a 400 naming it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Untranslatable {
    /// The field's path in the client's body, e.g. `top_k` or `messages[2].content[0].type`.
    pub field: String,
    /// Why, in a sentence for the client.
    pub message: String,
}

impl Untranslatable {
    pub(crate) fn new(field: impl Into<String>, message: impl Into<String>) -> Untranslatable {
        Untranslatable { field: field.into(), message: message.into() }
    }
}

impl std::fmt::Display for Untranslatable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "`{}`: {}", self.field, self.message)
    }
}

impl std::error::Error for Untranslatable {}

/// A streamed answer translated event by event.
pub trait StreamTranslator {
    /// Feeds the next piece of the decoded upstream body (SSE bytes, split anywhere), appending
    /// the translated SSE bytes to `out`.
    fn feed(&mut self, input: &[u8], out: &mut Vec<u8>);
    /// Ends the stream. `complete` says the upstream body ended as its framing promised; a stream
    /// cut short (or one that never finished its answer) ends with an error event.
    fn finish(&mut self, out: &mut Vec<u8>, complete: bool);
    /// `(prompt tokens, completion tokens)` as reported by the upstream so far, in OpenAI's
    /// terms (prompt tokens include cached and cache-written ones).
    fn usage(&self) -> Option<(u64, u64)>;
}

/// Floats as OpenAI's base64 embedding: their little-endian f32 bytes.
pub(crate) fn embedding_base64(numbers: &[Value]) -> Result<Value, String> {
    let mut bytes = Vec::with_capacity(numbers.len() * 4);
    for number in numbers {
        let Some(x) = number.as_f64() else {
            return Err("the upstream answer's embedding holds a value that is not a number".to_string());
        };
        bytes.extend_from_slice(&(x as f32).to_le_bytes());
    }
    Ok(base64::Engine::encode(&base64::engine::general_purpose::STANDARD, bytes).into())
}

/// Seconds since the Unix epoch, for a translated OpenAI response's `created`.
pub(crate) fn unix_now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// A request body as a JSON object, or the refusal naming what is wrong with it.
pub fn parse_request(body: &[u8]) -> Result<Map<String, Value>, Untranslatable> {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(Untranslatable::new("body", "the request body must be a JSON object")),
        Err(e) => Err(Untranslatable::new("body", format!("the request body is not valid JSON: {e}"))),
    }
}

/// Moves a field out of a JSON object (`Null` when absent or not an object): bodies are rebuilt
/// without copying their large strings (base64 images).
pub(crate) fn take(value: &mut Value, key: &str) -> Value {
    value.get_mut(key).map_or(Value::Null, Value::take)
}

/// Appends `text` as a JSON string (quoted, escaped).
pub(crate) fn push_json_str(out: &mut Vec<u8>, text: &str) {
    json_write::push_str(out, text);
}

/// Appends any JSON value.
pub(crate) fn push_json(out: &mut Vec<u8>, value: &Value) {
    json_write::push_value(out, value);
}

/// A translated body: `value` as compact JSON.
pub fn json_bytes(value: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    json_write::push_value(&mut out, value);
    out
}

/// The `function` objects of an OpenAI `tools` array, in order: a tool of another type has no
/// equivalent in `target`, one without a `function` object is refused.
pub(crate) fn function_tools(value: Value, target: &str) -> Result<Vec<Map<String, Value>>, Untranslatable> {
    let Value::Array(tools) = value else {
        return Err(Untranslatable::new("tools", "`tools` must be an array"));
    };
    let mut out = Vec::with_capacity(tools.len());
    for (i, mut tool) in tools.into_iter().enumerate() {
        if tool.get("type").and_then(Value::as_str) != Some("function") {
            return Err(no_equivalent(format!("tools[{i}].type"), target));
        }
        let Value::Object(function) = take(&mut tool, "function") else {
            return Err(Untranslatable::new(format!("tools[{i}].function"), "a function tool needs `function`"));
        };
        out.push(function);
    }
    Ok(out)
}

/// An assistant's OpenAI tool call, read: its `id` and function `name` as written (`Null` when
/// absent) and its arguments as a JSON object (empty arguments: `{}`). `at` is the call's path
/// (`messages[1].tool_calls[0]`); a call of another type has no equivalent in `target`.
pub(crate) struct ToolCall {
    pub(crate) id: Value,
    pub(crate) name: Value,
    pub(crate) arguments: Value,
}

pub(crate) fn read_tool_call(mut call: Value, at: &str, target: &str) -> Result<ToolCall, Untranslatable> {
    if call.get("type").and_then(Value::as_str).is_some_and(|t| t != "function") {
        return Err(no_equivalent(format!("{at}.type"), target));
    }
    let arguments = match call.pointer("/function/arguments").and_then(Value::as_str).unwrap_or("").trim() {
        "" => Value::Object(Map::new()),
        text => match serde_json::from_str::<Value>(text) {
            Ok(object @ Value::Object(_)) => object,
            _ => {
                let message = "tool call arguments must be a JSON object";
                return Err(Untranslatable::new(format!("{at}.function.arguments"), message));
            }
        },
    };
    let name = call.pointer_mut("/function/name").map_or(Value::Null, Value::take);
    Ok(ToolCall { id: take(&mut call, "id"), name, arguments })
}

/// A field the target dialect has no equivalent for.
pub(crate) fn no_equivalent(field: impl Into<String>, target: &str) -> Untranslatable {
    let field = field.into();
    let message = format!("`{field}` has no equivalent in the {target} and cannot be translated; remove it");
    Untranslatable::new(field, message)
}

pub(crate) const ANTHROPIC: &str = "Anthropic Messages API";
