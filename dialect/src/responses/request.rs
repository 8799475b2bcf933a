//! A Responses request → a chat-completions request.

use serde_json::{json, Map, Value};

use super::input_items::ChatMessages;
use super::tools::{chat_tool_choice, chat_tools};
use crate::{json_bytes, parse_request, Untranslatable};

/// A Responses request translated for a chat-completions deployment.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatFromResponses {
    /// The chat-completions request body, `model` set to the upstream model.
    pub body: Vec<u8>,
    /// Request fields and items with no chat equivalent that were dropped and change the answer
    /// (`include`, `tools[2] web_search`, `input[3] reasoning`, …), deduplicated, in order.
    pub dropped: Vec<String>,
    /// This request's `input` as Responses items (a string input is one user message), for the
    /// gateway to keep for a later `previous_response_id`.
    pub input_items: Vec<Value>,
}

/// Translates a Responses request body for `upstream_model`. `history` is the conversation so
/// far (the stored input and output items of the previous responses, in order), placed before
/// this request's input; its items' paths are `history[i]`.
pub fn responses_request_to_chat(
    body: &[u8],
    upstream_model: &str,
    history: &[Value],
) -> Result<ChatFromResponses, Untranslatable> {
    let request = parse_request(body)?;
    let mut out = Map::new();
    out.insert("model".into(), upstream_model.into());
    let mut dropped = Vec::new();
    let (mut instructions, mut input, mut tools, mut tool_choice) = (Value::Null, Value::Null, None, None);
    for (key, value) in request {
        if value.is_null() {
            continue;
        }
        match key.as_str() {
            "model"
            | "metadata"
            | "store"
            | "previous_response_id"
            | "prompt_cache_key"
            | "prompt_cache_retention"
            | "service_tier"
            | "stream_options" => {}
            "instructions" => instructions = value,
            "input" => input = value,
            "tools" => tools = Some(chat_tools(value, &mut dropped)?),
            "tool_choice" => tool_choice = Some(value),
            "parallel_tool_calls" | "temperature" | "top_p" | "user" | "safety_identifier" => {
                out.insert(key, value);
            }
            "max_output_tokens" => {
                out.insert("max_tokens".into(), value);
            }
            "stream" => {
                if value == Value::Bool(true) {
                    out.insert("stream_options".into(), json!({"include_usage": true}));
                }
                out.insert(key, value);
            }
            "text" => text_config(&value, &mut out, &mut dropped)?,
            "reasoning" => {
                if let Some(effort) = value.get("effort").filter(|e| !e.is_null()) {
                    out.insert("reasoning_effort".into(), reasoning_effort(effort)?);
                }
            }
            "truncation" if value == "disabled" => {}
            "background" | "include" if value == false || value == json!([]) => {}
            "top_logprobs" if value == 0 => {}
            "conversation" => {
                let message = "server-side conversations are not kept by this deployment; send `previous_response_id` or the whole input";
                return Err(Untranslatable::new(key, message));
            }
            // include, truncation, background, top_logprobs, max_tool_calls, prompt, and fields
            // of later API versions: the answer may differ, so the client is told.
            _ => dropped.push(key),
        }
    }
    let mut tools = tools.unwrap_or_default();
    let choice = match tool_choice {
        Some(choice) => chat_tool_choice(choice, &mut tools, &mut dropped)?,
        None => None,
    };
    if !tools.is_empty() {
        out.insert("tools".into(), Value::Array(tools));
        if let Some(choice) = choice {
            out.insert("tool_choice".into(), choice);
        }
    } else {
        out.remove("parallel_tool_calls");
    }
    let input_items = input_items_of(input)?;
    let mut messages = ChatMessages::default();
    match instructions {
        Value::Null => {}
        text @ Value::String(_) => messages.push_system(text),
        _ => return Err(Untranslatable::new("instructions", "`instructions` must be a string")),
    }
    for (i, item) in history.iter().enumerate() {
        messages.push_item(item.clone(), &format!("history[{i}]"), &mut dropped)?;
    }
    for (i, item) in input_items.iter().enumerate() {
        messages.push_item(item.clone(), &format!("input[{i}]"), &mut dropped)?;
    }
    out.insert("messages".into(), Value::Array(messages.finish()));
    dedup_in_order(&mut dropped);
    Ok(ChatFromResponses { body: json_bytes(&Value::Object(out)), dropped, input_items })
}

/// `input` as items: a string is one user message, a bare `{role, content}` gets its type.
fn input_items_of(input: Value) -> Result<Vec<Value>, Untranslatable> {
    match input {
        Value::Null => Ok(Vec::new()),
        Value::String(text) => {
            Ok(vec![json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})])
        }
        Value::Array(mut items) => {
            for item in &mut items {
                if let Value::Object(item) = item {
                    if item.get("type").is_none_or(Value::is_null) && item.contains_key("role") {
                        item.insert("type".into(), "message".into());
                    }
                }
            }
            Ok(items)
        }
        _ => Err(Untranslatable::new("input", "`input` must be a string or an array of items")),
    }
}

/// `text.format` as `response_format`; `text.verbosity` has no chat equivalent.
fn text_config(text: &Value, out: &mut Map<String, Value>, dropped: &mut Vec<String>) -> Result<(), Untranslatable> {
    if !text.is_object() {
        return Err(Untranslatable::new("text", "`text` must be an object"));
    }
    if text.get("verbosity").is_some_and(|v| !v.is_null()) {
        dropped.push("text.verbosity".into());
    }
    let Some(format) = text.get("format").filter(|f| !f.is_null()) else {
        return Ok(());
    };
    match format.get("type").and_then(Value::as_str) {
        Some("text") => {}
        Some("json_object") => {
            out.insert("response_format".into(), json!({"type": "json_object"}));
        }
        Some("json_schema") => {
            let mut schema = Map::new();
            for key in ["name", "description", "schema", "strict"] {
                if let Some(value) = format.get(key).filter(|v| !v.is_null()) {
                    schema.insert(key.into(), value.clone());
                }
            }
            if !schema.contains_key("name") {
                return Err(Untranslatable::new("text.format.name", "a json_schema format needs its `name`"));
            }
            out.insert("response_format".into(), json!({"type": "json_schema", "json_schema": schema}));
        }
        _ => {
            return Err(Untranslatable::new(
                "text.format.type",
                "`text.format.type` must be text, json_object or json_schema",
            ))
        }
    }
    Ok(())
}

fn reasoning_effort(effort: &Value) -> Result<Value, Untranslatable> {
    match effort.as_str() {
        Some("none" | "minimal" | "low" | "medium" | "high" | "xhigh") => Ok(effort.clone()),
        _ => Err(Untranslatable::new(
            "reasoning.effort",
            "`reasoning.effort` must be none, minimal, low, medium, high or xhigh",
        )),
    }
}

fn dedup_in_order(names: &mut Vec<String>) {
    let mut seen = std::collections::HashSet::new();
    names.retain(|name| seen.insert(name.clone()));
}
