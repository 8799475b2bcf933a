//! A Gemini `GenerateContentResponse` (2xx, not streamed) → an OpenAI chat completion.

use crate::json_bytes;
use serde_json::{json, Value};

use super::super::unix_now;
use super::mapping::{choice_finish_reason, fresh_suffix, logprobs_to_openai, read_parts, tool_call_id, Usage};

/// Translates a Gemini answer into a chat completion that names `model` (what the client asked
/// for), `created` now. `Err` says why the upstream answer cannot be read.
pub fn gemini_response_to_chat(body: &[u8], model: &str) -> Result<Vec<u8>, String> {
    gemini_response_to_chat_at(body, model, unix_now())
}

/// The same with `created` given (seconds since the Unix epoch).
pub fn gemini_response_to_chat_at(body: &[u8], model: &str, created: u64) -> Result<Vec<u8>, String> {
    let response: Value =
        serde_json::from_slice(body).map_err(|e| format!("the upstream answer is not valid JSON: {e}"))?;
    if !response.is_object() {
        return Err("the upstream answer is not a JSON object".to_string());
    }
    if let Some(error) = response.get("error") {
        let message = error.get("message").and_then(Value::as_str).unwrap_or("no message");
        return Err(format!("the upstream answered with an error: {message}"));
    }
    let response_id = response.get("responseId").and_then(Value::as_str).filter(|id| !id.is_empty());
    let id_base = response_id.map_or_else(fresh_suffix, str::to_string);
    let candidates = response.get("candidates").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    let mut choices = Vec::with_capacity(candidates.len().max(1));
    let mut calls_made = 0;
    for (position, candidate) in candidates.iter().enumerate() {
        let index = candidate.get("index").and_then(Value::as_u64).unwrap_or(position as u64);
        let parts = read_parts(candidate);
        let calls: Vec<Value> = parts
            .calls
            .iter()
            .map(|call| {
                let id = tool_call_id(&id_base, calls_made, call.signature.as_deref());
                calls_made += 1;
                json!({"id": id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}})
            })
            .collect();
        let reason = candidate.get("finishReason").and_then(Value::as_str).unwrap_or("STOP");
        let finish_reason = choice_finish_reason(reason, !calls.is_empty());
        let content = match parts.text {
            Some(text) => Value::String(text),
            // OpenAI leaves the content of a filtered or tool-calling answer null.
            None if finish_reason == "content_filter" || !calls.is_empty() => Value::Null,
            None => Value::String(String::new()),
        };
        let mut message = json!({"role": "assistant", "content": content, "refusal": null});
        if let Some(reasoning) = parts.reasoning {
            message["reasoning_content"] = reasoning.into();
        }
        if !calls.is_empty() {
            message["tool_calls"] = Value::Array(calls);
        }
        let logprobs = logprobs_to_openai(candidate).unwrap_or(Value::Null);
        choices.push(json!({"index": index, "message": message, "logprobs": logprobs, "finish_reason": finish_reason}));
    }
    if choices.is_empty() {
        // A blocked prompt: no candidates, the reason in promptFeedback.
        if response.pointer("/promptFeedback/blockReason").is_none() {
            return Err("the upstream answer has no candidates".to_string());
        }
        let message = json!({"role": "assistant", "content": null, "refusal": null});
        choices.push(json!({"index": 0, "message": message, "logprobs": null, "finish_reason": "content_filter"}));
    }
    let usage = Usage::from_gemini(response.get("usageMetadata").unwrap_or(&Value::Null));
    let id = response_id.map_or_else(|| format!("chatcmpl-{id_base}"), str::to_string);
    let out = json!({
        "id": id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": choices,
        "usage": usage.to_openai(),
    });
    Ok(json_bytes(&out))
}

#[cfg(test)]
#[path = "response_tests.rs"]
mod tests;
