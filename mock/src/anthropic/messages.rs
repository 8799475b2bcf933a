//! Anthropic's Messages API: the request fields the mock reads, checked as Anthropic checks them,
//! the answer it makes (text, or a call of an offered tool), and that answer's JSON body in the
//! shape of `tests/fixtures/anthropic_messages_response*.json`.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The fields of a Messages (or count_tokens) request the mock reads; the rest is skipped.
#[derive(Debug, Deserialize)]
struct MessagesRequest<'a> {
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    max_tokens: Option<i64>,
    #[serde(default, borrow)]
    messages: Option<Vec<MessageParam<'a>>>,
    #[serde(default)]
    stream: Option<bool>,
    #[serde(default)]
    tools: Option<Vec<ToolParam>>,
    #[serde(default)]
    tool_choice: Option<ToolChoice>,
}

#[derive(Debug, Deserialize)]
struct MessageParam<'a> {
    #[serde(default)]
    role: Option<String>,
    #[serde(default, borrow)]
    content: Option<&'a RawValue>,
}

#[derive(Debug, Deserialize)]
struct ToolParam {
    #[serde(default)]
    name: Option<String>,
    /// Custom tools have one; server tools (`web_search_…`) do not and are never called.
    #[serde(default)]
    input_schema: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct ToolChoice {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    name: Option<String>,
}

#[derive(Debug, Deserialize)]
struct BlockKind<'a> {
    #[serde(rename = "type", default, borrow)]
    kind: Option<&'a str>,
}

/// A valid Messages request, as far as the answer depends on it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MessagesCall {
    pub model: String,
    pub stream: bool,
    /// The tool the answer calls.
    pub tool: Option<ToolCall>,
}

/// A tool call: the tool's name and its input, a JSON object valid for the tool's schema.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolCall {
    pub name: String,
    pub input: String,
}

/// Reads a `POST /v1/messages` body; `Err` is the `invalid_request_error` message Anthropic
/// would send (`max_tokens: Field required`, …).
pub(crate) fn read_messages_request(body: &[u8]) -> Result<MessagesCall, String> {
    let request = parse(body)?;
    let model = request.model.clone().ok_or("model: Field required")?;
    match request.max_tokens {
        None => return Err("max_tokens: Field required".to_owned()),
        Some(tokens) if tokens < 1 => return Err("max_tokens: Input should be greater than or equal to 1".to_owned()),
        Some(_) => {}
    }
    check_messages(&request)?;
    let tool = choose_tool(&request)?;
    Ok(MessagesCall { model, stream: request.stream == Some(true), tool })
}

/// Reads a `POST /v1/messages/count_tokens` body (model and messages required, no max_tokens).
pub(crate) fn read_count_tokens_request(body: &[u8]) -> Result<(), String> {
    let request = parse(body)?;
    request.model.as_ref().ok_or("model: Field required")?;
    check_messages(&request)
}

fn parse(body: &[u8]) -> Result<MessagesRequest<'_>, String> {
    serde_json::from_slice(body).map_err(|error| format!("invalid request body: {error}"))
}

fn check_messages(request: &MessagesRequest<'_>) -> Result<(), String> {
    let messages = request.messages.as_ref().ok_or("messages: Field required")?;
    if messages.is_empty() {
        return Err("messages: at least one message is required".to_owned());
    }
    for (index, message) in messages.iter().enumerate() {
        // A `system` message after the first is a mid-conversation system message: Claude Code
        // sends them with the `mid-conversation-system-2026-04-07` beta (the mock does not check
        // the beta header).
        let mid_conversation_system = index > 0 && message.role.as_deref() == Some("system");
        if !mid_conversation_system && !matches!(message.role.as_deref(), Some("user" | "assistant")) {
            return Err(format!("messages.{index}.role: Input should be 'user' or 'assistant'"));
        }
        if message.content.is_none() {
            return Err(format!("messages.{index}.content: Field required"));
        }
    }
    Ok(())
}

/// The tool the answer calls: none under `tool_choice` `none`, none after a tool result (the
/// conversation goes on in text, so agent loops end) unless `any` or `tool` forces one, else the
/// named tool (`tool`) or the first custom tool.
fn choose_tool(request: &MessagesRequest<'_>) -> Result<Option<ToolCall>, String> {
    let choice = request.tool_choice.as_ref();
    let kind = choice.map(|choice| choice.kind.as_str());
    if !matches!(kind, None | Some("auto" | "any" | "tool" | "none")) {
        return Err("tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'".to_owned());
    }
    let custom: Vec<&ToolParam> =
        request.tools.iter().flatten().filter(|tool| tool.name.is_some() && tool.input_schema.is_some()).collect();
    let forced = matches!(kind, Some("any" | "tool"));
    if kind == Some("none") || custom.is_empty() || (!forced && ends_with_tool_result(request)) {
        return Ok(None);
    }
    let tool = if kind == Some("tool") {
        let name = choice.and_then(|choice| choice.name.as_deref()).ok_or("tool_choice.name: Field required")?;
        let found = custom.iter().find(|tool| tool.name.as_deref() == Some(name));
        *found.ok_or_else(|| format!("tool_choice.name: no tool named {name:?} in tools"))?
    } else {
        custom[0]
    };
    let schema = tool.input_schema.as_ref().unwrap_or(&Value::Null);
    let input = match example_value(schema, 0) {
        Value::Object(object) => Value::Object(object),
        _ => Value::Object(Map::new()),
    };
    Ok(Some(ToolCall { name: tool.name.clone().unwrap_or_default(), input: input.to_string() }))
}

/// The last message is the user's and carries a `tool_result` block.
fn ends_with_tool_result(request: &MessagesRequest<'_>) -> bool {
    let Some(last) = request.messages.as_ref().and_then(|messages| messages.last()) else {
        return false;
    };
    let Some(content) = last.content.filter(|_| last.role.as_deref() == Some("user")) else {
        return false;
    };
    serde_json::from_str::<Vec<BlockKind<'_>>>(content.get())
        .is_ok_and(|blocks| blocks.iter().any(|block| block.kind == Some("tool_result")))
}

/// A value the JSON schema accepts, for the schemas tools are declared with: `const`, the first
/// of `enum`, `default`, objects with their required properties, arrays of `minItems` items,
/// `"mock"`, the `minimum` or 1, `true`, `null`.
pub(crate) fn example_value(schema: &Value, depth: u32) -> Value {
    for key in ["const", "default"] {
        if let Some(value) = schema.get(key) {
            return value.clone();
        }
    }
    if let Some(first) = schema.get("enum").and_then(Value::as_array).and_then(|values| values.first()) {
        return first.clone();
    }
    if depth > 16 {
        return Value::Null;
    }
    let kind = match schema.get("type") {
        Some(Value::String(kind)) => kind.as_str(),
        Some(Value::Array(kinds)) => {
            kinds.iter().filter_map(Value::as_str).find(|kind| *kind != "null").unwrap_or("null")
        }
        // No type: anything goes, an object included.
        _ => "object",
    };
    match kind {
        "object" => {
            let properties = schema.get("properties");
            let required = schema.get("required").and_then(Value::as_array).into_iter().flatten();
            let object = required
                .filter_map(Value::as_str)
                .map(|name| {
                    let property = properties.and_then(|properties| properties.get(name)).unwrap_or(&Value::Null);
                    let value = if property.is_object() { example_value(property, depth + 1) } else { "mock".into() };
                    (name.to_owned(), value)
                })
                .collect();
            Value::Object(object)
        }
        "array" => {
            let count = schema.get("minItems").and_then(Value::as_u64).unwrap_or(0).min(16);
            let items = schema.get("items").filter(|items| items.is_object()).unwrap_or(&Value::Null);
            let item = if items.is_null() { Value::from("mock") } else { example_value(items, depth + 1) };
            Value::Array(vec![item; count as usize])
        }
        "string" => {
            let length = schema.get("minLength").and_then(Value::as_u64).unwrap_or(0).clamp(4, 256);
            Value::from(format!("mock{}", "x".repeat(length as usize - 4)))
        }
        "integer" | "number" => schema.get("minimum").cloned().unwrap_or_else(|| Value::from(1)),
        "boolean" => Value::Bool(true),
        _ => Value::Null,
    }
}

/// One answer: the same for the whole body and for the stream.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Message {
    pub number: u64,
    pub model: String,
    /// The text block ("Hello from mock NAME"); none when empty (a refusal).
    pub text: String,
    pub tool: Option<ToolCall>,
    pub stop_reason: &'static str,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

impl Message {
    /// The answer to `call`: `text`, then the tool call if any. Input tokens: body bytes / 4 (the
    /// mock's estimate); output tokens: the answer's bytes / 4, rounded up.
    pub(crate) fn answer(number: u64, call: MessagesCall, text: &str, body_len: usize) -> Message {
        let answer_bytes = text.len() + call.tool.as_ref().map_or(0, |tool| tool.name.len() + tool.input.len());
        Message {
            number,
            model: call.model,
            text: text.to_owned(),
            stop_reason: if call.tool.is_some() { "tool_use" } else { "end_turn" },
            tool: call.tool,
            input_tokens: (body_len / 4) as u64,
            output_tokens: answer_bytes.div_ceil(4) as u64,
        }
    }

    /// A refusal, as Claude's classifiers give it: no content, `stop_reason` `refusal`.
    pub(crate) fn refusal(number: u64, model: String, body_len: usize) -> Message {
        let input_tokens = (body_len / 4) as u64;
        Message {
            number,
            model,
            text: String::new(),
            tool: None,
            stop_reason: "refusal",
            input_tokens,
            output_tokens: 0,
        }
    }

    /// The `message` object; `streaming` gives the one `message_start` carries (no content yet,
    /// no stop reason, one output token).
    pub(crate) fn write(&self, out: &mut Vec<u8>, streaming: bool) {
        out.extend_from_slice(format!("{{\"id\":\"msg_mock_{}\"", self.number).as_bytes());
        out.extend_from_slice(b",\"type\":\"message\",\"role\":\"assistant\",\"model\":");
        out.extend_from_slice(json_string(&self.model).as_bytes());
        out.extend_from_slice(b",\"content\":[");
        if !streaming {
            let blocks: Vec<String> = self.blocks().iter().map(|block| block.json(false)).collect();
            out.extend_from_slice(blocks.join(",").as_bytes());
        }
        out.extend_from_slice(b"],\"stop_reason\":");
        let stop_reason = if streaming { "null".to_owned() } else { json_string(self.stop_reason) };
        out.extend_from_slice(stop_reason.as_bytes());
        let output_tokens = if streaming { 1 } else { self.output_tokens };
        out.extend_from_slice(
            format!(
                ",\"stop_sequence\":null,\"usage\":{{\"input_tokens\":{},\"cache_creation_input_tokens\":0,\
                 \"cache_read_input_tokens\":0,\"cache_creation\":{{\"ephemeral_5m_input_tokens\":0,\
                 \"ephemeral_1h_input_tokens\":0}},\"output_tokens\":{output_tokens},\"service_tier\":\"standard\"}}}}",
                self.input_tokens
            )
            .as_bytes(),
        );
    }

    /// The content blocks in order.
    pub(crate) fn blocks(&self) -> Vec<Block<'_>> {
        let text = (!self.text.is_empty()).then_some(Block::Text(&self.text));
        let tool = self.tool.as_ref().map(|tool| Block::ToolUse { number: self.number, tool });
        text.into_iter().chain(tool).collect()
    }
}

/// One content block of an answer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Block<'a> {
    Text(&'a str),
    ToolUse { number: u64, tool: &'a ToolCall },
}

impl Block<'_> {
    /// The block as a whole, or (`start`) as `content_block_start` gives it: empty text, `{}` input.
    pub(crate) fn json(&self, start: bool) -> String {
        match self {
            Block::Text(text) => {
                format!("{{\"type\":\"text\",\"text\":{}}}", json_string(if start { "" } else { text }))
            }
            Block::ToolUse { number, tool } => format!(
                "{{\"type\":\"tool_use\",\"id\":\"toolu_mock_{number}\",\"name\":{},\"input\":{}}}",
                json_string(&tool.name),
                if start { "{}" } else { &tool.input }
            ),
        }
    }
}

/// `value` as a JSON string literal.
pub(crate) fn json_string(value: &str) -> String {
    serde_json::Value::from(value).to_string()
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
