//! Responses tools and `tool_choice` as chat function tools, and the request's tool kinds that
//! tell an answer's tool call which Responses item it is.

use serde_json::{json, Map, Value};

use super::LOCAL_SHELL;
use crate::{take, Untranslatable};

/// Which Responses item a chat tool call of a given name becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CallKind {
    /// A `function_call` with its arguments string.
    Function,
    /// A `custom_tool_call`: the call's `{"input": …}` unwrapped to the input text.
    Custom,
    /// A `local_shell_call`: the call's arguments as an `exec` action.
    LocalShell,
}

/// The request's client-executed tools that are not plain functions, by name.
#[derive(Debug, Clone, Default)]
pub(crate) struct ToolKinds {
    custom: Vec<String>,
    local_shell: bool,
}

impl ToolKinds {
    /// Read from the request's `tools` (anything else: no special kinds).
    pub(crate) fn of_request_tools(tools: Option<&Value>) -> ToolKinds {
        let mut kinds = ToolKinds::default();
        for tool in tools.and_then(Value::as_array).into_iter().flatten() {
            match tool.get("type").and_then(Value::as_str) {
                Some("custom") => kinds.custom.extend(tool.get("name").and_then(Value::as_str).map(str::to_string)),
                Some("local_shell") => kinds.local_shell = true,
                _ => {}
            }
        }
        kinds
    }

    pub(crate) fn kind_of(&self, name: &str) -> CallKind {
        if self.custom.iter().any(|custom| custom == name) {
            CallKind::Custom
        } else if self.local_shell && name == LOCAL_SHELL {
            CallKind::LocalShell
        } else {
            CallKind::Function
        }
    }
}

/// The request's `tools` as chat function tools; hosted tools are named in `dropped`.
pub(crate) fn chat_tools(tools: Value, dropped: &mut Vec<String>) -> Result<Vec<Value>, Untranslatable> {
    let Value::Array(tools) = tools else {
        return Err(Untranslatable::new("tools", "`tools` must be an array"));
    };
    let mut out = Vec::with_capacity(tools.len());
    for (i, mut tool) in tools.into_iter().enumerate() {
        if !tool.is_object() {
            return Err(Untranslatable::new(format!("tools[{i}]"), "a tool must be an object"));
        }
        let Some(kind) = tool.get("type").and_then(Value::as_str).map(str::to_string) else {
            return Err(Untranslatable::new(format!("tools[{i}].type"), "a tool needs a `type`"));
        };
        let function = match kind.as_str() {
            "function" => {
                let mut function = Map::new();
                function.insert("name".into(), tool_name(&mut tool, i)?);
                for key in ["description", "parameters", "strict"] {
                    let value = take(&mut tool, key);
                    if !value.is_null() {
                        function.insert(key.into(), value);
                    }
                }
                Value::Object(function)
            }
            "custom" => {
                let name = tool_name(&mut tool, i)?;
                let description = custom_description(take(&mut tool, "description"), &take(&mut tool, "format"));
                let parameters = json!({"type": "object", "properties": {"input": {"type": "string"}},
                    "required": ["input"], "additionalProperties": false});
                json!({"name": name, "description": description, "parameters": parameters})
            }
            "local_shell" => json!({
                "name": LOCAL_SHELL,
                "description": "Runs a command on the user's machine and returns its output. `command` is the program and its arguments (e.g. [\"bash\", \"-lc\", \"ls\"]).",
                "parameters": {"type": "object", "properties": {
                    "command": {"type": "array", "items": {"type": "string"}},
                    "working_directory": {"type": "string"},
                    "timeout_ms": {"type": "integer"}},
                    "required": ["command"]},
            }),
            hosted => {
                dropped.push(format!("tools[{i}] {hosted}"));
                continue;
            }
        };
        out.push(json!({"type": "function", "function": function}));
    }
    Ok(out)
}

fn tool_name(tool: &mut Value, i: usize) -> Result<Value, Untranslatable> {
    match take(tool, "name") {
        name @ Value::String(_) => Ok(name),
        _ => Err(Untranslatable::new(format!("tools[{i}].name"), "a tool needs a string `name`")),
    }
}

/// A custom (freeform) tool's description with its input format spelled out, since the chat
/// function only sees `{"input": string}`.
fn custom_description(description: Value, format: &Value) -> String {
    let mut text = description.as_str().unwrap_or("").to_string();
    if !text.is_empty() {
        text.push_str("\n\n");
    }
    match (format.get("type").and_then(Value::as_str), format.get("definition").and_then(Value::as_str)) {
        (Some("grammar"), Some(definition)) => {
            let syntax = format.get("syntax").and_then(Value::as_str).unwrap_or("lark");
            text.push_str(&format!(
                "Pass the tool's input as `input`, text that matches this {syntax} grammar:\n{definition}"
            ));
        }
        _ => text.push_str("Pass the tool's input as free-form text in `input`."),
    }
    text
}

/// The request's `tool_choice` in chat's terms (`None`: send none). `allowed_tools` keeps only
/// the allowed tools in `tools`; a hosted tool's choice is named in `dropped` (its tool is gone).
pub(crate) fn chat_tool_choice(
    choice: Value,
    tools: &mut Vec<Value>,
    dropped: &mut Vec<String>,
) -> Result<Option<Value>, Untranslatable> {
    let object = match choice {
        Value::String(mode) if matches!(mode.as_str(), "auto" | "none" | "required") => return Ok(Some(mode.into())),
        object @ Value::Object(_) => object,
        _ => return Err(Untranslatable::new("tool_choice", "`tool_choice` must be auto, none, required or an object")),
    };
    let named = |object: &Value| match object.get("name") {
        Some(Value::String(name)) => Ok(json!({"type": "function", "function": {"name": name}})),
        _ => Err(Untranslatable::new("tool_choice.name", "a named tool choice needs its `name`")),
    };
    match object.get("type").and_then(Value::as_str) {
        Some("function" | "custom") => named(&object).map(Some),
        Some("local_shell") => Ok(Some(json!({"type": "function", "function": {"name": LOCAL_SHELL}}))),
        Some("allowed_tools") => {
            let allowed: Vec<&str> = object
                .get("tools")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|tool| match tool.get("type").and_then(Value::as_str) {
                    Some("local_shell") => Some(LOCAL_SHELL),
                    _ => tool.get("name").and_then(Value::as_str),
                })
                .collect();
            tools.retain(|tool| {
                tool.pointer("/function/name").and_then(Value::as_str).is_some_and(|n| allowed.contains(&n))
            });
            match object.get("mode").and_then(Value::as_str).unwrap_or("auto") {
                mode @ ("auto" | "required") => Ok(Some(mode.into())),
                _ => Err(Untranslatable::new("tool_choice.mode", "`mode` must be auto or required")),
            }
        }
        Some(hosted) => {
            dropped.push(format!("tool_choice {hosted}"));
            Ok(None)
        }
        None => Err(Untranslatable::new("tool_choice.type", "a tool choice object needs a `type`")),
    }
}
