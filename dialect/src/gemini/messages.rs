//! OpenAI `messages` → Gemini `systemInstruction` and `contents`.
//!
//! System and developer messages are hoisted, in order, into `systemInstruction`. Consecutive
//! user messages make one `user` content, consecutive assistant messages one `model` content,
//! consecutive tool messages one `user` content of `functionResponse` parts (LiteLLM's grouping;
//! a user message right after tool results starts a content of its own).

use std::collections::HashMap;

use serde_json::{json, Map, Value};

use super::super::mapping::parse_data_uri;
use super::super::{no_equivalent, read_tool_call, take, Untranslatable};
use super::mapping::{mime_type_for_url, FILES_API_PREFIX, GEMINI, THOUGHT_SEPARATOR};

pub(crate) struct Conversation {
    pub system: Option<Value>,
    pub contents: Value,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Turn {
    User,
    Model,
    ToolResults,
}

pub(crate) fn conversation_of(conversation: Value) -> Result<Conversation, Untranslatable> {
    let Value::Array(list) = conversation else {
        return Err(Untranslatable::new("messages", "`messages` must be an array"));
    };
    let mut system: Vec<Value> = Vec::new();
    let mut turns: Vec<(Turn, Vec<Value>)> = Vec::with_capacity(list.len());
    // Tool call id → function name, from the assistant messages so far.
    let mut called: HashMap<String, String> = HashMap::new();
    for (i, message) in list.into_iter().enumerate() {
        let Value::Object(mut message) = message else {
            return Err(Untranslatable::new(format!("messages[{i}]"), "a message must be an object"));
        };
        let role = message.get("role").and_then(Value::as_str).unwrap_or("").to_string();
        for (key, value) in &message {
            let allowed = match key.as_str() {
                "role" | "content" => true,
                "tool_calls" | "reasoning_content" => role == "assistant",
                "tool_call_id" => role == "tool",
                _ => false,
            };
            if !allowed && !value.is_null() {
                return Err(no_equivalent(format!("messages[{i}].{key}"), GEMINI));
            }
        }
        let content = message.remove("content").unwrap_or(Value::Null);
        let (turn, parts) = match role.as_str() {
            "system" | "developer" => {
                system.extend(text_parts(i, content, "system")?);
                continue;
            }
            "user" => (Turn::User, user_parts(i, content)?),
            "assistant" => {
                let mut parts = text_parts(i, content, "assistant")?;
                let calls = message.remove("tool_calls").unwrap_or(Value::Null);
                parts.extend(function_calls(i, calls, &mut called)?);
                (Turn::Model, parts)
            }
            "tool" => {
                let id = message.remove("tool_call_id").unwrap_or(Value::Null);
                (Turn::ToolResults, vec![function_response(i, content, id, &called)?])
            }
            _ => return Err(no_equivalent(format!("messages[{i}].role"), GEMINI)),
        };
        if parts.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some((last, last_parts)) if *last == turn => last_parts.extend(parts),
            _ => turns.push((turn, parts)),
        }
    }
    if turns.is_empty() {
        let message = "Gemini needs at least one user or assistant message with content";
        return Err(Untranslatable::new("messages", message));
    }
    let contents = turns
        .into_iter()
        .map(|(turn, parts)| json!({"role": if turn == Turn::Model { "model" } else { "user" }, "parts": parts}))
        .collect();
    let system = (!system.is_empty()).then(|| json!({"parts": system}));
    Ok(Conversation { system, contents: Value::Array(contents) })
}

/// Text content (a string or text parts) as text parts, empty texts left out (Gemini refuses
/// them).
fn text_parts(i: usize, content: Value, what: &str) -> Result<Vec<Value>, Untranslatable> {
    match content {
        Value::Null => Ok(Vec::new()),
        Value::String(text) => Ok(text_part(text).into_iter().collect()),
        Value::Array(parts) => {
            let mut out = Vec::with_capacity(parts.len());
            for (j, mut part) in parts.into_iter().enumerate() {
                let is_text = part.get("type").and_then(Value::as_str) == Some("text");
                match (is_text, take(&mut part, "text")) {
                    (true, Value::String(text)) => out.extend(text_part(text)),
                    _ => return Err(no_equivalent(format!("messages[{i}].content[{j}].type"), GEMINI)),
                }
            }
            Ok(out)
        }
        _ => Err(Untranslatable::new(format!("messages[{i}].content"), format!("{what} content must be text"))),
    }
}

fn text_part(text: String) -> Option<Value> {
    (!text.is_empty()).then(|| json!({"text": text}))
}

/// A user message's content: text, images (a `data:` URI inline, a URL as `fileData`), input
/// audio and `data:` files inline.
fn user_parts(i: usize, content: Value) -> Result<Vec<Value>, Untranslatable> {
    let parts = match content {
        Value::Array(parts) => parts,
        other => return text_parts(i, other, "user"),
    };
    let mut out = Vec::with_capacity(parts.len());
    for (j, mut part) in parts.into_iter().enumerate() {
        let at = |what: &str| format!("messages[{i}].content[{j}]{what}");
        match part.get("type").and_then(Value::as_str) {
            Some("text") => match take(&mut part, "text") {
                Value::String(text) => out.extend(text_part(text)),
                _ => return Err(Untranslatable::new(at(".text"), "a text part needs its text")),
            },
            Some("image_url") => {
                let url = match take(&mut part, "image_url") {
                    Value::String(url) => url,
                    Value::Object(mut image) => match image.remove("url") {
                        Some(Value::String(url)) => url,
                        _ => return Err(Untranslatable::new(at(".image_url.url"), "an image_url needs a url")),
                    },
                    _ => return Err(Untranslatable::new(at(".image_url"), "an image_url part needs its url")),
                };
                out.push(media_part(&url, &at(".image_url.url"))?);
            }
            Some("input_audio") => {
                let audio = take(&mut part, "input_audio");
                let (Some(data), Some(format)) =
                    (audio.get("data").and_then(Value::as_str), audio.get("format").and_then(Value::as_str))
                else {
                    return Err(Untranslatable::new(at(".input_audio"), "input_audio needs `data` and `format`"));
                };
                out.push(json!({"inlineData": {"mimeType": format!("audio/{format}"), "data": data}}));
            }
            Some("file") => {
                let data = part.pointer("/file/file_data").and_then(Value::as_str).and_then(parse_data_uri);
                let Some((mime_type, data)) = data else {
                    let message = "only a file given inline as a `data:` URI in `file_data` can be sent to Gemini";
                    return Err(Untranslatable::new(at(".file"), message));
                };
                out.push(json!({"inlineData": {"mimeType": mime_type, "data": data}}));
            }
            _ => return Err(no_equivalent(at(".type"), GEMINI)),
        }
    }
    Ok(out)
}

/// A media URL as a part: `data:` → `inlineData`; an http(s) or `gs://` URL whose extension
/// tells its MIME type → `fileData`; a Files API URI → `fileData` without one. Anything else is
/// refused: Gemini needs the MIME type and the gateway fetches nothing.
fn media_part(url: &str, field: &str) -> Result<Value, Untranslatable> {
    if let Some((mime_type, data)) = parse_data_uri(url) {
        return Ok(json!({"inlineData": {"mimeType": mime_type, "data": data}}));
    }
    if url.starts_with(FILES_API_PREFIX) && url.contains("/files/") {
        return Ok(json!({"fileData": {"fileUri": url}}));
    }
    let remote = ["https://", "http://", "gs://"].iter().any(|scheme| url.starts_with(scheme));
    match mime_type_for_url(url) {
        Some(mime_type) if remote => Ok(json!({"fileData": {"mimeType": mime_type, "fileUri": url}})),
        _ if remote => Err(Untranslatable::new(
            field,
            "Gemini needs the media type of a linked image and it cannot be told from this URL's extension; send the image as a `data:` URI",
        )),
        _ => Err(Untranslatable::new(field, "an image URL must be a `data:` URI or an http(s) or gs:// URL")),
    }
}

/// An assistant message's tool calls as `functionCall` parts (arguments parsed; a signature
/// carried in the id goes back as the part's `thoughtSignature`).
fn function_calls(i: usize, calls: Value, called: &mut HashMap<String, String>) -> Result<Vec<Value>, Untranslatable> {
    let calls = match calls {
        Value::Null => return Ok(Vec::new()),
        Value::Array(calls) => calls,
        _ => return Err(Untranslatable::new(format!("messages[{i}].tool_calls"), "`tool_calls` must be an array")),
    };
    let mut parts = Vec::with_capacity(calls.len());
    for (j, call) in calls.into_iter().enumerate() {
        let at = format!("messages[{i}].tool_calls[{j}]");
        let call = read_tool_call(call, &at, GEMINI)?;
        let Some(name) = call.name.as_str() else {
            return Err(Untranslatable::new(format!("{at}.function.name"), "a tool call needs a function name"));
        };
        let mut part = json!({"functionCall": {"name": name, "args": call.arguments}});
        if let Some(id) = call.id.as_str() {
            if let Some((_, signature)) = id.split_once(THOUGHT_SEPARATOR) {
                part["thoughtSignature"] = signature.into();
            }
            called.insert(id.to_string(), name.to_string());
        }
        parts.push(part);
    }
    Ok(parts)
}

/// A tool message as a `functionResponse` part named after the call it answers. Text that is a
/// JSON object is the response itself; any other text is wrapped as `{"content": text}`
/// (LiteLLM's wrapping; an object holding `"$ref"` is wrapped too, as Gemini would read it as a
/// reference to a part).
fn function_response(
    i: usize,
    content: Value,
    id: Value,
    called: &HashMap<String, String>,
) -> Result<Value, Untranslatable> {
    let Some(name) = id.as_str().and_then(|id| called.get(id)) else {
        let message = "a tool message must answer a tool call of an earlier assistant message";
        return Err(Untranslatable::new(format!("messages[{i}].tool_call_id"), message));
    };
    let text = match content {
        Value::String(text) => text,
        Value::Null => String::new(),
        Value::Array(parts) => {
            let mut text = String::new();
            for (j, part) in parts.iter().enumerate() {
                match (part.get("type").and_then(Value::as_str), part.get("text").and_then(Value::as_str)) {
                    (Some("text"), Some(piece)) => text.push_str(piece),
                    _ => return Err(no_equivalent(format!("messages[{i}].content[{j}].type"), GEMINI)),
                }
            }
            text
        }
        _ => return Err(Untranslatable::new(format!("messages[{i}].content"), "tool content must be text")),
    };
    let response = match serde_json::from_str::<Value>(&text) {
        Ok(object @ Value::Object(_)) if !holds_ref(&object) => object,
        _ => json!({"content": text}),
    };
    let mut function_response = Map::with_capacity(2);
    function_response.insert("name".into(), name.as_str().into());
    function_response.insert("response".into(), response);
    Ok(json!({"functionResponse": function_response}))
}

/// Whether an object anywhere in `value` has a `$ref` key.
fn holds_ref(value: &Value) -> bool {
    match value {
        Value::Object(fields) => fields.contains_key("$ref") || fields.values().any(holds_ref),
        Value::Array(items) => items.iter().any(holds_ref),
        _ => false,
    }
}
