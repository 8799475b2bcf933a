//! Responses input items (messages, tool calls and their outputs) as chat messages.
//!
//! Function, custom and local-shell calls become `tool_calls` of one assistant message
//! (joining the assistant text right before them); their outputs become `tool` messages. Chat's
//! tool messages carry text only, so images and files a tool returned go in a user message right
//! after the run of tool messages, each after a text part naming the call.

use serde_json::{json, Map, Value};

use super::LOCAL_SHELL;
use crate::{json_bytes, take, Untranslatable};

/// The chat `messages` being built, item by item.
#[derive(Debug, Default)]
pub(crate) struct ChatMessages {
    messages: Vec<Value>,
    /// Parts a tool returned that a tool message cannot hold, for the next user message.
    tool_attachments: Vec<Value>,
}

impl ChatMessages {
    pub(crate) fn push_system(&mut self, text: Value) {
        self.push(json!({"role": "system", "content": text}));
    }

    /// Translates one item; `at` is its path (`input[3]`). Items with no chat equivalent are
    /// named in `dropped`.
    pub(crate) fn push_item(
        &mut self,
        mut item: Value,
        at: &str,
        dropped: &mut Vec<String>,
    ) -> Result<(), Untranslatable> {
        if !item.is_object() {
            return Err(Untranslatable::new(at, "an input item must be an object"));
        }
        let kind = match item.get("type") {
            Some(Value::String(kind)) => kind.clone(),
            None | Some(Value::Null) if item.get("role").is_some() => "message".to_string(),
            _ => return Err(Untranslatable::new(format!("{at}.type"), "an input item needs a `type`")),
        };
        match kind.as_str() {
            "message" => self.message(item, at),
            "function_call" => {
                let arguments = match take(&mut item, "arguments") {
                    Value::String(arguments) => arguments,
                    Value::Null => "{}".to_string(),
                    other => String::from_utf8_lossy(&json_bytes(&other)).into_owned(),
                };
                let name = string_field(&mut item, "name", at)?;
                self.push_call(string_field(&mut item, "call_id", at)?, name, arguments);
                Ok(())
            }
            "custom_tool_call" => {
                let input = string_field(&mut item, "input", at)?;
                let arguments = String::from_utf8_lossy(&json_bytes(&json!({"input": input}))).into_owned();
                let name = string_field(&mut item, "name", at)?;
                self.push_call(string_field(&mut item, "call_id", at)?, name, arguments);
                Ok(())
            }
            "local_shell_call" => {
                let mut action = take(&mut item, "action");
                let mut arguments = Map::new();
                for key in ["command", "working_directory", "timeout_ms"] {
                    let value = take(&mut action, key);
                    if !value.is_null() {
                        arguments.insert(key.into(), value);
                    }
                }
                let arguments = String::from_utf8_lossy(&json_bytes(&Value::Object(arguments))).into_owned();
                self.push_call(string_field(&mut item, "call_id", at)?, LOCAL_SHELL.into(), arguments);
                Ok(())
            }
            "function_call_output" | "custom_tool_call_output" | "local_shell_call_output" => {
                let call_id = match take(&mut item, "call_id") {
                    Value::Null => take(&mut item, "id"),
                    id => id,
                };
                let Value::String(call_id) = call_id else {
                    return Err(Untranslatable::new(format!("{at}.call_id"), "a tool output needs its `call_id`"));
                };
                self.push_output(call_id, take(&mut item, "output"), at)
            }
            other => {
                dropped.push(format!("{at} {other}"));
                Ok(())
            }
        }
    }

    /// The messages, with a last tool run's attachments.
    pub(crate) fn finish(mut self) -> Vec<Value> {
        self.flush_attachments();
        self.messages
    }

    fn push(&mut self, message: Value) {
        self.flush_attachments();
        self.messages.push(message);
    }

    fn flush_attachments(&mut self) {
        if !self.tool_attachments.is_empty() {
            let parts = std::mem::take(&mut self.tool_attachments);
            self.messages.push(json!({"role": "user", "content": parts}));
        }
    }

    fn message(&mut self, mut item: Value, at: &str) -> Result<(), Untranslatable> {
        let content = take(&mut item, "content");
        let role = match item.get("role").and_then(Value::as_str) {
            Some("user") => "user",
            Some("assistant") => "assistant",
            Some("system" | "developer") => "system",
            _ => {
                return Err(Untranslatable::new(
                    format!("{at}.role"),
                    "role must be user, assistant, system or developer",
                ))
            }
        };
        let parts = match content {
            text @ Value::String(_) => {
                self.push(json!({"role": role, "content": text}));
                return Ok(());
            }
            Value::Array(parts) => parts,
            _ => {
                return Err(Untranslatable::new(
                    format!("{at}.content"),
                    "content must be a string or an array of parts",
                ))
            }
        };
        let mut chat_parts = Vec::with_capacity(parts.len());
        for (j, part) in parts.into_iter().enumerate() {
            let part_at = format!("{at}.content[{j}]");
            let part = chat_part(part, &part_at)?;
            if role != "user" && part.get("type").and_then(Value::as_str) != Some("text") {
                return Err(Untranslatable::new(
                    format!("{part_at}.type"),
                    format!("a {role} message holds text only"),
                ));
            }
            chat_parts.push(part);
        }
        let content = match (role, text_only(&chat_parts)) {
            ("user", Some(_)) if chat_parts.len() != 1 => Value::Array(chat_parts),
            (_, Some(text)) => text.into(),
            (_, None) => Value::Array(chat_parts),
        };
        self.push(json!({"role": role, "content": content}));
        Ok(())
    }

    /// A tool call joins the assistant message right before it, or starts one.
    fn push_call(&mut self, call_id: String, name: String, arguments: String) {
        let call = json!({"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}});
        let joins = self.tool_attachments.is_empty()
            && self.messages.last().is_some_and(|last| last.get("role").and_then(Value::as_str) == Some("assistant"));
        if joins {
            if let Some(Value::Object(last)) = self.messages.last_mut() {
                match last.get_mut("tool_calls") {
                    Some(Value::Array(calls)) => calls.push(call),
                    _ => {
                        last.insert("tool_calls".into(), json!([call]));
                    }
                }
                return;
            }
        }
        self.push(json!({"role": "assistant", "content": null, "tool_calls": [call]}));
    }

    fn push_output(&mut self, call_id: String, output: Value, at: &str) -> Result<(), Untranslatable> {
        let text = match output {
            Value::String(text) => text,
            Value::Array(parts) => {
                let mut texts = Vec::new();
                let mut attachments = Vec::new();
                for (j, part) in parts.into_iter().enumerate() {
                    let part = chat_part(part, &format!("{at}.output[{j}]"))?;
                    match part.get("text").and_then(Value::as_str) {
                        Some(text) if part["type"] == "text" => texts.push(text.to_string()),
                        _ => attachments.push(part),
                    }
                }
                if !attachments.is_empty() {
                    let label = format!("Content returned by tool call {call_id}:");
                    self.tool_attachments.push(json!({"type": "text", "text": label}));
                    self.tool_attachments.extend(attachments);
                    if texts.is_empty() {
                        texts.push("The tool's output is in the next user message.".to_string());
                    }
                }
                texts.join("\n")
            }
            Value::Null => String::new(),
            _ => return Err(Untranslatable::new(format!("{at}.output"), "a tool output must be a string or parts")),
        };
        self.messages.push(json!({"role": "tool", "tool_call_id": call_id, "content": text}));
        Ok(())
    }
}

/// The text of parts that are all text, joined; `None` when there is another kind.
fn text_only(parts: &[Value]) -> Option<String> {
    let mut text = String::new();
    for part in parts {
        text.push_str(part.get("text").and_then(Value::as_str).filter(|_| part["type"] == "text")?);
    }
    Some(text)
}

fn string_field(item: &mut Value, key: &str, at: &str) -> Result<String, Untranslatable> {
    match take(item, key) {
        Value::String(value) => Ok(value),
        _ => Err(Untranslatable::new(format!("{at}.{key}"), format!("`{key}` must be a string"))),
    }
}

/// One content part (`input_text`, `output_text`, `refusal`, `input_image`, `input_file`,
/// `input_audio`) as a chat part.
fn chat_part(mut part: Value, at: &str) -> Result<Value, Untranslatable> {
    let kind = part.get("type").and_then(Value::as_str).unwrap_or("").to_string();
    let text_of = |part: &mut Value, key: &str| match take(part, key) {
        Value::String(text) => Ok(json!({"type": "text", "text": text})),
        _ => Err(Untranslatable::new(format!("{at}.{key}"), format!("`{key}` must be a string"))),
    };
    match kind.as_str() {
        "input_text" | "output_text" | "text" => text_of(&mut part, "text"),
        "refusal" => text_of(&mut part, "refusal"),
        "input_image" => match take(&mut part, "image_url") {
            Value::String(url) => Ok(json!({"type": "image_url", "image_url": {"url": url}})),
            _ if part.get("file_id").is_some_and(|id| !id.is_null()) => Err(not_by_file_id(at)),
            _ => Err(Untranslatable::new(format!("{at}.image_url"), "an input_image needs its `image_url`")),
        },
        "input_file" => match take(&mut part, "file_data") {
            Value::String(data) => {
                let data = if data.starts_with("data:") { data } else { format!("data:application/pdf;base64,{data}") };
                let mut file = json!({"file_data": data});
                if let Value::String(name) = take(&mut part, "filename") {
                    file["filename"] = name.into();
                }
                Ok(json!({"type": "file", "file": file}))
            }
            _ if part.get("file_id").is_some_and(|id| !id.is_null()) => Err(not_by_file_id(at)),
            _ => Err(Untranslatable::new(format!("{at}.file_data"), "an input_file must carry its `file_data`")),
        },
        "input_audio" => Ok(json!({"type": "input_audio", "input_audio": take(&mut part, "input_audio")})),
        _ => Err(Untranslatable::new(
            format!("{at}.type"),
            "a content part of this type cannot be sent to a chat completions API",
        )),
    }
}

fn not_by_file_id(at: &str) -> Untranslatable {
    Untranslatable::new(
        format!("{at}.file_id"),
        "files uploaded to OpenAI cannot be read by this deployment; send the file's data",
    )
}
