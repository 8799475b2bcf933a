//! The Anthropic Messages API through the real gateway, natively to an `anthropic/` deployment
//! (pointwork-mock speaking Anthropic): the caller's key (x-api-key or Bearer) never forwarded,
//! the deployment's `x-api-key` and the `anthropic-version` / `anthropic-beta` sent, answers and
//! streams passed through, the gateway's own errors and the upstream's in Anthropic's shape,
//! count_tokens answered locally.

mod common;

use common::{recorded_headers, Gateway, Mock};
use serde_json::{json, Value};

fn gateway(mock: &Mock) -> Gateway {
    Gateway::start(&format!(
        "model_list:\n  - model_name: claude\n    litellm_params: {{model: anthropic/claude-sonnet-4-5, api_base: \"http://{}/v1\", api_key: sk-ant-deployment}}\n    model_info: {{id: claude-native}}\ngeneral_settings: {{master_key: sk-master}}\n",
        mock.addr
    ))
}

fn messages(stream: bool) -> String {
    json!({"model": "claude", "max_tokens": 64, "stream": stream, "messages": [{"role": "user", "content": "Say hello."}]})
        .to_string()
}

fn post(gateway: &Gateway, path: &str, headers: &[(&str, &str)], body: &str) -> common::Response {
    let mut all = vec![("content-type", "application/json")];
    all.extend_from_slice(headers);
    gateway.client().request("POST", path, &all, body.as_bytes())
}

#[test]
fn a_messages_request_passes_through_to_an_anthropic_deployment() {
    let mock = Mock::start("anthropic", &[]);
    let gateway = gateway(&mock);
    let r = post(
        &gateway,
        "/v1/messages",
        &[("x-api-key", "sk-master"), ("anthropic-beta", "tools-2024-05-16")],
        &messages(false),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let answer = r.json();
    assert_eq!((answer["type"].as_str(), answer["role"].as_str()), (Some("message"), Some("assistant")));
    assert_eq!(answer["model"], "claude-sonnet-4-5", "the upstream model, as Anthropic answers");
    assert!(answer["usage"]["input_tokens"].as_u64().unwrap() > 0);
    assert_eq!(r.header("x-pointwork-deployment"), Some("claude-native"));
    let sent = &mock.requests()[0];
    assert_eq!(sent["path"], "/v1/messages");
    assert_eq!(recorded_headers(sent, "x-api-key"), ["sk-ant-deployment"]);
    assert_eq!(recorded_headers(sent, "anthropic-version"), ["2023-06-01"]);
    assert_eq!(recorded_headers(sent, "anthropic-beta"), ["tools-2024-05-16"]);
    assert!(recorded_headers(sent, "authorization").is_empty(), "the caller's key never goes upstream");
    let body: Value = serde_json::from_str(sent["body"].as_str().unwrap()).unwrap();
    assert_eq!(body["model"], "claude-sonnet-4-5");
    // Bearer works as well, and the caller's version is forwarded.
    let r = post(
        &gateway,
        "/v1/messages",
        &[("authorization", "Bearer sk-master"), ("anthropic-version", "2024-10-22")],
        &messages(false),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(recorded_headers(&mock.requests()[1], "anthropic-version"), ["2024-10-22"]);
}

#[test]
fn a_stream_passes_through_event_by_event() {
    let mock = Mock::start("anthropic", &["--chunks", "4"]);
    let gateway = gateway(&mock);
    let mut client = gateway.client();
    client.send(
        "POST",
        "/v1/messages",
        &[("content-type", "application/json"), ("x-api-key", "sk-master")],
        messages(true).as_bytes(),
    );
    let head = client.read_head().expect("head");
    assert_eq!(head.status, 200);
    let events = client.events().collect_all().expect("events");
    let names: Vec<&str> =
        events.iter().filter_map(|e| e.text.lines().find_map(|l| l.strip_prefix("event: "))).collect();
    assert_eq!(names.first(), Some(&"message_start"));
    assert_eq!(names.last(), Some(&"message_stop"));
    assert_eq!(names.iter().filter(|n| **n == "content_block_delta").count(), 4);
}

#[test]
fn errors_on_the_messages_api_are_anthropics_shape() {
    let mock = Mock::start("anthropic", &[]);
    let gateway = gateway(&mock);
    let shape = |r: &common::Response| (r.status, r.json()["type"].clone(), r.json()["error"]["type"].clone());
    let r = post(&gateway, "/v1/messages", &[("x-api-key", "sk-wrong")], &messages(false));
    assert_eq!(shape(&r), (401, json!("error"), json!("authentication_error")), "{}", r.text());
    let unknown = messages(false).replace("\"claude\"", "\"no-such-model\"");
    let r = post(&gateway, "/v1/messages", &[("x-api-key", "sk-master")], &unknown);
    assert_eq!(shape(&r), (400, json!("error"), json!("invalid_request_error")), "{}", r.text());
    assert!(r.json()["error"]["message"].as_str().unwrap().contains("no-such-model"));
    let r = post(&gateway, "/v1/messages", &[("x-api-key", "sk-master")], "{not json");
    assert_eq!(shape(&r).2, json!("invalid_request_error"));
    // An upstream 529 comes back as Anthropic sent it.
    mock.control(json!({"fault": "status:529"}));
    let r = post(&gateway, "/v1/messages", &[("x-api-key", "sk-master")], &messages(false));
    assert_eq!(shape(&r), (529, json!("error"), json!("overloaded_error")), "{}", r.text());
}

#[test]
fn count_tokens_is_the_gateways_estimate() {
    let mock = Mock::start("anthropic", &[]);
    let gateway = gateway(&mock);
    let r = post(&gateway, "/v1/messages/count_tokens", &[("x-api-key", "sk-master")], &messages(false));
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.json()["input_tokens"].as_u64().unwrap() > 0);
    assert_eq!(mock.request_count(), 0, "answered without a provider");
}
