//! What the exporters read of a request's kept bodies, on the exporter thread (never on a
//! shard): the request's parameters (GenAI's `gen_ai.request.*`), LiteLLM's `metadata`
//! (Langfuse's `trace_id`, `session_id`, `trace_user_id`, tags, …) and, when content is
//! exported, the prompt and the completion.

use pointwork_core::RouteKind;
use serde::Deserialize;
use serde_json::{Map, Value};

/// The request's parameters and metadata.
#[derive(Debug, Default, PartialEq)]
pub struct RequestDetails {
    pub temperature: Option<f64>,
    pub top_p: Option<f64>,
    pub top_k: Option<f64>,
    /// `max_tokens`, `max_completion_tokens` or `max_output_tokens`.
    pub max_tokens: Option<u64>,
    pub presence_penalty: Option<f64>,
    pub frequency_penalty: Option<f64>,
    pub seed: Option<i64>,
    pub stop: Vec<String>,
    /// How many choices were asked for (`n`).
    pub choices: Option<u64>,
    /// OpenAI's `user`, Anthropic's `metadata.user_id`.
    pub user: Option<String>,
    /// LiteLLM's request `metadata` (or `litellm_metadata`) object, as sent.
    pub metadata: Map<String, Value>,
    /// `tags` (top-level or in the metadata).
    pub tags: Vec<String>,
    /// The prompt (`messages`, `input`, `prompt`, `system` with the messages), only with content.
    pub input: Option<Value>,
}

impl RequestDetails {
    /// A metadata string (`trace_id`, `session_id`, `generation_name`, …).
    pub fn meta(&self, key: &str) -> Option<&str> {
        self.metadata.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
    }
}

/// What is read of a request's body: its parameters and metadata. Every other member — the
/// messages above all — is skipped without being built (the content is read apart, and only
/// when it is exported). Values are kept loose: a member of an unexpected type is left out,
/// not the whole request.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Wire {
    temperature: Option<Value>,
    top_p: Option<Value>,
    top_k: Option<Value>,
    max_tokens: Option<Value>,
    max_completion_tokens: Option<Value>,
    max_output_tokens: Option<Value>,
    presence_penalty: Option<Value>,
    frequency_penalty: Option<Value>,
    seed: Option<Value>,
    n: Option<Value>,
    stop: Option<Value>,
    stop_sequences: Option<Value>,
    user: Option<Value>,
    metadata: Option<Value>,
    litellm_metadata: Option<Value>,
    tags: Option<Value>,
}

/// The details of `body`, a request to `route` (empty when it is not a JSON object).
pub fn request_details(route: RouteKind, body: &[u8], content: bool) -> RequestDetails {
    let Ok(wire) = serde_json::from_slice::<Wire>(body) else {
        return RequestDetails::default();
    };
    let number = |v: &Option<Value>| v.as_ref().and_then(Value::as_f64);
    let count = |v: &Option<Value>| v.as_ref().and_then(Value::as_u64);
    let mut metadata = match wire.litellm_metadata.or(wire.metadata) {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    let mut tags = strings(wire.tags.as_ref());
    if tags.is_empty() {
        tags = strings(metadata.get("tags"));
    }
    // Tags are reported on their own.
    metadata.remove("tags");
    let user = wire.user.as_ref().and_then(Value::as_str).or_else(|| metadata.get("user_id").and_then(Value::as_str));
    let user = user.map(str::to_string);
    let input = match content {
        true => match serde_json::from_slice::<Value>(body) {
            Ok(Value::Object(mut request)) => prompt(route, &mut request),
            _ => None,
        },
        false => None,
    };
    let max_tokens =
        [&wire.max_completion_tokens, &wire.max_tokens, &wire.max_output_tokens].into_iter().find_map(count);
    RequestDetails {
        temperature: number(&wire.temperature),
        top_p: number(&wire.top_p),
        top_k: number(&wire.top_k),
        max_tokens,
        presence_penalty: number(&wire.presence_penalty),
        frequency_penalty: number(&wire.frequency_penalty),
        seed: wire.seed.as_ref().and_then(Value::as_i64),
        stop: match wire.stop.or(wire.stop_sequences) {
            Some(Value::String(s)) => vec![s],
            other => strings(other.as_ref()),
        },
        choices: count(&wire.n),
        user,
        metadata,
        tags,
        input,
    }
}

fn strings(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).map(str::to_string).collect(),
        Some(Value::String(s)) => s.split(',').map(str::trim).filter(|t| !t.is_empty()).map(str::to_string).collect(),
        _ => Vec::new(),
    }
}

/// The prompt as the caller wrote it: the messages (with Anthropic's `system` first), the
/// Responses API's `input` (and `instructions`), the embeddings' `input`.
fn prompt(route: RouteKind, request: &mut Map<String, Value>) -> Option<Value> {
    match route {
        RouteKind::ChatCompletions => request.remove("messages"),
        RouteKind::Messages => {
            let messages = request.remove("messages")?;
            match request.remove("system") {
                Some(system) => {
                    let mut all = vec![serde_json::json!({"role": "system", "content": system})];
                    all.extend(messages.as_array().cloned().unwrap_or_default());
                    Some(Value::Array(all))
                }
                None => Some(messages),
            }
        }
        RouteKind::Responses => {
            let input = request.remove("input")?;
            match request.remove("instructions") {
                Some(instructions) => Some(serde_json::json!({"instructions": instructions, "input": input})),
                None => Some(input),
            }
        }
        RouteKind::Embeddings => request.remove("input"),
    }
}

/// The completion a client got, as one message (`{"role": "assistant", "content": …}`), from
/// its whole body or its stream's events; `None` for embeddings and what cannot be read.
pub fn completion(route: RouteKind, stream: bool, body: &[u8]) -> Option<Value> {
    let text = if stream { stream_text(route, body)? } else { whole_text(route, body)? };
    Some(serde_json::json!({"role": "assistant", "content": text}))
}

fn whole_text(route: RouteKind, body: &[u8]) -> Option<String> {
    let answer: Value = serde_json::from_slice(body).ok()?;
    match route {
        RouteKind::ChatCompletions => {
            let message = answer.get("choices")?.get(0)?.get("message")?;
            Some(message.get("content").and_then(Value::as_str).unwrap_or_default().to_string())
        }
        RouteKind::Messages => Some(texts(answer.get("content")?)),
        RouteKind::Responses => {
            let output = answer.get("output")?.as_array()?;
            Some(output.iter().filter_map(|item| item.get("content")).map(texts).collect())
        }
        RouteKind::Embeddings => None,
    }
}

/// The text blocks of a content list, joined.
fn texts(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks.iter().filter_map(|b| b.get("text").and_then(Value::as_str)).collect(),
        _ => String::new(),
    }
}

/// The text a stream's events carried, in order.
fn stream_text(route: RouteKind, body: &[u8]) -> Option<String> {
    let body = std::str::from_utf8(body).ok()?;
    let mut text = String::new();
    for data in body.lines().filter_map(|l| l.strip_prefix("data:")).map(str::trim) {
        let Ok(event) = serde_json::from_str::<Value>(data) else { continue };
        let piece = match route {
            RouteKind::ChatCompletions => event.pointer("/choices/0/delta/content"),
            // `content_block_delta` with a `text_delta`.
            RouteKind::Messages => event.pointer("/delta/text"),
            // `response.output_text.delta`.
            RouteKind::Responses => (event.get("type").and_then(Value::as_str) == Some("response.output_text.delta"))
                .then(|| event.get("delta"))
                .flatten(),
            RouteKind::Embeddings => return None,
        };
        if let Some(piece) = piece.and_then(Value::as_str) {
            text.push_str(piece);
        }
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parameters_and_litellm_metadata() {
        let body = json!({
            "model": "m", "messages": [{"role": "user", "content": "hi"}], "temperature": 0.2, "top_p": 0.9,
            "max_completion_tokens": 64, "stop": "END", "seed": 7, "n": 2, "user": "u-1",
            "metadata": {"trace_id": "t-1", "session_id": "s-1", "generation_name": "g", "tags": ["a", "b"]}
        });
        let d = request_details(RouteKind::ChatCompletions, body.to_string().as_bytes(), false);
        assert_eq!(
            (d.temperature, d.top_p, d.max_tokens, d.seed, d.choices),
            (Some(0.2), Some(0.9), Some(64), Some(7), Some(2))
        );
        assert_eq!(d.stop, ["END"]);
        assert_eq!(d.user.as_deref(), Some("u-1"));
        assert_eq!(
            (d.meta("trace_id"), d.meta("session_id"), d.meta("generation_name")),
            (Some("t-1"), Some("s-1"), Some("g"))
        );
        assert_eq!(d.tags, ["a", "b"]);
        assert_eq!(d.input, None, "no content unless asked");
        let with = request_details(RouteKind::ChatCompletions, body.to_string().as_bytes(), true);
        assert_eq!(with.input, Some(json!([{"role": "user", "content": "hi"}])));
    }

    #[test]
    fn anthropic_system_goes_first() {
        let body = json!({"model": "m", "system": "be brief", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}], "metadata": {"user_id": "u"}});
        let d = request_details(RouteKind::Messages, body.to_string().as_bytes(), true);
        assert_eq!(d.max_tokens, Some(10));
        assert_eq!(d.user.as_deref(), Some("u"));
        assert_eq!(
            d.input,
            Some(json!([{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]))
        );
    }

    #[test]
    fn completions_whole_and_streamed() {
        let whole =
            json!({"choices": [{"message": {"role": "assistant", "content": "Hello"}, "finish_reason": "stop"}]});
        assert_eq!(
            completion(RouteKind::ChatCompletions, false, whole.to_string().as_bytes()),
            Some(json!({"role": "assistant", "content": "Hello"}))
        );
        let stream = "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"lo\"}}]}\n\ndata: [DONE]\n\n";
        assert_eq!(
            completion(RouteKind::ChatCompletions, true, stream.as_bytes()),
            Some(json!({"role": "assistant", "content": "Hello"}))
        );
        let messages = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n";
        assert_eq!(completion(RouteKind::Messages, true, messages.as_bytes()).unwrap()["content"], "Hi");
        assert_eq!(completion(RouteKind::Embeddings, false, b"{}"), None);
    }

    #[test]
    fn what_is_not_json_gives_nothing() {
        assert_eq!(request_details(RouteKind::ChatCompletions, b"not json", true), RequestDetails::default());
        assert_eq!(completion(RouteKind::ChatCompletions, false, b"{"), None);
    }
}
