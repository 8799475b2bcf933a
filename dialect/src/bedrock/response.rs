//! A Converse answer (2xx, not streamed) → an OpenAI chat-completions answer.

use crate::json_bytes;
use serde_json::{json, Value};

use super::super::mapping::Tokens;
use super::super::{take, unix_now};
use super::{fresh_id, tokens_of};

/// Translates a ConverseResponse into a chat completion that names `model` (what the client asked
/// for), `created` now. `Err` says why the upstream answer cannot be read.
pub fn converse_response_to_chat(body: &[u8], model: &str) -> Result<Vec<u8>, String> {
    converse_response_to_chat_at(body, model, unix_now())
}

/// The same with `created` given (seconds since the Unix epoch).
pub fn converse_response_to_chat_at(body: &[u8], model: &str, created: u64) -> Result<Vec<u8>, String> {
    let mut response: Value =
        serde_json::from_slice(body).map_err(|e| format!("the upstream answer is not valid JSON: {e}"))?;
    let Some(Value::Array(blocks)) = response.pointer_mut("/output/message/content").map(Value::take) else {
        return Err("the upstream answer has no output.message.content".to_string());
    };
    let (mut text, mut reasoning): (Option<String>, Option<String>) = (None, None);
    let mut calls = Vec::new();
    for mut block in blocks {
        if let Some(t) = block.get("text").and_then(Value::as_str) {
            text.get_or_insert_with(String::new).push_str(t);
        } else if let Some(t) = block.pointer("/reasoningContent/reasoningText/text").and_then(Value::as_str) {
            reasoning.get_or_insert_with(String::new).push_str(t);
        } else if let Some(tool_use) = block.get_mut("toolUse") {
            calls.push(tool_call(tool_use));
        }
        // Redacted reasoning (encrypted), citations, images and block kinds a later API version
        // adds carry nothing OpenAI can show.
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
    let finish_reason = finish_reason_for(response.get("stopReason").and_then(Value::as_str).unwrap_or("end_turn"));
    let usage = response.get("usage").map(tokens_of).unwrap_or_default();
    let out = json!({
        "id": fresh_id(),
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish_reason}],
        "usage": Tokens::to_openai(usage),
    });
    Ok(json_bytes(&out))
}

/// A toolUse block as a tool call, its input serialised as the arguments string.
fn tool_call(tool_use: &mut Value) -> Value {
    let arguments = match tool_use.get("input") {
        None | Some(Value::Null) => "{}".to_string(),
        Some(input) => input.to_string(),
    };
    let id = take(tool_use, "toolUseId");
    json!({"id": id, "type": "function", "function": {"name": take(tool_use, "name"), "arguments": arguments}})
}

/// Converse `stopReason` → OpenAI `finish_reason`.
pub(crate) fn finish_reason_for(stop_reason: &str) -> &'static str {
    match stop_reason {
        "max_tokens" | "model_context_window_exceeded" => "length",
        "tool_use" => "tool_calls",
        "guardrail_intervened" | "content_filtered" => "content_filter",
        // end_turn, stop_sequence, malformed_model_output, malformed_tool_use and whatever a
        // later API version adds.
        _ => "stop",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chat(response: Value) -> Value {
        let bytes = converse_response_to_chat_at(response.to_string().as_bytes(), "gpt-x", 7).unwrap();
        serde_json::from_slice(&bytes).unwrap()
    }

    #[test]
    fn text_reasoning_tools_and_usage() {
        let mut out = chat(json!({
            "output": {"message": {"role": "assistant", "content": [
                {"reasoningContent": {"reasoningText": {"text": "Let me think", "signature": "sig"}}},
                {"reasoningContent": {"redactedContent": "AAAA"}},
                {"text": "Checking "}, {"text": "the weather."},
                {"toolUse": {"toolUseId": "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "name": "get_weather", "input": {"city": "Paris"}}}]}},
            "stopReason": "tool_use",
            "usage": {"inputTokens": 100, "outputTokens": 20, "totalTokens": 150, "cacheReadInputTokens": 25, "cacheWriteInputTokens": 5},
            "metrics": {"latencyMs": 812}}));
        let id = out["id"].take();
        assert!(id.as_str().is_some_and(|id| id.starts_with("chatcmpl-") && id.len() > 20), "{id}");
        assert_eq!(
            out,
            json!({"id": null, "object": "chat.completion", "created": 7, "model": "gpt-x",
                "choices": [{"index": 0, "logprobs": null, "finish_reason": "tool_calls", "message": {
                    "role": "assistant", "content": "Checking the weather.", "refusal": null, "reasoning_content": "Let me think",
                    "tool_calls": [{"id": "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "type": "function",
                        "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]}}],
                "usage": {"prompt_tokens": 130, "completion_tokens": 20, "total_tokens": 150,
                    "prompt_tokens_details": {"cached_tokens": 25}}})
        );
    }

    #[test]
    fn stop_reasons() {
        for (stop, finish) in [
            ("end_turn", "stop"),
            ("stop_sequence", "stop"),
            ("max_tokens", "length"),
            ("model_context_window_exceeded", "length"),
            ("tool_use", "tool_calls"),
            ("guardrail_intervened", "content_filter"),
            ("content_filtered", "content_filter"),
            ("malformed_model_output", "stop"),
            ("something_new", "stop"),
        ] {
            let out = chat(json!({"output": {"message": {"content": [{"text": "x"}]}}, "stopReason": stop}));
            assert_eq!(out["choices"][0]["finish_reason"], finish, "{stop}");
        }
    }

    #[test]
    fn empty_answers_ids_and_errors() {
        let out =
            chat(json!({"output": {"message": {"role": "assistant", "content": []}}, "stopReason": "max_tokens"}));
        assert_eq!(out["choices"][0]["message"]["content"], "");
        assert_eq!(out["usage"]["prompt_tokens"], 0);
        let tool_only =
            chat(json!({"output": {"message": {"content": [{"toolUse": {"toolUseId": "t", "name": "f"}}]}}}));
        assert_eq!(tool_only["choices"][0]["message"]["content"], Value::Null);
        assert_eq!(tool_only["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"], "{}");
        let (a, b) = (
            chat(json!({"output": {"message": {"content": []}}})),
            chat(json!({"output": {"message": {"content": []}}})),
        );
        assert_ne!(a["id"], b["id"]);
        assert!(converse_response_to_chat(b"[]", "m").is_err());
        assert!(converse_response_to_chat(b"{\"output\":{\"message\":{\"content\":\"x\"}}}", "m").is_err());
        assert!(converse_response_to_chat(b"nope", "m").is_err());
    }
}
