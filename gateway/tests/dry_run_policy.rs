//! The dry run of a request that runs under a policy, over real processes: `pointwork route` on
//! files and `POST /v1/route` on a running gateway, against an EU policy over EU, non-EU,
//! catalogue-only and partner endpoints — every removed endpoint with its step and literal
//! reason, the survivors' scores term by term, and the same choice, failover order and route
//! reason as the real request to the same gateway; the refusals with the real request's status.

mod common;

use std::process::Command;

use common::{chat_body, pointwork_bin, Gateway, Mock, Response, TempDir};
use serde_json::{json, Value};

/// One endpoint: `model_info` gets the id and `info` (policy attributes).
fn endpoint(group: &str, id: &str, mock: &Mock, info: &str) -> String {
    format!(
        "  - model_name: {group}\n    litellm_params: {{model: openai/{group}, api_base: \"{}\", api_key: sk-{id}, input_cost_per_token: 0.0000002, output_cost_per_token: 0.0000004}}\n    model_info: {{id: {id}, {info}}}\n",
        mock.api_base()
    )
}

/// qwen in de-ber (EU-owned, best at coding) and us-east (non-EU), mistral in fr-par, a non-EU
/// model, a catalogue row, a partner endpoint, and the auto model (as in tests/policy.rs).
fn model_list(mock: &Mock) -> String {
    [
        "model_list:\n".to_string(),
        endpoint(
            "qwen3-coder-30b",
            "qwen-de",
            mock,
            "sovereignty_class: eu_owned_eu_operated, region: de-ber, task_fit: {coding: 1.0}",
        ),
        endpoint(
            "qwen3-coder-30b",
            "qwen-us",
            mock,
            "sovereignty_class: non_eu, region: us-east, task_fit: {coding: 1.0}",
        ),
        endpoint(
            "mistral-large",
            "mistral-fr",
            mock,
            "sovereignty_class: eu_owned_eu_operated, region: fr-par, task_fit: {coding: 0.4}",
        ),
        endpoint("far-model", "far-us", mock, "sovereignty_class: non_eu, region: us-west"),
        endpoint(
            "archive",
            "archive-row",
            mock,
            "kind: catalogue_only, sovereignty_class: eu_owned_eu_operated, region: de-ber",
        ),
        endpoint(
            "partner-model",
            "partner-de",
            mock,
            "sovereignty_class: eu_owned_eu_operated, region: de-fra, partner: true",
        ),
        "  - model_name: llmeu-auto\n    litellm_params: {model: pointwork/policy_router}\n".to_string(),
    ]
    .concat()
}

const POLICIES: &str = "pointwork:\n  policies:\n    eu-strict: {}\n    open: {residency_allowed: [eu_owned_eu_operated, eu_region_of_non_eu_parent, non_eu], allow_partner_endpoints: true}\n";
const EU_DEFAULT: &str = "  default_policy: eu-strict\n";

const CODING_REASON: &str = r#"auto routing for task "coding" + residency eu-hosted + qwen3-coder-30b @ de-ber (EU-owned, EU-operated); 4 endpoint(s) excluded; partner endpoints not allowed."#;

fn body(model: &str, extra: Value) -> Value {
    let mut body: Value = serde_json::from_str(&chat_body(model, false)).unwrap();
    body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    body
}

/// Runs `pointwork route` with the files; returns (exit code, stdout, stderr).
fn route(dir: &TempDir, yaml: &str, request: &Value, state: Option<&Value>) -> (i32, String, String) {
    let mut command = Command::new(pointwork_bin());
    command
        .arg("route")
        .arg("--config")
        .arg(dir.write("config.yaml", yaml))
        .arg("--request")
        .arg(dir.write("request.json", &request.to_string()));
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

/// The JSON `pointwork route` printed, after checking its exit code.
fn route_json(dir: &TempDir, yaml: &str, request: &Value, state: Option<&Value>, code: i32) -> Value {
    let (got, stdout, stderr) = route(dir, yaml, request, state);
    assert_eq!(got, code, "{stderr}\n{stdout}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

fn candidate<'a>(out: &'a Value, id: &str) -> &'a Value {
    out["candidates"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap_or_else(|| panic!("no {id} in {out}"))
}

fn ids(out: &Value) -> Vec<&str> {
    out["candidates"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect()
}

/// Checks a removed endpoint's reason and step, and that it has no score.
fn assert_removed(out: &Value, id: &str, reason: &str, step: u64) {
    let c = candidate(out, id);
    assert_eq!((&c["status"], &c["removed_by"], &c["step"]), (&json!("removed"), &json!(reason), &json!(step)), "{c}");
    assert_eq!((&c["score"], &c["terms"]), (&Value::Null, &Value::Null), "{c}");
}

/// A survivor's terms as weighted, and that they make its score.
fn terms_of(out: &Value, id: &str) -> [f64; 7] {
    let c = candidate(out, id);
    let t = &c["terms"];
    let term = |name: &str| t[name].as_f64().unwrap_or_else(|| panic!("no term {name} in {c}"));
    let terms =
        ["task_fit", "language_fit", "docs_completeness", "sovereignty_bonus", "price", "latency", "error_rate"]
            .map(term);
    let sum = terms[0] + terms[1] + terms[2] + terms[3] - terms[4] - terms[5] - terms[6];
    let score = c["score"].as_f64().unwrap();
    assert!((sum - score).abs() < 1e-9, "{id}: terms sum to {sum}, score {score}: {c}");
    assert_eq!(c["removed_by"], Value::Null);
    terms
}

fn dry_run(gateway: &Gateway, query: &str, request: &Value) -> Value {
    let r = gateway.post(&format!("/v1/route{query}"), &request.to_string());
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()
}

fn real(gateway: &Gateway, request: &Value) -> Response {
    gateway.post("/v1/chat/completions", &request.to_string())
}

#[test]
fn the_cli_explains_every_endpoint_under_the_default_policy() {
    let mock = Mock::start("m", &[]);
    let dir = TempDir::new("dry-run-policy");
    let yaml = format!("{}{POLICIES}{EU_DEFAULT}", model_list(&mock));
    let request = body("llmeu-auto", json!({"llmeu": {"task": "coding", "residency": "eu-hosted"}}));
    let out = route_json(&dir, &yaml, &request, None, 0);
    assert_eq!(
        (&out["policy"], &out["residency"], &out["auto"]),
        (&json!("eu-strict"), &json!("eu-hosted"), &json!(true))
    );
    assert_eq!(ids(&out), ["qwen-de", "qwen-us", "mistral-fr", "far-us", "archive-row", "partner-de"]);
    assert_removed(&out, "qwen-us", "residency:non_eu", 3);
    assert_removed(&out, "far-us", "residency:non_eu", 3);
    assert_removed(&out, "archive-row", "catalogue_only", 1);
    assert_removed(&out, "partner-de", "partner_not_allowed", 11);
    let de = candidate(&out, "qwen-de");
    assert_eq!(
        (&de["status"], &de["region"], &de["sovereignty_class"], &de["model"]),
        (&json!("chosen"), &json!("de-ber"), &json!("eu_owned_eu_operated"), &json!("qwen3-coder-30b"))
    );
    // Same price, no latency measured: only the task separates them.
    assert_eq!(terms_of(&out, "qwen-de"), [5.0, 1.5, 0.5, 2.0, 0.0, 0.0, 0.0]);
    assert_eq!(terms_of(&out, "mistral-fr"), [2.0, 1.5, 0.5, 2.0, 0.0, 0.0, 0.0]);
    assert_eq!(candidate(&out, "mistral-fr")["status"], "survivor");
    assert!((de["usd_per_1m"].as_f64().unwrap() - 0.6).abs() < 1e-9, "{de}");
    assert_eq!(de["latency_ms"], 500.0, "nothing measured counts 500 ms");
    assert_eq!(out["chosen"], "qwen-de");
    assert_eq!(out["tie_break"], "score");
    assert_eq!(out["failover_order"], json!(["qwen-de", "mistral-fr"]));
    assert_eq!(out["route_reason"], CODING_REASON);
    assert_eq!(out["error"], Value::Null);
    assert_eq!(mock.request_count(), 0, "the dry run called a provider");
}

#[test]
fn the_state_file_feeds_the_status_latency_and_error_rate_the_score_reads() {
    let mock = Mock::start("m", &[]);
    let dir = TempDir::new("dry-run-policy-state");
    let yaml = format!("{}{POLICIES}{EU_DEFAULT}", model_list(&mock));
    let request = body("llmeu-auto", json!({"llmeu": {"task": "coding"}}));
    // Both EU endpoints serve, the German one slower and failing one in four.
    let state = json!({
        "latency_ms": {"qwen-de": 300, "mistral-fr": 100},
        "outcomes": {"qwen-de": {"successes": 3, "failures": 1}},
    });
    let out = route_json(&dir, &yaml, &request, Some(&state), 0);
    let de = candidate(&out, "qwen-de");
    assert_eq!((&de["latency_ms"], &candidate(&out, "mistral-fr")["latency_ms"]), (&json!(300.0), &json!(100.0)));
    assert_eq!(terms_of(&out, "qwen-de")[5..], [2.0, 0.75]);
    assert_eq!(terms_of(&out, "mistral-fr")[5..], [0.0, 0.0]);
    assert_eq!(out["chosen"], "qwen-de", "5 − 2.75 still beats 2: {out}");
    // An operator's status removes it at step 2.
    let state = json!({"endpoint_status": {"qwen-de": "maintenance"}});
    let out = route_json(&dir, &yaml, &request, Some(&state), 0);
    assert_removed(&out, "qwen-de", "endpoint_maintenance", 2);
    assert_eq!(candidate(&out, "qwen-de")["endpoint_status"], "maintenance");
    assert_eq!((&out["chosen"], &out["tie_break"]), (&json!("mistral-fr"), &json!("alone")));
    assert_eq!(out["failover_order"], json!(["mistral-fr"]));
    let (code, _, stderr) = route(&dir, &yaml, &request, Some(&json!({"endpoint_status": {"qwen-de": 3}})));
    assert_eq!(code, 1);
    assert!(stderr.contains("state.endpoint_status.qwen-de: expected a status word"), "{stderr}");
}

#[test]
fn refusals_are_explained_with_the_status_the_real_request_gets() {
    let mock = Mock::start("m", &[]);
    let dir = TempDir::new("dry-run-policy-409");
    let yaml = format!("{}{POLICIES}{EU_DEFAULT}", model_list(&mock));
    let gateway = Gateway::start(&yaml);
    let message = "No endpoint satisfies residency eu-hosted for model far-model. Residency is never relaxed silently.";
    let far = body("far-model", json!({}));
    for out in [route_json(&dir, &yaml, &far, None, 0), dry_run(&gateway, "", &far)] {
        assert_eq!((&out["auto"], &out["residency"]), (&json!(false), &json!("eu-hosted")));
        assert_eq!(ids(&out), ["far-us"], "a named model is pinned to its own endpoints");
        assert_removed(&out, "far-us", "residency:non_eu", 3);
        assert_eq!(out["error"], json!({"status": 409, "code": "no_endpoint_for_policy", "message": message}));
        assert_eq!(
            (&out["chosen"], &out["route_reason"], &out["failover_order"]),
            (&Value::Null, &Value::Null, &json!([]))
        );
    }
    let r = real(&gateway, &far);
    assert_eq!((r.status, r.json()["error"]["message"].as_str()), (409, Some(message)));
    for (model, extra, status, code) in [
        ("archive", json!({}), 409, "hosted_unavailable"),
        ("nope", json!({}), 404, "model_not_found"),
        ("llmeu-auto", json!({"llmeu": {"retention": 30}}), 400, "retention_not_allowed"),
    ] {
        let request = body(model, extra);
        let out = dry_run(&gateway, "", &request);
        let r = real(&gateway, &request);
        assert_eq!((r.status, out["error"]["status"].as_u64()), (status, Some(u64::from(status))), "{out}");
        assert_eq!(r.json()["error"]["code"], code);
        assert_eq!(out["error"]["code"], code);
        assert_eq!(out["error"]["message"], r.json()["error"]["message"]);
    }
    assert_removed(&dry_run(&gateway, "", &body("archive", json!({}))), "archive-row", "catalogue_only", 1);
    // A model nothing serves is a mistake the CLI exits 1 for, its explanation printed still.
    let out = route_json(&dir, &yaml, &body("nope", json!({})), None, 1);
    assert_eq!((&out["error"]["code"], &out["candidates"]), (&json!("model_not_found"), &json!([])));
    // A bad `llmeu` object is a bad request, as for the real one.
    let bad = body("llmeu-auto", json!({"llmeu": {"residency": "mars"}}));
    let r = gateway.post("/v1/route", &bad.to_string());
    assert_eq!(r.status, 400, "{}", r.text());
    assert!(r.json()["error"]["message"].as_str().unwrap().contains("unknown residency \"mars\""), "{}", r.text());
    let (code, _, stderr) = route(&dir, &yaml, &bad, None);
    assert_eq!(code, 1);
    assert!(stderr.contains("unknown residency \"mars\""), "{stderr}");
    assert_eq!(mock.request_count(), 0, "nothing refused reached a provider");
}

#[test]
fn the_live_dry_run_chooses_what_the_real_request_gets() {
    let mock = Mock::start("m", &[]);
    let gateway = Gateway::start(&format!("{}{POLICIES}{EU_DEFAULT}", model_list(&mock)));
    for request in [
        body("llmeu-auto", json!({"llmeu": {"task": "coding", "residency": "eu-hosted"}})),
        body("llmeu-auto", json!({"llmeu": {"task": "coding", "residency": "fr"}})),
        body("mistral-large", json!({"llmeu": {"task": "coding"}})),
        body("partner-model", json!({"llmeu": {"allow_partners": true}})),
        body("qwen3-coder-30b", json!({"llmeu": {"residency": "any"}})),
    ] {
        let out = dry_run(&gateway, "", &request);
        let served = real(&gateway, &request);
        assert_eq!(served.status, 200, "{}", served.text());
        assert_eq!(out["chosen"], served.deployment(), "{request}: {out}");
        assert_eq!(out["route_reason"].as_str(), served.header("x-llmeu-route-reason"), "{request}");
        assert_eq!(out["policy"].as_str(), served.header("x-llmeu-policy-id"));
    }
    let out = dry_run(&gateway, "", &body("llmeu-auto", json!({"llmeu": {"task": "coding", "residency": "fr"}})));
    assert_removed(&out, "qwen-de", "residency_region:de-ber", 4);
    assert_eq!(out["residency"], "fr");
    // The failover order is the one the real request walks: the German endpoint fails (503),
    // the French one serves on the second attempt, the non-EU one is never tried.
    let failing = Mock::start("failing", &["--fault", "status:503"]);
    let yaml = model_list(&mock).replacen(&mock.api_base(), &failing.api_base(), 1);
    let gateway = Gateway::start(&format!("{yaml}{POLICIES}{EU_DEFAULT}"));
    let request = body("llmeu-auto", json!({"llmeu": {"task": "coding"}}));
    let out = dry_run(&gateway, "", &request);
    assert_eq!(out["failover_order"], json!(["qwen-de", "mistral-fr"]));
    let served = real(&gateway, &request);
    assert_eq!((served.status, served.deployment(), served.attempts()), (200, "mistral-fr", 2), "{}", served.text());
    assert_eq!(failing.request_count(), 1);
}

#[test]
fn a_policy_named_in_the_query_applies_and_without_one_the_dry_run_is_as_before() {
    let mock = Mock::start("m", &[]);
    // Policies, none the default: requests run under none.
    let yaml = format!("{}{POLICIES}", model_list(&mock));
    let gateway = Gateway::start(&yaml);
    let request = body("mistral-large", json!({}));
    let plain = dry_run(&gateway, "?seed=1", &request);
    assert!(plain.get("policy").is_none(), "{plain}");
    assert_eq!(plain["winner"]["id"], real(&gateway, &request).deployment(), "the ordinary pick, explained as before");
    let dir = TempDir::new("dry-run-no-policy");
    let out = route_json(&dir, &yaml, &request, None, 0);
    assert!(out.get("policy").is_none() && out["winner"]["id"].is_string(), "{out}");
    // Named in the query: that policy's decision.
    let partner = body("partner-model", json!({}));
    let out = dry_run(&gateway, "?seed=1&policy=open", &partner);
    assert_eq!((&out["policy"], &out["chosen"]), (&json!("open"), &json!("partner-de")), "{out}");
    assert!(out["route_reason"].as_str().unwrap().ends_with("partner endpoints allowed."), "{out}");
    let out = dry_run(&gateway, "?policy=eu-strict", &partner);
    assert_removed(&out, "partner-de", "partner_not_allowed", 11);
    assert_eq!(out["error"]["status"], 409);
    // The CLI names it with --policy.
    let cli = |policy: &str| {
        let out = Command::new(pointwork_bin())
            .args(["route", "--policy", policy, "--config"])
            .arg(dir.write("config.yaml", &yaml))
            .arg("--request")
            .arg(dir.write("request.json", &partner.to_string()))
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let (code, stdout, _) = cli("open");
    let out: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!((code, &out["policy"], &out["chosen"]), (Some(0), &json!("open"), &json!("partner-de")), "{out}");
    let (code, _, stderr) = cli("nope");
    assert_eq!(code, Some(1));
    assert!(stderr.contains("unknown policy \"nope\""), "{stderr}");
    let r = gateway.post("/v1/route?policy=nope", &partner.to_string());
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["error"]["message"], "unknown policy \"nope\"; valid: eu-strict, open");
    // Without policies, a name is an error too.
    let bare = Gateway::start(
        &model_list(&mock)
            .replace("  - model_name: llmeu-auto\n    litellm_params: {model: pointwork/policy_router}\n", ""),
    );
    let r = bare.post("/v1/route?policy=eu-strict", &request.to_string());
    assert_eq!(r.status, 400, "{}", r.text());
    assert!(r.json()["error"]["message"].as_str().unwrap().contains("the config has no policies"), "{}", r.text());
    assert_eq!(mock.request_count(), 1, "only the real request reached a provider");
}
