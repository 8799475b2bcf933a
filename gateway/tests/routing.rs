//! Picking, retrying and cooling down over real processes: a failing deployment cools down and
//! its traffic moves to the healthy one, retries skip what failed, errors reach the client in
//! LiteLLM's words, and upstream connections are reused.
//!
//! Cooldown state is per shard, so every gateway here runs with one shard.

mod common;

use common::{chat_body, config, deployment, until_tried, Gateway, Mock};

/// Group `gpt` with `dep-a` on `a` and `dep-b` on `b`, then `router`.
fn pair(a: &Mock, b: &Mock, router: &str) -> Gateway {
    Gateway::start(&config(
        &[
            deployment("gpt", "dep-a", "openai/gpt-4o-mini", a, ""),
            deployment("gpt", "dep-b", "openai/gpt-4o-mini", b, ""),
        ],
        router,
    ))
}

#[test]
fn failing_deployment_cools_down_and_traffic_moves_to_the_healthy_one() {
    let a = Mock::start("a", &["--fault", "status:500"]);
    let b = Mock::start("b", &[]);
    let gateway = pair(&a, &b, "router_settings:\n  cooldown_time: 60\n");

    let before = until_tried(&gateway, &a, "gpt");
    let first_failure = before.last().unwrap();
    assert_eq!(first_failure.status, 200, "{}", first_failure.text());
    assert_eq!(first_failure.deployment(), "dep-b");
    assert_eq!(first_failure.attempts(), 2, "A failed, B served the retry");

    // More than half of A's requests this minute failed: it cools down, and every following
    // request goes to B at the first attempt.
    for i in 0..20 {
        let response = gateway.chat("gpt");
        assert_eq!(response.status, 200, "request {i}: {}", response.text());
        assert_eq!(response.deployment(), "dep-b", "request {i}");
        assert_eq!(response.attempts(), 1, "request {i}");
    }
    assert_eq!(a.request_count(), 1, "A is not called while it cools down");
    assert_eq!(b.request_count(), before.len() as u64 + 20);
    // The cooldown is logged.
    gateway.process.wait_for_stderr("deployment dep-a (gpt) cooling down", common::EXIT_DEADLINE);
}

#[test]
fn retry_serves_from_the_other_deployment_when_the_first_pick_fails() {
    // A high allowed_fails keeps A in rotation, so it is picked first again and again.
    let a = Mock::start("a", &["--fault", "status:503"]);
    let b = Mock::start("b", &[]);
    let gateway = pair(&a, &b, "router_settings:\n  allowed_fails: 1000\n");

    let mut retried = 0;
    for i in 0..40 {
        let response = gateway.chat("gpt");
        assert_eq!(response.status, 200, "request {i}: {}", response.text());
        assert_eq!(response.deployment(), "dep-b", "request {i}");
        assert!(matches!(response.attempts(), 1 | 2), "request {i}");
        if response.attempts() == 2 {
            retried += 1;
        }
    }
    assert!(retried > 0, "A was never picked first in 40 requests");
    assert_eq!(a.request_count(), retried, "each retry follows one failure at A");
    assert_eq!(b.request_count(), 40, "B served every request exactly once");
}

#[test]
fn every_deployment_failing_gives_the_upstream_error_after_one_plus_num_retries_attempts() {
    let a = Mock::start("a", &["--fault", "status:503"]);
    let b = Mock::start("b", &["--fault", "status:503"]);
    let gateway = pair(&a, &b, "router_settings:\n  num_retries: 3\n  disable_cooldowns: true\n");

    let response = gateway.chat("gpt");
    assert_eq!(response.status, 503, "{}", response.text());
    assert_eq!(response.attempts(), 4);
    assert_eq!(response.header("x-pointwork-model-group"), Some("gpt"));
    let last = response.deployment().to_string();
    let error = response.json();
    assert_eq!(
        error["error"]["message"],
        format!("mock {} injected status 503", &last[4..]),
        "the upstream's own OpenAI-shaped error, from the deployment tried last"
    );
    assert_eq!(error["error"]["type"], "server_error");
    let (at_a, at_b) = (a.request_count(), b.request_count());
    assert_eq!(at_a + at_b, 4, "1 + num_retries attempts");
    assert!(at_a >= 1 && at_b >= 1, "the retry skipped the deployment that failed");
}

#[test]
fn upstream_error_status_body_and_retry_after_pass_through() {
    let a = Mock::start("a", &["--fault", "status:429:retry-after=7"]);
    let gateway = Gateway::start(&config(
        &[deployment("gpt", "dep-a", "openai/gpt-4o-mini", &a, "")],
        "router_settings:\n  num_retries: 0\n",
    ));
    let response = gateway.chat("gpt");
    assert_eq!(response.status, 429, "{}", response.text());
    assert_eq!(response.header("retry-after"), Some("7"));
    assert_eq!(response.deployment(), "dep-a");
    assert_eq!(response.attempts(), 1);
    assert_eq!(
        response.text(),
        r#"{"error":{"message":"mock a injected status 429","type":"rate_limit_error","param":null,"code":"rate_limit_exceeded"}}"#
    );
    assert_eq!(a.request_count(), 1, "num_retries 0: one attempt");
}

#[test]
fn all_deployments_cooling_down_gives_litellms_429_with_ids_and_retry_after() {
    let a = Mock::start("a", &["--fault", "status:500"]);
    let b = Mock::start("b", &["--fault", "status:500"]);
    let gateway = pair(&a, &b, "router_settings:\n  cooldown_time: 60\n");

    // Both fail on the first request and both cool down; nothing is left for a third attempt,
    // so the client gets the last upstream error.
    let first = gateway.chat("gpt");
    assert_eq!(first.status, 500, "{}", first.text());
    assert_eq!(first.attempts(), 2);
    assert_eq!(a.request_count() + b.request_count(), 2);

    let response = gateway.chat("gpt");
    assert_eq!(response.status, 429, "{}", response.text());
    let error = response.json();
    let message = error["error"]["message"].as_str().unwrap();
    let seconds: u64 = message
        .strip_prefix("No deployments available for selected model, Try again in ")
        .and_then(|rest| rest.split_once(' '))
        .and_then(|(n, _)| n.parse().ok())
        .unwrap_or_else(|| panic!("unexpected message: {message}"));
    assert!((50..=60).contains(&seconds), "{seconds}s left of a 60s cooldown");
    assert_eq!(
        message,
        format!(
            "No deployments available for selected model, Try again in {seconds} seconds. \
             Passed model=gpt. pre-call-checks=False, cooldown_list=['dep-a', 'dep-b']"
        )
    );
    assert_eq!(response.header("retry-after"), Some(seconds.to_string().as_str()));
    assert_eq!(error["error"]["type"], "rate_limit_error");
    assert_eq!(a.request_count() + b.request_count(), 2, "nothing is sent upstream while everything cools down");
}

#[test]
fn unknown_model_gives_litellms_400() {
    let a = Mock::start("a", &[]);
    let gateway = Gateway::start(&config(&[deployment("gpt", "dep-a", "openai/gpt-4o-mini", &a, "")], ""));
    let response = gateway.post("/v1/chat/completions", &chat_body("gpt-5-nano", false));
    assert_eq!(response.status, 400);
    let error = response.json();
    assert_eq!(
        error["error"]["message"],
        "Invalid model name passed in model=gpt-5-nano. Call `/v1/models` to view available models for your key."
    );
    assert_eq!(error["error"]["type"], "invalid_request_error");
    assert_eq!(error["error"]["param"], "model");
    let embeddings = gateway.post("/v1/embeddings", r#"{"model":"nope","input":"x"}"#);
    assert_eq!(embeddings.status, 400);
    assert_eq!(a.request_count(), 0);
}

#[test]
fn deployment_id_as_model_name_reaches_that_deployment_even_while_it_cools_down() {
    let a = Mock::start("a", &["--fault", "status:500"]);
    let b = Mock::start("b", &[]);
    let gateway = pair(&a, &b, "router_settings:\n  cooldown_time: 60\n");
    until_tried(&gateway, &a, "gpt"); // A failed once and cools down.
    assert_eq!(gateway.chat("gpt").deployment(), "dep-b");

    let by_id = gateway.chat("dep-b");
    assert_eq!(by_id.status, 200);
    assert_eq!(by_id.deployment(), "dep-b");
    let cooling = gateway.chat("dep-a");
    assert_eq!(cooling.deployment(), "dep-a");
    assert_eq!(cooling.status, 500, "served by A despite its cooldown");
    // A 500 is retryable and A is the only candidate by its id: 1 + num_retries attempts.
    assert_eq!(cooling.attempts(), 3);
    assert_eq!(a.request_count(), 1 + 3);
}

#[test]
fn non_retryable_400_is_neither_retried_nor_cooling_the_deployment() {
    let a = Mock::start("a", &["--fault", "status:400"]);
    let b = Mock::start("b", &[]);
    let gateway = pair(&a, &b, "router_settings:\n  cooldown_time: 60\n");

    let (mut from_a, mut from_b) = (0u64, 0u64);
    for i in 0..200 {
        let response = gateway.chat("gpt");
        assert_eq!(response.attempts(), 1, "request {i}: a 400 is final");
        match response.deployment() {
            "dep-a" => {
                from_a += 1;
                assert_eq!(response.status, 400);
                assert_eq!(response.json()["error"]["message"], "mock a injected status 400");
            }
            "dep-b" => {
                from_b += 1;
                assert_eq!(response.status, 200);
            }
            other => panic!("served by {other}"),
        }
        if from_a >= 3 {
            break;
        }
    }
    assert_eq!(from_a, 3, "A keeps being picked after its 400s: no cooldown");
    assert_eq!(a.request_count(), from_a, "no retry of a 400 at A");
    assert_eq!(b.request_count(), from_b, "no retry of a 400 at B");
}

#[test]
fn upstream_connections_are_reused_across_requests() {
    let a = Mock::start("a", &[]);
    let gateway = Gateway::start(&config(&[deployment("gpt", "dep-a", "openai/gpt-4o-mini", &a, "")], ""));
    // Ten on one keep-alive client connection, ten on fresh ones, streaming and not.
    let mut client = gateway.client();
    for i in 0..20 {
        let stream = i % 3 == 0;
        let body = chat_body("gpt", stream);
        let response = if i < 10 {
            client.post_json("/v1/chat/completions", &body)
        } else {
            gateway.post("/v1/chat/completions", &body)
        };
        assert_eq!(response.status, 200, "request {i}: {}", response.text());
    }
    let stats = a.stats();
    assert_eq!(stats["requests"], 20);
    assert_eq!(stats["provider_connections"], 1, "one shard, sequential requests: one upstream connection ({stats})");
}
