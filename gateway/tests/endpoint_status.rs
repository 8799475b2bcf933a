//! `POST /admin/endpoints/{id}/status` through the real gateway with two shards: who may call
//! it, what it refuses, the status reaching every shard (read back from `GET /metrics`, which
//! each shard renders from its own state), and what a reload keeps.

mod common;

use std::time::{Duration, Instant};

use common::{config, deployment, Gateway, GatewayOptions, Mock, Response, LOG_DEADLINE};
use pointwork_gateway::keys::digest_hex;

const MASTER: &str = "sk-master-5555";
const OPS: &str = "sk-ops-3333";
/// Fresh connections per round of `/metrics`: SO_REUSEPORT spreads them over both shards, so
/// all of them landing on the shard that served the admin call has odds of 2^-19.
const CONNECTIONS: usize = 20;

/// A policy endpoint (`model_info` with a sovereignty class and a region) on `mock`.
fn endpoint(id: &str, mock: &Mock, status: Option<&str>) -> String {
    let status = status.map_or(String::new(), |s| format!(", status: {s}"));
    format!(
        "  - model_name: gpt\n    litellm_params: {{model: openai/gpt-4o-mini, api_base: \"{}\", api_key: sk-{id}}}\n    model_info: {{id: {id}, sovereignty_class: eu_owned_eu_operated, region: de-ber{status}}}\n",
        mock.api_base()
    )
}

/// eu-1 (`up` by default), eu-2 (configured `eu2`), and plain (no policy attributes), with the
/// master key and the admin key `ops`.
fn yaml(mock: &Mock, eu1: Option<&str>, eu2: &str) -> String {
    let rest = format!(
        "general_settings: {{master_key: {MASTER}}}\npointwork:\n  auth:\n    admin_keys:\n      - {{name: ops, sha256: {}}}\n",
        digest_hex(OPS.as_bytes())
    );
    let entries = [
        endpoint("eu-1", mock, eu1),
        endpoint("eu-2", mock, Some(eu2)),
        deployment("gpt", "plain", "openai/gpt-4o-mini", mock, ""),
    ];
    config(&entries, &rest)
}

fn two_shards(yaml: &str) -> Gateway {
    Gateway::start_with(yaml, GatewayOptions { shards: 2, ..GatewayOptions::default() })
}

fn set_status(gateway: &Gateway, bearer: Option<&str>, id: &str, body: &str) -> Response {
    let auth = bearer.map(|b| format!("Bearer {b}"));
    let mut headers = vec![("content-type", "application/json")];
    headers.extend(auth.iter().map(|a| ("authorization", a.as_str())));
    gateway.client().request("POST", &format!("/admin/endpoints/{id}/status"), &headers, body.as_bytes())
}

fn status_line(id: &str, status: &str) -> String {
    format!("pointwork_endpoint_status{{deployment=\"{id}\",status=\"{status}\"}} 1\n")
}

/// Asks `/metrics` on `CONNECTIONS` fresh connections, round after round, until every answer
/// contains every line of `lines`; panics with an answer that did not after a deadline.
fn until_every_shard_shows(gateway: &Gateway, lines: &[String]) {
    let until = Instant::now() + LOG_DEADLINE;
    loop {
        let missing = (0..CONNECTIONS).map(|_| gateway.get("/metrics")).find(|r| {
            assert_eq!(r.status, 200, "{}", r.text());
            !lines.iter().all(|l| r.text().contains(l.as_str()))
        });
        let Some(answer) = missing else { return };
        assert!(Instant::now() < until, "a shard still lacks {lines:?}:\n{}", answer.text());
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn assert_error(r: &Response, status: u16, message: &str) {
    assert_eq!(r.status, status, "{}", r.text());
    let text = r.json()["error"]["message"].as_str().unwrap_or_default().to_string();
    assert!(text.contains(message), "{message:?} not in {text:?}");
}

#[test]
fn only_operators_set_a_status_of_a_known_policy_endpoint_to_a_word() {
    let mock = Mock::start("m", &[]);
    let gateway = two_shards(&yaml(&mock, None, "degraded"));
    let body = r#"{"status": "maintenance"}"#;

    for bearer in [None, Some("sk-wrong"), Some("sk-ops-333")] {
        let r = set_status(&gateway, bearer, "eu-1", body);
        assert_eq!(r.status, 401, "{bearer:?}: {}", r.text());
        assert_eq!(r.json()["error"]["type"], "authentication_error", "{}", r.text());
    }
    assert_error(&set_status(&gateway, Some(MASTER), "nope", body), 404, "no deployment with id \"nope\"");
    assert_error(&set_status(&gateway, Some(OPS), "eu-1%zz", body), 400, "percent-encoded");
    for bad in [
        "",
        "maintenance",
        r#"{"status": "Maintenance"}"#,
        r#"{"status": "in maintenance"}"#,
        r#"{"status": ""}"#,
        r#"{"status": 3}"#,
        r#"{"status": "down", "why": "x"}"#,
        r#"["down"]"#,
    ] {
        assert_error(&set_status(&gateway, Some(MASTER), "eu-1", bad), 400, "the body must be {\"status\"");
    }
    assert_error(&set_status(&gateway, Some(MASTER), "plain", body), 400, "has no policy attributes");
    let get = gateway.client().request("GET", "/admin/endpoints/eu-1/status", &[], b"");
    assert_eq!((get.status, get.header("allow")), (405, Some("POST")), "{}", get.text());

    // Nothing refused changed anything, and nothing was logged.
    until_every_shard_shows(&gateway, &[status_line("eu-1", "up"), status_line("eu-2", "degraded")]);
    let metrics = gateway.get("/metrics").text();
    assert!(!metrics.contains("deployment=\"plain\""), "plain is no policy endpoint:\n{metrics}");
    assert!(!gateway.process.stderr().contains("(admin)"), "{}", gateway.process.stderr());

    // The admin key is as good as the master key.
    let r = set_status(&gateway, Some(OPS), "eu-2", r#"{"status":"read-only_2"}"#);
    assert_eq!((r.status, r.json()), (200, serde_json::json!({"id": "eu-2", "status": "read-only_2"})));
}

#[test]
fn a_status_set_on_one_shard_reaches_every_shard() {
    let mock = Mock::start("m", &[]);
    let gateway = two_shards(&yaml(&mock, None, "degraded"));
    until_every_shard_shows(&gateway, &[status_line("eu-1", "up"), status_line("eu-2", "degraded")]);

    let r = set_status(&gateway, Some(MASTER), "eu-1", r#"{"status": "maintenance"}"#);
    assert_eq!((r.status, r.json()), (200, serde_json::json!({"id": "eu-1", "status": "maintenance"})));
    gateway.process.wait_for_stderr("pointwork: endpoint eu-1 status up -> maintenance (admin)\n", LOG_DEADLINE);
    until_every_shard_shows(&gateway, &[status_line("eu-1", "maintenance"), status_line("eu-2", "degraded")]);

    // Back to the config's word is an ordinary set; the log names the operator's old one.
    let r = set_status(&gateway, Some(MASTER), "eu-1", r#"{"status": "up"}"#);
    assert_eq!(r.status, 200, "{}", r.text());
    gateway.process.wait_for_stderr("pointwork: endpoint eu-1 status maintenance -> up (admin)\n", LOG_DEADLINE);
    until_every_shard_shows(&gateway, &[status_line("eu-1", "up")]);
}

#[test]
fn a_reload_keeps_the_status_unless_it_changes_the_configured_one() {
    let mock = Mock::start("m", &[]);
    let gateway = two_shards(&yaml(&mock, None, "degraded"));
    for id in ["eu-1", "eu-2"] {
        assert_eq!(set_status(&gateway, Some(MASTER), id, r#"{"status": "down"}"#).status, 200);
    }
    until_every_shard_shows(&gateway, &[status_line("eu-1", "down"), status_line("eu-2", "down")]);

    let reload = |yaml: &str| {
        std::fs::write(&gateway.config_path, yaml).expect("rewrite the config");
        let headers = [("authorization", format!("Bearer {MASTER}"))];
        let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let r = gateway.client().request("POST", "/admin/reload", &headers, b"");
        assert_eq!(r.status, 200, "{}", r.text());
    };
    // eu-1 now says `up` outright (what it meant before); eu-2's configured status changes.
    reload(&yaml(&mock, Some("up"), "maintenance"));
    until_every_shard_shows(&gateway, &[status_line("eu-1", "down"), status_line("eu-2", "maintenance")]);
}
