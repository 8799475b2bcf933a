//! The dry run, over real processes: `pointwork route` on files, `POST /v1/route` on a running
//! gateway with live state, and the `x-pointwork-route` header on real responses.

mod common;

use std::process::Command;

use common::{chat_body, config, deployment, pointwork_bin, Gateway, Mock, TempDir, SHUFFLE_TRIES};
use serde_json::{json, Value};

const MODEL: &str = "openai/gpt-4o-mini";

/// Runs `pointwork route` with the files; returns (exit code, stdout, stderr).
fn route(dir: &TempDir, yaml: &str, request: &Value, state: Option<&Value>, seed: u64) -> (i32, String, String) {
    let config = dir.write("config.yaml", yaml);
    let request = dir.write("request.json", &request.to_string());
    let mut command = Command::new(pointwork_bin());
    command
        .arg("route")
        .arg("--config")
        .arg(&config)
        .arg("--request")
        .arg(&request)
        .args(["--seed", &seed.to_string()]);
    if let Some(state) = state {
        command.arg("--state").arg(dir.write("state.json", &state.to_string()));
    }
    let out = command.output().expect("run pointwork route");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn pair_yaml(a: &Mock, b: &Mock) -> String {
    config(
        &[deployment("gpt", "dep-a", MODEL, a, "weight: 1"), deployment("gpt", "dep-b", MODEL, b, "weight: 3")],
        "router_settings: {num_retries: 1, allowed_fails: 0, cooldown_time: 60}\n",
    )
}

fn chat(model: &str) -> Value {
    serde_json::from_str(&chat_body(model, false)).unwrap()
}

fn candidate<'a>(out: &'a Value, id: &str) -> &'a Value {
    out["candidates"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap_or_else(|| panic!("no {id} in {out}"))
}

#[test]
fn the_cli_explains_every_candidate_from_a_state_file() {
    let (a, b) = (Mock::start("a", &[]), Mock::start("b", &[]));
    let dir = TempDir::new("dry-run");
    let state = json!({"cooldowns": {"dep-a": {"seconds": 30, "cause": "status_429"}}, "in_flight": {"dep-b": 2}});
    let (code, stdout, stderr) = route(&dir, &pair_yaml(&a, &b), &chat("gpt"), Some(&state), 7);
    assert_eq!(code, 0, "{stderr}");
    let out: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(out["winner"]["id"], "dep-b");
    assert_eq!(out["winner"]["basis"], json!({"kind": "weight", "weight": 3}));
    assert_eq!(out["survivors"], json!(["dep-b"]));
    assert_eq!(out["route"], "simple-shuffle picked dep-b of 2 candidates (1 in cooldown)");
    let dep_a = candidate(&out, "dep-a");
    assert_eq!((&dep_a["status"], &dep_a["removed_by"]), (&json!("removed"), &json!("cooldown")));
    assert_eq!(dep_a["inputs"]["cooldown_cause"], "status_429");
    assert!(dep_a["inputs"]["cooldown_seconds"].as_f64().unwrap() > 29.0);
    assert_eq!(candidate(&out, "dep-b")["inputs"]["in_flight"], 2);
    assert_eq!(out["on_failure"]["retries"], 1);
    // The key never appears; no provider was called.
    assert!(!stdout.contains("sk-dep-"), "{stdout}");
    assert_eq!(a.request_count() + b.request_count(), 0);
}

#[test]
fn the_same_seed_gives_the_same_decision_and_all_cooling_down_is_the_litellm_error() {
    let (a, b) = (Mock::start("a", &[]), Mock::start("b", &[]));
    let dir = TempDir::new("dry-run-seed");
    let yaml = pair_yaml(&a, &b);
    // Weights 1:3: over 64 seeds both win (missing dep-a every time has odds of 0.75^64).
    let winners: Vec<String> = (0..SHUFFLE_TRIES as u64)
        .map(|seed| {
            let (code, first, _) = route(&dir, &yaml, &chat("gpt"), None, seed);
            let (_, again, _) = route(&dir, &yaml, &chat("gpt"), None, seed);
            assert_eq!((code, &first), (0, &again), "seed {seed}");
            serde_json::from_str::<Value>(&first).unwrap()["winner"]["id"].as_str().unwrap().to_string()
        })
        .collect();
    assert!(winners.iter().any(|w| w == "dep-a") && winners.iter().any(|w| w == "dep-b"), "{winners:?}");

    let state = json!({"cooldowns": {"dep-a": 20, "dep-b": {"seconds": 5}}});
    let (code, stdout, stderr) = route(&dir, &yaml, &chat("gpt"), Some(&state), 0);
    assert_eq!(code, 0, "{stderr}");
    let out: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(out["winner"], Value::Null);
    assert_eq!(out["error"]["status"], 429);
    let message = out["error"]["message"].as_str().unwrap();
    assert!(message.starts_with("No deployments available for selected model"), "{message}");
    assert_eq!(candidate(&out, "dep-b")["removed_by"], "cooldown");
}

#[test]
fn an_unknown_model_is_explained_and_exits_1() {
    let (a, b) = (Mock::start("a", &[]), Mock::start("b", &[]));
    let dir = TempDir::new("dry-run-unknown");
    let yaml = pair_yaml(&a, &b);
    let (code, stdout, stderr) = route(&dir, &yaml, &chat("gpt-9"), None, 0);
    assert_eq!(code, 1, "{stderr}");
    let message = "Invalid model name passed in model=gpt-9";
    assert!(stderr.contains(message), "{stderr}");
    // The explanation is printed all the same.
    let out: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!((&out["model"], &out["winner"], &out["candidates"]), (&json!("gpt-9"), &Value::Null, &json!([])));
    assert_eq!(out["error"]["status"], 400);
    assert!(out["error"]["message"].as_str().unwrap().starts_with(message), "{out}");
    // A deployment id is a known name.
    let (code, stdout, stderr) = route(&dir, &yaml, &chat("dep-a"), None, 0);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(serde_json::from_str::<Value>(&stdout).unwrap()["winner"]["id"], "dep-a");
}

#[test]
fn bad_state_and_request_files_name_what_is_wrong() {
    let (a, b) = (Mock::start("a", &[]), Mock::start("b", &[]));
    let dir = TempDir::new("dry-run-bad");
    let yaml = pair_yaml(&a, &b);
    let (code, _, stderr) = route(&dir, &yaml, &chat("gpt"), Some(&json!({"cooldowns": {"dep-x": 3}})), 0);
    assert_eq!(code, 1);
    assert!(stderr.contains("state.cooldowns.dep-x: no deployment with this id"), "{stderr}");
    let (code, _, stderr) =
        route(&dir, &yaml, &chat("gpt"), Some(&json!({"cooldowns": {"dep-a": {"seconds": -1}}})), 0);
    assert_eq!(code, 1);
    assert!(stderr.contains("state.cooldowns.dep-a.seconds: expected a number ≥ 0"), "{stderr}");
    let (code, _, stderr) = route(&dir, &yaml, &json!({"messages": []}), None, 0);
    assert_eq!(code, 1);
    assert!(stderr.contains("model"), "{stderr}");
}

#[test]
fn the_live_dry_run_sees_the_gateways_cooldowns_and_calls_no_provider() {
    let a = Mock::start("a", &["--fault", "status:500"]);
    let b = Mock::start("b", &[]);
    let gateway = Gateway::start(&pair_yaml(&a, &b));
    // Until dep-a failed once (and cools down for a minute).
    for _ in 0..SHUFFLE_TRIES {
        gateway.chat("gpt");
        if a.request_count() > 0 {
            break;
        }
    }
    assert_eq!(a.request_count(), 1);
    let calls = b.request_count();
    let r = gateway.post("/v1/route?seed=3", &chat_body("gpt", false));
    assert_eq!(r.status, 200, "{}", r.text());
    let out = r.json();
    assert_eq!(out["winner"]["id"], "dep-b");
    assert_eq!(out["seed"], 3);
    let dep_a = candidate(&out, "dep-a");
    assert_eq!(dep_a["removed_by"], "cooldown");
    assert_eq!(dep_a["inputs"]["cooldown_cause"], "status_500");
    assert_eq!((a.request_count(), b.request_count()), (1, calls), "the dry run called a provider");
    // A normal response says the same in one line.
    let served = gateway.chat("gpt");
    assert_eq!(served.header("x-pointwork-route"), Some("simple-shuffle picked dep-b of 2 candidates (1 in cooldown)"));
}

#[test]
fn the_live_dry_run_needs_the_master_key_when_one_is_set() {
    let a = Mock::start("a", &[]);
    let yaml = config(&[deployment("gpt", "dep-a", MODEL, &a, "")], "general_settings: {master_key: sk-admin-1234}\n");
    let gateway = Gateway::start(&yaml);
    let body = chat_body("gpt", false);
    assert_eq!(gateway.post("/v1/route", &body).status, 401);
    let ok =
        gateway.client().request("POST", "/v1/route", &[("authorization", "Bearer sk-admin-1234")], body.as_bytes());
    assert_eq!(ok.status, 200, "{}", ok.text());
    assert_eq!(ok.json()["winner"]["id"], "dep-a");
    let unknown = gateway.client().request(
        "POST",
        "/v1/route",
        &[("authorization", "Bearer sk-admin-1234")],
        chat_body("nope", false).as_bytes(),
    );
    assert_eq!(unknown.status, 200);
    assert_eq!(unknown.json()["error"]["status"], 400);
    assert_eq!(a.request_count(), 0);
}

#[test]
fn the_dry_run_says_what_a_failure_would_try_next() {
    let (a, b) = (Mock::start("a", &[]), Mock::start("b", &[]));
    let dir = TempDir::new("dry-run-next");
    let yaml = config(
        &[
            deployment("gpt", "dep-a", MODEL, &a, "order: 1"),
            deployment("gpt", "dep-s", MODEL, &a, "order: 2"),
            deployment("big", "dep-b", MODEL, &b, ""),
        ],
        "router_settings:\n  num_retries: 2\n  fallbacks: [{gpt: [big]}]\n  context_window_fallbacks: [{gpt: [big]}]\n  max_fallbacks: 3\n",
    );
    let (code, stdout, stderr) = route(&dir, &yaml, &chat("gpt"), None, 0);
    assert_eq!(code, 0, "{stderr}");
    let out: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(out["winner"]["id"], "dep-a");
    assert_eq!(candidate(&out, "dep-s")["removed_by"], "order_tier");
    assert_eq!(
        out["on_failure"],
        json!({
            "retries": 2,
            "retry_candidates": [],
            "next_order": 2,
            "fallbacks": {"generic": ["big"], "context_window": ["big"], "content_policy": []},
            "max_fallbacks": 3,
        })
    );
}
