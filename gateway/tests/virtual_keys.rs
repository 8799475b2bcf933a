//! Virtual keys and admin keys (`pointwork.auth`) through the real gateway: who may call what,
//! each key's models, rpm / tpm / budget across shards (429 with `Retry-After`), its tags in the
//! pick, meters kept over a reload, admin keys for the operator endpoints and metrics.

mod common;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::{chat_body, config, deployment, priced, send_signal, Gateway, GatewayOptions, Mock, Response};
use pointwork_gateway::keys::digest_hex;

const MASTER: &str = "sk-master-5555";
const TEAM_A: &str = "sk-team-a-1111";
const TEAM_B: &str = "sk-team-b-2222";
const OPS: &str = "sk-ops-3333";

fn key(name: &str, secret: &str, extra: &str) -> String {
    format!("      - {{name: {name}, sha256: {}{extra}}}\n", digest_hex(secret.as_bytes()))
}

fn auth(keys: &[String], rest: &str) -> String {
    format!(
        "general_settings: {{master_key: {MASTER}}}\npointwork:\n  auth:\n{rest}    virtual_keys:\n{}",
        keys.concat()
    )
}

fn call(gateway: &Gateway, secret: &str, method: &str, path: &str, body: &str) -> Response {
    let bearer = format!("Bearer {secret}");
    gateway.client().request(method, path, &[("authorization", &bearer)], body.as_bytes())
}

fn chat(gateway: &Gateway, secret: &str, model: &str) -> Response {
    call(gateway, secret, "POST", "/v1/chat/completions", &chat_body(model, false))
}

/// Per-minute limits start over when the minute does: a test of them starts early in a minute.
fn early_in_a_minute() {
    let second = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() % 60;
    if second > 45 {
        std::thread::sleep(Duration::from_secs(61 - second));
    }
}

#[test]
fn a_key_reaches_only_its_models_and_is_named_in_the_access_log() {
    let mock = Mock::start("m", &[]);
    let yaml = config(
        &[
            deployment("gpt", "dep-gpt", "openai/gpt-4o-mini", &mock, ""),
            deployment("big", "dep-big", "openai/gpt-4o", &mock, ""),
        ],
        &(auth(&[key("team-a", TEAM_A, ", models: [gpt]"), key("team-b", TEAM_B, "")], "")
            + "  access_log: stdout\nrouter_settings: {model_group_alias: {small: gpt}}\n"),
    );
    let mut gateway = Gateway::start(&yaml);
    assert_eq!(chat(&gateway, TEAM_A, "gpt").status, 200);
    assert_eq!(chat(&gateway, TEAM_A, "small").status, 200, "an alias of an allowed group");
    let refused = chat(&gateway, TEAM_A, "big");
    assert_eq!(refused.status, 401, "{}", refused.text());
    let error = &refused.json()["error"];
    assert_eq!(error["type"], "key_model_access_denied");
    assert_eq!(
        error["message"],
        "API Key not allowed to access model. This token can only access models=['gpt']. Tried to access big"
    );
    assert_eq!(chat(&gateway, TEAM_B, "big").status, 200, "a key without a list may use every model");
    assert_eq!(chat(&gateway, MASTER, "big").status, 200);
    let unknown = chat(&gateway, "sk-team-c-0000", "gpt");
    assert_eq!((unknown.status, &unknown.json()["error"]["type"]), (401, &"authentication_error".into()));

    let ids = |r: Response| -> Vec<String> {
        r.json()["data"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap().to_string()).collect()
    };
    assert_eq!(ids(call(&gateway, TEAM_A, "GET", "/v1/models", "")), ["gpt", "small"]);
    assert_eq!(ids(call(&gateway, TEAM_B, "GET", "/v1/models", "")), ["gpt", "big", "small"]);

    let line = gateway.process.wait_for_line(r#""key":"team-b""#, Duration::from_secs(10));
    assert!(line.contains(r#""model":"big""#), "{line}");
    let all = gateway.process.stdout();
    for secret in [TEAM_A, TEAM_B, MASTER] {
        assert!(!all.contains(secret), "a key is never logged");
    }
}

#[test]
fn rpm_holds_across_shards_and_answers_429_with_retry_after() {
    let mock = Mock::start("m", &[]);
    let yaml = config(
        &[deployment("gpt", "dep-gpt", "openai/gpt-4o-mini", &mock, "")],
        &auth(&[key("team-a", TEAM_A, ", rpm: 5"), key("team-b", TEAM_B, "")], ""),
    );
    let gateway = Gateway::start_with(&yaml, GatewayOptions { shards: 2, ..GatewayOptions::default() });
    early_in_a_minute();
    // Fresh connections spread over both shards; counted per shard, 10 would pass.
    let statuses: Vec<u16> = (0..10).map(|_| chat(&gateway, TEAM_A, "gpt").status).collect();
    assert_eq!(statuses.iter().filter(|&&s| s == 200).count(), 5, "{statuses:?}");
    let refused = chat(&gateway, TEAM_A, "gpt");
    assert_eq!(refused.status, 429);
    let retry_after: u64 = refused.header("retry-after").expect("Retry-After").parse().unwrap();
    assert!((1..=60).contains(&retry_after), "{retry_after}");
    let error = &refused.json()["error"];
    assert_eq!(error["type"], "rate_limit_error");
    assert!(error["message"].as_str().unwrap().contains("rpm limit 5 reached"), "{error}");
    assert_eq!(mock.request_count(), 5, "refused requests never reach a provider");
    assert_eq!(chat(&gateway, TEAM_B, "gpt").status, 200, "another key has its own limit");
}

#[test]
fn tpm_and_budget_count_what_responses_report() {
    let mock = Mock::start("m", &[]);
    let yaml = config(
        &[priced(&mock)],
        &auth(
            &[key("tokens", TEAM_A, ", tpm: 10"), key("money", TEAM_B, ", max_budget: 0.01, budget_duration: 1d")],
            "",
        ),
    );
    let gateway = Gateway::start_with(&yaml, GatewayOptions { shards: 2, ..GatewayOptions::default() });
    early_in_a_minute();
    // One response reports well over 10 tokens and costs well over a cent.
    for (secret, status, kind, text) in [
        (TEAM_A, 429, "rate_limit_error", "tpm limit 10 reached"),
        (TEAM_B, 400, "budget_exceeded", "Budget has been exceeded! Key=money"),
    ] {
        assert_eq!(chat(&gateway, secret, "gpt").status, 200);
        // The other shard knows too: a few fresh connections land on both.
        for _ in 0..4 {
            let r = chat(&gateway, secret, "gpt");
            assert_eq!(r.status, status, "{}", r.text());
            let error = &r.json()["error"];
            assert_eq!(error["type"], kind);
            assert!(error["message"].as_str().unwrap().contains(text), "{error}");
            assert!(r.header("retry-after").is_some(), "both limits end: the minute, the day");
        }
    }
    assert_eq!(mock.request_count(), 2);
}

#[test]
fn a_keys_tags_steer_its_requests() {
    let paid = Mock::start("paid", &[]);
    let free = Mock::start("free", &[]);
    let yaml = config(
        &[
            deployment("gpt", "dep-paid", "openai/gpt-4o-mini", &paid, "tags: [paid]"),
            deployment("gpt", "dep-free", "openai/gpt-4o-mini", &free, "tags: [free]"),
        ],
        &(auth(&[key("team-a", TEAM_A, ", tags: [paid]")], "") + "router_settings: {enable_tag_filtering: true}\n"),
    );
    let gateway = Gateway::start(&yaml);
    for _ in 0..20 {
        let r = chat(&gateway, TEAM_A, "gpt");
        assert_eq!((r.status, r.deployment()), (200, "dep-paid"), "{}", r.text());
    }
}

#[test]
fn a_reload_keeps_a_keys_count_and_applies_new_and_removed_keys() {
    let mock = Mock::start("m", &[]);
    let deployments = [deployment("gpt", "dep-gpt", "openai/gpt-4o-mini", &mock, "")];
    let before = config(&deployments, &auth(&[key("team-a", TEAM_A, ", rpm: 2"), key("team-b", TEAM_B, "")], ""));
    let gateway = Gateway::start(&before);
    early_in_a_minute();
    assert_eq!(chat(&gateway, TEAM_A, "gpt").status, 200);
    assert_eq!(chat(&gateway, TEAM_A, "gpt").status, 200);
    assert_eq!(chat(&gateway, TEAM_B, "gpt").status, 200);
    let after = config(&deployments, &auth(&[key("team-a", TEAM_A, ", rpm: 2"), key("ops-new", OPS, "")], ""));
    std::fs::write(&gateway.config_path, after).unwrap();
    send_signal(&gateway.process, libc::SIGHUP);
    let line = gateway.process.wait_for_stderr("reload (SIGHUP)", Duration::from_secs(10));
    assert!(line.contains("virtual keys added ops-new; removed team-b"), "{line}");
    assert_eq!(chat(&gateway, TEAM_A, "gpt").status, 429, "the minute's count survived the reload");
    assert_eq!(chat(&gateway, TEAM_B, "gpt").status, 401, "a removed key is refused at once");
    assert_eq!(chat(&gateway, OPS, "gpt").status, 200, "a new key works at once");
}

#[test]
fn admin_keys_open_the_operator_endpoints_and_metrics_name_keys_only() {
    let mock = Mock::start("m", &[]);
    let admin = format!("    metrics: key\n    admin_keys:\n{}", key("ops", OPS, ""));
    let yaml = config(
        &[deployment("gpt", "dep-gpt", "openai/gpt-4o-mini", &mock, "")],
        &auth(&[key("team-a", TEAM_A, "")], &admin),
    );
    let gateway = Gateway::start(&yaml);
    assert_eq!(chat(&gateway, TEAM_A, "gpt").status, 200);
    let route_body = chat_body("gpt", false);
    for secret in [OPS, MASTER] {
        assert_eq!(call(&gateway, secret, "POST", "/v1/route", &route_body).status, 200);
        assert_eq!(call(&gateway, secret, "GET", "/metrics", "").status, 200);
    }
    assert_eq!(chat(&gateway, OPS, "gpt").status, 401, "an admin key is not an API key");
    for path in ["/v1/route", "/admin/reload"] {
        let r = call(&gateway, TEAM_A, "POST", path, &route_body);
        assert_eq!(r.status, 401, "a virtual key is not an admin key: {path}");
    }
    assert_eq!(gateway.get("/metrics").status, 401);
    assert_eq!(gateway.get("/health/readiness").status, 200);
    let metrics = call(&gateway, OPS, "GET", "/metrics", "").text();
    assert!(metrics.contains("pointwork_key_requests_this_minute{key=\"team-a\"} 1"), "{metrics}");
    assert!(metrics.contains("pointwork_key_refused_total{key=\"team-a\",limit=\"rpm\"} 0"), "{metrics}");
    assert!(!metrics.contains(&digest_hex(TEAM_A.as_bytes())) && !metrics.contains(TEAM_A));
}

#[test]
fn spend_outlives_a_restart_in_an_owner_only_file() {
    use std::os::unix::fs::PermissionsExt;
    let mock = Mock::start("m", &[]);
    let dir = common::TempDir::new("spend");
    let spend = dir.path().join("spend.json");
    let yaml = config(
        &[priced(&mock)],
        &auth(&[key("money", TEAM_A, ", max_budget: 0.01")], &format!("    spend_file: {}\n", spend.display())),
    );
    let mut first = Gateway::start(&yaml);
    assert_eq!(chat(&first, TEAM_A, "gpt").status, 200, "one response spends the budget");
    send_signal(&first.process, libc::SIGTERM);
    assert!(first.process.wait_exit(Duration::from_secs(30)).success());
    let mode = std::fs::metadata(&spend).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let text = std::fs::read_to_string(&spend).unwrap();
    assert!(text.contains(&digest_hex(TEAM_A.as_bytes())) && !text.contains(TEAM_A), "{text}");

    let second = Gateway::start(&yaml);
    let r = chat(&second, TEAM_A, "gpt");
    assert_eq!(r.status, 400, "the budget is still spent after the restart: {}", r.text());
    assert_eq!(r.json()["error"]["type"], "budget_exceeded");
    assert_eq!(mock.request_count(), 1);
    drop(second);

    // A symlink where the file should be: the gateway refuses to start rather than follow it.
    std::fs::remove_file(&spend).unwrap();
    std::os::unix::fs::symlink(dir.path().join("elsewhere"), &spend).unwrap();
    let path = dir.write("config.yaml", &yaml);
    let out = std::process::Command::new(common::pointwork_bin())
        .args(["serve", "--config", path.to_str().unwrap(), "--listen", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("is a symlink; refusing to follow it"));
}

#[test]
fn with_virtual_keys_alone_the_operator_endpoints_stay_closed() {
    let mock = Mock::start("m", &[]);
    let yaml = format!(
        "{}pointwork:\n  auth:\n    virtual_keys:\n{}",
        config(&[deployment("gpt", "dep-gpt", "openai/gpt-4o-mini", &mock, "")], ""),
        key("team-a", TEAM_A, "")
    );
    let gateway = Gateway::start(&yaml);
    assert_eq!(chat(&gateway, TEAM_A, "gpt").status, 200);
    let body = chat_body("gpt", false);
    for path in ["/v1/route", "/admin/reload"] {
        let closed = gateway.post(path, &body);
        assert_eq!(closed.status, 401, "{path} without a key");
        assert!(closed.text().contains("set general_settings.master_key or pointwork.auth.admin_keys"));
        assert_eq!(call(&gateway, TEAM_A, "POST", path, &body).status, 401, "{path} with a virtual key");
    }
    assert_eq!(gateway.get("/metrics").status, 200, "metrics stay open unless auth.metrics: key");
}
