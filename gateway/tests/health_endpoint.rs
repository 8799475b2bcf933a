//! `GET /health` as LiteLLM answers it, through the real gateway: the healthy and unhealthy
//! deployments with their counts, from the background health checks when they run and from a
//! round of probes on the spot when they do not; behind the API's keys (401 without one), a
//! virtual key seeing only its models and no `api_base`; `?model=` and `?model_id=` narrowing
//! the answer (503 when nothing narrowed is healthy); never a key in it.

mod common;

use common::{config, deployment, Gateway, Mock};
use pointwork_gateway::keys::digest_hex;
use serde_json::{json, Value};

/// How long the first background round may take to be reported (a debug build on a busy machine).
const REPORT_DEADLINE: std::time::Duration = std::time::Duration::from_secs(30);

fn health(gateway: &Gateway, query: &str, key: Option<&str>) -> common::Response {
    let bearer = key.map(|k| format!("Bearer {k}"));
    let headers: Vec<(&str, &str)> = bearer.iter().map(|b| ("authorization", b.as_str())).collect();
    gateway.client().request("GET", &format!("/health{query}"), &headers, b"")
}

fn ids(endpoints: &Value) -> Vec<&str> {
    endpoints.as_array().unwrap().iter().map(|e| e["model_id"].as_str().unwrap()).collect()
}

fn two_deployments(good: &Mock, bad: &Mock, rest: &str) -> String {
    config(
        &[
            deployment("gpt", "dep-good", "openai/gpt-4o-mini", good, "rpm: 600"),
            deployment("other", "dep-bad", "openai/gpt-4o", bad, ""),
        ],
        &format!(
            "general_settings: {{master_key: sk-master{rest}}}\npointwork:\n  auth:\n    virtual_keys:\n      \
             - {{name: team, sha256: {}, models: [gpt]}}\n",
            digest_hex(b"sk-team")
        ),
    )
}

#[test]
fn health_answers_from_the_background_checks_behind_the_keys() {
    let good = Mock::start("good", &[]);
    let bad = Mock::start("bad", &["--fault", "status:503"]);
    let gateway =
        Gateway::start(&two_deployments(&good, &bad, ", background_health_checks: true, health_check_interval: 600"));
    gateway.process.wait_for_stderr("health checks: unhealthy: dep-bad", REPORT_DEADLINE);

    // No key: LiteLLM's 401, in its error shape.
    let r = health(&gateway, "", None);
    assert_eq!(r.status, 401, "{}", r.text());
    let error = &r.json()["error"];
    assert_eq!((error["code"].as_str(), error["param"].clone()), (Some("401"), Value::Null), "{error}");
    assert!(error["message"].as_str().unwrap().contains("no API key passed in"), "{error}");
    assert_eq!(health(&gateway, "", Some("sk-wrong")).status, 401);

    let requests_before = (good.request_count(), bad.request_count());
    let r = health(&gateway, "", Some("sk-master"));
    assert_eq!(r.status, 200, "{}", r.text());
    let answer = r.json();
    assert_eq!((answer["healthy_count"].clone(), answer["unhealthy_count"].clone()), (json!(1), json!(1)));
    assert_eq!(
        answer["healthy_endpoints"][0],
        json!({"model": "openai/gpt-4o-mini", "api_base": good.api_base(), "rpm": 600, "model_id": "dep-good"})
    );
    let unhealthy = &answer["unhealthy_endpoints"][0];
    assert_eq!((unhealthy["model"].as_str(), unhealthy["model_id"].as_str()), (Some("openai/gpt-4o"), Some("dep-bad")));
    assert!(unhealthy["error"].as_str().unwrap().contains("health check"), "{unhealthy}");
    assert!(!r.text().contains("sk-dep"), "never a deployment's key: {}", r.text());
    assert_eq!(
        (good.request_count(), bad.request_count()),
        requests_before,
        "the background results are read, nothing is probed for the answer"
    );

    // Narrowed: by group, by the model as written, by id; nothing healthy there is a 503.
    let r = health(&gateway, "?model=gpt", Some("sk-master"));
    assert_eq!((r.status, ids(&r.json()["healthy_endpoints"])), (200, vec!["dep-good"]), "{}", r.text());
    assert_eq!(r.json()["unhealthy_count"], 0);
    let r = health(&gateway, "?model=openai%2Fgpt-4o", Some("sk-master"));
    assert_eq!((r.status, ids(&r.json()["unhealthy_endpoints"])), (503, vec!["dep-bad"]), "{}", r.text());
    assert_eq!(r.json()["healthy_count"], 0);
    let r = health(&gateway, "?model_id=dep-bad", Some("sk-master"));
    assert_eq!((r.status, r.json()["unhealthy_count"].clone()), (503, json!(1)), "{}", r.text());

    // A virtual key: only its models, and no api_base (LiteLLM's admin-only fields).
    let r = health(&gateway, "", Some("sk-team"));
    assert_eq!(r.status, 200, "{}", r.text());
    let answer = r.json();
    assert_eq!((ids(&answer["healthy_endpoints"]), answer["unhealthy_count"].clone()), (vec!["dep-good"], json!(0)));
    assert!(answer["healthy_endpoints"][0].get("api_base").is_none(), "{answer}");
}

#[test]
fn without_background_checks_health_probes_on_the_spot() {
    let good = Mock::start("good", &[]);
    let bad = Mock::start("bad", &["--fault", "status:503"]);
    let gateway = Gateway::start(&two_deployments(&good, &bad, ""));
    assert_eq!((good.request_count(), bad.request_count()), (0, 0), "no background checks");

    let r = health(&gateway, "", Some("sk-master"));
    assert_eq!(r.status, 200, "{}", r.text());
    let answer = r.json();
    assert_eq!(
        (ids(&answer["healthy_endpoints"]), ids(&answer["unhealthy_endpoints"])),
        (vec!["dep-good"], vec!["dep-bad"])
    );
    assert!(answer["unhealthy_endpoints"][0]["error"].as_str().unwrap().contains("status 503"), "{answer}");
    assert_eq!((good.request_count(), bad.request_count()), (1, 1), "one probe each");
    let probe = &good.requests()[0];
    assert_eq!(probe["path"], "/v1/chat/completions");
    let body: Value = serde_json::from_str(probe["body"].as_str().unwrap()).unwrap();
    assert_eq!(body["model"], "gpt-4o-mini");

    // `?model=` probes only that group's deployments.
    let r = health(&gateway, "?model=other", Some("sk-master"));
    assert_eq!((r.status, r.json()["unhealthy_count"].clone()), (503, json!(1)), "{}", r.text());
    assert_eq!((good.request_count(), bad.request_count()), (1, 2));
}

#[test]
fn a_gpt_5_deployment_is_probed_with_max_completion_tokens() {
    let mock = Mock::start("m", &[]);
    let gateway = Gateway::start(&config(&[deployment("five", "dep-five", "openai/gpt-5-mini", &mock, "")], ""));
    let r = health(&gateway, "", None);
    assert_eq!((r.status, r.json()["healthy_count"].clone()), (200, json!(1)), "no master key: open, as LiteLLM");
    let body: Value = serde_json::from_str(mock.requests()[0]["body"].as_str().unwrap()).unwrap();
    assert_eq!((body["max_completion_tokens"].clone(), body.get("max_tokens")), (json!(1), None), "{body}");
}
