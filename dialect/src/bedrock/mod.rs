//! AWS Bedrock: OpenAI chat completions translated to the Converse API (`bedrock/…` and
//! `bedrock/converse/…` deployments), its answers and ConverseStream's binary event stream back,
//! and OpenAI embeddings to the InvokeModel bodies of Titan and Cohere embedding models.
//!
//! Pure functions and state machines over bytes, like the rest of [`super`]: the plumbing does
//! the HTTP and SigV4 signing. The model id and streaming are in the URL, not the body:
//!
//! | what | upstream call | request | answer (2xx) |
//! |---|---|---|---|
//! | chat | `POST {endpoint}/model/{modelId}/converse` | [`chat_request_to_converse_for`] | [`converse_response_to_chat`] |
//! | chat, streamed | `POST {endpoint}/model/{modelId}/converse-stream` | the same | [`ConverseStreamToChat`] |
//! | embeddings | `POST {endpoint}/model/{modelId}/invoke` | [`embeddings_request_to_bedrock`] | [`bedrock_embeddings_to_openai`] |
//!
//! (`modelId` percent-encoded in the path: inference profile ARNs hold `:` and `/`.) Requests
//! are sent with `content-type: application/json`; Converse answers `application/json` and
//! ConverseStream `application/vnd.amazon.eventstream` (send `accept:
//! application/vnd.amazon.eventstream` on the stream call, `application/json` otherwise).
//! Bedrock's error bodies are `{"message":"…"}` (`{"Message":"…"}` from IAM) with the type in
//! the `x-amzn-ErrorType` header: [`super::error_to_openai`] keeps their message.
//!
//! # Chat: mappings
//!
//! - `system`/`developer` messages → `system: [{text}]` in order; user and assistant messages →
//!   `messages` of content blocks, consecutive turns of one role merged (Converse requires
//!   alternation; `tool` messages are user content, so they merge with a following user message).
//! - Text parts → `{text}`; an image `data:` URI → `{image:{format,source:{bytes}}}` (png, jpeg,
//!   gif, webp); a `file` part's `data:` URI → `{document:{format,name,source:{bytes}}}` (pdf,
//!   csv, doc, docx, xls, xlsx, html, txt, md; the name from `filename`, reduced to what Converse
//!   allows). Empty assistant text is left out (Converse refuses blank blocks) and an assistant
//!   message left with nothing is dropped.
//! - Assistant `tool_calls` → `toolUse{toolUseId,name,input}` (arguments parsed); `tool`
//!   messages → `toolResult{toolUseId,content:[{text}]}` (OpenAI tool messages are text and have
//!   no error flag, so no `status`).
//! - `max_completion_tokens` (else `max_tokens`) → `inferenceConfig.maxTokens`, `temperature`,
//!   `top_p` → `topP`, `stop` → `stopSequences` (an empty string dropped: Converse refuses it).
//! - `tools` → `toolConfig.tools[{toolSpec:{name,description,inputSchema:{json},strict}}]`;
//!   `tool_choice` auto/required/a function → `toolChoice` `{auto:{}}`/`{any:{}}`/`{tool:{name}}`;
//!   `none` → no `toolConfig` at all (Converse has no "none"; LiteLLM drops only the choice,
//!   which leaves the model free to call tools).
//! - `response_format` `json_schema` → Converse's native structured output,
//!   `outputConfig.textFormat{type:json_schema,structure:{jsonSchema:{schema:<JSON string>,name,
//!   description}}}`: the answer is then plain text, so the response side needs no state. (LiteLLM
//!   uses this for models it knows support it and otherwise a forced `json_tool_call` tool whose
//!   input it turns back into content; a model without structured output answers Bedrock's own 400.)
//! - `reasoning_effort`, for an Anthropic Claude model id (`anthropic.claude` anywhere in it:
//!   region prefixes and ARNs included) given to [`chat_request_to_converse_for`] →
//!   `additionalModelRequestFields.thinking{type:enabled,budget_tokens}` by LiteLLM's budgets
//!   (minimal/low 1024, medium 2048, high 4096, xhigh 8192), below `maxTokens`, which is set to
//!   [`super::DEFAULT_MAX_TOKENS`] if the request named none; `none` adds nothing.
//! - `service_tier` flex/priority → `serviceTier{type}`.
//!
//! # Chat: refused with [`super::Untranslatable`], naming the field
//!
//! `n` ≠ 1, `logprobs`, `top_logprobs`, non-zero `frequency_penalty`/`presence_penalty`, a
//! non-empty `logit_bias`, `seed`, `store: true`, `parallel_tool_calls: false`, `response_format`
//! `json_object`, `reasoning_effort` for a model not known to be Claude (and always from
//! [`chat_request_to_converse`], which knows no model) or of an unknown value, `service_tier`
//! scale, `modalities` other than `["text"]`, `audio`, `prediction`, `web_search_options`,
//! `verbosity`, `functions`/`function_call`, every unknown top-level field; the `function` role,
//! `name` or other unknown keys on a message (also a non-null `refusal`, `reasoning_content`);
//! content parts other than text, image_url and file; an image by URL (Converse cannot fetch
//! URLs; LiteLLM downloads them, a translator does no IO) or of another format; a file not given
//! as a `data:` URI of a document format; non-function tools and unknown function keys;
//! `tool_choice` of an unknown shape, a forcing one without tools, and `none` when the
//! conversation already holds tool calls (Converse then requires the tools declared, and cannot
//! forbid calling them); tool call arguments that are not a JSON object.
//!
//! Accepted and not carried (they change no answer): `model`, `stream`, `stream_options` (in the
//! URL / told to the stream translator), `user`, `safety_identifier`, `metadata` (Converse's
//! `requestMetadata` has stricter key rules and only filters invocation logs), `prompt_cache_key`,
//! `store: false`, `parallel_tool_calls: true`, `service_tier` auto/default, an image's `detail`,
//! and `cache_control` on messages and parts (LiteLLM sends a `cachePoint` block after the part
//! for models its cost map says cache, and Bedrock refuses one for any other model; without that
//! table here, nothing is sent and Bedrock caches nothing).
//!
//! # Chat: answers and streams
//!
//! [`converse_response_to_chat`]: text blocks joined into `content`,
//! `reasoningContent.reasoningText.text` → `reasoning_content` (redacted reasoning dropped),
//! toolUse → `tool_calls` (id = toolUseId, arguments = the input as a JSON string), `stopReason`
//! end_turn/stop_sequence → stop, max_tokens/model_context_window_exceeded → length, tool_use →
//! tool_calls, guardrail_intervened/content_filtered → content_filter, anything else → stop;
//! usage `prompt_tokens` = inputTokens + cacheReadInputTokens + cacheWriteInputTokens,
//! `cached_tokens` = cacheReadInputTokens. Converse answers carry no id: one is made,
//! `chatcmpl-` and 24 hex digits. [`ConverseStreamToChat`] does the same over the event stream
//! (its module doc says how); [`encode_event`] and [`encode_exception`] build frames for tests,
//! benches and the mock provider.
//!
//! # Embeddings
//!
//! The family is read from the model id (region prefixes and ARNs included): Titan text
//! (`amazon.titan-embed-text-v1`, `amazon.titan-embed-g1-text-02`, `amazon.titan-embed-text-v2:0`)
//! takes one `inputText` per call, so a list of more than one input is refused (one HTTP call
//! serves one request here); `dimensions` → `dimensions` on v2 only (refused on v1). Cohere
//! (`cohere.embed-english-v3`, `cohere.embed-multilingual-v3`, `cohere.embed-v4:0`) takes `texts`
//! and `input_type` (the request's, else `search_document` as LiteLLM), `truncate` when given,
//! `dimensions` → `output_dimension` on v4 only. Token-array inputs, unknown fields and other
//! models are refused; `user` is accepted and not carried. `encoding_format` float or base64:
//! Bedrock answers floats, and [`bedrock_embeddings_to_openai_with`] encodes them as OpenAI's
//! base64 (little-endian f32) when told to. Titan reports `inputTextTokenCount`; Cohere's body
//! has no count, Bedrock puts it in the `x-amzn-bedrock-input-token-count` header, which the
//! plumbing passes to [`bedrock_embeddings_to_openai_with`].

mod embeddings;
mod request;
mod response;
mod stream;

#[cfg(test)]
mod error_tests;

pub use embeddings::{bedrock_embeddings_to_openai, bedrock_embeddings_to_openai_with, embeddings_request_to_bedrock};
pub use request::{chat_request_to_converse, chat_request_to_converse_for};
pub use response::{converse_response_to_chat, converse_response_to_chat_at};
pub use stream::{encode_event, encode_exception, ConverseStreamToChat, MAX_FRAME_BYTES};

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;

use super::mapping::Tokens;

pub(crate) const CONVERSE: &str = "Bedrock Converse API";

/// Whether a Bedrock model id, inference profile id or ARN names an Anthropic Claude model.
pub(crate) fn is_anthropic_model(model_id: &str) -> bool {
    model_id.contains("anthropic.claude")
}

/// A chat completion id for an answer that has none: `chatcmpl-` and 24 hex digits, unique in
/// the process (a counter) and across processes (std's per-process random hash keys).
pub(crate) fn fresh_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u64(n);
    format!("chatcmpl-{:016x}{:08x}", hasher.finish(), n as u32)
}

fn count(usage: &Value, key: &str) -> u64 {
    usage.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// Converse `usage` (TokenUsage) in OpenAI's terms: prompt tokens include cache reads and writes.
pub(crate) fn tokens_of(usage: &Value) -> Tokens {
    let (read, written) = (count(usage, "cacheReadInputTokens"), count(usage, "cacheWriteInputTokens"));
    Tokens {
        prompt: count(usage, "inputTokens").saturating_add(read).saturating_add(written),
        cached: read,
        cache_written: written,
        completion: count(usage, "outputTokens"),
    }
}
