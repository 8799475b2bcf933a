//! The Messages request checks, the choice of tool and its input, and the answer's JSON.

use serde_json::{json, Value};

use super::*;

const REQUEST_FIXTURE: &str = include_str!("../../../tests/fixtures/anthropic_messages_request.json");
const TOOL_USE_FIXTURE: &str = include_str!("../../../tests/fixtures/anthropic_messages_response_tool_use.json");

fn request(value: Value) -> Result<MessagesCall, String> {
    read_messages_request(value.to_string().as_bytes())
}

fn weather_tool() -> Value {
    json!({
        "name": "get_weather",
        "description": "Get the current weather in a given location",
        "input_schema": {
            "type": "object",
            "properties": {"location": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}},
            "required": ["location"]
        }
    })
}

fn user(content: Value) -> Value {
    json!({"role": "user", "content": content})
}

#[test]
fn model_max_tokens_and_messages_are_required() {
    let hi = json!([user(json!("hi"))]);
    let cases = [
        (json!({"max_tokens": 5, "messages": hi}), "model: Field required"),
        (json!({"model": "c", "messages": hi}), "max_tokens: Field required"),
        (
            json!({"model": "c", "max_tokens": 0, "messages": hi}),
            "max_tokens: Input should be greater than or equal to 1",
        ),
        (json!({"model": "c", "max_tokens": 5}), "messages: Field required"),
        (json!({"model": "c", "max_tokens": 5, "messages": []}), "messages: at least one message is required"),
        (
            json!({"model": "c", "max_tokens": 5, "messages": [{"role": "system", "content": "x"}]}),
            "messages.0.role: Input should be 'user' or 'assistant'",
        ),
        (json!({"model": "c", "max_tokens": 5, "messages": [{"role": "user"}]}), "messages.0.content: Field required"),
        (
            json!({"model": "c", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}, {"role": "tool", "content": "x"}]}),
            "messages.1.role: Input should be 'user' or 'assistant'",
        ),
        (
            json!({"model": "c", "max_tokens": 5, "messages": hi, "tool_choice": {"type": "maybe"}}),
            "tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'",
        ),
    ];
    for (body, message) in cases {
        assert_eq!(request(body.clone()), Err(message.to_owned()), "{body}");
    }
    let not_json = read_messages_request(b"{nope").expect_err("not JSON");
    assert!(not_json.starts_with("invalid request body: "), "{not_json}");
    let wrong_type = request(json!({"model": "c", "max_tokens": "many", "messages": hi})).expect_err("a string");
    assert!(wrong_type.starts_with("invalid request body: "), "{wrong_type}");

    let call = request(json!({"model": "c", "max_tokens": 5, "messages": hi, "stream": true})).expect("valid");
    assert_eq!(call, MessagesCall { model: "c".into(), stream: true, tool: None });
    assert_eq!(read_count_tokens_request(br#"{"model":"c","messages":[{"role":"user","content":"x"}]}"#), Ok(()));
    assert_eq!(read_count_tokens_request(br#"{"messages":[]}"#), Err("model: Field required".to_owned()));
}

#[test]
fn offered_tools_are_called_with_schema_valid_input() {
    let body = json!({"model": "c", "max_tokens": 5, "messages": [user(json!("weather?"))], "tools": [weather_tool()]});
    let tool = request(body.clone()).expect("valid").tool.expect("a tool call");
    assert_eq!(tool.name, "get_weather");
    assert_eq!(serde_json::from_str::<Value>(&tool.input).expect("JSON"), json!({"location": "mock"}));

    let mut none = body.clone();
    none["tool_choice"] = json!({"type": "none"});
    assert_eq!(request(none).expect("valid").tool, None);

    let mut named = body.clone();
    named["tools"] = json!([{"name": "web_search", "type": "web_search_20250305"}, weather_tool(), {
        "name": "pick", "input_schema": {"type": "object", "properties": {
            "n": {"type": "integer", "minimum": 3}, "tags": {"type": "array", "minItems": 2, "items": {"type": "string"}},
            "ok": {"type": "boolean"}, "mode": {"const": "fast"}, "nested": {"type": "object", "required": ["x"]}
        }, "required": ["n", "tags", "ok", "mode", "nested"]}
    }]);
    assert_eq!(request(named.clone()).expect("valid").tool.map(|tool| tool.name), Some("get_weather".into()));
    named["tool_choice"] = json!({"type": "tool", "name": "pick"});
    let pick = request(named.clone()).expect("valid").tool.expect("pick");
    assert_eq!(
        serde_json::from_str::<Value>(&pick.input).expect("JSON"),
        json!({"n": 3, "tags": ["mock", "mock"], "ok": true, "mode": "fast", "nested": {"x": "mock"}})
    );
    named["tool_choice"] = json!({"type": "tool", "name": "absent"});
    assert!(request(named).expect_err("unknown tool").starts_with("tool_choice.name: "));

    let schemaless = json!({"model": "c", "max_tokens": 5, "messages": [user(json!("x"))], "tools": [{"name": "t", "input_schema": {}}]});
    assert_eq!(request(schemaless).expect("valid").tool.map(|tool| tool.input), Some("{}".into()));
}

#[test]
fn a_tool_result_is_answered_in_text_unless_a_tool_is_forced() {
    let fixture = read_messages_request(REQUEST_FIXTURE.as_bytes()).expect("the fixture request is valid");
    assert_eq!(fixture.model, "claude-sonnet-4-5-20250929");
    assert_eq!(fixture.tool, None, "it ends with a tool result");

    let mut forced: Value = serde_json::from_str(REQUEST_FIXTURE).expect("JSON");
    forced["tool_choice"] = json!({"type": "any"});
    assert_eq!(request(forced).expect("valid").tool.map(|tool| tool.name), Some("get_weather".into()));
}

#[test]
fn the_tool_use_answer_has_the_fixtures_shape() {
    let tool = ToolCall { name: "get_weather".into(), input: r#"{"location":"mock"}"#.into() };
    let call = MessagesCall { model: "claude-\"q\"".into(), stream: false, tool: Some(tool) };
    let message = Message::answer(12, call, "Hello from mock m", 1000);
    let mut out = Vec::new();
    message.write(&mut out, false);
    let answer: Value = serde_json::from_slice(&out).expect("JSON");
    let fixture: Value = serde_json::from_str(TOOL_USE_FIXTURE).expect("fixture");
    let keys = |value: &Value| value.as_object().map(|object| object.keys().cloned().collect::<Vec<_>>());
    assert_eq!(keys(&answer), keys(&fixture));
    assert_eq!(keys(&answer["content"][1]), keys(&fixture["content"][1]));
    assert_eq!(answer["model"], "claude-\"q\"");
    assert_eq!(answer["stop_reason"], "tool_use");
    assert_eq!(answer["content"][0], json!({"type": "text", "text": "Hello from mock m"}));
    assert_eq!(
        answer["content"][1],
        json!({"type": "tool_use", "id": "toolu_mock_12", "name": "get_weather", "input": {"location": "mock"}})
    );
    assert_eq!(answer["usage"]["input_tokens"], 250);
    let answer_bytes = "Hello from mock m".len() + "get_weather".len() + r#"{"location":"mock"}"#.len();
    assert_eq!(answer["usage"]["output_tokens"], answer_bytes.div_ceil(4));

    let mut start = Vec::new();
    message.write(&mut start, true);
    let start: Value = serde_json::from_slice(&start).expect("JSON");
    assert_eq!(start["content"], json!([]));
    assert_eq!(start["stop_reason"], Value::Null);
    assert_eq!(start["usage"]["output_tokens"], 1);
}

#[test]
fn a_mid_conversation_system_message_is_accepted() {
    // Claude Code 2.1.197 on its default model (beta `mid-conversation-system-2026-04-07`).
    let messages = json!([{"role": "user", "content": "x"}, {"role": "system", "content": "reminder"}]);
    assert!(request(json!({"model": "c", "max_tokens": 5, "messages": messages})).is_ok());
}
