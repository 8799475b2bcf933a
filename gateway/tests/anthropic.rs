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
fn count_tokens_asks_an_anthropic_deployment_and_estimates_for_the_others() {
    let (anthropic, openai) = (Mock::start("anthropic", &[]), Mock::start("openai", &[]));
    let gateway = mixed(&anthropic, &openai);
    let r = post(&gateway, "/v1/messages/count_tokens", &[], &messages(false));
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.json()["input_tokens"].as_u64().unwrap() > 0);
    let asked = anthropic.requests();
    assert_eq!(asked.len(), 1, "Anthropic's own count");
    assert_eq!(asked[0]["path"], "/v1/messages/count_tokens");
    let sent: Value = serde_json::from_str(asked[0]["body"].as_str().unwrap()).unwrap();
    assert_eq!((sent["model"].as_str(), sent.get("max_tokens")), (Some("claude-sonnet-4-5"), None));
    let r = post(&gateway, "/v1/messages/count_tokens", &[], &messages(false).replace("\"claude\"", "\"gpt\""));
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.json()["input_tokens"].as_u64().unwrap() > 0);
    assert_eq!(openai.request_count(), 0, "the gateway's estimate, without a provider");
}

/// A gateway with `claude` on an Anthropic mock and `gpt` on an OpenAI one.
fn mixed(anthropic: &Mock, openai: &Mock) -> Gateway {
    Gateway::start(&format!(
        "model_list:\n  - model_name: claude\n    litellm_params: {{model: anthropic/claude-sonnet-4-5, api_base: \"http://{}\", api_key: sk-ant}}\n  - model_name: gpt\n    litellm_params: {{model: openai/gpt-4o-mini, api_base: \"{}\", api_key: sk-oai}}\n",
        anthropic.addr,
        openai.api_base()
    ))
}

fn sse_events(client: &mut common::Client) -> Vec<String> {
    client.events().collect_all().expect("events").into_iter().map(|e| e.text).collect()
}

#[test]
fn a_messages_request_to_an_openai_compatible_deployment_is_translated_both_ways() {
    let (anthropic, openai) = (Mock::start("anthropic", &[]), Mock::start("openai", &["--chunks", "3"]));
    let gateway = mixed(&anthropic, &openai);
    let body = messages(false).replace("\"claude\"", "\"gpt\"");
    let r = post(&gateway, "/v1/messages", &[], &body);
    assert_eq!(r.status, 200, "{}", r.text());
    let answer = r.json();
    assert_eq!((answer["type"].as_str(), answer["model"].as_str()), (Some("message"), Some("gpt")));
    assert_eq!(answer["content"][0]["type"], "text");
    assert!(answer["content"][0]["text"].as_str().is_some_and(|t| !t.is_empty()));
    assert_eq!(answer["stop_reason"], "end_turn");
    let sent: Value = serde_json::from_str(openai.requests()[0]["body"].as_str().unwrap()).unwrap();
    assert_eq!(sent["model"], "gpt-4o-mini");
    assert_eq!(sent["messages"][0], json!({"role": "user", "content": "Say hello."}));
    assert_eq!(sent["max_tokens"], 64);
    // Streamed: Anthropic's events, in order, from OpenAI's chunks.
    let mut client = gateway.client();
    let body = messages(true).replace("\"claude\"", "\"gpt\"");
    client.send("POST", "/v1/messages", &[("content-type", "application/json")], body.as_bytes());
    assert_eq!(client.read_head().expect("head").status, 200);
    let events = sse_events(&mut client);
    let names: Vec<&str> = events.iter().filter_map(|e| e.lines().find_map(|l| l.strip_prefix("event: "))).collect();
    assert_eq!(names.first(), Some(&"message_start"), "{events:?}");
    assert!(names.contains(&"content_block_delta") && names.contains(&"message_delta"), "{names:?}");
    assert_eq!(names.last(), Some(&"message_stop"));
    // The dry run says the winner is reached through a translation.
    let walk = gateway.post("/v1/route?api=messages", &messages(false).replace("\"claude\"", "\"gpt\"")).json();
    assert_eq!(
        (walk["endpoint"].as_str(), walk["winner"]["wire"].as_str()),
        (Some("/messages"), Some("translated")),
        "{walk}"
    );
    let walk = gateway.post("/v1/route?api=messages", &messages(false)).json();
    assert_eq!(walk["winner"]["wire"], "native");
    // What chat completions cannot say is dropped and named, never refused.
    let top_k = json!({"model": "gpt", "max_tokens": 8, "top_k": 5, "messages": [{"role": "user", "content": "x"}]});
    let r = post(&gateway, "/v1/messages", &[], &top_k.to_string());
    assert_eq!((r.status, r.header("x-pointwork-dropped")), (200, Some("top_k")), "{}", r.text());
    let sent: Value = serde_json::from_str(openai.requests().last().unwrap()["body"].as_str().unwrap()).unwrap();
    assert_eq!(sent.get("top_k"), None);
}

#[test]
fn a_chat_request_to_an_anthropic_deployment_is_translated_both_ways() {
    let (anthropic, openai) = (Mock::start("anthropic", &["--chunks", "3"]), Mock::start("openai", &[]));
    let gateway = mixed(&anthropic, &openai);
    let r = gateway.chat("claude");
    assert_eq!(r.status, 200, "{}", r.text());
    let answer = r.json();
    assert_eq!(answer["object"], "chat.completion");
    assert_eq!(answer["model"], "claude");
    assert!(answer["choices"][0]["message"]["content"].as_str().is_some_and(|t| !t.is_empty()));
    assert_eq!(answer["choices"][0]["finish_reason"], "stop");
    assert!(answer["usage"]["prompt_tokens"].as_u64().unwrap() > 0);
    let sent = &anthropic.requests()[0];
    assert_eq!(sent["path"], "/v1/messages");
    let body: Value = serde_json::from_str(sent["body"].as_str().unwrap()).unwrap();
    assert_eq!(body["model"], "claude-sonnet-4-5");
    assert!(body["max_tokens"].as_u64().is_some(), "Anthropic requires it: {body}");
    let mut client = gateway.client();
    client.send(
        "POST",
        "/v1/chat/completions",
        &[("content-type", "application/json")],
        common::chat_body("claude", true).as_bytes(),
    );
    assert_eq!(client.read_head().expect("head").status, 200);
    let events = sse_events(&mut client);
    assert_eq!(events.last().map(|e| e.trim()), Some("data: [DONE]"), "{events:?}");
    let text: String = events
        .iter()
        .filter_map(|e| e.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str().map(str::to_string))
        .collect();
    assert!(!text.is_empty(), "{events:?}");
    // Anthropic's errors reach an OpenAI client in OpenAI's shape.
    anthropic.control(json!({"fault": "status:429"}));
    let r = gateway.chat("claude");
    assert_eq!(r.status, 429);
    assert!(r.json()["error"]["message"].is_string(), "{}", r.text());
    assert!(r.json().get("type").is_none(), "{}", r.text());
}
