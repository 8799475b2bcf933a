//! The `/mock/*` endpoints: recorded requests, stats and run-time control.

use std::time::{Duration, Instant};

use pointwork_mock::MockOptions;
use serde_json::json;

use crate::client::Client;
use crate::{chat_body, start, start_named};

#[test]
fn records_provider_requests_oldest_first_and_clears() {
    let server = start_named("rec");
    let mut client = Client::connect(server.addr());
    let first = chat_body("first", false).to_string();
    client.request(
        "POST",
        "/v1/chat/completions",
        &[("Authorization", "Bearer sk-test"), ("x-custom", "one")],
        first.as_bytes(),
    );
    client.post_json("/v1/embeddings", &json!({"model": "e", "input": "x"}));
    client.get("/mock/stats");

    let recorded = client.get("/mock/requests").json();
    let recorded = recorded.as_array().expect("array");
    assert_eq!(recorded.len(), 2, "/mock/* is not recorded: {recorded:?}");
    assert_eq!(recorded[0]["method"], "POST");
    assert_eq!(recorded[0]["path"], "/v1/chat/completions");
    assert_eq!(recorded[0]["body"], first);
    let headers = recorded[0]["headers"].as_array().expect("headers");
    assert!(headers.contains(&json!(["Authorization", "Bearer sk-test"])));
    assert!(headers.contains(&json!(["x-custom", "one"])));
    assert_eq!(recorded[1]["path"], "/v1/embeddings");

    let cleared = client.request("DELETE", "/mock/requests", &[], b"");
    assert_eq!(cleared.status, 200);
    assert_eq!(client.get("/mock/requests").json(), json!([]));
}

#[test]
fn the_ring_keeps_only_the_newest_requests() {
    let server = start(MockOptions { record_limit: 2, ..MockOptions::default() });
    let mut client = Client::connect(server.addr());
    for model in ["one", "two", "three"] {
        client.post_json("/v1/chat/completions", &chat_body(model, false));
    }
    let recorded = client.get("/mock/requests").json();
    let models: Vec<String> = recorded
        .as_array()
        .expect("array")
        .iter()
        .map(|request| {
            let body: serde_json::Value = serde_json::from_str(request["body"].as_str().expect("body")).expect("json");
            body["model"].as_str().expect("model").to_owned()
        })
        .collect();
    assert_eq!(models, ["two", "three"]);
}

#[test]
fn recording_can_be_turned_off() {
    let server = start(MockOptions { record: false, ..MockOptions::default() });
    let mut client = Client::connect(server.addr());
    client.post_json("/v1/chat/completions", &chat_body("m", false));
    assert_eq!(client.get("/mock/requests").json(), json!([]));
}

#[test]
fn stats_count_requests_and_keep_alive_connections() {
    let server = start_named("stats");
    let mut client = Client::connect(server.addr());
    client.post_json("/v1/chat/completions", &chat_body("m", false));
    client.get("/v1/models");
    let stats = client.get("/mock/stats").json();
    assert_eq!(stats["requests"], 2, "/mock/* is not counted: {stats}");
    assert_eq!(stats["connections"], 1, "two requests on one connection");

    let mut second = Client::connect(server.addr());
    second.get("/health");
    let stats = second.get("/mock/stats").json();
    assert_eq!(stats["requests"], 3);
    assert_eq!(stats["connections"], 2);
    assert_eq!(stats["provider_connections"], 2);
}

#[test]
fn control_changes_fault_and_latency_at_run_time() {
    let server = start_named("ctl");
    let mut client = Client::connect(server.addr());
    assert_eq!(client.get("/v1/models").status, 200);

    let set = client.post_json("/mock/control", &json!({"fault": "status:500"}));
    assert_eq!(set.status, 200);
    assert_eq!(set.json()["fault"], "status:500");
    assert_eq!(client.get("/v1/models").status, 500);
    assert_eq!(client.get("/mock/control").json()["fault"], "status:500");

    client.post_json("/mock/control", &json!({"fault": null, "latency_ms": 200}));
    let started = Instant::now();
    assert_eq!(client.get("/v1/models").status, 200);
    assert!(started.elapsed() >= Duration::from_millis(200));

    client
        .post_json("/mock/control", &json!({"latency_ms": 0, "chunks": 2, "fault": "status:503", "fault_ratio": 0.5}));
    let statuses: Vec<u16> = (0..4).map(|_| client.get("/v1/models").status).collect();
    assert_eq!(statuses, [200, 503, 200, 503], "the ratio sequence restarts on control");
    client.post_json("/mock/control", &json!({"fault": null}));
    let stream = client.post_json("/v1/chat/completions", &chat_body("m", true));
    assert_eq!(stream.events().len(), 2 + 1);
}

#[test]
fn control_refuses_unknown_fields_and_bad_faults() {
    let server = start_named("ctl2");
    let mut client = Client::connect(server.addr());
    let bad = client.post_json("/mock/control", &json!({"fault": "explode"}));
    assert_eq!(bad.status, 400);
    let unknown = client.post_json("/mock/control", &json!({"latencyms": 3}));
    assert_eq!(unknown.status, 400);
    assert!(unknown.json()["error"]["message"].as_str().is_some_and(|message| message.contains("latencyms")));
    assert_eq!(client.get("/v1/models").status, 200, "nothing changed");
}

/// The answer text of a chat or Messages answer, whole or streamed.
fn answer_text(client: &mut Client, path: &str, headers: &[(&str, &str)], stream: bool) -> String {
    let body = if path == "/v1/messages" {
        json!({"model": "c", "max_tokens": 5, "stream": stream, "messages": [{"role": "user", "content": "hi"}]})
    } else {
        chat_body("m", stream)
    };
    let response = client.request("POST", path, headers, body.to_string().as_bytes());
    assert_eq!(response.status, 200, "{path}");
    if !stream {
        let answer = response.json();
        let text = answer["choices"][0]["message"]["content"].as_str().or(answer["content"][0]["text"].as_str());
        return text.expect("answer text").to_owned();
    }
    // Anthropic's events start with an `event:` line: every `data:` line counts.
    let body = String::from_utf8(response.body.clone()).expect("UTF-8 stream");
    let data = body.lines().filter_map(|line| line.strip_prefix("data: "));
    data.filter_map(|data| serde_json::from_str::<serde_json::Value>(data).ok())
        .filter_map(|event| {
            let openai = event["choices"][0]["delta"]["content"].as_str().map(str::to_owned);
            openai.or_else(|| event["delta"]["text"].as_str().map(str::to_owned))
        })
        .collect()
}

#[test]
fn the_reply_comes_from_the_option_control_or_header() {
    let server =
        start(MockOptions { name: "say".into(), reply: Some("SIMPLE".into()), chunks: 3, ..MockOptions::default() });
    let mut client = Client::connect(server.addr());
    let routes = [
        ("/v1/chat/completions", false),
        ("/v1/chat/completions", true),
        ("/v1/messages", false),
        ("/v1/messages", true),
    ];
    for (path, stream) in routes {
        assert_eq!(answer_text(&mut client, path, &[], stream), "SIMPLE", "{path} stream {stream}");
    }
    assert_eq!(client.get("/mock/control").json()["reply"], "SIMPLE");

    let reply = "{\"tier\": \"complex\", \"why\": \"ünï\\n\"}";
    let set = client.post_json("/mock/control", &json!({"reply": reply}));
    assert_eq!(set.json()["reply"], reply);
    for (path, stream) in routes {
        assert_eq!(answer_text(&mut client, path, &[], stream), reply, "{path} stream {stream}");
        let header = [("x-mock-reply", "MEDIUM")];
        assert_eq!(answer_text(&mut client, path, &header, stream), "MEDIUM", "{path} stream {stream}");
    }

    let cleared = client.post_json("/mock/control", &json!({"reply": null}));
    assert_eq!(cleared.json()["reply"], serde_json::Value::Null);
    for (path, stream) in routes {
        assert_eq!(answer_text(&mut client, path, &[], stream), "Hello from mock say", "{path} stream {stream}");
    }
    assert_eq!(client.post_json("/mock/control", &json!({"reply": 7})).status, 400);
}
