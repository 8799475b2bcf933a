//! The mock provider over real TCP: its OpenAI endpoints, HTTP/1.1 handling and lifecycle.
//! Faults live in `mock/faults.rs`, recording, stats and control in `mock/steering.rs`, the
//! OpenRouter emulation in `mock/openrouter.rs`, Anthropic's Messages API in `mock/anthropic.rs`,
//! Azure OpenAI and its Entra ID tokens in `mock/azure.rs`, Amazon Bedrock in `mock/bedrock.rs`, the Gemini API in
//! `mock/gemini.rs`, Vertex AI and Google's token endpoint in `mock/vertex.rs`.

#[path = "mock/anthropic.rs"]
mod anthropic;
#[path = "mock/azure.rs"]
mod azure;
#[path = "mock/bedrock.rs"]
mod bedrock;
#[path = "mock/binary.rs"]
mod binary;
#[path = "mock/client.rs"]
mod client;
#[path = "mock/faults.rs"]
mod faults;
#[path = "mock/gemini.rs"]
mod gemini;
#[path = "mock/openrouter.rs"]
mod openrouter;
#[path = "mock/steering.rs"]
mod steering;
#[path = "mock/tls.rs"]
mod tls;
#[path = "mock/vertex.rs"]
mod vertex;

use std::net::TcpStream;
use std::time::{Duration, Instant};

use client::Client;
use pointwork_mock::{spawn, MockOptions, MockServer};
use serde_json::json;

pub fn start(options: MockOptions) -> MockServer {
    spawn(options).expect("mock starts")
}

pub fn start_named(name: &str) -> MockServer {
    start(MockOptions { name: name.to_owned(), ..MockOptions::default() })
}

pub fn chat_body(model: &str, stream: bool) -> serde_json::Value {
    json!({
        "model": model,
        "stream": stream,
        "messages": [{"role": "user", "content": "Say hello."}],
    })
}

#[test]
fn non_streaming_chat_is_an_openai_completion_for_the_received_model() {
    let server = start_named("alpha");
    let mut client = Client::connect(server.addr());
    let body = chat_body("my-model-7", false);
    let response = client.post_json("/v1/chat/completions", &body);

    assert_eq!(response.status, 200);
    assert_eq!(response.header("x-mock-name"), Some("alpha"));
    assert_eq!(response.header("content-type"), Some("application/json"));
    let answer = response.json();
    assert!(answer["id"].as_str().is_some_and(|id| id.starts_with("chatcmpl-mock-")));
    assert_eq!(answer["object"], "chat.completion");
    assert!(answer["created"].as_u64().is_some_and(|created| created > 1_600_000_000));
    assert_eq!(answer["model"], "my-model-7");
    assert_eq!(answer["choices"][0]["message"]["role"], "assistant");
    assert_eq!(answer["choices"][0]["message"]["content"], "Hello from mock alpha");
    assert_eq!(answer["choices"][0]["finish_reason"], "stop");
    assert_eq!(answer["system_fingerprint"], "mock-alpha");
    let prompt_tokens = answer["usage"]["prompt_tokens"].as_u64().expect("prompt");
    let sent = body.to_string().len() as u64;
    assert_eq!(prompt_tokens, sent / 4);
    let completion = answer["usage"]["completion_tokens"].as_u64().expect("completion");
    assert_eq!(answer["usage"]["total_tokens"], prompt_tokens + completion);
}

#[test]
fn chat_without_v1_prefix_is_served_too() {
    let server = start_named("beta");
    let mut client = Client::connect(server.addr());
    let response = client.post_json("/chat/completions", &chat_body("m", false));
    assert_eq!(response.status, 200);
    assert_eq!(response.json()["model"], "m");
}

#[test]
fn streaming_chat_sends_each_event_as_a_chunk_then_done_and_last_chunk() {
    let server = start(MockOptions {
        name: "gamma".into(),
        chunks: 4,
        chunk_delay: Duration::from_millis(100),
        ..MockOptions::default()
    });
    let mut client = Client::connect(server.addr());
    let response = client.post_json("/v1/chat/completions", &chat_body("stream-model", true));

    assert_eq!(response.status, 200);
    assert_eq!(response.header("content-type"), Some("text/event-stream"));
    assert_eq!(response.header("x-mock-name"), Some("gamma"));
    let events = response.events();
    assert_eq!(events.len(), 5, "4 content events and [DONE]: {events:?}");
    assert_eq!(events.last().map(String::as_str), Some("[DONE]"));
    let chunks: Vec<serde_json::Value> =
        events[..4].iter().map(|event| serde_json::from_str(event).expect("event JSON")).collect();
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    assert!(chunks.iter().all(|chunk| chunk["object"] == "chat.completion.chunk"));
    assert!(chunks.iter().all(|chunk| chunk["model"] == "stream-model"));
    assert_eq!(chunks[3]["choices"][0]["finish_reason"], "stop");
    assert!(chunks[..3].iter().all(|chunk| chunk["choices"][0]["finish_reason"].is_null()));
    let content: String =
        chunks.iter().map(|chunk| chunk["choices"][0]["delta"]["content"].as_str().unwrap_or("")).collect();
    assert_eq!(content, "Hello from mock gamma");

    // One HTTP chunk per content event, and the first arrived well before the stream ended.
    assert!(response.chunks.len() >= 4, "{:?}", response.chunks.len());
    let first_event_at = response.chunks[0].0;
    let ended_at = response.last_chunk_at.expect("terminating chunk");
    assert!(
        ended_at.duration_since(first_event_at) >= Duration::from_millis(150),
        "the first event did not arrive before the stream ended"
    );
}

#[test]
fn streaming_with_include_usage_ends_with_a_usage_chunk() {
    let server = start_named("delta");
    let mut client = Client::connect(server.addr());
    let mut body = chat_body("m", true);
    body["stream_options"] = json!({"include_usage": true});
    let response = client.post_json("/v1/chat/completions", &body);
    let events = response.events();
    assert_eq!(events.len(), 8 + 2, "{events:?}");
    let usage: serde_json::Value = serde_json::from_str(&events[8]).expect("usage JSON");
    assert_eq!(usage["choices"], json!([]));
    assert_eq!(usage["usage"]["completion_tokens"], 8);
    assert_eq!(events[9], "[DONE]");

    let plain = client.post_json("/v1/chat/completions", &chat_body("m", true));
    assert_eq!(plain.events().len(), 8 + 1, "no usage chunk unless asked for");
}

#[test]
fn embeddings_return_eight_floats_per_input() {
    let server = start_named("emb");
    let mut client = Client::connect(server.addr());
    let response = client.post_json("/v1/embeddings", &json!({"model": "embed-3", "input": ["a", "b", "c"]}));
    assert_eq!(response.status, 200);
    assert_eq!(response.header("x-mock-name"), Some("emb"));
    let answer = response.json();
    assert_eq!(answer["object"], "list");
    assert_eq!(answer["model"], "embed-3");
    let data = answer["data"].as_array().expect("data");
    assert_eq!(data.len(), 3);
    for (index, item) in data.iter().enumerate() {
        assert_eq!(item["object"], "embedding");
        assert_eq!(item["index"], index);
        assert_eq!(item["embedding"].as_array().map(Vec::len), Some(8));
    }
    assert!(answer["usage"]["prompt_tokens"].is_u64());

    let single = client.post_json("/embeddings", &json!({"model": "e", "input": "one"}));
    assert_eq!(single.json()["data"].as_array().map(Vec::len), Some(1));
}

#[test]
fn models_health_and_unknown_paths() {
    let server = start_named("misc");
    let mut client = Client::connect(server.addr());

    let models = client.get("/v1/models");
    assert_eq!(models.status, 200);
    let list = models.json();
    assert_eq!(list["object"], "list");
    assert!(list["data"].as_array().is_some_and(|data| data.len() >= 2));
    assert!(list["data"][0]["id"].is_string());
    assert_eq!(client.get("/models").status, 200);

    let health = client.get("/health");
    assert_eq!(health.status, 200);
    assert_eq!(health.json(), json!({"status": "ok"}));
    assert_eq!(health.header("x-mock-name"), Some("misc"));

    let unknown = client.get("/v1/nothing-here");
    assert_eq!(unknown.status, 404);
    assert_eq!(unknown.header("x-mock-name"), Some("misc"));
    let error = unknown.json();
    assert!(error["error"]["message"].is_string());
    assert!(error["error"]["type"].is_string());
    assert!(error["error"].get("param").is_some());
    assert!(error["error"].get("code").is_some());
}

#[test]
fn keep_alive_serves_many_requests_and_connection_close_is_honoured() {
    let server = start_named("ka");
    let mut client = Client::connect(server.addr());
    for _ in 0..3 {
        assert_eq!(client.get("/health").status, 200);
    }
    let last = client.request("GET", "/health", &[("Connection", "close")], b"");
    assert_eq!(last.status, 200);
    assert_eq!(last.header("connection"), Some("close"));
    let (rest, ended) = client.read_to_end();
    assert!(rest.is_empty() && ended.is_ok(), "the mock must close after Connection: close");
}

#[test]
fn pipelined_requests_are_answered_in_order() {
    let server = start_named("pipe");
    let mut client = Client::connect(server.addr());
    let mut burst = Vec::new();
    for model in ["first", "second", "third"] {
        let body = chat_body(model, false).to_string();
        burst.extend(client::request_bytes("POST", "/v1/chat/completions", &[], body.as_bytes()));
    }
    client.send_raw(&burst);
    for model in ["first", "second", "third"] {
        assert_eq!(client.read_response().json()["model"], model);
    }
}

#[test]
fn chunked_request_bodies_are_decoded() {
    let server = start_named("chunky");
    let mut client = Client::connect(server.addr());
    let body = chat_body("chunked-model", false).to_string();
    let (front, back) = body.split_at(body.len() / 2);
    let request = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: mock\r\nTransfer-Encoding: chunked\r\n\r\n\
         {:x}\r\n{front}\r\n{:x}\r\n{back}\r\n0\r\n\r\n",
        front.len(),
        back.len()
    );
    // Sent in two pieces so the body is still incomplete when the head arrives.
    let split = request.len() - 20;
    client.send_raw(&request.as_bytes()[..split]);
    std::thread::sleep(Duration::from_millis(20));
    client.send_raw(&request.as_bytes()[split..]);
    let response = client.read_response();
    assert_eq!(response.status, 200);
    assert_eq!(response.json()["model"], "chunked-model");

    let recorded = client.get("/mock/requests").json();
    assert_eq!(recorded[0]["body"], body, "the recorded body is de-chunked");
}

#[test]
fn expect_continue_gets_100_before_the_body() {
    let server = start_named("curlish");
    let mut client = Client::connect(server.addr());
    let body = chat_body("patient", false).to_string();
    let head = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: mock\r\nExpect: 100-continue\r\n\
         Content-Length: {}\r\n\r\n",
        body.len()
    );
    client.send_raw(head.as_bytes());
    assert_eq!(client.read_response().status, 100);
    client.send_raw(body.as_bytes());
    let response = client.read_response();
    assert_eq!(response.status, 200);
    assert_eq!(response.json()["model"], "patient");
}

#[test]
fn malformed_requests_get_400_and_a_close() {
    let server = start_named("strict");
    for raw in [
        "THIS IS NOT HTTP\r\n\r\n",
        "POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n",
        "POST /v1/chat/completions HTTP/1.1\r\nContent-Length: x\r\n\r\n",
    ] {
        let mut client = Client::connect(server.addr());
        client.send_raw(raw.as_bytes());
        let response = client.read_response();
        assert_eq!(response.status, 400, "{raw:?}");
        assert_eq!(response.header("x-mock-name"), Some("strict"));
        let (rest, ended) = client.read_to_end();
        assert!(rest.is_empty() && ended.is_ok(), "closed after {raw:?}");
    }
}

#[test]
fn invalid_json_is_an_openai_400_on_a_kept_connection() {
    let server = start_named("json");
    let mut client = Client::connect(server.addr());
    let response = client.request("POST", "/v1/chat/completions", &[], b"{not json");
    assert_eq!(response.status, 400);
    assert_eq!(response.json()["error"]["type"], "invalid_request_error");
    assert_eq!(client.get("/health").status, 200, "connection still usable");
}

#[test]
fn a_second_mock_cannot_share_a_fixed_port() {
    let first = start_named("first");
    let second = spawn(MockOptions { listen: first.addr(), ..MockOptions::default() });
    let error = second.expect_err("the port is taken");
    assert_eq!(error.kind(), std::io::ErrorKind::AddrInUse);
}

#[test]
fn threads_share_one_port_and_shutdown_frees_it() {
    let server = start(MockOptions { threads: 2, ..MockOptions::default() });
    let addr = server.addr();
    assert_ne!(addr.port(), 0);
    let mut clients: Vec<Client> = (0..8).map(|_| Client::connect(addr)).collect();
    for client in &mut clients {
        assert_eq!(client.get("/health").status, 200);
    }
    let started = Instant::now();
    server.shutdown();
    assert!(started.elapsed() < Duration::from_secs(5));
    for client in &mut clients {
        let (_, ended) = client.read_to_end();
        assert!(ended.is_ok(), "idle keep-alive connections are closed on shutdown");
    }
    assert!(TcpStream::connect(addr).is_err(), "nobody listens after shutdown");
}
