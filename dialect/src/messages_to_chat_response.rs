//! An Anthropic Messages answer (2xx, not streamed) → an OpenAI chat-completions answer.

use crate::json_bytes;
use serde_json::{json, Value};

use super::mapping::{finish_reason_for, Tokens};
use super::{take, unix_now};

/// Translates an Anthropic message into a chat completion that names `model` (what the client
/// asked for), `created` now. `Err` says why the upstream answer cannot be read.
pub fn messages_response_to_chat(body: &[u8], model: &str) -> Result<Vec<u8>, String> {
    messages_response_to_chat_at(body, model, unix_now())
}

/// The same with `created` given (seconds since the Unix epoch).
pub fn messages_response_to_chat_at(body: &[u8], model: &str, created: u64) -> Result<Vec<u8>, String> {
    let mut response: Value =
        serde_json::from_slice(body).map_err(|e| format!("the upstream answer is not valid JSON: {e}"))?;
    let Value::Array(blocks) = take(&mut response, "content") else {
        return Err("the upstream answer has no content".to_string());
    };
    let (mut text, mut reasoning): (Option<String>, Option<String>) = (None, None);
    let mut calls = Vec::new();
    for mut block in blocks {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => append(&mut text, &block["text"]),
            Some("thinking") => append(&mut reasoning, &block["thinking"]),
            Some("tool_use") => calls.push(tool_call(&mut block)),
            // redacted_thinking (encrypted), server tool blocks (never asked for by a translated
            // request) and block types a later API version adds carry nothing OpenAI can show.
            _ => {}
        }
    }
    let mut message = json!({"role": "assistant", "content": text, "refusal": null});
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls);
    } else if message["content"].is_null() {
        message["content"] = "".into();
    }
    if let Some(reasoning) = reasoning {
        message["reasoning_content"] = reasoning.into();
    }
    let finish_reason = finish_reason_for(response.get("stop_reason").and_then(Value::as_str).unwrap_or("end_turn"));
    let usage = Tokens::from_anthropic(response.get("usage").unwrap_or(&Value::Null));
    let id = match take(&mut response, "id") {
        Value::String(id) if !id.is_empty() => id,
        _ => "chatcmpl-pointwork".to_string(),
    };
    let out = json!({
        "id": id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish_reason}],
        "usage": usage.to_openai(),
    });
    Ok(json_bytes(&out))
}

fn append(into: &mut Option<String>, text: &Value) {
    if let Some(text) = text.as_str() {
        into.get_or_insert_with(String::new).push_str(text);
    }
}

/// A tool_use block as a tool call, its input object serialised as the arguments string.
pub(crate) fn tool_call(block: &mut Value) -> Value {
    let arguments = match block.get("input") {
        None | Some(Value::Null) => "{}".to_string(),
        Some(input) => input.to_string(),
    };
    json!({"id": take(block, "id"), "type": "function", "function": {"name": take(block, "name"), "arguments": arguments}})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chat(response: Value) -> Value {
        let bytes = messages_response_to_chat_at(response.to_string().as_bytes(), "gpt-x", 7).unwrap();
        serde_json::from_slice(&bytes).unwrap()
    }

    #[test]
    fn text_thinking_and_tools() {
        let out = chat(json!({"id": "msg_1", "type": "message", "content": [
            {"type": "thinking", "thinking": "hm", "signature": "sig"}, {"type": "redacted_thinking", "data": "x"},
            {"type": "text", "text": "a"}, {"type": "text", "text": "b"},
            {"type": "tool_use", "id": "t", "name": "f", "input": {"k": [1]}}],
            "stop_reason": "tool_use", "usage": {"input_tokens": 5, "cache_read_input_tokens": 2, "output_tokens": 1}}));
        assert_eq!(
            out,
            json!({"id": "msg_1", "object": "chat.completion", "created": 7, "model": "gpt-x",
                "choices": [{"index": 0, "logprobs": null, "finish_reason": "tool_calls", "message": {
                    "role": "assistant", "content": "ab", "refusal": null, "reasoning_content": "hm",
                    "tool_calls": [{"id": "t", "type": "function", "function": {"name": "f", "arguments": "{\"k\":[1]}"}}]}}],
                "usage": {"prompt_tokens": 7, "completion_tokens": 1, "total_tokens": 8, "prompt_tokens_details": {"cached_tokens": 2}}})
        );
    }

    #[test]
    fn empty_answers_and_errors() {
        let out = chat(json!({"content": [], "stop_reason": "max_tokens"}));
        assert_eq!(out["choices"][0]["message"]["content"], "");
        assert_eq!(out["choices"][0]["finish_reason"], "length");
        assert_eq!(out["id"], "chatcmpl-pointwork");
        assert!(messages_response_to_chat(b"[]", "m").is_err());
        assert!(messages_response_to_chat(b"{\"content\":\"x\"}", "m").is_err());
        assert!(messages_response_to_chat(b"nope", "m").is_err());
    }
}
