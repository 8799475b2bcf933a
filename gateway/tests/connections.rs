//! The client side of the gateway over real sockets: large bodies, pipelining, `Connection:
//! close`, clients that leave in the middle of a stream, retried streams, and concurrent
//! clients over several shards.

mod common;

use std::time::Duration;

use common::{chat_body, config, deployment, recorded_headers, Gateway, GatewayOptions, Mock};

fn single(mock: &Mock) -> Gateway {
    Gateway::start(&config(&[deployment("gpt", "dep-a", "openai/gpt-4o-mini", mock, "")], ""))
}

#[test]
fn large_request_body_is_forwarded_intact() {
    let mock = Mock::start("big", &[]);
    let gateway = single(&mock);
    // ~3 MB of content: many reads on both sides.
    let text: String = (0..3 * 1024 * 1024 / 16).map(|i| format!("{:015x} ", i)).collect();
    let body = serde_json::json!({"model": "gpt", "messages": [{"role": "user", "content": text}]}).to_string();
    let response = gateway.post("/v1/chat/completions", &body);
    assert_eq!(response.status, 200, "{}", response.text());
    let sent = mock.requests();
    let expected = body.replacen("\"model\":\"gpt\"", "\"model\":\"gpt-4o-mini\"", 1);
    let forwarded = sent[0]["body"].as_str().unwrap();
    assert_eq!(forwarded.len(), expected.len());
    assert!(forwarded == expected, "the large body changed on the way");
    assert_eq!(recorded_headers(&sent[0], "content-length"), [expected.len().to_string()]);
}

#[test]
fn pipelined_requests_are_answered_in_order() {
    let mock = Mock::start("pipe", &[]);
    let gateway = single(&mock);
    let mut client = gateway.client();
    let mut raw = Vec::new();
    for (i, path) in ["/v1/chat/completions", "/health/readiness", "/v1/chat/completions"].iter().enumerate() {
        if i == 1 {
            raw.extend_from_slice(format!("GET {path} HTTP/1.1\r\nhost: t\r\n\r\n").as_bytes());
        } else {
            let body = chat_body("gpt", i == 2);
            raw.extend_from_slice(
                format!("POST {path} HTTP/1.1\r\nhost: t\r\ncontent-length: {}\r\n\r\n{body}", body.len()).as_bytes(),
            );
        }
    }
    client.send_raw(&raw);
    let first = client.read_response();
    assert_eq!(first.status, 200);
    assert_eq!(first.json()["object"], "chat.completion");
    let second = client.read_response();
    assert_eq!(second.json()["status"], "healthy");
    let third = client.read_response();
    assert_eq!(third.status, 200);
    assert!(third.text().ends_with("data: [DONE]\n\n"), "{}", third.text());
}

#[test]
fn connection_close_is_honoured() {
    let mock = Mock::start("close", &[]);
    let gateway = single(&mock);
    let mut client = gateway.client();
    client.set_read_timeout(Duration::from_secs(15));
    let response =
        client.request("POST", "/v1/chat/completions", &[("connection", "close")], chat_body("gpt", false).as_bytes());
    assert_eq!(response.status, 200);
    assert_eq!(response.header("connection"), Some("close"));
    assert!(client.is_closed_by_peer(), "the gateway closes after answering");
}

#[test]
fn client_leaving_mid_stream_does_not_disturb_the_gateway() {
    let mock = Mock::start("leave", &["--chunks", "50", "--chunk-delay-ms", "20"]);
    let gateway = single(&mock);
    for _ in 0..3 {
        let mut client = gateway.client();
        client.send("POST", "/v1/chat/completions", &[], chat_body("gpt", true).as_bytes());
        let head = client.read_head().unwrap();
        assert_eq!(head.status, 200);
        let first = client.events().next_event().unwrap().expect("a first event");
        assert!(first.text.starts_with("data: "));
        drop(client); // Leaves with the stream half sent.
    }
    mock.control(serde_json::json!({"chunk_delay_ms": 0}));
    for _ in 0..5 {
        let response = gateway.chat("gpt");
        assert_eq!(response.status, 200, "{}", response.text());
    }
    assert!(gateway.get("/health/liveliness").status == 200);
}

#[test]
fn failed_stream_before_any_byte_is_retried_on_the_other_deployment() {
    let a = Mock::start("a", &["--fault", "status:502"]);
    let b = Mock::start("b", &[]);
    let gateway = Gateway::start(&config(
        &[
            deployment("gpt", "dep-a", "openai/gpt-4o-mini", &a, ""),
            deployment("gpt", "dep-b", "openai/gpt-4o-mini", &b, ""),
        ],
        "router_settings:\n  allowed_fails: 1000\n",
    ));
    let mut retried = false;
    for _ in 0..common::SHUFFLE_TRIES {
        let mut client = gateway.client();
        client.send("POST", "/v1/chat/completions", &[], chat_body("gpt", true).as_bytes());
        let response = client.read_response();
        assert_eq!(response.status, 200, "{}", response.text());
        assert_eq!(response.deployment(), "dep-b");
        assert!(response.text().ends_with("data: [DONE]\n\n"));
        if response.attempts() == 2 {
            retried = true;
            break;
        }
    }
    assert!(retried, "A was never picked first");
}

#[test]
fn concurrent_clients_over_two_shards_are_all_served() {
    let a = Mock::start("a", &["--latency-ms", "5"]);
    let b = Mock::start("b", &["--latency-ms", "5"]);
    let yaml = config(
        &[
            deployment("gpt", "dep-a", "openai/gpt-4o-mini", &a, ""),
            deployment("gpt", "dep-b", "openai/gpt-4o-mini", &b, ""),
        ],
        "",
    );
    let gateway = Gateway::start_with(&yaml, GatewayOptions { shards: 2, ..GatewayOptions::default() });
    let addr = gateway.addr;
    let threads: Vec<_> = (0..8)
        .map(|t| {
            std::thread::spawn(move || {
                let mut client = common::Client::connect(addr);
                for i in 0..25 {
                    let response = client.post_json("/v1/chat/completions", &chat_body("gpt", (t + i) % 4 == 0));
                    assert_eq!(response.status, 200, "thread {t} request {i}: {}", response.text());
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("a client thread failed");
    }
    assert_eq!(a.request_count() + b.request_count(), 200);
    assert!(a.request_count() > 0 && b.request_count() > 0, "the shuffle uses both deployments");
}

#[test]
fn large_response_body_is_passed_through_intact() {
    let mock = Mock::start("wide", &[]);
    let gateway =
        Gateway::start(&config(&[deployment("embed", "dep-e", "openai/text-embedding-3-small", &mock, "")], ""));
    let inputs: Vec<String> = (0..5000).map(|i| format!("input {i}")).collect();
    let body = serde_json::json!({"model": "embed", "input": inputs}).to_string();
    let through = gateway.post("/v1/embeddings", &body);
    assert_eq!(through.status, 200, "{}", through.text());
    assert!(through.body.len() > 300_000, "{} bytes", through.body.len());
    let forwarded = mock.requests()[0]["body"].as_str().unwrap().to_string();
    let direct = common::Client::connect(mock.addr).post_json("/v1/embeddings", &forwarded);
    assert!(through.body == direct.body, "the large answer changed on the way");
}

#[test]
fn long_stream_is_passed_through_intact() {
    let mock = Mock::start("long", &["--chunks", "2000"]);
    let gateway = single(&mock);
    let mut client = gateway.client();
    client.send("POST", "/v1/chat/completions", &[], chat_body("gpt", true).as_bytes());
    let head = client.read_head().unwrap();
    assert_eq!(head.status, 200);
    let events = client.events().collect_all().expect("a clean stream");
    assert_eq!(events.len(), 2001);
    let forwarded = mock.requests()[0]["body"].as_str().unwrap().to_string();
    let mut direct = common::Client::connect(mock.addr);
    direct.send("POST", "/v1/chat/completions", &[], forwarded.as_bytes());
    direct.read_head().unwrap();
    let direct_events = direct.events().collect_all().unwrap();
    let join = |events: &[common::http::Event]| {
        let texts: Vec<&str> = events.iter().map(|e| e.text.as_str()).collect();
        common::normalize_mock_answer(texts.join("\n\n").as_bytes())
    };
    assert!(join(&events) == join(&direct_events), "the stream changed on the way");
}

#[test]
fn pooled_connection_closed_by_a_restarted_upstream_is_replaced_transparently() {
    let first = Mock::start("gen1", &[]);
    let addr = first.addr;
    let gateway = single(&first);
    assert_eq!(gateway.chat("gpt").status, 200);
    assert_eq!(first.stats()["provider_connections"], 1);

    // The upstream restarts on the same port: the pooled connection is dead.
    drop(first);
    let second = Mock::start("gen2", &["--listen", &addr.to_string()]);
    assert_eq!(second.addr, addr);
    let response = gateway.chat("gpt");
    assert_eq!(response.status, 200, "{}", response.text());
    assert_eq!(response.attempts(), 1, "the stale connection is not a failed attempt");
    assert_eq!(response.json()["choices"][0]["message"]["content"], "Hello from mock gen2");
    assert_eq!(second.request_count(), 1);
}
