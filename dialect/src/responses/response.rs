//! A whole chat completion → a Responses `response` object.

use serde_json::Value;

use super::echo::ResponseEcho;
use super::output_items::{
    call_item, message_item, reasoning_item, refusal_part, status_for, text_part, usage_of, MESSAGE_PREFIX,
    REASONING_PREFIX,
};
use crate::json_bytes;

/// A chat completion (a 2xx body) as a Responses `response` object: its bytes and the object.
/// `Err` says why the body is not a chat completion (answer 502).
pub fn chat_response_to_responses(chat_body: &[u8], echo: &ResponseEcho) -> Result<(Vec<u8>, Value), String> {
    let chat: Value = serde_json::from_slice(chat_body).map_err(|e| format!("the upstream answer is not JSON: {e}"))?;
    let Some(choice) = chat.get("choices").and_then(Value::as_array).and_then(|c| c.first()) else {
        return Err("the upstream answer is not a chat completion: it has no `choices`".to_string());
    };
    let Some(message) = choice.get("message").filter(|m| m.is_object()) else {
        return Err("the upstream answer is not a chat completion: its choice has no `message`".to_string());
    };
    let (status, incomplete) = status_for(choice.get("finish_reason").and_then(Value::as_str));
    let mut output = Vec::new();
    let reasoning = text_of(message.get("reasoning_content")).or_else(|| text_of(message.get("reasoning")));
    if let Some(reasoning) = reasoning.filter(|r| !r.is_empty()) {
        output.push(reasoning_item(&echo.item_id(REASONING_PREFIX, output.len()), &reasoning));
    }
    let mut content = Vec::new();
    if let Some(text) = text_of(message.get("content")).filter(|t| !t.is_empty()) {
        content.push(text_part(&text));
    }
    if let Some(refusal) = text_of(message.get("refusal")).filter(|r| !r.is_empty()) {
        content.push(refusal_part(&refusal));
    }
    if !content.is_empty() {
        let message_status = if status == "incomplete" { "incomplete" } else { "completed" };
        output.push(message_item(&echo.item_id(MESSAGE_PREFIX, output.len()), message_status, content));
    }
    for call in message.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
        let name = call.pointer("/function/name").and_then(Value::as_str).unwrap_or("");
        let arguments = call.pointer("/function/arguments").and_then(Value::as_str).unwrap_or("");
        let call_id = match call.get("id").and_then(Value::as_str) {
            Some(id) if !id.is_empty() => id.to_string(),
            _ => echo.call_id(output.len()),
        };
        output.push(call_item(echo, output.len(), &call_id, name, arguments));
    }
    let usage = usage_of(chat.get("usage"));
    let response = echo.response(status, output, Some(usage), Value::Null, incomplete);
    Ok((json_bytes(&response), response))
}

/// A text field: a string, or text parts joined (some servers answer with parts).
fn text_of(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::String(text) => Some(text.clone()),
        Value::Array(parts) => Some(parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect()),
        _ => None,
    }
}
