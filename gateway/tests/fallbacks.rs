//! Every kind of fallback through the real gateway, with mock providers that fail the way real
//! ones do: a generic fallback after retries, default fallbacks, context-window and
//! content-policy fallbacks, order tiers, "no deployments available" falling back like a rate
//! limit, and `max_fallbacks`. One shard (cooldowns are shared, but counts are simpler).

mod common;

use std::time::{Duration, Instant};

use common::{chat_body, config, deployment, Gateway, Mock};
use serde_json::json;

const MODEL: &str = "openai/gpt-4o-mini";

/// A chat body whose prompt is about `bytes` long.
fn long_chat(model: &str, bytes: usize) -> String {
    json!({"model": model, "messages": [{"role": "user", "content": "x".repeat(bytes)}]}).to_string()
}

fn metric_reaches(gateway: &Gateway, line: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let text = gateway.get("/metrics").text();
        if text.contains(line) {
            return;
        }
        assert!(Instant::now() < deadline, "no {line:?} in:\n{text}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_failing_group_falls_back_after_its_retries() {
    let a = Mock::start("a", &["--fault", "status:503"]);
    let b = Mock::start("b", &[]);
    let yaml = config(
        &[deployment("gpt", "dep-a", MODEL, &a, ""), deployment("backup", "dep-b", MODEL, &b, "")],
        "router_settings: {num_retries: 1, disable_cooldowns: true, fallbacks: [{gpt: [backup]}]}\n",
    );
    let gateway = Gateway::start(&yaml);
    let r = gateway.chat("gpt");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.deployment(), "dep-b");
    assert_eq!(r.header("x-pointwork-model-group"), Some("backup"));
    assert_eq!(r.attempts(), 3, "two attempts in gpt (one retry), then the fallback");
    assert_eq!(a.request_count(), 2);
    // The fallback group's deployment got the request with its own model name.
    assert_eq!(b.request_count(), 1);
    metric_reaches(&gateway, "pointwork_fallbacks_total 1\n");
    metric_reaches(&gateway, "pointwork_retries_total 1\n");
}

#[test]
fn default_fallbacks_serve_any_group_without_its_own() {
    let a = Mock::start("a", &["--fault", "status:500"]);
    let b = Mock::start("b", &[]);
    let yaml = config(
        &[deployment("gpt", "dep-a", MODEL, &a, ""), deployment("backup", "dep-b", MODEL, &b, "")],
        "litellm_settings: {default_fallbacks: [backup]}\nrouter_settings: {num_retries: 0}\n",
    );
    let gateway = Gateway::start(&yaml);
    let r = gateway.chat("gpt");
    assert_eq!((r.status, r.deployment(), r.attempts()), (200, "dep-b", 2), "{}", r.text());
}

#[test]
fn a_context_window_error_goes_to_the_context_window_fallback_only() {
    let small = Mock::start("small", &["--context-window", "100"]);
    let big = Mock::start("big", &[]);
    let other = Mock::start("other", &[]);
    let yaml = config(
        &[
            deployment("small", "dep-small", MODEL, &small, ""),
            deployment("big", "dep-big", MODEL, &big, ""),
            deployment("other", "dep-other", MODEL, &other, ""),
        ],
        "router_settings:\n  num_retries: 3\n  context_window_fallbacks: [{small: [big]}]\n  fallbacks: [{small: [other]}]\n",
    );
    let gateway = Gateway::start(&yaml);
    // A short prompt fits: small serves it.
    assert_eq!(gateway.chat("small").deployment(), "dep-small");
    let r = gateway.post("/v1/chat/completions", &long_chat("small", 2000));
    assert_eq!((r.status, r.deployment()), (200, "dep-big"), "{}", r.text());
    assert_eq!(r.attempts(), 2, "a context-window error is not retried in its group");
    assert_eq!(small.request_count(), 2);
    assert_eq!(other.request_count(), 0, "the generic fallbacks do not serve context-window errors");
}

#[test]
fn without_a_context_window_fallback_the_providers_error_reaches_the_client() {
    let small = Mock::start("small", &["--context-window", "100"]);
    let other = Mock::start("other", &[]);
    let yaml = config(
        &[deployment("small", "dep-small", MODEL, &small, ""), deployment("other", "dep-other", MODEL, &other, "")],
        "router_settings: {num_retries: 3, fallbacks: [{small: [other]}]}\n",
    );
    let gateway = Gateway::start(&yaml);
    let r = gateway.post("/v1/chat/completions", &long_chat("small", 2000));
    assert_eq!(r.status, 400, "{}", r.text());
    assert_eq!(r.json()["error"]["code"], "context_length_exceeded");
    assert_eq!((small.request_count(), other.request_count()), (1, 0));
}

#[test]
fn a_content_policy_refusal_goes_to_the_content_policy_fallback() {
    let strict = Mock::start("strict", &["--refuse", "forbidden"]);
    let lenient = Mock::start("lenient", &[]);
    let yaml = config(
        &[
            deployment("strict", "dep-strict", MODEL, &strict, ""),
            deployment("lenient", "dep-lenient", MODEL, &lenient, ""),
        ],
        "router_settings: {num_retries: 2, content_policy_fallbacks: [{strict: [lenient]}]}\n",
    );
    let gateway = Gateway::start(&yaml);
    let body = json!({"model": "strict", "messages": [{"role": "user", "content": "something forbidden"}]}).to_string();
    let r = gateway.post("/v1/chat/completions", &body);
    assert_eq!((r.status, r.deployment(), r.attempts()), (200, "dep-lenient", 2), "{}", r.text());
    assert_eq!(strict.request_count(), 1);
}

#[test]
fn order_two_serves_only_after_order_one_failed_for_the_request() {
    let primary = Mock::start("primary", &[]);
    let secondary = Mock::start("secondary", &[]);
    let yaml = config(
        &[
            deployment("gpt", "dep-primary", MODEL, &primary, "order: 1"),
            deployment("gpt", "dep-secondary", MODEL, &secondary, "order: 2"),
        ],
        "router_settings: {num_retries: 0, disable_cooldowns: true}\n",
    );
    let gateway = Gateway::start(&yaml);
    for _ in 0..10 {
        assert_eq!(gateway.chat("gpt").deployment(), "dep-primary");
    }
    assert_eq!(secondary.request_count(), 0);
    primary.control(json!({"fault": "status:503"}));
    let r = gateway.chat("gpt");
    assert_eq!((r.status, r.deployment(), r.attempts()), (200, "dep-secondary", 2), "{}", r.text());
    primary.control(json!({"fault": null}));
    assert_eq!(gateway.chat("gpt").deployment(), "dep-primary", "order 1 serves again once it answers");
}

/// Issue 11: order 1 refuses connections on the request's first attempt. Its failure may start
/// its cooldown (`allowed_fails: 0`) before the walk asks which tier failed; either way, and
/// with or without retries, order 2 serves that same request.
#[test]
fn order_two_serves_the_request_whose_order_one_refused_with_or_without_retries_and_cooldowns() {
    // A port nobody listens on: bind one, note it, close it.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead_port = closed.local_addr().unwrap().port();
    drop(closed);
    let secondary = Mock::start("secondary", &[]);
    let primary = format!(
        "  - model_name: gpt\n    litellm_params: {{model: {MODEL}, api_base: \"http://127.0.0.1:{dead_port}/v1\", \
         api_key: sk-dead, order: 1}}\n    model_info: {{id: dep-primary}}\n"
    );
    let entries = [primary, deployment("gpt", "dep-secondary", MODEL, &secondary, "order: 2")];
    for (settings, cools) in [
        ("num_retries: 0, allowed_fails: 0", true),
        ("num_retries: 2, allowed_fails: 0", true),
        ("num_retries: 0, disable_cooldowns: true", false),
        ("num_retries: 2, disable_cooldowns: true", false),
    ] {
        let gateway = Gateway::start(&config(&entries, &format!("router_settings: {{{settings}}}\n")));
        let r = gateway.chat("gpt");
        assert_eq!(r.status, 200, "{settings}: {}", r.text());
        assert_eq!((r.deployment(), r.attempts()), ("dep-secondary", 2), "{settings}: order 1 failed, then order 2");
        // The next request skips order 1 while it cools down, and tries it again when it does not.
        let r = gateway.chat("gpt");
        let attempts = if cools { 1 } else { 2 };
        assert_eq!((r.status, r.deployment(), r.attempts()), (200, "dep-secondary", attempts), "{settings}");
    }
    assert_eq!(secondary.request_count(), 8);
}

#[test]
fn no_deployments_available_falls_back_like_a_rate_limit() {
    let a = Mock::start("a", &["--fault", "status:500"]);
    let b = Mock::start("b", &[]);
    let yaml = config(
        &[deployment("gpt", "dep-a", MODEL, &a, ""), deployment("backup", "dep-b", MODEL, &b, "")],
        "router_settings: {num_retries: 0, allowed_fails: 0, cooldown_time: 60, fallbacks: [{gpt: [backup]}]}\n",
    );
    let gateway = Gateway::start(&yaml);
    assert_eq!(gateway.chat("gpt").deployment(), "dep-b");
    // dep-a now cools down: gpt has nothing to pick, and falls back without calling it.
    for _ in 0..5 {
        let r = gateway.chat("gpt");
        assert_eq!((r.status, r.deployment(), r.attempts()), (200, "dep-b", 1), "{}", r.text());
    }
    assert_eq!(a.request_count(), 1);
}

#[test]
fn max_fallbacks_bounds_how_deep_fallbacks_of_fallbacks_go() {
    let a = Mock::start("a", &["--fault", "status:500"]);
    let b = Mock::start("b", &["--fault", "status:500"]);
    let c = Mock::start("c", &[]);
    let entries = [
        deployment("ga", "dep-a", MODEL, &a, ""),
        deployment("gb", "dep-b", MODEL, &b, ""),
        deployment("gc", "dep-c", MODEL, &c, ""),
    ];
    let rules = "fallbacks: [{ga: [gb]}, {gb: [gc]}], num_retries: 0, disable_cooldowns: true";
    let deep = Gateway::start(&config(&entries, &format!("router_settings: {{{rules}}}\n")));
    let r = deep.chat("ga");
    assert_eq!((r.status, r.deployment(), r.attempts()), (200, "dep-c", 3), "{}", r.text());
    let shallow = Gateway::start(&config(&entries, &format!("router_settings: {{{rules}, max_fallbacks: 1}}\n")));
    let r = shallow.chat("ga");
    assert_eq!(r.status, 500, "one hop (ga → gb) and no further: {}", r.text());
    assert_eq!(r.deployment(), "dep-b");
    assert_eq!(c.request_count(), 1, "only the deep gateway reached gc");
}

#[test]
fn a_fallback_never_happens_once_the_stream_started() {
    let a = Mock::start("a", &["--fault", "abort-after:2"]);
    let b = Mock::start("b", &[]);
    let yaml = config(
        &[deployment("gpt", "dep-a", MODEL, &a, ""), deployment("backup", "dep-b", MODEL, &b, "")],
        "router_settings: {num_retries: 2, fallbacks: [{gpt: [backup]}]}\n",
    );
    let gateway = Gateway::start(&yaml);
    let mut client = gateway.client();
    client.send("POST", "/v1/chat/completions", &[], chat_body("gpt", true).as_bytes());
    let head = client.read_head().unwrap();
    assert_eq!(head.status, 200);
    let events = client.events().collect_all().unwrap_or_default();
    assert!(events.iter().any(|e| e.text.contains("\"error\"")), "the stream ends with an error event: {events:?}");
    assert_eq!(b.request_count(), 0, "nothing was sent to the fallback after bytes reached the client");
}

#[test]
fn retry_after_waits_before_a_retry_but_not_before_a_fallback() {
    let a = Mock::start("a", &["--fault", "status:503"]);
    let b = Mock::start("b", &[]);
    let yaml = config(
        &[deployment("gpt", "dep-a", MODEL, &a, ""), deployment("backup", "dep-b", MODEL, &b, "")],
        "router_settings: {num_retries: 1, retry_after: 0.4, disable_cooldowns: true, fallbacks: [{gpt: [backup]}]}\n",
    );
    let gateway = Gateway::start(&yaml);
    let started = Instant::now();
    let r = gateway.chat("gpt");
    let took = started.elapsed();
    assert_eq!((r.status, r.deployment(), r.attempts()), (200, "dep-b", 3), "{}", r.text());
    // One retry (one wait); the fallback goes at once.
    assert!(took >= Duration::from_millis(400), "took {took:?}");
    assert!(took < Duration::from_millis(790), "took {took:?}: waited before the fallback too");
}

#[test]
fn a_prompt_the_pre_call_check_finds_too_long_goes_to_the_context_window_fallback_unsent() {
    let small = Mock::start("small", &[]);
    let big = Mock::start("big", &[]);
    let other = Mock::start("other", &[]);
    let yaml = config(
        &[
            deployment("small", "dep-small", MODEL, &small, ""),
            deployment("big", "dep-big", MODEL, &big, ""),
            deployment("other", "dep-other", MODEL, &other, ""),
        ],
        "router_settings:\n  enable_pre_call_checks: true\n  context_window_fallbacks: [{small: [big]}]\n  fallbacks: [{small: [other]}]\n",
    )
    .replace("model_info: {id: dep-small}", "model_info: {id: dep-small, max_input_tokens: 100}");
    let gateway = Gateway::start(&yaml);
    let r = gateway.post("/v1/chat/completions", &long_chat("small", 2000));
    assert_eq!((r.status, r.deployment(), r.attempts()), (200, "dep-big", 1), "{}", r.text());
    assert_eq!((small.request_count(), other.request_count()), (0, 0), "the small window was never called");
}
