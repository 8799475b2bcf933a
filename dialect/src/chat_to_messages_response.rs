//! An OpenAI chat-completions answer (2xx, not streamed) → an Anthropic Messages answer.

use crate::json_bytes;
use serde_json::{json, Value};

use super::mapping::{stop_reason_for, Tokens};
use super::take;

/// Translates a chat completion into an Anthropic message that names `model` (what the client
/// asked for). `Err` says why the upstream answer cannot be read (the caller answers 502).
pub fn chat_response_to_messages(body: &[u8], model: &str) -> Result<Vec<u8>, String> {
    let mut response: Value =
        serde_json::from_slice(body).map_err(|e| format!("the upstream answer is not valid JSON: {e}"))?;
    let mut choice = match take(&mut response, "choices") {
        Value::Array(choices) => choices.into_iter().next(),
        _ => None,
    }
    .ok_or("the upstream answer has no choices")?;
    let mut message = take(&mut choice, "message");
    let mut content = Vec::new();
    if let Some(reasoning) = reasoning_text(&mut message) {
        content.push(json!({"type": "thinking", "thinking": reasoning, "signature": ""}));
    }
    match take(&mut message, "content") {
        Value::String(text) if !text.is_empty() => content.push(json!({"type": "text", "text": text})),
        Value::Array(parts) => {
            for mut part in parts {
                if let Value::String(text) = take(&mut part, "text") {
                    content.push(json!({"type": "text", "text": text}));
                }
            }
        }
        _ => {}
    }
    let refusal = match take(&mut message, "refusal") {
        Value::String(text) if !text.is_empty() => Some(text),
        _ => None,
    };
    if let Some(text) = &refusal {
        content.push(json!({"type": "text", "text": text}));
    }
    if let Value::Array(calls) = take(&mut message, "tool_calls") {
        for call in calls {
            content.push(tool_use(call)?);
        }
    }
    let stop_reason = match (&refusal, choice.get("finish_reason").and_then(Value::as_str)) {
        (Some(_), _) => "refusal",
        (None, finish) => stop_reason_for(finish.unwrap_or("stop")),
    };
    let usage = Tokens::from_openai(response.get("usage").unwrap_or(&Value::Null));
    let id = match take(&mut response, "id") {
        Value::String(id) if !id.is_empty() => id,
        _ => "msg_pointwork".to_string(),
    };
    let out = json!({
        "id": id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": null,
        "usage": usage.to_anthropic(),
    });
    Ok(json_bytes(&out))
}

/// Reasoning text as OpenAI-compatible servers return it (`reasoning_content` in DeepSeek's and
/// vLLM's answers, `reasoning` in OpenRouter's).
fn reasoning_text(message: &mut Value) -> Option<String> {
    ["reasoning_content", "reasoning"].into_iter().find_map(|key| match take(message, key) {
        Value::String(text) if !text.is_empty() => Some(text),
        _ => None,
    })
}

/// A tool call as a tool_use block, its arguments string parsed into the input object.
pub(crate) fn tool_use(mut call: Value) -> Result<Value, String> {
    let mut function = take(&mut call, "function");
    let input = match function.get("arguments").and_then(Value::as_str).map(str::trim) {
        None | Some("") => json!({}),
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(object @ Value::Object(_)) => object,
            _ => return Err(format!("the upstream returned tool call arguments that are not a JSON object: {text}")),
        },
    };
    Ok(json!({"type": "tool_use", "id": take(&mut call, "id"), "name": take(&mut function, "name"), "input": input}))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(response: Value) -> Value {
        serde_json::from_slice(&chat_response_to_messages(response.to_string().as_bytes(), "claude-x").unwrap())
            .unwrap()
    }

    #[test]
    fn text_with_reasoning_and_cached_usage() {
        let out = messages(json!({"id": "chatcmpl-1", "choices": [{"message": {"role": "assistant", "content": "hi",
            "reasoning_content": "think"}, "finish_reason": "length"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 3, "prompt_tokens_details": {"cached_tokens": 4}}}));
        assert_eq!(
            out,
            json!({"id": "chatcmpl-1", "type": "message", "role": "assistant", "model": "claude-x",
                "content": [{"type": "thinking", "thinking": "think", "signature": ""}, {"type": "text", "text": "hi"}],
                "stop_reason": "max_tokens", "stop_sequence": null,
                "usage": {"input_tokens": 6, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 4, "output_tokens": 3}})
        );
    }

    #[test]
    fn refusals_and_empty_arguments() {
        let out = messages(json!({"choices": [{"message": {"content": null, "refusal": "no",
            "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": ""}}]}, "finish_reason": "stop"}]}));
        assert_eq!(out["id"], "msg_pointwork");
        assert_eq!(out["stop_reason"], "refusal");
        assert_eq!(out["content"][0], json!({"type": "text", "text": "no"}));
        assert_eq!(out["content"][1], json!({"type": "tool_use", "id": "c", "name": "f", "input": {}}));
        assert_eq!(out["usage"]["output_tokens"], 0);
    }

    #[test]
    fn unreadable_answers_are_errors() {
        assert!(chat_response_to_messages(b"{", "m").is_err());
        assert!(chat_response_to_messages(b"{\"choices\":[]}", "m").is_err());
        let bad_args =
            json!({"choices": [{"message": {"tool_calls": [{"function": {"name": "f", "arguments": "{oops"}}]}}]});
        let err = chat_response_to_messages(bad_args.to_string().as_bytes(), "m").unwrap_err();
        assert!(err.contains("{oops"), "{err}");
    }
}
