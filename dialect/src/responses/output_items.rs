//! Responses output items and usage built from a chat answer's parts, shared by the whole-answer
//! and the stream translators.

use serde_json::{json, Map, Value};

use super::echo::ResponseEcho;
use super::tools::CallKind;

/// The `output` items of a Responses `response` object (empty for anything else).
pub fn output_items(response: &Value) -> Vec<Value> {
    response.get("output").and_then(Value::as_array).cloned().unwrap_or_default()
}

/// Item id prefixes, by item type.
pub(crate) const MESSAGE_PREFIX: &str = "msg";
pub(crate) const REASONING_PREFIX: &str = "rs";

pub(crate) fn call_prefix(kind: CallKind) -> &'static str {
    match kind {
        CallKind::Function => "fc",
        CallKind::Custom => "ctc",
        CallKind::LocalShell => "lsh",
    }
}

/// A `summary_text` part.
pub(crate) fn summary_part(text: &str) -> Value {
    json!({"type": "summary_text", "text": text})
}

/// A reasoning item whose summary is the chat answer's reasoning text.
pub(crate) fn reasoning_item(id: &str, text: &str) -> Value {
    json!({"type": "reasoning", "id": id, "summary": [summary_part(text)]})
}

/// An `output_text` content part.
pub(crate) fn text_part(text: &str) -> Value {
    json!({"type": "output_text", "text": text, "annotations": [], "logprobs": []})
}

pub(crate) fn refusal_part(refusal: &str) -> Value {
    json!({"type": "refusal", "refusal": refusal})
}

/// An assistant `message` item.
pub(crate) fn message_item(id: &str, status: &str, content: Vec<Value>) -> Value {
    json!({"type": "message", "id": id, "status": status, "role": "assistant", "content": content})
}

/// A tool call as its Responses item, complete: a `function_call`; a `custom_tool_call` with the
/// `{"input": …}` wrapper removed; a `local_shell_call` with its `exec` action (a local-shell
/// call whose arguments are not a command stays a `function_call` so the client sees them).
pub(crate) fn call_item(echo: &ResponseEcho, output_index: usize, call_id: &str, name: &str, arguments: &str) -> Value {
    let kind = echo.tool_kinds.kind_of(name);
    let id = echo.item_id(call_prefix(kind), output_index);
    match kind {
        CallKind::Custom => {
            let input = custom_input(arguments);
            json!({"type": "custom_tool_call", "id": id, "call_id": call_id, "name": name, "input": input})
        }
        CallKind::LocalShell => match exec_action(arguments) {
            Some(action) => {
                json!({"type": "local_shell_call", "id": id, "call_id": call_id, "action": action, "status": "completed"})
            }
            None => function_call_item(&id, call_id, name, arguments),
        },
        CallKind::Function => function_call_item(&id, call_id, name, arguments),
    }
}

fn function_call_item(id: &str, call_id: &str, name: &str, arguments: &str) -> Value {
    json!({"type": "function_call", "id": id, "call_id": call_id, "name": name, "arguments": arguments, "status": "completed"})
}

/// A custom tool's input: the `input` string of the arguments the model wrote for the chat
/// function standing for it, or the raw arguments when they are not that.
pub(crate) fn custom_input(arguments: &str) -> String {
    match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(mut object)) => match object.remove("input") {
            Some(Value::String(input)) => input,
            _ => arguments.to_string(),
        },
        _ => arguments.to_string(),
    }
}

/// The `local_shell` function's arguments as a `local_shell_call` action.
fn exec_action(arguments: &str) -> Option<Value> {
    let Ok(Value::Object(mut arguments)) = serde_json::from_str::<Value>(arguments) else {
        return None;
    };
    let command = arguments.remove("command")?;
    if !command.as_array()?.iter().all(Value::is_string) {
        return None;
    }
    let mut action = Map::new();
    action.insert("type".into(), "exec".into());
    action.insert("command".into(), command);
    action.insert("env".into(), json!({}));
    if let Some(dir) = arguments.remove("working_directory").filter(Value::is_string) {
        action.insert("working_directory".into(), dir);
    }
    if let Some(timeout) = arguments.remove("timeout_ms").filter(Value::is_u64) {
        action.insert("timeout_ms".into(), timeout);
    }
    Some(Value::Object(action))
}

/// The response's `status` and `incomplete_details` for a chat `finish_reason`.
pub(crate) fn status_for(finish_reason: Option<&str>) -> (&'static str, Value) {
    match finish_reason {
        Some("length") => ("incomplete", json!({"reason": "max_output_tokens"})),
        Some("content_filter") => ("incomplete", json!({"reason": "content_filter"})),
        _ => ("completed", Value::Null),
    }
}

/// Chat `usage` (or none) as Responses usage, every field present.
pub(crate) fn usage_of(chat_usage: Option<&Value>) -> Value {
    let count = |pointer: &str| chat_usage.and_then(|u| u.pointer(pointer)).and_then(Value::as_u64).unwrap_or(0);
    let (input, output) = (count("/prompt_tokens"), count("/completion_tokens"));
    json!({
        "input_tokens": input,
        "input_tokens_details": {
            "cached_tokens": count("/prompt_tokens_details/cached_tokens"),
            "cache_write_tokens": count("/prompt_tokens_details/cache_write_tokens"),
        },
        "output_tokens": output,
        "output_tokens_details": {"reasoning_tokens": count("/completion_tokens_details/reasoning_tokens")},
        "total_tokens": input.saturating_add(output),
    })
}
