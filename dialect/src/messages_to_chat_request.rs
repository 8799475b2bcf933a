//! An Anthropic Messages request → an OpenAI chat-completions request. What chat completions
//! cannot say is dropped and named (`TranslatedRequest::dropped`), never refused: the clients of
//! this surface (Claude Code) cannot leave their fields out. A body of the wrong shape is refused.

use crate::json_bytes;
use serde_json::{json, Map, Value};

use super::mapping::effort_for_budget;
use super::{parse_request, take, TranslatedRequest, Untranslatable};

/// The paths of the fields left out, in body order.
type Dropped = Vec<String>;

/// Translates an Anthropic Messages request body into a chat-completions body for
/// `upstream_model`, naming what it left out; refuses a body of the wrong shape.
pub fn messages_request_to_chat(body: &[u8], upstream_model: &str) -> Result<TranslatedRequest, Untranslatable> {
    let request = parse_request(body)?;
    let mut out = Map::new();
    out.insert("model".into(), upstream_model.into());
    let mut messages = Vec::new();
    let mut conversation = Value::Null;
    let (mut thinking, mut effort) = (None, None);
    let mut dropped = Dropped::new();
    for (key, value) in request {
        if value.is_null() {
            continue;
        }
        match key.as_str() {
            "model" => {}
            "system" => system_messages(value, &mut messages, &mut dropped)?,
            "messages" => conversation = value,
            "max_tokens" | "temperature" | "top_p" => {
                out.insert(key, value);
            }
            "stop_sequences" => match value {
                Value::Array(stops) if stops.is_empty() => {}
                stops => {
                    out.insert("stop".into(), stops);
                }
            },
            "stream" => {
                if value == Value::Bool(true) {
                    out.insert("stream_options".into(), json!({"include_usage": true}));
                }
                out.insert(key, value);
            }
            "metadata" => metadata(value, &mut out, &mut dropped)?,
            "tools" => {
                out.insert(key, tools(value, &mut dropped)?);
            }
            "tool_choice" => tool_choice(value, &mut out, &mut dropped),
            "thinking" => thinking = Some(value),
            "output_config" => effort = output_config(value, &mut out, &mut dropped)?,
            "service_tier" if value == "auto" => {}
            _ => dropped.push(key),
        }
    }
    if let Some(effort) = reasoning_effort(thinking, effort, &mut dropped) {
        out.insert("reasoning_effort".into(), effort.into());
    }
    turns(conversation, &mut messages, &mut dropped)?;
    out.insert("messages".into(), Value::Array(messages));
    Ok(TranslatedRequest { body: json_bytes(&Value::Object(out)), dropped })
}

/// `system`, a string or text blocks, as system messages (one per block).
fn system_messages(system: Value, messages: &mut Vec<Value>, dropped: &mut Dropped) -> Result<(), Untranslatable> {
    match system {
        Value::String(text) => messages.push(json!({"role": "system", "content": text})),
        Value::Array(blocks) => {
            for (i, block) in blocks.into_iter().enumerate() {
                match block_type(&block) {
                    "text" => messages.push(json!({"role": "system", "content": text_of(block)})),
                    _ => dropped.push(format!("system[{i}]")),
                }
            }
        }
        _ => return Err(Untranslatable::new("system", "`system` must be a string or an array of text blocks")),
    }
    Ok(())
}

fn block_type(block: &Value) -> &str {
    block.get("type").and_then(Value::as_str).unwrap_or("")
}

fn text_of(mut block: Value) -> Value {
    match take(&mut block, "text") {
        Value::Null => Value::from(""),
        text => text,
    }
}

fn metadata(value: Value, out: &mut Map<String, Value>, dropped: &mut Dropped) -> Result<(), Untranslatable> {
    let Value::Object(metadata) = value else {
        return Err(Untranslatable::new("metadata", "`metadata` must be an object"));
    };
    for (key, value) in metadata {
        match key.as_str() {
            "user_id" => {
                if !value.is_null() {
                    out.insert("user".into(), value);
                }
            }
            // LiteLLM's routing key (session affinity, the complexity router's pins): read by
            // the gateway, meaningless to the provider.
            "session_id" => {}
            _ => dropped.push(format!("metadata.{key}")),
        }
    }
    Ok(())
}

/// Client tools as OpenAI functions; Anthropic's server tools (bash, web search, …) and tool
/// keys chat has no word for (`defer_loading`, …) dropped.
fn tools(value: Value, dropped: &mut Dropped) -> Result<Value, Untranslatable> {
    let Value::Array(tools) = value else {
        return Err(Untranslatable::new("tools", "`tools` must be an array"));
    };
    let mut functions = Vec::with_capacity(tools.len());
    for (i, tool) in tools.into_iter().enumerate() {
        let Value::Object(tool) = tool else {
            return Err(Untranslatable::new(format!("tools[{i}]"), "a tool must be an object"));
        };
        if tool.get("type").is_some_and(|t| !t.is_null() && t != "custom") {
            dropped.push(format!("tools[{i}]"));
            continue;
        }
        let mut function = Map::new();
        for (key, value) in tool {
            match key.as_str() {
                "name" | "description" | "strict" => {
                    function.insert(key, value);
                }
                "input_schema" => {
                    function.insert("parameters".into(), value);
                }
                "type" | "cache_control" => {}
                _ => dropped.push(format!("tools[{i}].{key}")),
            }
        }
        functions.push(json!({"type": "function", "function": function}));
    }
    Ok(Value::Array(functions))
}

fn tool_choice(value: Value, out: &mut Map<String, Value>, dropped: &mut Dropped) {
    let choice = match value.get("type").and_then(Value::as_str) {
        Some("auto") => json!("auto"),
        Some("any") => json!("required"),
        Some("none") => json!("none"),
        Some("tool") if value.get("name").is_some() => {
            json!({"type": "function", "function": {"name": value["name"]}})
        }
        _ => {
            dropped.push("tool_choice".into());
            return;
        }
    };
    out.insert("tool_choice".into(), choice);
    if value.get("disable_parallel_tool_use") == Some(&Value::Bool(true)) {
        out.insert("parallel_tool_calls".into(), false.into());
    }
}

/// `output_config`: `format` (a JSON schema) becomes `response_format`, `effort` is returned for
/// `reasoning_effort`.
fn output_config(
    value: Value,
    out: &mut Map<String, Value>,
    dropped: &mut Dropped,
) -> Result<Option<String>, Untranslatable> {
    let Value::Object(config) = value else {
        return Err(Untranslatable::new("output_config", "`output_config` must be an object"));
    };
    let mut effort = None;
    for (key, value) in config {
        match (key.as_str(), value) {
            (_, Value::Null) => {}
            ("effort", Value::String(e)) if matches!(e.as_str(), "low" | "medium" | "high") => effort = Some(e),
            ("format", format) if format.get("type").and_then(Value::as_str) == Some("json_schema") => {
                let schema = format.get("schema").cloned().unwrap_or_else(|| json!({}));
                let json_schema = json!({"name": "output", "schema": schema, "strict": true});
                out.insert("response_format".into(), json!({"type": "json_schema", "json_schema": json_schema}));
            }
            _ => dropped.push(format!("output_config.{key}")),
        }
    }
    Ok(effort)
}

/// `thinking` (and `output_config.effort`) → `reasoning_effort`: an explicit effort wins, an
/// enabled budget is bucketed, adaptive thinking asks for medium, disabled asks for nothing; a
/// `thinking` of another shape is dropped.
fn reasoning_effort(thinking: Option<Value>, effort: Option<String>, dropped: &mut Dropped) -> Option<String> {
    let budget_effort = match &thinking {
        None => None,
        Some(t) => match (t.get("type").and_then(Value::as_str), t.get("budget_tokens").and_then(Value::as_u64)) {
            (Some("disabled"), _) => None,
            (Some("adaptive"), _) => Some("medium"),
            (Some("enabled"), Some(budget)) => Some(effort_for_budget(budget)),
            _ => {
                dropped.push("thinking".into());
                None
            }
        },
    };
    effort.or(budget_effort.map(str::to_string))
}

/// The conversation, turn by turn.
fn turns(conversation: Value, messages: &mut Vec<Value>, dropped: &mut Dropped) -> Result<(), Untranslatable> {
    let Value::Array(turns) = conversation else {
        return Err(Untranslatable::new("messages", "`messages` must be an array"));
    };
    for (i, mut turn) in turns.into_iter().enumerate() {
        let content = take(&mut turn, "content");
        match turn.get("role").and_then(Value::as_str) {
            Some("user") => user_turn(i, content, messages, dropped)?,
            Some("assistant") => messages.push(assistant_turn(i, content, dropped)),
            Some("system") => system_messages(content, messages, dropped)?,
            _ => {
                return Err(Untranslatable::new(
                    format!("messages[{i}].role"),
                    "a role is `user`, `assistant` or `system`",
                ))
            }
        }
    }
    Ok(())
}

/// A user turn: its tool results become tool messages (first: they answer the previous
/// assistant turn), the rest one user message, led by the images the tool results returned.
fn user_turn(i: usize, content: Value, messages: &mut Vec<Value>, dropped: &mut Dropped) -> Result<(), Untranslatable> {
    let blocks = match content {
        Value::Array(blocks) => blocks,
        text => {
            messages.push(json!({"role": "user", "content": text}));
            return Ok(());
        }
    };
    let (mut parts, mut tool_images) = (Vec::new(), Vec::new());
    let has_parts = blocks.iter().any(|b| block_type(b) != "tool_result");
    for (j, block) in blocks.into_iter().enumerate() {
        let at = |what: &str| format!("messages[{i}].content[{j}]{what}");
        let part = match block_type(&block) {
            "text" => Some(json!({"type": "text", "text": text_of(block)})),
            "image" => image_part(block),
            "document" => document_part(block),
            "tool_result" => {
                messages.push(tool_message(block, &at, &mut tool_images, dropped)?);
                continue;
            }
            _ => None,
        };
        match part {
            Some(part) => parts.push(part),
            None => dropped.push(at("")),
        }
    }
    if has_parts || !tool_images.is_empty() {
        tool_images.append(&mut parts);
        messages.push(json!({"role": "user", "content": tool_images}));
    }
    Ok(())
}

/// An image block as an `image_url` part (a `data:` URI for base64 data); `None` for a source
/// chat cannot name (a file id).
fn image_part(mut block: Value) -> Option<Value> {
    let mut source = take(&mut block, "source");
    let url = match source.get("type").and_then(Value::as_str) {
        Some("base64") => {
            let media_type = source.get("media_type").and_then(Value::as_str).unwrap_or("image/jpeg").to_string();
            let data = take(&mut source, "data");
            format!("data:{media_type};base64,{}", data.as_str().unwrap_or(""))
        }
        Some("url") => source.get("url").and_then(Value::as_str).unwrap_or("").to_string(),
        _ => return None,
    };
    Some(json!({"type": "image_url", "image_url": {"url": url}}))
}

/// A base64 PDF document as a `file` part; other documents have no OpenAI equivalent (`None`).
fn document_part(mut block: Value) -> Option<Value> {
    let mut source = take(&mut block, "source");
    let is_pdf = source.get("type").and_then(Value::as_str) == Some("base64")
        && source.get("media_type").and_then(Value::as_str) == Some("application/pdf");
    if !is_pdf {
        return None;
    }
    let data = take(&mut source, "data");
    let file_data = format!("data:application/pdf;base64,{}", data.as_str().unwrap_or(""));
    let filename = block.get("title").and_then(Value::as_str).unwrap_or("document.pdf");
    Some(json!({"type": "file", "file": {"filename": filename, "file_data": file_data}}))
}

/// A tool_result block as a tool message; `is_error` shows as an `Error: ` prefix. OpenAI tool
/// messages carry text only: the result's images go to `images`, for the user message that
/// follows the tool messages, each after a text part naming its tool call.
fn tool_message(
    mut block: Value,
    at: &dyn Fn(&str) -> String,
    images: &mut Vec<Value>,
    dropped: &mut Dropped,
) -> Result<Value, Untranslatable> {
    let is_error = block.get("is_error") == Some(&Value::Bool(true));
    let id = take(&mut block, "tool_use_id");
    let mut content = match take(&mut block, "content") {
        Value::Null => Value::from(""),
        Value::String(text) => Value::String(text),
        Value::Array(blocks) => {
            let mut parts = Vec::with_capacity(blocks.len());
            for (k, part) in blocks.into_iter().enumerate() {
                let kind = block_type(&part).to_owned();
                match (kind.as_str(), part) {
                    ("text", part) => parts.push(json!({"type": "text", "text": text_of(part)})),
                    ("image", part) => match image_part(part) {
                        Some(image) => {
                            let label = format!("Image returned by tool call {}:", id.as_str().unwrap_or(""));
                            images.push(json!({"type": "text", "text": label}));
                            images.push(image);
                        }
                        None => dropped.push(at(&format!(".content[{k}]"))),
                    },
                    _ => dropped.push(at(&format!(".content[{k}]"))),
                }
            }
            if parts.is_empty() {
                Value::from("")
            } else {
                Value::Array(parts)
            }
        }
        _ => return Err(Untranslatable::new(at(".content"), "tool_result content must be a string or blocks")),
    };
    if is_error {
        match &mut content {
            Value::String(text) => text.insert_str(0, "Error: "),
            Value::Array(parts) => match parts.first_mut().and_then(|p| p.get_mut("text")) {
                Some(Value::String(text)) => text.insert_str(0, "Error: "),
                _ => parts.insert(0, json!({"type": "text", "text": "Error: "})),
            },
            _ => {}
        }
    }
    Ok(json!({"role": "tool", "tool_call_id": id, "content": content}))
}

/// An assistant turn: text joined into `content`, tool_use blocks as `tool_calls`, thinking left
/// out (see the crate docs), server tool blocks dropped.
fn assistant_turn(i: usize, content: Value, dropped: &mut Dropped) -> Value {
    let blocks = match content {
        Value::Array(blocks) => blocks,
        text => return json!({"role": "assistant", "content": text}),
    };
    let mut text: Option<String> = None;
    let mut calls = Vec::new();
    for (j, mut block) in blocks.into_iter().enumerate() {
        match block_type(&block) {
            "text" => text.get_or_insert_with(String::new).push_str(block["text"].as_str().unwrap_or("")),
            "tool_use" => {
                let input = block.get("input").unwrap_or(&Value::Null);
                let arguments = if input.is_null() { "{}".to_string() } else { input.to_string() };
                let id = take(&mut block, "id");
                let name = take(&mut block, "name");
                calls.push(json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}}));
            }
            "thinking" | "redacted_thinking" => {}
            _ => dropped.push(format!("messages[{i}].content[{j}]")),
        }
    }
    let mut message = json!({"role": "assistant", "content": text});
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls);
    } else if message["content"].is_null() {
        message["content"] = "".into();
    }
    message
}

#[cfg(test)]
#[path = "messages_to_chat_request_tests.rs"]
mod tests;
