//! Langfuse export through the real gateway, turned on LiteLLM's way (`success_callback` /
//! `failure_callback: ["langfuse"]` with `LANGFUSE_PUBLIC_KEY`, `LANGFUSE_SECRET_KEY`,
//! `LANGFUSE_HOST`) and Pointwork's (`pointwork.telemetry.langfuse`), read by a stand-in for
//! Langfuse's ingestion API (`fixtures/langfuse_receiver.py`, a real HTTP server process that
//! checks Basic auth and answers 207 per event as Langfuse does): a trace and a generation per
//! request with its model, usage, cost and status; failed requests as ERROR generations only
//! with `failure_callback`; refused events counted; nothing secret in any batch; a hung receiver
//! costs requests nothing, its drops and failures are counted, and export resumes.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{
    addr_after_http, config, deployment, priced, wait_until, Client, Gateway, GatewayOptions, Mock, Process,
    READY_DEADLINE,
};
use pointwork_gateway::keys::digest_hex;
use serde_json::{json, Value};

const MASTER: &str = "sk-lf-test-master-4411";
const TEAM_KEY: &str = "sk-lf-test-team-a-9c2e";
const PUBLIC: &str = "pk-lf-test-public-77";
const SECRET: &str = "sk-lf-test-secret-3b9d";
const PROMPT: &str = "a prompt only content export may carry 5e2f";
/// How long the receiver may take to see an export (the exporter takes records in five times a
/// second; a debug build on a busy machine).
const SEEN: Duration = Duration::from_secs(30);

/// The stand-in Langfuse.
struct Receiver {
    _process: Process,
    addr: std::net::SocketAddr,
}

impl Receiver {
    fn start() -> Receiver {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/langfuse_receiver.py");
        let mut command = Command::new("python3");
        command.arg("-u").arg(script).args([PUBLIC, SECRET]);
        let mut process = Process::spawn("langfuse receiver", command);
        let line = process.wait_for_line("listening on http://", READY_DEADLINE);
        Receiver { addr: addr_after_http(&line), _process: process }
    }

    fn host(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn mode(&self, mode: &str) {
        let body = json!({ "mode": mode }).to_string();
        assert_eq!(Client::connect(self.addr).post_json("/mode", &body).status, 200);
    }

    fn received(&self) -> Value {
        Client::connect(self.addr).request("GET", "/received", &[], b"").json()
    }

    /// Every event received, of `kind` (`trace-create`, `generation-create`).
    fn events(&self, kind: &str) -> Vec<Value> {
        let received = self.received();
        let batches = received["batches"].as_array().cloned().unwrap_or_default();
        batches.iter().flat_map(|b| b.as_array().cloned().unwrap_or_default()).filter(|e| e["type"] == kind).collect()
    }

    /// The generations whose request carried `marker` in its metadata, once `n` of them arrived.
    fn wait_generations(&self, marker: &str, n: usize) -> Vec<Value> {
        let mut found = Vec::new();
        wait_until(SEEN, &format!("{n} generation(s) marked {marker}"), || {
            found = self.events("generation-create");
            found.retain(|g| g["body"]["metadata"]["requester_metadata"]["marker"] == marker);
            found.len() >= n
        });
        found
    }
}

fn key(name: &str, secret: &str) -> String {
    format!("      - {{name: {name}, sha256: {}}}\n", digest_hex(secret.as_bytes()))
}

/// A gateway with group `gpt` (priced, served by `ok`) and group `broken` (its mock answers 500),
/// the master key and a virtual key `team-a`; `rest` adds `litellm_settings` or `pointwork` parts.
fn gateway(ok: &Mock, broken: &Mock, receiver: &Receiver, settings: &str, env: &[(&str, &str)]) -> Gateway {
    let yaml = config(
        &[priced(ok), deployment("broken", "dep-broken", "openai/gpt-4o", broken, "")],
        &format!(
            "router_settings: {{num_retries: 0}}\ngeneral_settings: {{master_key: {MASTER}}}\n{settings}\
             pointwork:\n  auth:\n    virtual_keys:\n{}",
            key("team-a", TEAM_KEY)
        ),
    );
    let host = receiver.host();
    let mut vars = vec![("LANGFUSE_PUBLIC_KEY", PUBLIC), ("LANGFUSE_SECRET_KEY", SECRET), ("LANGFUSE_HOST", &host)];
    vars.extend_from_slice(env);
    Gateway::start_with(&yaml, GatewayOptions { env: vars, ..GatewayOptions::default() })
}

/// A chat request to `model` with `key`, its metadata marked `marker`.
fn chat(gateway: &Gateway, key: &str, model: &str, marker: &str) -> common::Response {
    let body = json!({
        "model": model,
        "messages": [{"role": "user", "content": PROMPT}],
        "temperature": 0.3,
        "user": "end-user-9",
        "metadata": {
            "marker": marker, "session_id": "session-1", "trace_user_id": "user-trace-1",
            "tags": ["prod", "search"], "api_key": TEAM_KEY,
        },
    });
    let bearer = format!("Bearer {key}");
    gateway.client().request("POST", "/v1/chat/completions", &[("authorization", &bearer)], body.to_string().as_bytes())
}

/// Nothing secret in any batch the receiver took.
fn assert_nothing_secret(receiver: &Receiver, provider_keys: &[&str]) {
    let received = receiver.received();
    assert_eq!(received["unauthorized"], 0, "every export carried the project's Basic auth");
    let raw: String = received["raw"].as_array().unwrap().iter().map(|r| r.as_str().unwrap()).collect();
    assert!(!raw.is_empty());
    for secret in [MASTER, TEAM_KEY, SECRET].iter().chain(provider_keys) {
        assert!(!raw.contains(secret), "{secret} exported:\n{raw}");
    }
}

#[test]
fn every_request_is_a_trace_and_a_generation_with_its_usage_cost_and_status() {
    let receiver = Receiver::start();
    let (ok, broken) = (Mock::start("ok", &[]), Mock::start("broken", &["--fault", "status:500"]));
    let settings = "litellm_settings:\n  success_callback: [\"langfuse\"]\n  failure_callback: [\"langfuse\"]\n";
    let gateway = gateway(&ok, &broken, &receiver, settings, &[]);
    let mut usages = Vec::new();
    for _ in 0..5 {
        let answer = chat(&gateway, TEAM_KEY, "gpt", "each");
        assert_eq!(answer.status, 200, "{}", answer.text());
        usages.push(answer.json()["usage"].clone());
    }
    let failed = chat(&gateway, MASTER, "broken", "failed");
    assert!(failed.status >= 500, "{}", failed.text());

    let generations = receiver.wait_generations("each", 5);
    assert_eq!(generations.len(), 5);
    let traces = receiver.events("trace-create");
    for (g, usage) in generations.iter().zip(&usages) {
        let body = &g["body"];
        assert_eq!(body["name"], "litellm:team-a", "LiteLLM's name: the key's alias");
        assert_eq!(body["model"], "openai/gpt-4o-mini");
        assert_eq!(body["level"], "DEFAULT");
        assert_eq!(body["modelParameters"]["temperature"], 0.3);
        let (p, c) = (usage["prompt_tokens"].as_u64().unwrap(), usage["completion_tokens"].as_u64().unwrap());
        assert_eq!(body["usageDetails"], json!({"input": p, "output": c, "total": p + c}));
        let cost = body["costDetails"]["total"].as_f64().unwrap();
        assert!((cost - (p + c) as f64 * 0.001).abs() < 1e-9, "cost {cost} for {p}+{c} tokens at 0.001");
        assert_eq!(body["usage"]["totalCost"], body["costDetails"]["total"]);
        assert_eq!(body["metadata"]["user_api_key_alias"], "team-a");
        assert_eq!(body["metadata"]["pointwork"]["deployment"], "dep-gpt");
        assert_eq!(body["metadata"]["pointwork"]["model_group"], "gpt");
        assert_eq!(body["metadata"]["pointwork"]["attempts"].as_array().unwrap().len(), 1);
        assert_eq!(body["input"]["messages"][0]["content"], "redacted-by-litellm", "content is opt-in");
        let trace = traces.iter().find(|t| t["body"]["id"] == body["traceId"]).expect("the generation's trace");
        assert_eq!(trace["body"]["name"], "litellm-acompletion");
        assert_eq!(trace["body"]["sessionId"], "session-1");
        assert_eq!(trace["body"]["userId"], "user-trace-1");
        assert_eq!(trace["body"]["tags"], json!(["prod", "search"]));
    }
    let trace_ids: std::collections::HashSet<&str> =
        generations.iter().map(|g| g["body"]["traceId"].as_str().unwrap()).collect();
    assert_eq!(trace_ids.len(), 5, "a trace per request");

    let failure = &receiver.wait_generations("failed", 1)[0]["body"];
    assert_eq!(failure["level"], "ERROR");
    assert_eq!(failure["statusMessage"], "mock broken injected status 500", "the error's message: {failure}");
    assert_eq!(failure["name"], "litellm-acompletion", "the master key has no alias");
    assert_eq!(failure["model"], "openai/gpt-4o");
    assert_eq!(failure["metadata"]["pointwork"]["attempts"][0]["status"], 500);
    assert!(receiver.events("trace-create").iter().any(|t| t["body"]["id"] == failure["traceId"]));
    assert_nothing_secret(&receiver, &["sk-dep-gpt", "sk-dep-broken"]);
    assert!(!receiver.received()["raw"].to_string().contains(PROMPT), "no prompt without content");
}

#[test]
fn success_callback_alone_sends_no_failures_and_refused_events_are_counted() {
    let receiver = Receiver::start();
    let (ok, broken) = (Mock::start("ok", &[]), Mock::start("broken", &["--fault", "status:500"]));
    let settings = "litellm_settings:\n  success_callback: [\"langfuse\"]\n";
    let gateway = gateway(&ok, &broken, &receiver, settings, &[]);
    // The failure goes first: the exporter keeps the order, so it would arrive before the success.
    assert!(chat(&gateway, TEAM_KEY, "broken", "failed").status >= 500);
    assert_eq!(chat(&gateway, TEAM_KEY, "gpt", "ok").status, 200);
    receiver.wait_generations("ok", 1);
    let levels: Vec<Value> = receiver.events("generation-create").iter().map(|g| g["body"]["level"].clone()).collect();
    assert_eq!(levels, [json!("DEFAULT")], "no failure without failure_callback");

    // Langfuse's 207 refusing every event: delivered, never retried, counted as dropped.
    let exported_total = "pointwork_export_exported_total{exporter=\"langfuse\"}";
    // The receiver keeps a batch before it answers: the count follows the answer.
    wait_until(SEEN, "the success counted as exported", || gateway.metric(exported_total) == 1.0);
    receiver.mode("reject");
    assert_eq!(chat(&gateway, TEAM_KEY, "gpt", "refused").status, 200);
    wait_until(SEEN, "the refused record counted as dropped", || {
        gateway.metric("pointwork_export_dropped_total{exporter=\"langfuse\"}") >= 1.0
    });
    assert_eq!(gateway.metric(exported_total), 1.0, "a refused record is not exported");
    assert_eq!(gateway.metric("pointwork_export_failures_total{exporter=\"langfuse\"}"), 0.0);
}

#[test]
fn a_hung_receiver_costs_requests_nothing_and_export_resumes() {
    let receiver = Receiver::start();
    let (ok, broken) = (Mock::start("ok", &[]), Mock::start("broken", &[]));
    // Pointwork's own way, with content; a short timeout and a small queue make drops quick.
    let own = format!(
        "  telemetry:\n    langfuse: {{host: \"{}\", public_key: {PUBLIC}, secret_key: os.environ/LF_SECRET, timeout: 0.3}}\n    content: true\n",
        receiver.host()
    );
    let gateway =
        gateway_with_telemetry(&ok, &broken, &own, &[("LF_SECRET", SECRET), ("OTEL_BSP_MAX_QUEUE_SIZE", "40")]);
    assert_eq!(chat(&gateway, MASTER, "gpt", "first").status, 200);
    let first = &receiver.wait_generations("first", 1)[0]["body"];
    assert_eq!(first["input"]["messages"][0]["content"], PROMPT, "content is on");
    assert!(first["output"]["content"].as_str().is_some_and(|c| !c.is_empty()), "{first}");
    // A stream: its first token's time, and the completion read from its events.
    let body = json!({"model": "gpt", "stream": true, "messages": [{"role": "user", "content": PROMPT}],
                      "metadata": {"marker": "stream"}});
    let bearer = format!("Bearer {MASTER}");
    let streamed = gateway.client().request(
        "POST",
        "/v1/chat/completions",
        &[("authorization", &bearer)],
        body.to_string().as_bytes(),
    );
    assert_eq!(streamed.status, 200);
    let stream = &receiver.wait_generations("stream", 1)[0]["body"];
    assert_eq!(stream["modelParameters"]["stream"], true);
    let (start, first_token, end) = (&stream["startTime"], &stream["completionStartTime"], &stream["endTime"]);
    assert!(start.as_str() <= first_token.as_str() && first_token.as_str() <= end.as_str(), "{stream}");
    assert!(stream["output"]["content"].as_str().is_some_and(|c| !c.is_empty()), "{stream}");
    assert!(stream["usageDetails"]["output"].as_u64().is_some_and(|n| n > 0), "a stream's usage: {stream}");

    let timed = |n: usize| {
        let mut took: Vec<Duration> = (0..n)
            .map(|_| {
                let t = Instant::now();
                assert_eq!(chat(&gateway, MASTER, "gpt", "timed").status, 200);
                t.elapsed()
            })
            .collect();
        took.sort();
        took[n / 2]
    };
    let baseline = timed(30);
    receiver.mode("hang");
    let hung = timed(120);
    assert!(
        hung < baseline * 3 + Duration::from_millis(5),
        "median {hung:?} with the receiver hung, {baseline:?} before"
    );
    wait_until(SEEN, "drops counted", || gateway.metric("pointwork_export_dropped_total{exporter=\"langfuse\"}") > 0.0);
    wait_until(SEEN, "the timed-out export counted as a failure", || {
        gateway.metric("pointwork_export_failures_total{exporter=\"langfuse\"}") >= 1.0
    });

    receiver.mode("ok");
    assert_eq!(chat(&gateway, MASTER, "gpt", "after").status, 200);
    receiver.wait_generations("after", 1);
    assert_nothing_secret(&receiver, &["sk-dep-gpt"]);
}

/// A gateway configured by `pointwork.telemetry` (`own`, the lines under `pointwork:`), no callbacks.
fn gateway_with_telemetry(ok: &Mock, broken: &Mock, own: &str, env: &[(&str, &str)]) -> Gateway {
    let yaml = config(
        &[priced(ok), deployment("broken", "dep-broken", "openai/gpt-4o", broken, "")],
        &format!("router_settings: {{num_retries: 0}}\ngeneral_settings: {{master_key: {MASTER}}}\npointwork:\n{own}"),
    );
    Gateway::start_with(&yaml, GatewayOptions { env: env.to_vec(), ..GatewayOptions::default() })
}
