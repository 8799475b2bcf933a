//! A `POST /v1/responses` body: the fields the mock reads, its input as items, and what the
//! answer echoes back.

use serde_json::{Map, Value};

use crate::agent::{content_text, ShellTool};

/// A request field a response object repeats, and OpenAI's value when the request has none.
type EchoedField = (&'static str, fn() -> Value);

/// The request fields a response object repeats.
const ECHOED_FIELDS: [EchoedField; 13] = [
    ("instructions", || Value::Null),
    ("max_output_tokens", || Value::Null),
    ("metadata", || Value::Object(Map::new())),
    ("parallel_tool_calls", || Value::Bool(true)),
    ("prompt_cache_key", || Value::Null),
    ("reasoning", || serde_json::json!({"effort": null, "summary": null})),
    ("service_tier", || Value::from("default")),
    ("temperature", || Value::from(1.0)),
    ("text", || serde_json::json!({"format": {"type": "text"}})),
    ("tool_choice", || Value::from("auto")),
    ("tools", || Value::Array(Vec::new())),
    ("top_p", || Value::from(1.0)),
    ("truncation", || Value::from("disabled")),
];

/// A valid Responses request, as far as the answer depends on it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ResponsesRequest {
    pub model: String,
    pub stream: bool,
    /// `store` (default true): the answer is kept for `previous_response_id` and `GET`.
    pub store: bool,
    pub previous_response_id: Option<String>,
    /// `input` as a list of items (a string input is one user message).
    pub input: Vec<Value>,
    pub tools: Vec<Value>,
    /// [`ECHOED_FIELDS`], as sent or defaulted.
    pub echoed: Map<String, Value>,
}

/// An `invalid_request_error` as OpenAI words it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct InvalidRequest {
    pub message: String,
    pub param: Option<&'static str>,
    pub code: Option<&'static str>,
}

/// Reads a `POST /v1/responses` body.
pub(crate) fn read_request(body: &[u8]) -> Result<ResponsesRequest, InvalidRequest> {
    let fields: Map<String, Value> = serde_json::from_slice(body).map_err(|error| InvalidRequest {
        message: format!("We could not parse the JSON body of your request. ({error})"),
        param: None,
        code: None,
    })?;
    let model = fields.get("model").and_then(Value::as_str).ok_or(InvalidRequest {
        message: "Missing required parameter: 'model'.".to_owned(),
        param: Some("model"),
        code: Some("missing_required_parameter"),
    })?;
    let input = match fields.get("input") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(text)) => vec![user_message(text)],
        Some(Value::Array(items)) => items.iter().map(as_item).collect(),
        Some(_) => {
            return Err(InvalidRequest {
                message: "Invalid type for 'input': expected a string or an array of input items.".to_owned(),
                param: Some("input"),
                code: Some("invalid_type"),
            })
        }
    };
    let echoed = ECHOED_FIELDS
        .iter()
        .map(|(name, default)| {
            let value = fields.get(*name).filter(|value| !value.is_null()).cloned().unwrap_or_else(default);
            ((*name).to_owned(), value)
        })
        .collect();
    let tools = fields.get("tools").and_then(Value::as_array).cloned().unwrap_or_default();
    Ok(ResponsesRequest {
        model: model.to_owned(),
        stream: fields.get("stream").and_then(Value::as_bool) == Some(true),
        store: fields.get("store").and_then(Value::as_bool) != Some(false),
        previous_response_id: fields.get("previous_response_id").and_then(Value::as_str).map(str::to_owned),
        input,
        tools,
        echoed,
    })
}

/// A string input as the item OpenAI makes of it.
fn user_message(text: &str) -> Value {
    serde_json::json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})
}

/// An input item; an easy message (`{role, content}` without a type) gets `type: message`.
fn as_item(item: &Value) -> Value {
    match item {
        Value::Object(object) if !object.contains_key("type") && object.contains_key("role") => {
            let mut object = object.clone();
            object.insert("type".to_owned(), Value::from("message"));
            Value::Object(object)
        }
        other => other.clone(),
    }
}

impl ResponsesRequest {
    /// The shell tool among the request's function tools.
    pub(crate) fn shell_tool(&self) -> Option<ShellTool> {
        let functions = self.tools.iter().filter(|tool| tool.get("type").and_then(Value::as_str) == Some("function"));
        ShellTool::find(functions.filter_map(|tool| Some((tool.get("name")?.as_str()?, tool.get("parameters")))))
    }
}

/// The output of a tool when `conversation` ends with a tool's result (`function_call_output`,
/// `custom_tool_call_output`, `local_shell_call_output`).
pub(crate) fn last_tool_output(conversation: &[Value]) -> Option<String> {
    let last = conversation.last()?;
    let kind = last.get("type").and_then(Value::as_str)?;
    kind.ends_with("_call_output").then(|| content_text(last.get("output").unwrap_or(&Value::Null)))
}
