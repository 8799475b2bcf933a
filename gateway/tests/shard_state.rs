//! What shards learn and share, over real processes: a cooldown started on one shard reaches
//! the others before their next pick; stateful strategies and health checks steer traffic;
//! metrics and the access log report it.

mod common;

use std::time::{Duration, Instant};

use common::{chat_body, config, deployment, Gateway, GatewayOptions, Mock, TempDir, SHUFFLE_TRIES};
use serde_json::Value;

/// How long a test waits for something the gateway reports a few times a second.
const REPORT_DEADLINE: Duration = Duration::from_secs(10);

fn two_shards() -> GatewayOptions<'static> {
    GatewayOptions { shards: 2, ..GatewayOptions::default() }
}

/// `a` fails every call, `b` answers; the first failure cools `a` down for a minute.
fn failing_pair(a: &Mock, b: &Mock, rest: &str) -> String {
    config(
        &[
            deployment("gpt", "dep-a", "openai/gpt-4o-mini", a, ""),
            deployment("gpt", "dep-b", "openai/gpt-4o-mini", b, ""),
        ],
        &format!("router_settings: {{allowed_fails: 0, cooldown_time: 60, num_retries: 0}}\n{rest}"),
    )
}

/// Sends requests, each on a fresh connection (so the kernel spreads them over the shards),
/// until `a` has answered one.
fn until_a_failed(gateway: &Gateway, a: &Mock) {
    for _ in 0..SHUFFLE_TRIES {
        let r = gateway.chat("gpt");
        if a.request_count() > 0 {
            assert_eq!(r.status, 500, "{}", r.text());
            return;
        }
        assert_eq!(r.status, 200, "{}", r.text());
    }
    panic!("dep-a never picked in {SHUFFLE_TRIES} requests");
}

#[test]
fn a_cooldown_started_on_one_shard_is_honoured_by_every_shard_at_once() {
    let a = Mock::start("a", &["--fault", "status:500"]);
    let b = Mock::start("b", &[]);
    let gateway = Gateway::start_with(&failing_pair(&a, &b, ""), two_shards());
    until_a_failed(&gateway, &a);
    // Fresh connections land on both shards (SO_REUSEPORT hashes each connection): without the
    // cooldown event, the shard that did not see the failure would send about half of its
    // requests to dep-a.
    for i in 0..40 {
        let r = gateway.chat("gpt");
        assert_eq!((r.status, r.deployment()), (200, "dep-b"), "request {i}: {}", r.text());
    }
    assert_eq!(a.request_count(), 1, "dep-a was called again while cooling down");
}

/// `GET /metrics` once `ready` holds for its text (shards hand their counts over a few times a
/// second).
fn metrics_when(gateway: &Gateway, ready: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + REPORT_DEADLINE;
    loop {
        let r = gateway.get("/metrics");
        assert_eq!(r.status, 200);
        assert_eq!(r.header("content-type"), Some("text/plain; version=0.0.4; charset=utf-8"));
        let text = r.text();
        if ready(&text) {
            return text;
        }
        assert!(Instant::now() < deadline, "metrics never got there:\n{text}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn metrics_count_requests_cooldowns_latency_and_the_pick_across_shards() {
    let a = Mock::start("a", &["--fault", "status:500"]);
    let b = Mock::start("b", &[]);
    let gateway = Gateway::start_with(&failing_pair(&a, &b, ""), two_shards());
    until_a_failed(&gateway, &a);
    let served_by_b = b.request_count();
    for _ in 0..10 {
        assert_eq!(gateway.chat("gpt").status, 200);
    }
    assert_eq!(gateway.chat("nope").status, 400);
    let ok_line = format!(
        "pointwork_requests_total{{model_group=\"gpt\",deployment=\"dep-b\",status=\"200\"}} {}\n",
        served_by_b + 10
    );
    let text = metrics_when(&gateway, |t| t.contains(&ok_line) && t.contains("status=\"400\"} 1\n"));
    for expected in [
        "pointwork_requests_total{model_group=\"gpt\",deployment=\"dep-a\",status=\"500\"} 1\n",
        "pointwork_requests_total{model_group=\"none\",deployment=\"none\",status=\"400\"} 1\n",
        "pointwork_cooldowns_started_total{deployment=\"dep-a\"} 1\n",
        "pointwork_deployments_cooling_down 1\n",
        "pointwork_retries_total 0\n",
        "pointwork_reloads_total{outcome=\"ok\"} 0\n",
        "pointwork_draining 0\n",
        "# TYPE pointwork_upstream_latency_seconds histogram\n",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in:\n{text}");
    }
    let latency_count =
        format!("pointwork_upstream_latency_seconds_count{{model_group=\"gpt\"}} {}\n", served_by_b + 10);
    assert!(text.contains(&latency_count), "missing {latency_count:?} in:\n{text}");
    assert!(text.contains("pointwork_pick_duration_seconds_bucket{le=\"+Inf\"} "), "{text}");
    assert!(text.contains("pointwork_open_connections "), "{text}");
}

#[test]
fn the_access_log_has_a_json_line_per_request_without_keys_or_prompts() {
    let a = Mock::start("a", &[]);
    let dir = TempDir::new("access-log");
    let log = dir.path().join("access.jsonl");
    let yaml = config(
        &[deployment("gpt", "dep-a", "openai/gpt-4o-mini", &a, "")],
        &format!("pointwork: {{access_log: \"{}\"}}\n", log.display()),
    );
    let gateway = Gateway::start(&yaml);
    assert_eq!(gateway.chat("gpt").status, 200);
    let mut client = gateway.client();
    let stream = client.post_json("/v1/chat/completions", &chat_body("gpt", true));
    assert_eq!(stream.status, 200);
    assert_eq!(gateway.chat("missing").status, 400);

    let deadline = Instant::now() + REPORT_DEADLINE;
    let text = loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if text.lines().count() >= 3 {
            break text;
        }
        assert!(Instant::now() < deadline, "access log has {} lines:\n{text}", text.lines().count());
        std::thread::sleep(Duration::from_millis(50));
    };
    let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).expect("a JSON line")).collect();
    assert_eq!(lines.len(), 3, "{text}");
    let ok = &lines[0];
    assert_eq!(ok["model"], "gpt");
    assert_eq!(ok["model_group"], "gpt");
    assert_eq!(ok["deployment"], "dep-a");
    assert_eq!(ok["status"], 200);
    assert_eq!(ok["attempts"], 1);
    assert_eq!(ok["stream"], false);
    assert_eq!(ok["cause"], "fresh");
    assert_eq!(ok["path"], "/v1/chat/completions");
    assert!(ok["upstream_ms"].as_f64().is_some_and(|ms| ms > 0.0), "{ok}");
    assert!(ok["total_ms"].as_f64().unwrap() >= ok["upstream_ms"].as_f64().unwrap(), "{ok}");
    assert!(ok["bytes_in"].as_u64().unwrap() > 0 && ok["bytes_out"].as_u64().unwrap() > 0, "{ok}");
    assert!(ok["route"].as_str().unwrap().contains("dep-a"), "{ok}");
    assert!(ok["time"].as_str().unwrap().ends_with('Z'), "{ok}");
    assert_eq!(lines[1]["stream"], true);
    assert_eq!(lines[2]["status"], 400);
    assert_eq!(lines[2]["model"], "missing");
    assert_eq!(lines[2]["deployment"], Value::Null);
    // The deployment's key (sk-dep-a) and the conversation never reach the log.
    assert!(!text.contains("sk-dep-a"), "{text}");
    assert!(!text.contains("Say this is a test") && !text.contains("messages"), "{text}");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&log).unwrap().permissions().mode() & 0o777, 0o600);
}

#[test]
fn health_check_routing_keeps_traffic_off_a_deployment_whose_probe_failed() {
    // Cooldowns are off: only the health checks can keep dep-a out.
    let a = Mock::start("a", &["--fault", "status:503"]);
    let b = Mock::start("b", &[]);
    let yaml = config(
        &[
            deployment("gpt", "dep-a", "openai/gpt-4o-mini", &a, ""),
            deployment("gpt", "dep-b", "openai/gpt-4o-mini", &b, ""),
        ],
        "router_settings: {enable_health_check_routing: true, health_check_staleness_threshold: 600, \
         disable_cooldowns: true, num_retries: 0}\n\
         general_settings: {health_check_interval: 600}\n\
         pointwork: {health_checks: {prompt: are you there, max_tokens: 2}}\n",
    );
    let gateway = Gateway::start_with(&yaml, two_shards());
    gateway.process.wait_for_stderr("health checks: unhealthy: dep-a", REPORT_DEADLINE);
    let probe = &a.requests()[0];
    let body: Value = serde_json::from_str(probe["body"].as_str().unwrap()).unwrap();
    assert_eq!(body["messages"][0]["content"], "are you there");
    assert_eq!(body["max_tokens"], 2);
    // The probe of dep-b (healthy) went out in the same round; its result reached the shards
    // with dep-a's. Every request now goes to dep-b.
    for i in 0..30 {
        let r = gateway.chat("gpt");
        assert_eq!((r.status, r.deployment()), (200, "dep-b"), "request {i}: {}", r.text());
    }
    assert_eq!(a.request_count(), 1, "only the probe reached dep-a");
}

#[test]
fn latency_based_routing_moves_traffic_to_the_faster_deployment() {
    let slow = Mock::start("slow", &["--latency-ms", "60"]);
    let fast = Mock::start("fast", &[]);
    let yaml = config(
        &[
            deployment("gpt", "dep-slow", "openai/gpt-4o-mini", &slow, ""),
            deployment("gpt", "dep-fast", "openai/gpt-4o-mini", &fast, ""),
        ],
        "router_settings: {routing_strategy: latency-based-routing}\n",
    );
    let gateway = Gateway::start(&yaml);
    // Untried deployments count as fastest, so each is tried once; then the faster one wins.
    let mut picks = Vec::new();
    for _ in 0..20 {
        let r = gateway.chat("gpt");
        assert_eq!(r.status, 200);
        picks.push(r.deployment().to_string());
    }
    assert_eq!(slow.request_count(), 1, "{picks:?}");
    assert!(picks[2..].iter().all(|p| p == "dep-fast"), "{picks:?}");
}

#[test]
fn usage_based_routing_counts_every_shards_requests_against_the_rpm_limit() {
    let a = Mock::start("a", &[]);
    let b = Mock::start("b", &[]);
    let yaml = config(
        &[
            deployment("gpt", "dep-a", "openai/gpt-4o-mini", &a, "rpm: 2"),
            deployment("gpt", "dep-b", "openai/gpt-4o-mini", &b, "rpm: 1000"),
        ],
        "router_settings: {routing_strategy: usage-based-routing-v2}\n",
    );
    let gateway = Gateway::start_with(&yaml, two_shards());
    // Well within the gateway's first minute. Fresh connections spread over both shards; each
    // shard alone would let dep-a take 2 a minute, so without the usage events it would get up
    // to 4.
    for i in 0..24 {
        let r = gateway.chat("gpt");
        assert_eq!(r.status, 200, "request {i}: {}", r.text());
    }
    assert_eq!(a.request_count(), 2, "dep-a's rpm is 2");
    assert_eq!(b.request_count(), 22);
}
