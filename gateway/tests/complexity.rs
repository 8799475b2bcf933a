//! The complexity auto-router through the real gateway: spec 002's scenario (a tier pool of a
//! dead group on a closed port and a live group on the mock; `allowed_fails: 0`,
//! `cooldown_time: 3600`, `num_retries: 0`), on chat completions and on `/v1/messages`, two
//! shards, each request on a fresh connection (so pins and cooldowns must cross shards); the
//! decision on the answer, in the access log and in the metrics; the LLM classifier against the
//! mock, its timeout and a garbage answer.

mod common;

use std::net::TcpListener;
use std::time::{Duration, Instant};

use common::{Gateway, GatewayOptions, Mock, Response, TempDir};
use serde_json::{json, Value};

/// A loopback port nothing listens on.
fn closed_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

const POOL: &str = "[dead-tier-model, live-tier-model]";

fn config(live: &Mock, router_extra: &str, rest: &str) -> String {
    format!(
        "model_list:
  - model_name: tier-health-router
    litellm_params:
      model: auto_router/complexity_router
      complexity_router_config:
        session_affinity: true
        tiers: {{SIMPLE: {POOL}, MEDIUM: {POOL}, COMPLEX: {POOL}, REASONING: {POOL}}}
{router_extra}  - model_name: dead-tier-model
    litellm_params: {{model: openai/claude-haiku-4-5-20251001, api_base: \"http://127.0.0.1:{}/v1\", api_key: dead-key}}
  - model_name: live-tier-model
    litellm_params: {{model: openai/claude-haiku-4-5-20251001, api_base: \"{}\", api_key: live-key}}
router_settings: {{num_retries: 0, allowed_fails: 0, cooldown_time: 3600}}
general_settings: {{master_key: sk-master}}
{rest}",
        closed_port(),
        live.api_base()
    )
}

fn start(yaml: &str) -> Gateway {
    Gateway::start_with(yaml, GatewayOptions { shards: 2, ..GatewayOptions::default() })
}

fn send(gateway: &Gateway, path: &str, body: Value) -> Response {
    let headers = [("content-type", "application/json"), ("authorization", "Bearer sk-master")];
    gateway.client().request("POST", path, &headers, body.to_string().as_bytes())
}

fn chat(gateway: &Gateway, text: &str, session: Option<&str>) -> Response {
    let mut body =
        json!({"model": "tier-health-router", "max_tokens": 10, "messages": [{"role": "user", "content": text}]});
    if let Some(s) = session {
        body["metadata"] = json!({"session_id": s});
    }
    send(gateway, "/v1/chat/completions", body)
}

fn route(r: &Response) -> &str {
    r.header("x-pointwork-route").unwrap_or("")
}

/// A 200 from the live group, or the one warm hit on the dead group (a 5xx, never a 429).
fn check(r: &Response) -> bool {
    if r.status == 200 {
        assert_eq!(r.header("x-pointwork-model-group"), Some("live-tier-model"), "{}", route(r));
        assert!(route(r).starts_with("auto-router SIMPLE "), "{}", route(r));
        return true;
    }
    assert_ne!(r.status, 429, "no 'No deployments available': {}", r.text());
    assert!(r.status >= 500, "{} {}", r.status, r.text());
    false
}

#[test]
fn fresh_picks_route_around_the_cooled_down_group() {
    let live = Mock::start("live", &[]);
    let gateway = start(&config(&live, "", ""));
    let mut failures = 0;
    for _ in 0..12 {
        failures += usize::from(!check(&chat(&gateway, "say hi", None)));
    }
    assert!(failures <= 1, "at most the warm hit fails: {failures}");
    // Make sure the dead group was drawn once (and so cooled down), then every draw of it fails over.
    for _ in 0..common::SHUFFLE_TRIES {
        if failures == 1 {
            break;
        }
        failures += usize::from(!check(&chat(&gateway, "say hi", None)));
    }
    assert_eq!(failures, 1);
    let mut failovers = 0;
    for _ in 0..24 {
        let r = chat(&gateway, "say hi", None);
        assert!(check(&r));
        if route(&r).contains("health_failover") {
            failovers += 1;
            assert!(route(&r).contains("routed=live-tier-model displaced=dead-tier-model"), "{}", route(&r));
            assert!(route(&r).contains("(over heuristic_scorer)"), "{}", route(&r));
        }
    }
    assert!(failovers > 0, "the shuffle drew the dead group at least once in 24");
    // The dry run shows the same: the pool, which group can serve, the gate's choice.
    let body = json!({"model": "tier-health-router", "messages": [{"role": "user", "content": "say hi"}]});
    let mut seen_failover = false;
    for seed in 0..32 {
        let r = send(&gateway, &format!("/v1/route?seed={seed}"), body.clone());
        assert_eq!(r.status, 200, "{}", r.text());
        let d = r.json();
        let auto = &d["auto_router"];
        assert_eq!(auto["tier"], "SIMPLE");
        assert_eq!(
            auto["pool"],
            json!([{"group": "dead-tier-model", "can_serve": false}, {"group": "live-tier-model", "can_serve": true}])
        );
        assert_eq!(auto["routed_model"], "live-tier-model");
        assert_eq!(d["winner"]["id"].as_str().map(|id| !id.is_empty()), Some(true));
        seen_failover |= auto["cause"] == "health_failover" && auto["displaced"] == "dead-tier-model";
    }
    assert!(seen_failover);
    // Both shards' counts reach /metrics at their next report.
    let deadline = Instant::now() + Duration::from_secs(10);
    let wanted = "pointwork_auto_router_decisions_total{router=\"tier-health-router\",tier=\"SIMPLE\",cause=\"health_failover\"}";
    loop {
        let metrics = gateway.get("/metrics").text();
        if metrics.contains(wanted) {
            break;
        }
        assert!(Instant::now() < deadline, "{metrics}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_session_pinned_to_the_dead_group_is_served_by_its_live_peer() {
    let live = Mock::start("live", &[]);
    let logs = TempDir::new("complexity-log");
    let log = logs.path().join("access.jsonl");
    let gateway = start(&config(&live, "", &format!("pointwork:\n  access_log: {}\n", log.display())));
    // Four sessions of four turns; more sessions only if no first turn drew the dead group yet.
    // A session is pinned by its first decision that is not a failover (a failed-over turn is
    // never pinned): to the dead group by the warm hit, else to the live one.
    #[derive(Clone, Copy, PartialEq, Debug)]
    enum Held {
        Nothing,
        Dead,
        Live,
    }
    let mut failed = Vec::new();
    let mut dead_session_turns = 0;
    for s in 0..40 {
        let session = format!("p{s}");
        let mut held = Held::Nothing;
        for turn in 1..=4 {
            let r = chat(&gateway, &format!("turn {turn} say hi"), Some(&session));
            if !check(&r) {
                assert_eq!(held, Held::Nothing, "a pinned session never reaches the dead group");
                failed.push((session.clone(), turn));
                held = Held::Dead;
                continue;
            }
            let line = route(&r);
            match held {
                // The pin replays the dead group; the gate serves the turn from its peer.
                Held::Dead => {
                    assert!(line.contains("health_failover (over session_affinity_pin)"), "{line}");
                    assert!(line.contains("displaced=dead-tier-model"), "{line}");
                    dead_session_turns += 1;
                }
                Held::Live => assert!(line.contains(" session_affinity_pin routed=live-tier-model"), "{line}"),
                Held::Nothing if line.contains("health_failover") => {}
                Held::Nothing => {
                    assert!(line.contains("heuristic_scorer"), "{line}");
                    held = Held::Live;
                }
            }
        }
        if s >= 3 && !failed.is_empty() {
            break;
        }
    }
    assert_eq!(dead_session_turns, 3, "the dead-pinned session's later turns all served");
    assert_eq!(failed.len(), 1, "only the warm hit fails: {failed:?}");
    assert_eq!(failed[0].1, 1, "and it is a first turn");
    // The access log names the displaced group in the record.
    let deadline = Instant::now() + Duration::from_secs(10);
    let record = loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let found = text.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()).find(|l| {
            l["routing_decision"]["cause"] == "health_failover"
                && l["routing_decision"]["decided_by"] == "session_affinity_pin"
        });
        if let Some(line) = found {
            break line;
        }
        assert!(Instant::now() < deadline, "no failover in the access log:\n{text}");
        std::thread::sleep(Duration::from_millis(50));
    };
    let d = &record["routing_decision"];
    assert_eq!(
        (d["routed_model"].as_str(), d["displaced"].as_str()),
        (Some("live-tier-model"), Some("dead-tier-model"))
    );
    assert_eq!(d["router_model_name"], "tier-health-router");
    assert!(d["signals"].as_array().unwrap().iter().any(|s| s == "health_displaced:dead-tier-model"), "{d}");
}

#[test]
fn the_messages_surface_goes_through_the_same_gate() {
    let live = Mock::start("live", &[]);
    let gateway = start(&config(&live, "", ""));
    let body = |s: &str| {
        json!({"model": "tier-health-router", "max_tokens": 10, "messages": [{"role": "user", "content": "say hi"}],
            "metadata": {"session_id": s}})
    };
    let mut failures = 0;
    for s in 0..common::SHUFFLE_TRIES {
        let r = send(&gateway, "/v1/messages", body(&format!("m{s}")));
        if r.status != 200 {
            assert_ne!(r.status, 429, "{}", r.text());
            assert_eq!(r.json()["type"], "error", "Anthropic's error shape: {}", r.text());
            failures += 1;
            break;
        }
        assert_eq!(r.json()["type"], "message");
    }
    assert_eq!(failures, 1, "the dead group was drawn once");
    for s in 0..16 {
        let r = send(&gateway, "/v1/messages", body(&format!("n{s}")));
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(r.json()["model"], "tier-health-router", "answers carry the router's name");
        assert_eq!(r.header("x-pointwork-model-group"), Some("live-tier-model"));
    }
}

#[test]
fn the_classification_is_on_the_answer() {
    let live = Mock::start("live", &[]);
    // Only the live group here: every decision is the classification's own.
    let yaml = config(&live, "", "").replace(POOL, "[live-tier-model]").replace(
        "        session_affinity: true\n",
        "        session_affinity: true\n        keyword_tier_rules: [{keywords: [kubernetes], tier: COMPLEX}]\n",
    );
    let gateway = start(&yaml);
    let r = chat(&gateway, "Prove step by step that the algorithm terminates, and think through every case.", None);
    assert_eq!(r.status, 200, "{}", r.text());
    let line = route(&r);
    assert!(line.starts_with("auto-router REASONING reasoning_override score="), "{line}");
    assert!(line.contains("signals=") && line.contains("reasoning"), "{line}");
    let r = chat(&gateway, "our kubernetes pods restart", None);
    assert!(route(&r).starts_with("auto-router COMPLEX literal_keyword_match"), "{}", route(&r));
    let r = chat(&gateway, "hi", None);
    assert!(route(&r).starts_with("auto-router SIMPLE heuristic_scorer score="), "{}", route(&r));
    let models = gateway.client().request("GET", "/v1/models", &[("authorization", "Bearer sk-master")], b"");
    assert!(models.text().contains("\"tier-health-router\""), "{}", models.text());
}

/// An LLM classifier on its own mock: its answer decides the tier; a garbage answer and a
/// timeout fall back to the heuristic, or to the default model when configured so.
#[test]
fn the_llm_classifier_decides_and_falls_back() {
    let live = Mock::start("live", &[]);
    let simple = Mock::start("simple", &[]);
    let judge = Mock::start("judge", &[]);
    judge.control(json!({"reply": "{\"tier\": \"COMPLEX\"}"}));
    let classifier = format!(
        "        classifier_type: llm
        classifier_llm_config: {{model: judge, timeout_ms: 300}}
        default_model: simple-model
  - model_name: judge
    litellm_params: {{model: openai/judge, api_base: \"{}\"}}
  - model_name: simple-model
    litellm_params: {{model: openai/small, api_base: \"{}\"}}
",
        judge.api_base(),
        simple.api_base()
    );
    let yaml = config(&live, &classifier, "").replace(
        "tiers: {SIMPLE: [dead-tier-model, live-tier-model], MEDIUM: [dead-tier-model, live-tier-model], COMPLEX: [dead-tier-model, live-tier-model]",
        "tiers: {SIMPLE: [simple-model], MEDIUM: [simple-model], COMPLEX: [live-tier-model]",
    );
    let gateway = start(&yaml);
    let r = chat(&gateway, "hi", None);
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(route(&r).starts_with("auto-router COMPLEX llm_classifier routed=live-tier-model"), "{}", route(&r));
    let asked = &judge.requests()[0];
    let sent: Value = serde_json::from_str(asked["body"].as_str().unwrap()).unwrap();
    assert_eq!(sent["messages"][1]["content"], "hi", "the classifier sees the ask");
    // A garbage answer: the heuristic classifies ("hi" is SIMPLE).
    judge.control(json!({"reply": "I would rather not say"}));
    let r = chat(&gateway, "hi", None);
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(
        route(&r).starts_with("auto-router SIMPLE classifier_fallback classifier_failure=invalid_response"),
        "{}",
        route(&r)
    );
    assert_eq!(r.header("x-pointwork-model-group"), Some("simple-model"));
    // A classifier slower than its timeout: the same fallback, within the timeout.
    judge.control(json!({"reply": "{\"tier\": \"COMPLEX\"}", "latency_ms": 3000}));
    let started = Instant::now();
    let r = chat(&gateway, "hi", None);
    assert!(started.elapsed() < Duration::from_millis(2500), "{:?}", started.elapsed());
    assert!(route(&r).contains("classifier_fallback classifier_failure=timeout"), "{}", route(&r));
}

/// `classifier_fallback: default_model`: a failed classification goes to the default model,
/// without a tier.
#[test]
fn a_failed_llm_classifier_can_fall_back_to_the_default_model() {
    let live = Mock::start("live", &[]);
    let judge = Mock::start("judge", &["--reply", "no idea"]);
    let classifier = format!(
        "        classifier_type: llm
        classifier_llm_config: {{model: judge}}
        classifier_fallback: default_model
        default_model: judge
  - model_name: judge
    litellm_params: {{model: openai/judge, api_base: \"{}\"}}
",
        judge.api_base()
    );
    let gateway = start(&config(&live, &classifier, ""));
    let r = chat(&gateway, "hi", None);
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(
        route(&r)
            .starts_with("auto-router none default_model_fallback classifier_failure=invalid_response routed=judge"),
        "{}",
        route(&r)
    );
}

/// A session's pin holds on every shard and across a reload.
#[test]
fn session_pins_cross_shards_and_survive_a_reload() {
    let alpha = Mock::start("alpha", &[]);
    let beta = Mock::start("beta", &[]);
    let yaml = |cooldown: u32| {
        format!(
            "model_list:
  - model_name: auto
    litellm_params:
      model: auto_router/complexity_router
      complexity_router_config:
        session_affinity: true
        tiers: {{SIMPLE: [alpha, beta], MEDIUM: [alpha, beta], COMPLEX: [alpha, beta], REASONING: [alpha, beta]}}
  - model_name: alpha
    litellm_params: {{model: openai/a, api_base: \"{}\"}}
  - model_name: beta
    litellm_params: {{model: openai/b, api_base: \"{}\"}}
router_settings: {{cooldown_time: {cooldown}}}
general_settings: {{master_key: sk-master}}
",
            alpha.api_base(),
            beta.api_base()
        )
    };
    let gateway = start(&yaml(60));
    let ask = |turn: u32| {
        let body = json!({"model": "auto", "messages": [{"role": "user", "content": format!("turn {turn}: hi")}],
            "metadata": {"session_id": "s-1"}});
        let r = send(&gateway, "/v1/chat/completions", body);
        assert_eq!(r.status, 200, "{}", r.text());
        (r.header("x-pointwork-model-group").unwrap().to_string(), route(&r).to_string())
    };
    let (first, line) = ask(1);
    assert!(line.contains("heuristic_scorer"), "{line}");
    for turn in 2..5 {
        let (group, line) = ask(turn);
        assert_eq!(group, first);
        assert!(line.contains(" session_affinity_pin routed="), "{line}");
    }
    std::fs::write(&gateway.config_path, yaml(61)).unwrap();
    let r = gateway.client().request("POST", "/admin/reload", &[("authorization", "Bearer sk-master")], b"");
    assert_eq!(r.status, 200, "{}", r.text());
    for turn in 5..12 {
        let (group, line) = ask(turn);
        assert_eq!(group, first, "turn {turn} after the reload");
        assert!(line.contains(" session_affinity_pin routed="), "{line}");
    }
    // Another session is classified afresh.
    let body =
        json!({"model": "auto", "messages": [{"role": "user", "content": "hi"}], "metadata": {"session_id": "s-2"}});
    assert!(route(&send(&gateway, "/v1/chat/completions", body)).contains("heuristic_scorer"));
}
