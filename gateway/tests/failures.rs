//! Transport failures over real processes: connection resets, hangs past the configured
//! `timeout`, refused connections, and upstreams that stop in the middle of an answer.
//!
//! One shard per gateway (cooldown state is per shard).

mod common;

use std::time::{Duration, Instant};

use common::{chat_body, config, deployment, until_tried, Client, Gateway, Mock, SHUFFLE_TRIES};
use serde_json::{json, Value};

fn pair_yaml(a: &Mock, a_extra: &str, b: &Mock) -> String {
    config(
        &[
            deployment("gpt", "dep-a", "openai/gpt-4o-mini", a, a_extra),
            deployment("gpt", "dep-b", "openai/gpt-4o-mini", b, ""),
        ],
        "router_settings:\n  cooldown_time: 60\n",
    )
}

#[test]
fn connection_reset_is_retried_on_the_other_deployment() {
    let a = Mock::start("a", &["--fault", "reset"]);
    let b = Mock::start("b", &[]);
    let gateway = Gateway::start(&pair_yaml(&a, "", &b));

    let responses = until_tried(&gateway, &a, "gpt");
    let reset = responses.last().unwrap();
    assert_eq!(reset.status, 200, "{}", reset.text());
    assert_eq!(reset.deployment(), "dep-b");
    assert_eq!(reset.attempts(), 2);
    assert_eq!(a.request_count(), 1);
    for r in &responses[..responses.len() - 1] {
        assert_eq!((r.status, r.deployment(), r.attempts()), (200, "dep-b", 1));
    }
}

#[test]
fn hang_past_the_deployment_timeout_is_retried_on_the_other_deployment() {
    let a = Mock::start("a", &["--fault", "hang"]);
    let b = Mock::start("b", &[]);
    let gateway = Gateway::start(&pair_yaml(&a, "timeout: 1", &b));

    let mut timed_out = None;
    for _ in 0..SHUFFLE_TRIES {
        let started = Instant::now();
        let response = gateway.chat("gpt");
        let took = started.elapsed();
        assert_eq!(response.status, 200, "{}", response.text());
        assert_eq!(response.deployment(), "dep-b");
        if a.request_count() > 0 {
            timed_out = Some((response, took));
            break;
        }
        assert_eq!(response.attempts(), 1);
    }
    let (response, took) = timed_out.expect("A was never picked");
    assert_eq!(response.attempts(), 2, "A timed out, B served the retry");
    assert!(took >= Duration::from_millis(900), "answered after {took:?}, before A's 1s timeout");
    assert!(took < Duration::from_secs(15), "took {took:?}: the 1s timeout did not fire");
}

#[test]
fn hang_with_nowhere_else_to_go_is_a_504_in_the_openai_shape() {
    let a = Mock::start("a", &["--fault", "hang"]);
    let gateway = Gateway::start(&config(
        &[deployment("gpt", "dep-a", "openai/gpt-4o-mini", &a, "timeout: 0.5")],
        "router_settings:\n  num_retries: 0\n",
    ));
    let started = Instant::now();
    let response = gateway.chat("gpt");
    let took = started.elapsed();
    assert_eq!(response.status, 504, "{}", response.text());
    assert_eq!(response.attempts(), 1);
    assert!(response.json()["error"]["message"].is_string());
    assert!((Duration::from_millis(400)..Duration::from_secs(10)).contains(&took), "{took:?} for a 0.5s timeout");
}

#[test]
fn refused_connection_is_retried_on_the_other_deployment() {
    // A port nobody listens on: bind one, note it, close it.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead_port = closed.local_addr().unwrap().port();
    drop(closed);
    let b = Mock::start("b", &[]);
    let yaml = format!(
        "model_list:\n  - model_name: gpt\n    litellm_params: {{model: openai/gpt-4o-mini, \
         api_base: \"http://127.0.0.1:{dead_port}/v1\", api_key: sk-dead}}\n    model_info: {{id: dep-dead}}\n{}\
         router_settings:\n  cooldown_time: 60\n",
        deployment("gpt", "dep-b", "openai/gpt-4o-mini", &b, "")
    );
    let gateway = Gateway::start(&yaml);

    let mut retried = 0;
    for i in 0..SHUFFLE_TRIES {
        let response = gateway.chat("gpt");
        assert_eq!(response.status, 200, "request {i}: {}", response.text());
        assert_eq!(response.deployment(), "dep-b");
        if response.attempts() == 2 {
            retried += 1;
            // The dead deployment cools down after its failure: no more retries needed.
            for _ in 0..10 {
                assert_eq!(gateway.chat("gpt").attempts(), 1);
            }
            break;
        }
    }
    assert_eq!(retried, 1, "the dead deployment was never picked first");
}

/// Reads a streamed answer's events until the body ends; fails rather than hangs.
fn stream_events(gateway: &Gateway, body: &str) -> (u16, Vec<String>, Client) {
    let mut client = gateway.client();
    client.set_read_timeout(Duration::from_secs(15));
    client.send("POST", "/v1/chat/completions", &[("content-type", "application/json")], body.as_bytes());
    let head = client.read_head().expect("a response head");
    let events = client
        .events()
        .collect_all()
        .expect("the stream ends cleanly, with the last chunk")
        .into_iter()
        .map(|e| e.text)
        .collect();
    (head.status, events, client)
}

#[test]
fn upstream_abort_mid_stream_ends_the_client_stream_with_an_error_event() {
    let a = Mock::start("a", &["--fault", "abort-after:2"]);
    let gateway = Gateway::start(&config(&[deployment("gpt", "dep-a", "openai/gpt-4o-mini", &a, "")], ""));
    let (status, events, mut client) = stream_events(&gateway, &chat_body("gpt", true));
    assert_eq!(status, 200);
    assert_eq!(events.len(), 3, "{events:#?}");
    for event in &events[..2] {
        let chunk: Value = serde_json::from_str(event.strip_prefix("data: ").unwrap()).unwrap();
        assert_eq!(chunk["object"], "chat.completion.chunk");
    }
    let error: Value = serde_json::from_str(events[2].strip_prefix("data: ").expect("the error is a data event"))
        .expect("the error event is JSON");
    assert!(error["error"]["message"].is_string(), "{error}");
    assert!(!events.iter().any(|e| e == "data: [DONE]"));
    assert_eq!(a.request_count(), 1, "never retried once bytes reached the client");

    // The gateway and the client connection carry on.
    a.control(json!({"fault": null}));
    let next = client.post_json("/v1/chat/completions", &chat_body("gpt", false));
    assert_eq!(next.status, 200, "{}", next.text());
}

#[test]
fn upstream_abort_mid_body_closes_the_client_connection() {
    let a = Mock::start("a", &["--fault", "abort-after:0"]);
    let gateway = Gateway::start(&config(&[deployment("gpt", "dep-a", "openai/gpt-4o-mini", &a, "")], ""));
    let mut client = gateway.client();
    client.set_read_timeout(Duration::from_secs(15));
    client.send("POST", "/v1/chat/completions", &[], chat_body("gpt", false).as_bytes());
    let head = client.read_head().expect("the head was relayed");
    assert_eq!(head.status, 200);
    let body = client.read_body(&head);
    let error = body.expect_err("the body is cut short");
    assert_eq!(
        error.kind(),
        std::io::ErrorKind::UnexpectedEof,
        "the gateway closes the connection instead of leaving the client waiting: {error}"
    );
    assert_eq!(a.request_count(), 1);
}

#[test]
fn stream_timeout_ends_a_stalled_stream_with_an_error_event() {
    let a = Mock::start("a", &["--chunks", "3", "--chunk-delay-ms", "20000"]);
    let gateway = Gateway::start(&config(
        &[deployment("gpt", "dep-a", "openai/gpt-4o-mini", &a, "timeout: 60, stream_timeout: 1")],
        "",
    ));
    let started = Instant::now();
    let (status, events, _client) = stream_events(&gateway, &chat_body("gpt", true));
    let took = started.elapsed();
    assert_eq!(status, 200);
    assert_eq!(events.len(), 2, "{events:#?}");
    assert!(events[0].contains("chat.completion.chunk"));
    assert!(events[1].contains("\"error\""), "{}", events[1]);
    assert!(took < Duration::from_secs(10), "{took:?}: stream_timeout 1s did not fire");
}

/// A pooled connection the upstream closes after reading the request: the upstream may have
/// acted on it, so the same attempt never sends the body again on a fresh connection (only a
/// connection that refused the write itself is replaced); the failure is the attempt's.
#[test]
fn a_request_read_by_the_upstream_is_not_sent_again_within_the_attempt() {
    let a = Mock::start("a", &[]);
    let gateway = Gateway::start(&config(
        &[deployment("gpt", "dep-a", "openai/gpt-4o-mini", &a, "")],
        "router_settings: {num_retries: 0}\n",
    ));
    let mut client = gateway.client();
    // Both on one client connection, so that the gateway reuses its pooled upstream connection.
    let body = chat_body("gpt", false);
    assert_eq!(client.post_json("/v1/chat/completions", &body).status, 200);
    a.control(json!({"fault": "reset"}));
    let failed = client.post_json("/v1/chat/completions", &body);
    assert_eq!(failed.status, 502, "{}", failed.text());
    assert_eq!(a.request_count(), 2, "the reset request reached the upstream once");
}
