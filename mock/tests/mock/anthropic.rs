//! Anthropic's Messages API over real HTTP, from the `pointwork-mock` binary: whole and streamed
//! answers, tool use, count_tokens, validation, faults in Anthropic's shape and the recorded
//! headers.

use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

use crate::binary::{first_line, KillOnDrop, BINARY};
use crate::client::{Client, Response};

/// The binary, started with `args`, and its address.
fn start_binary(name: &str, args: &[&str]) -> (KillOnDrop, SocketAddr) {
    let child = Command::new(BINARY)
        .args(["--name", name, "--threads", "1"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("run pointwork-mock");
    let mut child = KillOnDrop(child);
    let line = first_line(&mut child);
    let addr = line
        .trim_end()
        .rsplit_once("http://")
        .and_then(|(_, addr)| addr.parse().ok())
        .unwrap_or_else(|| panic!("unexpected announcement {line:?}"));
    (child, addr)
}

const HEADERS: [(&str, &str); 3] =
    [("x-api-key", "sk-ant-test"), ("anthropic-version", "2023-06-01"), ("anthropic-beta", "tools-2024-05-16")];

fn messages_body(stream: bool) -> Value {
    json!({
        "model": "claude-sonnet-4-5-20250929",
        "max_tokens": 256,
        "stream": stream,
        "messages": [{"role": "user", "content": "Say hello."}],
    })
}

fn with_tools(mut body: Value) -> Value {
    body["tools"] = json!([{
        "name": "get_weather",
        "description": "Get the current weather in a given location",
        "input_schema": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]}
    }]);
    body
}

fn post(client: &mut Client, path: &str, headers: &[(&str, &str)], body: &Value) -> Response {
    client.request("POST", path, headers, body.to_string().as_bytes())
}

/// The `(event, data)` pairs of an Anthropic event stream.
fn sse_events(response: &Response) -> Vec<(String, Value)> {
    String::from_utf8_lossy(&response.body)
        .split_terminator("\n\n")
        .map(|event| {
            let (name, data) = event.split_once('\n').unwrap_or_else(|| panic!("two lines: {event:?}"));
            let name = name.strip_prefix("event: ").expect("event line").to_owned();
            (name, serde_json::from_str(data.strip_prefix("data: ").expect("data line")).expect("data JSON"))
        })
        .collect()
}

fn names(events: &[(String, Value)]) -> Vec<&str> {
    events.iter().map(|(name, _)| name.as_str()).collect()
}

#[test]
fn non_streaming_message_echoes_the_model_and_records_the_headers() {
    let (_child, addr) = start_binary("claude", &[]);
    let mut client = Client::connect(addr);
    let body = messages_body(false);
    let response = post(&mut client, "/v1/messages", &HEADERS, &body);
    assert_eq!(response.status, 200);
    assert_eq!(response.header("content-type"), Some("application/json"));
    assert_eq!(response.header("x-mock-name"), Some("claude"));
    assert_eq!(response.header("request-id"), Some("req_mock_1"));
    let answer = response.json();
    assert_eq!(answer["id"], "msg_mock_1");
    assert_eq!(answer["type"], "message");
    assert_eq!(answer["role"], "assistant");
    assert_eq!(answer["model"], "claude-sonnet-4-5-20250929");
    assert_eq!(answer["content"], json!([{"type": "text", "text": "Hello from mock claude"}]));
    assert_eq!(answer["stop_reason"], "end_turn");
    assert!(answer["stop_sequence"].is_null());
    assert_eq!(answer["usage"]["input_tokens"], body.to_string().len() / 4);
    assert_eq!(answer["usage"]["output_tokens"], "Hello from mock claude".len().div_ceil(4));

    // Without /v1 too.
    assert_eq!(post(&mut client, "/messages", &[], &body).json()["id"], "msg_mock_2");

    let recorded = client.get("/mock/requests").json();
    let first = &recorded[0];
    assert_eq!(first["method"], "POST");
    assert_eq!(first["path"], "/v1/messages");
    assert_eq!(first["body"], body.to_string());
    let header = |name: &str| {
        let headers = first["headers"].as_array().expect("headers");
        headers
            .iter()
            .find(|pair| pair[0].as_str().is_some_and(|key| key.eq_ignore_ascii_case(name)))
            .map(|pair| pair[1].clone())
    };
    assert_eq!(header("x-api-key"), Some(json!("sk-ant-test")));
    assert_eq!(header("anthropic-version"), Some(json!("2023-06-01")));
    assert_eq!(header("anthropic-beta"), Some(json!("tools-2024-05-16")));
    assert_eq!(header("authorization"), None);
}

#[test]
fn streamed_message_is_the_fixtures_event_sequence() {
    let (_child, addr) = start_binary("streamer", &["--chunks", "4", "--chunk-delay-ms", "60"]);
    let mut client = Client::connect(addr);
    let response = post(&mut client, "/v1/messages", &HEADERS, &messages_body(true));
    assert_eq!(response.status, 200);
    assert_eq!(response.header("content-type"), Some("text/event-stream"));
    assert!(response.header("request-id").is_some_and(|id| id.starts_with("req_mock_")));
    let events = sse_events(&response);
    let mut expected = vec!["message_start", "content_block_start", "ping"];
    expected.extend(["content_block_delta"; 4]);
    expected.extend(["content_block_stop", "message_delta", "message_stop"]);
    assert_eq!(names(&events), expected);
    assert!(events.iter().all(|(name, data)| data["type"] == name.as_str()));
    let start = &events[0].1["message"];
    assert_eq!(start["model"], "claude-sonnet-4-5-20250929");
    assert_eq!(start["content"], json!([]));
    let text: String = events.iter().filter_map(|(_, data)| data["delta"]["text"].as_str()).collect();
    assert_eq!(text, "Hello from mock streamer");
    assert_eq!(events[8].1["delta"]["stop_reason"], "end_turn");
    assert_eq!(events[8].1["usage"]["output_tokens"], text.len().div_ceil(4));

    // Each event is its own HTTP chunk, and the deltas are paced by the chunk delay.
    assert!(response.chunks.len() >= events.len());
    let first = response.chunks[0].0;
    let ended = response.last_chunk_at.expect("terminating chunk");
    assert!(ended.duration_since(first) >= Duration::from_millis(150), "3 delays of 60 ms");

    // x-mock-chunks shapes one answer.
    let one = post(&mut client, "/v1/messages", &[("x-mock-chunks", "1")], &messages_body(true));
    assert_eq!(names(&sse_events(&one)).iter().filter(|name| **name == "content_block_delta").count(), 1);
}

#[test]
fn offered_tools_are_called_whole_and_streamed() {
    let (_child, addr) = start_binary("tools", &["--chunks", "3"]);
    let mut client = Client::connect(addr);
    let answer = post(&mut client, "/v1/messages", &HEADERS, &with_tools(messages_body(false))).json();
    assert_eq!(answer["stop_reason"], "tool_use");
    assert_eq!(answer["content"][0]["type"], "text");
    let tool = &answer["content"][1];
    assert_eq!(tool["type"], "tool_use");
    assert_eq!(tool["id"], "toolu_mock_1");
    assert_eq!(tool["name"], "get_weather");
    assert_eq!(tool["input"], json!({"location": "mock"}));

    let mut none = with_tools(messages_body(false));
    none["tool_choice"] = json!({"type": "none"});
    assert_eq!(post(&mut client, "/v1/messages", &[], &none).json()["stop_reason"], "end_turn");

    let response = post(&mut client, "/v1/messages", &HEADERS, &with_tools(messages_body(true)));
    let events = sse_events(&response);
    let starts: Vec<&Value> = events
        .iter()
        .filter(|(name, _)| name == "content_block_start")
        .map(|(_, data)| &data["content_block"])
        .collect();
    assert_eq!(starts.len(), 2);
    assert_eq!(starts[1]["type"], "tool_use");
    assert_eq!(starts[1]["name"], "get_weather");
    assert_eq!(starts[1]["input"], json!({}));
    let partial: String = events.iter().filter_map(|(_, data)| data["delta"]["partial_json"].as_str()).collect();
    assert_eq!(serde_json::from_str::<Value>(&partial).expect("the pieces make JSON"), json!({"location": "mock"}));
    let delta = events.iter().find(|(name, _)| name == "message_delta").expect("message_delta");
    assert_eq!(delta.1["delta"]["stop_reason"], "tool_use");
    assert_eq!(names(&events).last(), Some(&"message_stop"));
}

#[test]
fn count_tokens_and_validation() {
    let (_child, addr) = start_binary("counter", &[]);
    let mut client = Client::connect(addr);
    let count = json!({"model": "claude-x", "messages": [{"role": "user", "content": "How many tokens?"}]});
    let response = post(&mut client, "/v1/messages/count_tokens", &HEADERS, &count);
    assert_eq!(response.status, 200);
    assert_eq!(response.json(), json!({"input_tokens": count.to_string().len() / 4}));

    let mut missing = messages_body(false);
    missing.as_object_mut().expect("object").remove("max_tokens");
    let refused = post(&mut client, "/v1/messages", &HEADERS, &missing);
    assert_eq!(refused.status, 400);
    let error = refused.json();
    assert_eq!(error["type"], "error");
    assert_eq!(error["error"], json!({"type": "invalid_request_error", "message": "max_tokens: Field required"}));
    assert!(error["request_id"].as_str().is_some_and(|id| id.starts_with("req_mock_")));

    let wrong_method = client.get("/v1/messages");
    assert_eq!(wrong_method.status, 405);
    assert_eq!(wrong_method.json()["type"], "error");
    assert_eq!(client.get("/health").status, 200, "the connection is kept");
}

#[test]
fn faults_answer_in_anthropics_shape() {
    let (_child, addr) = start_binary("faulty", &[]);
    let mut client = Client::connect(addr);
    let limited =
        post(&mut client, "/v1/messages", &[("x-mock-fault", "status:429:retry-after=7")], &messages_body(false));
    assert_eq!(limited.status, 429);
    assert_eq!(limited.header("retry-after"), Some("7"));
    let error = limited.json();
    assert_eq!(error["type"], "error");
    assert_eq!(error["error"]["type"], "rate_limit_error");
    assert!(error["error"]["message"].as_str().is_some_and(|message| message.contains("rate limit")));
    assert_eq!(Some(error["request_id"].as_str().expect("request id")), limited.header("request-id"));

    let control = client.request("POST", "/mock/control", &[], br#"{"fault":"status:529"}"#);
    assert_eq!(control.status, 200);
    let overloaded = post(&mut client, "/v1/messages", &[], &messages_body(true));
    assert_eq!(overloaded.status, 529);
    assert_eq!(overloaded.json()["error"], json!({"type": "overloaded_error", "message": "Overloaded"}));
    let chat = client.request("POST", "/v1/chat/completions", &[], br#"{"model":"m","messages":[]}"#);
    assert_eq!(chat.json()["error"]["type"], "server_error", "chats keep OpenAI's shape");
    client.request("POST", "/mock/control", &[], br#"{"fault":null}"#);

    let too_long = post(&mut client, "/v1/messages", &[("x-mock-fault", "status:400")], &messages_body(false));
    assert_eq!(too_long.json()["error"]["message"], "prompt is too long: 200001 tokens > 200000 maximum");
    let missing = post(&mut client, "/v1/messages", &[("x-mock-fault", "status:404")], &messages_body(false));
    assert_eq!(missing.json()["error"]["type"], "not_found_error");
    let internal = post(&mut client, "/v1/messages", &[("x-mock-fault", "status:500")], &messages_body(false));
    assert_eq!(internal.json()["error"]["type"], "api_error");
}

#[test]
fn an_interrupted_stream_ends_with_an_error_event() {
    let (_child, addr) = start_binary("cut", &["--chunks", "4"]);
    let mut client = Client::connect(addr);
    let response = post(&mut client, "/v1/messages", &[("x-mock-fault", "abort-after:2")], &messages_body(true));
    assert_eq!(response.status, 200);
    assert!(response.last_chunk_at.is_some(), "the body ends properly");
    let events = sse_events(&response);
    assert_eq!(
        names(&events),
        ["message_start", "content_block_start", "ping", "content_block_delta", "content_block_delta", "error"]
    );
    assert_eq!(events[5].1, json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}));
    assert_eq!(client.get("/health").status, 200, "the connection is kept");
}
