//! The policy router through the real gateway: an EU policy over a catalogue with EU, non-EU,
//! catalogue-only and partner endpoints; the auto model and a named one; the `x-llmeu-*`
//! headers and the route reason; the 409; request overrides (body and headers); failover that
//! stays inside the filtered set while the non-EU endpoint is the only healthy one; a key bound
//! to a policy beside a key without one.

mod common;

use common::{chat_body, Gateway, GatewayOptions, Mock, Response, TempDir};
use pointwork_gateway::keys::digest_hex;
use serde_json::{json, Value};

/// One endpoint: `model_info` gets the id and `info` (policy attributes).
fn endpoint(group: &str, id: &str, mock: &Mock, info: &str) -> String {
    format!(
        "  - model_name: {group}\n    litellm_params: {{model: openai/{group}, api_base: \"{}\", api_key: sk-{id}, input_cost_per_token: 0.0000002, output_cost_per_token: 0.0000004}}\n    model_info: {{id: {id}, {info}}}\n",
        mock.api_base()
    )
}

struct Catalogue {
    de: Mock,
    fr: Mock,
    us: Mock,
    partner: Mock,
}

impl Catalogue {
    fn start(de_flags: &[&str]) -> Catalogue {
        Catalogue {
            de: Mock::start("de", de_flags),
            fr: Mock::start("fr", &[]),
            us: Mock::start("us", &[]),
            partner: Mock::start("partner", &[]),
        }
    }

    /// The model list: qwen in de-ber (EU-owned, best at coding) and us-east (non-EU), mistral
    /// in fr-par, a catalogue row, a partner endpoint, and the auto model.
    fn model_list(&self) -> String {
        [
            "model_list:\n".to_string(),
            endpoint(
                "qwen3-coder-30b",
                "qwen-de",
                &self.de,
                "sovereignty_class: eu_owned_eu_operated, region: de-ber, task_fit: {coding: 1.0}",
            ),
            endpoint(
                "qwen3-coder-30b",
                "qwen-us",
                &self.us,
                "sovereignty_class: non_eu, region: us-east, task_fit: {coding: 1.0}",
            ),
            endpoint(
                "mistral-large",
                "mistral-fr",
                &self.fr,
                "sovereignty_class: eu_owned_eu_operated, region: fr-par, task_fit: {coding: 0.4}",
            ),
            endpoint("far-model", "far-us", &self.us, "sovereignty_class: non_eu, region: us-west"),
            endpoint(
                "archive",
                "archive-row",
                &self.de,
                "kind: catalogue_only, sovereignty_class: eu_owned_eu_operated, region: de-ber",
            ),
            endpoint(
                "partner-model",
                "partner-de",
                &self.partner,
                "sovereignty_class: eu_owned_eu_operated, region: de-fra, partner: true",
            ),
            "  - model_name: llmeu-auto\n    litellm_params: {model: pointwork/policy_router}\n".to_string(),
        ]
        .concat()
    }
}

fn chat(gateway: &Gateway, model: &str, extra: Value, headers: &[(&str, &str)]) -> Response {
    let mut body: Value = serde_json::from_str(&chat_body(model, false)).unwrap();
    body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    gateway.client().request("POST", "/v1/chat/completions", headers, body.to_string().as_bytes())
}

fn json_of(r: &Response) -> Value {
    serde_json::from_str(&r.text()).unwrap_or_else(|e| panic!("{e}: {}", r.text()))
}

const EU_DEFAULT: &str = "pointwork:\n  policies:\n    eu-strict: {}\n  default_policy: eu-strict\n";

#[test]
fn the_auto_model_routes_inside_the_policy_and_says_why() {
    let c = Catalogue::start(&[]);
    let gateway = Gateway::start(&format!("{}{EU_DEFAULT}", c.model_list()));
    let r = chat(
        &gateway,
        "llmeu-auto",
        json!({"llmeu": {"task": "coding", "residency": "eu-hosted"}, "tags": ["x"]}),
        &[],
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.deployment(), "qwen-de");
    let reason = r#"auto routing for task "coding" + residency eu-hosted + qwen3-coder-30b @ de-ber (EU-owned, EU-operated); 4 endpoint(s) excluded; partner endpoints not allowed."#;
    assert_eq!(r.header("x-llmeu-route-reason"), Some(reason));
    assert_eq!(r.header("x-pointwork-route"), Some(reason));
    assert_eq!(r.header("x-llmeu-model-used"), Some("qwen3-coder-30b"));
    assert_eq!(r.header("x-llmeu-inference-region"), Some("de-ber"));
    assert_eq!(r.header("x-llmeu-sovereignty-class"), Some("eu_owned_eu_operated"));
    assert_eq!(r.header("x-llmeu-policy-id"), Some("eu-strict"));
    // The body carries the same block.
    let answer = json_of(&r);
    assert_eq!(
        answer["llmeu"],
        json!({"model_used": "qwen3-coder-30b", "inference_region": "de-ber", "sovereignty_class": "eu_owned_eu_operated", "policy_id": "eu-strict", "route_reason": reason})
    );
    assert_eq!(answer["choices"][0]["message"]["role"], "assistant", "the rest of the answer is intact");
    // The provider sees neither the overrides nor the tags.
    let sent: Value = serde_json::from_str(c.de.requests()[0]["body"].as_str().unwrap()).unwrap();
    assert!(sent.get("llmeu").is_none() && sent.get("tags").is_none(), "{sent}");
    assert_eq!(sent["model"], "qwen3-coder-30b");
    assert_eq!(c.us.request_count(), 0);
    // The auto model is listed.
    assert!(gateway.get("/v1/models").text().contains("\"llmeu-auto\""));
}

#[test]
fn a_named_model_outside_the_residency_is_a_409_that_never_relaxes() {
    let c = Catalogue::start(&[]);
    let logs = TempDir::new("policy-log");
    let log = logs.path().join("access.jsonl");
    let gateway = Gateway::start(&format!("{}{EU_DEFAULT}  access_log: {}\n", c.model_list(), log.display()));
    for _ in 0..2 {
        let r = chat(&gateway, "far-model", json!({}), &[]);
        assert_eq!(r.status, 409, "{}", r.text());
        let body = json_of(&r);
        assert_eq!(body["error"]["code"], "no_endpoint_for_policy");
        assert_eq!(
            body["error"]["message"],
            "No endpoint satisfies residency eu-hosted for model far-model. Residency is never relaxed silently."
        );
        assert_eq!(body["llmeu"]["model_requested"], "far-model");
    }
    assert_eq!(c.us.request_count(), 0);
    let r = chat(&gateway, "nope", json!({}), &[]);
    assert_eq!((r.status, json_of(&r)["error"]["code"].as_str()), (404, Some("model_not_found")));
    let r = chat(&gateway, "archive", json!({}), &[]);
    assert_eq!((r.status, json_of(&r)["error"]["code"].as_str()), (409, Some("hosted_unavailable")));
    // A named model that survives is pinned to its own endpoints.
    let r = chat(&gateway, "mistral-large", json!({"llmeu": {"task": "coding"}}), &[]);
    assert_eq!((r.status, r.deployment()), (200, "mistral-fr"));
    assert!(r.header("x-llmeu-route-reason").unwrap().starts_with("pinned routing for task \"coding\""));
    // Metrics and the access log name the policy.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let wanted = [
        "pointwork_policy_requests_total{policy=\"eu-strict\",outcome=\"no_endpoint_for_policy\"} 2\n",
        "pointwork_policy_requests_total{policy=\"eu-strict\",outcome=\"model_not_found\"} 1\n",
        "pointwork_policy_requests_total{policy=\"eu-strict\",outcome=\"routed\"} 1\n",
    ];
    loop {
        let metrics = gateway.get("/metrics").text();
        if wanted.iter().all(|w| metrics.contains(w)) {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{metrics}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let lines = loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        if lines.len() >= 5 || std::time::Instant::now() > deadline {
            break lines;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let served = lines.iter().find(|l| l["deployment"] == "mistral-fr").expect("the served request's line");
    assert_eq!((served["policy"].as_str(), served["cause"].as_str()), (Some("eu-strict"), Some("policy")));
    assert!(served["route"].as_str().unwrap().starts_with("pinned routing"));
    assert!(lines.iter().filter(|l| l["status"] == 409).all(|l| l["policy"] == "eu-strict"));
}

#[test]
fn overrides_narrow_by_body_or_header_and_bad_ones_are_refused() {
    let c = Catalogue::start(&[]);
    let gateway = Gateway::start(&format!("{}{EU_DEFAULT}", c.model_list()));
    // fr only: the German winner is out.
    let r = chat(&gateway, "llmeu-auto", json!({"llmeu": {"task": "coding"}}), &[("x-llmeu-residency", "fr")]);
    assert_eq!((r.status, r.deployment()), (200, "mistral-fr"), "{}", r.text());
    assert!(r.header("x-llmeu-route-reason").unwrap().contains("+ residency fr +"));
    // Partners admitted for one call, by header.
    let r = chat(&gateway, "partner-model", json!({}), &[("X-LLMEU-Allow-Partners", "true")]);
    assert_eq!((r.status, r.deployment()), (200, "partner-de"), "{}", r.text());
    let r = chat(&gateway, "partner-model", json!({}), &[]);
    assert_eq!(r.status, 409, "{}", r.text());
    // `any` cannot widen an EU policy.
    let r = chat(&gateway, "qwen3-coder-30b", json!({"llmeu": {"residency": "any"}}), &[]);
    assert_eq!((r.status, r.deployment()), (200, "qwen-de"));
    for (extra, headers, field) in [
        (json!({"llmeu": {"residency": "mars"}}), vec![], "llmeu.residency"),
        (json!({"llmeu": {"residence": "eu"}}), vec![], "unknown field `residence`"),
        (json!({}), vec![("x-llmeu-max-usd-per-1m", "cheap")], "x-llmeu-max-usd-per-1m"),
        (json!({"llmeu": {"retention": 30}}), vec![], "llmeu.retention 30"),
    ] {
        let r = chat(&gateway, "llmeu-auto", extra, &headers);
        assert_eq!(r.status, 400, "{}", r.text());
        assert!(json_of(&r)["error"]["message"].as_str().unwrap().contains(field), "{field}: {}", r.text());
    }
    assert_eq!(c.us.request_count(), 0);
}

#[test]
fn failover_stays_inside_the_filtered_set_while_only_the_non_eu_endpoint_is_healthy() {
    let c = Catalogue::start(&["--fault", "status:503"]);
    c.fr.control(json!({"fault": "status:502"}));
    let logs = TempDir::new("policy-failover-log");
    let log = logs.path().join("access.jsonl");
    let gateway = Gateway::start(&format!("{}{EU_DEFAULT}  access_log: {}\n", c.model_list(), log.display()));
    let r = chat(&gateway, "llmeu-auto", json!({"llmeu": {"task": "coding"}}), &[]);
    // de (503) then fr (502): both EU survivors failed; the healthy US endpoint gets nothing.
    assert_eq!(r.status, 502, "{}", r.text());
    assert_eq!(r.header("x-pointwork-attempts"), Some("2"));
    assert_eq!((c.de.request_count(), c.fr.request_count(), c.us.request_count()), (1, 1, 0));
    // With fr back, the next request fails over from de to fr.
    c.fr.control(json!({"fault": null}));
    let r = chat(&gateway, "qwen3-coder-30b", json!({}), &[]);
    assert_eq!(r.status, 503, "a named model's only EU endpoint failed: nothing else may serve it: {}", r.text());
    let r = chat(&gateway, "llmeu-auto", json!({"llmeu": {"task": "coding"}}), &[]);
    assert_eq!((r.status, r.deployment()), (200, "mistral-fr"), "{}", r.text());
    assert_eq!(c.us.request_count(), 0);
    // The access log records each attempt that failed over.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let served = loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        if let Some(line) = lines.into_iter().find(|l| l["status"] == 200) {
            break line;
        }
        assert!(std::time::Instant::now() < deadline, "{text}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert_eq!((&served["failed_over"], &served["cause"]), (&json!(["qwen-de"]), &json!("failed_over")));
    assert_eq!(served["attempts"], 2);
}

#[test]
fn a_key_bound_to_a_policy_beside_a_key_without_one() {
    let c = Catalogue::start(&[]);
    let (bound, free) = ("sk-eu-team", "sk-anywhere");
    let yaml = format!(
        "{}general_settings: {{master_key: sk-master}}\npointwork:\n  policies:\n    eu-strict: {{}}\n  auth:\n    virtual_keys:\n      - {{name: eu, sha256: {}, policy: eu-strict}}\n      - {{name: free, sha256: {}}}\n",
        c.model_list(),
        digest_hex(bound.as_bytes()),
        digest_hex(free.as_bytes())
    );
    let gateway = Gateway::start(&yaml);
    let as_key = |secret: &str| format!("Bearer {secret}");
    // The bound key never reaches the US endpoint of qwen; the free key's requests route as
    // without a policy (both qwen endpoints serve).
    for _ in 0..10 {
        let r = chat(&gateway, "qwen3-coder-30b", json!({}), &[("authorization", &as_key(bound))]);
        assert_eq!((r.status, r.deployment()), (200, "qwen-de"), "{}", r.text());
        assert_eq!(r.header("x-llmeu-policy-id"), Some("eu-strict"));
    }
    assert_eq!(c.us.request_count(), 0);
    let mut served = std::collections::BTreeSet::new();
    for _ in 0..common::SHUFFLE_TRIES {
        let r = chat(&gateway, "qwen3-coder-30b", json!({}), &[("authorization", &as_key(free))]);
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(r.header("x-llmeu-policy-id"), None);
        served.insert(r.deployment().to_string());
        if served.len() == 2 {
            break;
        }
    }
    assert_eq!(served.into_iter().collect::<Vec<_>>(), ["qwen-de", "qwen-us"]);
}

#[test]
fn a_stream_carries_the_block_in_an_event_before_done() {
    let c = Catalogue::start(&[]);
    let gateway = Gateway::start(&format!("{}{EU_DEFAULT}", c.model_list()));
    let mut body: Value = serde_json::from_str(&chat_body("llmeu-auto", true)).unwrap();
    body["llmeu"] = json!({"task": "coding"});
    let r = gateway.post("/v1/chat/completions", &body.to_string());
    assert_eq!(r.status, 200, "{}", r.text());
    let text = r.text();
    let events: Vec<&str> = text.split("\n\n").filter(|e| e.starts_with("data: ")).collect();
    let done = events.iter().position(|e| *e == "data: [DONE]").expect("the stream ends with [DONE]");
    assert_eq!(done, events.len() - 1);
    let block: Value = serde_json::from_str(&events[done - 1]["data: ".len()..]).unwrap();
    assert_eq!(block["choices"], json!([]));
    assert_eq!(block["llmeu"]["policy_id"], "eu-strict");
    assert_eq!(block["llmeu"]["model_used"], "qwen3-coder-30b");
    // Every event before it is the provider's, untouched.
    assert!(events[..done - 1].iter().all(|e| !e.contains("llmeu")));
    assert!(events.len() > 3, "{text}");
}

#[test]
fn an_operator_status_takes_an_endpoint_out_on_every_shard() {
    let c = Catalogue::start(&[]);
    let yaml = format!("{}general_settings: {{master_key: sk-ops}}\n{EU_DEFAULT}", c.model_list());
    let gateway = Gateway::start_with(&yaml, GatewayOptions { shards: 2, ..GatewayOptions::default() });
    let auth = [("authorization", "Bearer sk-ops")];
    let coding = || chat(&gateway, "llmeu-auto", json!({"llmeu": {"task": "coding"}}), &auth);
    assert_eq!(coding().deployment(), "qwen-de");
    let set = |status: &str| {
        let body = format!(r#"{{"status": "{status}"}}"#);
        let r = gateway.client().request("POST", "/admin/endpoints/qwen-de/status", &auth, body.as_bytes());
        assert_eq!(r.status, 200, "{}", r.text());
    };
    set("maintenance");
    // Every answer, on fresh connections spread over both shards, leaves qwen-de out.
    for _ in 0..20 {
        let r = coding();
        assert_eq!((r.status, r.deployment()), (200, "mistral-fr"), "{}", r.text());
    }
    let r = chat(&gateway, "qwen3-coder-30b", json!({}), &auth);
    assert_eq!(r.status, 409, "its only EU endpoint is in maintenance: {}", r.text());
    set("up");
    for _ in 0..20 {
        assert_eq!(coding().deployment(), "qwen-de");
    }
    assert_eq!(c.us.request_count(), 0);
}

#[test]
fn every_shard_scores_an_endpoints_failures_alike() {
    let c = Catalogue::start(&["--fault", "status:503"]);
    let gateway = Gateway::start_with(
        &format!("{}{EU_DEFAULT}", c.model_list()),
        GatewayOptions { shards: 2, ..GatewayOptions::default() },
    );
    // One request: qwen-de fails (on whichever shard took it), mistral-fr serves.
    let r = chat(&gateway, "llmeu-auto", json!({"llmeu": {"task": "coding"}}), &[]);
    assert_eq!((r.status, r.deployment()), (200, "mistral-fr"), "{}", r.text());
    // The dry run on fresh connections (both shards): qwen-de's error rate is the same on each.
    let request =
        json!({"model": "llmeu-auto", "messages": [{"role": "user", "content": "hi"}], "llmeu": {"task": "coding"}});
    // mistral-fr's latency is recorded when its answer has been relayed, so it may reach the
    // other shard just after the client has its answer: the rounds repeat (up to 10 s) until
    // every dry run shows the same average, not the 500 ms default.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let mut latencies = std::collections::BTreeSet::new();
        for _ in 0..12 {
            let out = gateway.post("/v1/route", &request.to_string()).json();
            let row = |id: &str| out["candidates"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap().clone();
            assert_eq!(row("qwen-de")["terms"]["error_rate"], 3.0, "{out}");
            latencies.insert(row("mistral-fr")["latency_ms"].to_string());
        }
        if latencies.len() == 1 && latencies.first().unwrap() != "500.0" {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the shards never agreed: {latencies:?}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
