//! What the gateway forwards and what it gives back, over real processes: answers byte for
//! byte, streams event by event, the model rewritten and the key injected, chunked request
//! bodies, embeddings, the model list and the health endpoints.

mod common;

use std::time::Duration;

use common::http::Event;
use common::{
    chat_body, config, deployment, normalize_mock_answer, recorded_headers, Client, Gateway, GatewayOptions, Mock,
};
use serde_json::{json, Value};

/// One group `gpt` → `openai/gpt-4o-mini` on `mock`, id `dep-a`.
fn single(mock: &Mock) -> Gateway {
    Gateway::start(&config(&[deployment("gpt", "dep-a", "openai/gpt-4o-mini", mock, "")], ""))
}

#[test]
fn non_streaming_answer_is_passed_through_byte_for_byte() {
    let mock = Mock::start("a", &[]);
    let gateway = single(&mock);

    let through = gateway.chat("gpt");
    assert_eq!(through.status, 200, "{}", through.text());
    assert_eq!(through.header("content-type"), Some("application/json"));
    assert_eq!(through.header("x-mock-name"), Some("a"), "upstream headers are kept");
    assert_eq!(through.deployment(), "dep-a");
    assert_eq!(through.header("x-pointwork-model-group"), Some("gpt"));
    assert_eq!(through.attempts(), 1);
    assert_eq!(through.header("content-length"), Some(through.body.len().to_string().as_str()));

    // The same request sent straight to the mock gives the same answer, up to the request
    // number and the clock.
    let sent = mock.requests();
    assert_eq!(sent.len(), 1);
    let upstream_body = sent[0]["body"].as_str().expect("recorded body");
    let direct = Client::connect(mock.addr).post_json("/v1/chat/completions", upstream_body);
    assert_eq!(direct.status, 200);
    assert_eq!(normalize_mock_answer(&through.body), normalize_mock_answer(&direct.body));
    let answer = through.json();
    assert_eq!(answer["model"], "gpt-4o-mini");
    assert_eq!(answer["choices"][0]["message"]["content"], "Hello from mock a");
}

#[test]
fn streaming_events_arrive_one_by_one_intact_and_in_order() {
    const CHUNKS: usize = 5;
    const DELAY_MS: u64 = 200;
    let mock = Mock::start("s", &["--chunks", "5", "--chunk-delay-ms", &DELAY_MS.to_string()]);
    let gateway = single(&mock);

    let mut client = gateway.client();
    client.send(
        "POST",
        "/v1/chat/completions",
        &[("content-type", "application/json")],
        chat_body("gpt", true).as_bytes(),
    );
    let head = client.read_head().expect("head");
    assert_eq!(head.status, 200);
    assert_eq!(head.header("content-type"), Some("text/event-stream"));
    assert_eq!(head.header("transfer-encoding"), Some("chunked"));
    assert_eq!(head.header("x-pointwork-deployment"), Some("dep-a"));
    assert_eq!(head.header("x-pointwork-attempts"), Some("1"));
    let events: Vec<Event> = client.events().collect_all().expect("a clean stream");

    assert_eq!(events.len(), CHUNKS + 1, "{events:#?}");
    assert_eq!(events.last().unwrap().text, "data: [DONE]");
    let mut content = String::new();
    for (i, event) in events[..CHUNKS].iter().enumerate() {
        let json: Value = serde_json::from_str(
            event.text.strip_prefix("data: ").unwrap_or_else(|| panic!("not a data event: {:?}", event.text)),
        )
        .expect("event JSON");
        assert_eq!(json["object"], "chat.completion.chunk");
        assert_eq!(json["model"], "gpt-4o-mini");
        let finish = &json["choices"][0]["finish_reason"];
        assert_eq!(*finish == "stop", i + 1 == CHUNKS, "finish_reason of event {i}");
        content.push_str(json["choices"][0]["delta"]["content"].as_str().unwrap());
    }
    assert_eq!(content, "Hello from mock s", "the pieces arrive in order");

    // Not buffered: the events are spread over the mock's delays, so the first one arrived
    // long before the stream ended.
    let spread = events.last().unwrap().at - events[0].at;
    let expected = Duration::from_millis(DELAY_MS * (CHUNKS as u64 - 1));
    assert!(spread >= expected / 2, "events arrived within {spread:?}; the mock spaced them over {expected:?}");

    // Byte for byte what the mock streams for the same request.
    let upstream_body = mock.requests()[0]["body"].as_str().unwrap().to_string();
    let mut direct = Client::connect(mock.addr);
    direct.send("POST", "/v1/chat/completions", &[], upstream_body.as_bytes());
    let direct_head = direct.read_head().unwrap();
    assert_eq!(direct_head.status, 200);
    let direct_events = direct.events().collect_all().unwrap();
    let joined = |events: &[Event]| {
        let texts: Vec<&str> = events.iter().map(|e| e.text.as_str()).collect();
        normalize_mock_answer(texts.join("\n\n").as_bytes())
    };
    assert_eq!(joined(&events), joined(&direct_events));
}

#[test]
fn model_is_rewritten_key_injected_and_the_rest_of_the_body_kept() {
    let mock = Mock::start("k", &[]);
    let yaml = format!(
        "model_list:\n  - model_name: gpt\n    litellm_params:\n      model: openai/gpt-4o-mini\n      \
         api_base: {}\n      api_key: os.environ/POINTWORK_TEST_UPSTREAM_KEY\n    model_info:\n      id: dep-k\n",
        mock.api_base()
    );
    let gateway = Gateway::start_with(
        &yaml,
        GatewayOptions {
            env: vec![("POINTWORK_TEST_UPSTREAM_KEY", "sk-upstream-from-env")],
            ..GatewayOptions::default()
        },
    );

    // Odd spacing, a nested "model" key before the real one, escapes and non-ASCII text: only
    // the top-level model value may change.
    let original = "{\"metadata\": {\"model\": \"keep-me\"},\n  \"model\" :  \"gpt\" , \
                    \"messages\":[{\"role\":\"user\",\"content\":\"caf\\u00e9 \u{2615} \\\"q\\\"\"}],\
                    \"temperature\":0.25}";
    let expected = original.replace("\"model\" :  \"gpt\"", "\"model\" :  \"gpt-4o-mini\"");
    let response = gateway.client().request(
        "POST",
        "/v1/chat/completions",
        &[("content-type", "application/json"), ("authorization", "Bearer sk-caller-secret")],
        original.as_bytes(),
    );
    assert_eq!(response.status, 200, "{}", response.text());

    let sent = mock.requests();
    assert_eq!(sent.len(), 1);
    let request = &sent[0];
    assert_eq!(request["method"], "POST");
    assert_eq!(request["path"], "/v1/chat/completions");
    assert_eq!(request["body"].as_str().unwrap(), expected);
    assert_eq!(recorded_headers(request, "authorization"), ["Bearer sk-upstream-from-env"]);
    assert_eq!(recorded_headers(request, "content-length"), [expected.len().to_string()]);
    let all = request["headers"].to_string();
    assert!(!all.contains("sk-caller-secret"), "the caller's credentials went upstream: {all}");
}

#[test]
fn chunked_request_body_is_accepted_and_forwarded() {
    let mock = Mock::start("c", &[]);
    let gateway = single(&mock);
    let body = chat_body("gpt", false);
    let (first, rest) = body.split_at(7);
    let (second, third) = rest.split_at(rest.len() / 2);
    let mut raw = String::from(
        "POST /v1/chat/completions HTTP/1.1\r\nhost: t\r\ncontent-type: application/json\r\n\
         transfer-encoding: chunked\r\n\r\n",
    );
    for piece in [first, second, third] {
        raw.push_str(&format!("{:x}\r\n{piece}\r\n", piece.len()));
    }
    raw.push_str("0\r\n\r\n");
    let mut client = gateway.client();
    client.send_raw(raw.as_bytes());
    let response = client.read_response();
    assert_eq!(response.status, 200, "{}", response.text());
    assert_eq!(response.deployment(), "dep-a");

    let sent = mock.requests();
    let expected = body.replace("\"model\":\"gpt\"", "\"model\":\"gpt-4o-mini\"");
    assert_eq!(sent[0]["body"].as_str().unwrap(), expected);
    assert_eq!(recorded_headers(&sent[0], "content-length"), [expected.len().to_string()]);
    assert!(recorded_headers(&sent[0], "transfer-encoding").is_empty());

    // The connection is still good for another request.
    let again = client.post_json("/v1/chat/completions", &body);
    assert_eq!(again.status, 200);
}

#[test]
fn embeddings_are_forwarded_with_the_upstream_model() {
    let mock = Mock::start("e", &[]);
    let gateway =
        Gateway::start(&config(&[deployment("embed", "dep-e", "openai/text-embedding-3-small", &mock, "")], ""));
    for path in ["/v1/embeddings", "/embeddings"] {
        let response = gateway.post(path, r#"{"model":"embed","input":["one","two"]}"#);
        assert_eq!(response.status, 200, "{path}: {}", response.text());
        assert_eq!(response.deployment(), "dep-e");
        assert_eq!(response.header("x-pointwork-model-group"), Some("embed"));
        let answer = response.json();
        assert_eq!(answer["object"], "list");
        assert_eq!(answer["model"], "text-embedding-3-small");
        assert_eq!(answer["data"].as_array().unwrap().len(), 2);
    }
    let sent = mock.requests();
    assert_eq!(sent.len(), 2);
    for request in &sent {
        assert_eq!(request["path"], "/v1/embeddings");
        assert_eq!(request["body"], r#"{"model":"text-embedding-3-small","input":["one","two"]}"#);
    }
}

#[test]
fn chat_path_without_v1_is_served() {
    let mock = Mock::start("p", &[]);
    let gateway = single(&mock);
    let response = gateway.post("/chat/completions", &chat_body("gpt", false));
    assert_eq!(response.status, 200, "{}", response.text());
    assert_eq!(mock.requests()[0]["path"], "/v1/chat/completions");
}

#[test]
fn models_lists_the_public_names_in_config_order() {
    let mock = Mock::start("m", &[]);
    let gateway = Gateway::start(&config(
        &[
            deployment("zeta", "z1", "openai/gpt-4o", &mock, ""),
            deployment("alpha", "a1", "openai/gpt-4o-mini", &mock, ""),
            deployment("zeta", "z2", "openai/gpt-4o", &mock, ""),
            deployment("mid", "m1", "openai/text-embedding-3-small", &mock, ""),
        ],
        "",
    ));
    let response = gateway.get("/v1/models");
    assert_eq!(response.status, 200);
    assert_eq!(response.header("content-type"), Some("application/json"));
    let list = response.json();
    assert_eq!(list["object"], "list");
    let data = list["data"].as_array().unwrap();
    let ids: Vec<&str> = data.iter().map(|m| m["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["zeta", "alpha", "mid"]);
    assert!(data.iter().all(|m| m["object"] == "model"));
    assert_eq!(gateway.get("/models").json(), list);
    assert_eq!(mock.request_count(), 0, "the model list is the gateway's own");
}

#[test]
fn health_endpoints_answer_and_unknown_paths_are_404() {
    let mock = Mock::start("h", &[]);
    let gateway = single(&mock);
    let live = gateway.get("/health/liveliness");
    assert_eq!(live.status, 200);
    assert!(live.text().contains("alive"), "{}", live.text());
    let ready = gateway.get("/health/readiness");
    assert_eq!(ready.status, 200);
    assert_eq!(ready.json()["status"], "healthy");

    let missing = gateway.get("/v1/nothing-here");
    assert_eq!(missing.status, 404);
    assert!(missing.json()["error"]["message"].is_string());
    let wrong_method = gateway.get("/v1/chat/completions");
    assert_eq!(wrong_method.status, 405);
    assert_eq!(mock.request_count(), 0);
}

#[test]
fn legacy_driver_with_two_shards_serves_every_connection() {
    let mock = Mock::start("l", &[]);
    let yaml = config(&[deployment("gpt", "dep-a", "openai/gpt-4o-mini", &mock, "")], "");
    let gateway = Gateway::start_with(
        &yaml,
        GatewayOptions { shards: 2, io_driver: Some("legacy"), ..GatewayOptions::default() },
    );
    let banner = gateway.process.stdout();
    assert!(banner.contains("2 shards"), "{banner}");
    assert!(banner.contains("epoll"), "{banner}");
    for i in 0..12 {
        let stream = i % 2 == 0;
        let mut client = gateway.client();
        client.send("POST", "/v1/chat/completions", &[], chat_body("gpt", stream).as_bytes());
        let response = client.read_response();
        assert_eq!(response.status, 200, "request {i}: {}", response.text());
        if stream {
            assert!(response.text().ends_with("data: [DONE]\n\n"));
        }
    }
    assert_eq!(mock.request_count(), 12);
    assert_eq!(json!(mock.stats()["requests"]), json!(12));
}
