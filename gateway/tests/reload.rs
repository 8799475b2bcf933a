//! Config reloads over real processes: SIGHUP and `POST /admin/reload`, refused configs, routing
//! state kept across reloads by deployment id, and 20 reloads under load.

mod common;

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{
    assert_served_by, chat_body, config, deployment, send_signal, Client, Gateway, GatewayOptions, Mock, Process,
    Response, LOG_DEADLINE, SHUFFLE_TRIES,
};
use serde_json::{json, Value};

const MODEL: &str = "openai/gpt-4o-mini";

/// How often `needle` occurs in the process's stderr so far.
fn stderr_count(process: &Process, needle: &str) -> usize {
    process.stderr().matches(needle).count()
}

/// Rewrites the gateway's config file and sends SIGHUP; returns once the reload's log line (or
/// its refusal) appeared.
fn sighup_reload(gateway: &Gateway, yaml: &str) -> String {
    std::fs::write(&gateway.config_path, yaml).expect("rewrite the config");
    let before = stderr_count(&gateway.process, "reload (SIGHUP)");
    send_signal(&gateway.process, libc::SIGHUP);
    let text = gateway.process.wait_for_stderr_count("reload (SIGHUP)", before + 1, LOG_DEADLINE);
    text.lines().filter(|l| l.contains("reload (SIGHUP)")).nth(before).unwrap().to_string()
}

/// `POST /admin/reload` with an optional bearer token.
fn admin_reload(gateway: &Gateway, bearer: Option<&str>) -> Response {
    let auth = bearer.map(|b| format!("Bearer {b}"));
    let headers: Vec<(&str, &str)> = auth.iter().map(|a| ("authorization", a.as_str())).collect();
    gateway.client().request("POST", "/admin/reload", &headers, b"")
}

/// The model ids `GET /v1/models` lists.
fn model_ids(gateway: &Gateway) -> BTreeSet<String> {
    let models = gateway.get("/v1/models");
    assert_eq!(models.status, 200, "{}", models.text());
    models.json()["data"]
        .as_array()
        .unwrap_or_else(|| panic!("no data list: {}", models.text()))
        .iter()
        .map(|m| m["id"].as_str().expect("model id").to_string())
        .collect()
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// A counter's value from `GET /metrics`, by its full series name with labels.
fn metric(gateway: &Gateway, series: &str) -> u64 {
    let response = gateway.get("/metrics");
    assert_eq!(response.status, 200, "{}", response.text());
    let text = response.text();
    text.lines()
        .find_map(|l| l.strip_prefix(series).and_then(|rest| rest.strip_prefix(' ')))
        .unwrap_or_else(|| panic!("no {series} in /metrics:\n{text}"))
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("{series} is not a number ({e}):\n{text}"))
}

fn assert_invalid_model(response: &Response, model: &str) {
    assert_eq!(response.status, 400, "{}", response.text());
    let message = response.json()["error"]["message"].as_str().unwrap_or_default().to_string();
    assert!(message.starts_with(&format!("Invalid model name passed in model={model}")), "{model}: {message}");
}

// ---------------------------------------------------------------------------------------------
// Reloads

#[test]
fn sighup_applies_a_changed_config() {
    let a = Mock::start("a", &[]);
    let b = Mock::start("b", &[]);
    let before =
        config(&[deployment("gpt", "dep-gpt", MODEL, &a, ""), deployment("old", "dep-old", MODEL, &a, "")], "");
    let gateway = Gateway::start(&before);
    assert_served_by(&gateway.chat("old"), "dep-old");
    assert_invalid_model(&gateway.chat("fresh"), "fresh");
    assert_eq!(model_ids(&gateway), set(&["gpt", "old"]));

    let after =
        config(&[deployment("gpt", "dep-gpt", MODEL, &a, ""), deployment("fresh", "dep-fresh", MODEL, &b, "")], "");
    let line = sighup_reload(&gateway, &after);
    assert!(line.starts_with("pointwork: reload (SIGHUP): "), "{line}");
    assert!(line.contains("config.yaml: "), "the line names the file: {line}");
    assert!(
        line.ends_with(
            "groups +[fresh] −[old]; deployments +[dep-fresh] −[dep-old]; now 2 model groups, 2 deployments"
        ),
        "{line}"
    );

    assert_served_by(&gateway.chat("fresh"), "dep-fresh");
    assert_eq!(b.request_count(), 1, "the new group's deployment is the second mock");
    assert_invalid_model(&gateway.chat("old"), "old");
    assert_served_by(&gateway.chat("gpt"), "dep-gpt");
    assert_eq!(model_ids(&gateway), set(&["gpt", "fresh"]));
    assert_eq!(metric(&gateway, "pointwork_reloads_total{outcome=\"ok\"}"), 1);
}

/// A file with two errors in different places: an unknown strategy and an entry without a model.
fn invalid_yaml(a: &Mock) -> String {
    format!(
        "model_list:\n{}{}  - model_name: broken\n    litellm_params: {{api_base: \"{}\"}}\n\
         router_settings:\n  routing_strategy: round-robin\n",
        deployment("gpt", "dep-gpt", MODEL, a, ""),
        deployment("fresh", "dep-fresh", MODEL, a, ""),
        a.api_base()
    )
}

const STRATEGY_ERROR: &str = "router_settings.routing_strategy: unknown routing strategy \"round-robin\"";
const MODEL_ERROR: &str = "model_list[2].litellm_params.model: required key is missing";

#[test]
fn sighup_with_an_invalid_config_is_refused_and_the_old_config_keeps_serving() {
    let a = Mock::start("a", &[]);
    let gateway = Gateway::start(&config(&[deployment("gpt", "dep-gpt", MODEL, &a, "")], ""));
    assert_served_by(&gateway.chat("gpt"), "dep-gpt");

    let line = sighup_reload(&gateway, &invalid_yaml(&a));
    assert_eq!(line, "pointwork: reload (SIGHUP) refused; the current config keeps serving:");
    // The errors follow the refusal, one per line, each with its key path.
    let text = gateway.process.wait_for_stderr(STRATEGY_ERROR, LOG_DEADLINE);
    let text =
        if text.contains(MODEL_ERROR) { text } else { gateway.process.wait_for_stderr(MODEL_ERROR, LOG_DEADLINE) };
    let refusal = &text[text.find("refused").unwrap()..];
    assert!(refusal.contains(STRATEGY_ERROR) && refusal.contains(MODEL_ERROR), "{refusal}");

    for _ in 0..5 {
        assert_served_by(&gateway.chat("gpt"), "dep-gpt");
    }
    assert_invalid_model(&gateway.chat("fresh"), "fresh");
    assert_eq!(model_ids(&gateway), set(&["gpt"]));
    assert_eq!(metric(&gateway, "pointwork_reloads_total{outcome=\"failed\"}"), 1);
    assert_eq!(metric(&gateway, "pointwork_reloads_total{outcome=\"ok\"}"), 0);

    // Once the file is fixed, the next SIGHUP applies it.
    let fixed =
        config(&[deployment("gpt", "dep-gpt", MODEL, &a, ""), deployment("fresh", "dep-fresh", MODEL, &a, "")], "");
    let line = sighup_reload(&gateway, &fixed);
    assert!(line.contains("groups +[fresh]; deployments +[dep-fresh]; now 2 model groups, 2 deployments"), "{line}");
    assert_served_by(&gateway.chat("fresh"), "dep-fresh");
}

#[test]
fn admin_reload_answers_with_the_report() {
    let a = Mock::start("a", &[]);
    let gateway = Gateway::start(&config(&[deployment("gpt", "dep-gpt", MODEL, &a, "")], ""));
    std::fs::write(
        &gateway.config_path,
        config(&[deployment("gpt", "dep-gpt", MODEL, &a, ""), deployment("fresh", "dep-fresh", MODEL, &a, "")], ""),
    )
    .unwrap();
    let response = admin_reload(&gateway, None);
    assert_eq!(response.status, 200, "{}", response.text());
    let body = response.json();
    assert_eq!(body["status"], "reloaded", "{body}");
    let report = &body["report"];
    assert_eq!(report["model_groups"], 2, "{body}");
    assert_eq!(report["deployments"], 2, "{body}");
    assert_eq!(report["changes"]["groups_added"], json!(["fresh"]), "{body}");
    assert_eq!(report["changes"]["groups_removed"], json!([]), "{body}");
    assert_eq!(report["changes"]["deployments_added"], json!(["dep-fresh"]), "{body}");
    assert!(report["config"].as_str().unwrap().ends_with("config.yaml"), "{body}");
    gateway.process.wait_for_stderr("reload (POST /admin/reload): ", LOG_DEADLINE);
    assert_eq!(report["restart_needed_for"], json!([]), "{body}");
    // Published before the answer: the next request sees it.
    assert_served_by(&gateway.chat("fresh"), "dep-fresh");

    // A `pointwork:` setting the running shards cannot take on is named, the rest applies.
    std::fs::write(
        &gateway.config_path,
        config(&[deployment("gpt", "dep-gpt", MODEL, &a, "")], "pointwork:\n  drain_timeout: 5s\n"),
    )
    .unwrap();
    let response = admin_reload(&gateway, None);
    assert_eq!(response.status, 200, "{}", response.text());
    let body = response.json();
    assert_eq!(body["report"]["restart_needed_for"], json!(["drain_timeout"]), "{body}");
    assert_eq!(body["report"]["changes"]["groups_removed"], json!(["fresh"]), "{body}");
    let log = gateway.process.wait_for_stderr("applied only on restart: pointwork.drain_timeout)", LOG_DEADLINE);
    assert!(log.contains("groups −[fresh]; deployments −[dep-fresh]; now 1 model groups, 1 deployments"), "{log}");
    assert_invalid_model(&gateway.chat("fresh"), "fresh");

    // A file that went missing: refused, the config in service stays.
    std::fs::remove_file(&gateway.config_path).unwrap();
    let response = admin_reload(&gateway, None);
    assert_eq!(response.status, 400, "{}", response.text());
    let message = response.json()["error"]["message"].as_str().unwrap().to_string();
    assert!(message.contains("config.yaml"), "{message}");
    assert_served_by(&gateway.chat("gpt"), "dep-gpt");
}

#[test]
fn admin_reload_needs_the_master_key_and_refuses_an_invalid_file() {
    let a = Mock::start("a", &[]);
    let general = "general_settings:\n  master_key: sk-admin-123\n";
    let gateway = Gateway::start(&config(&[deployment("gpt", "dep-gpt", MODEL, &a, "")], general));
    let changed = config(
        &[deployment("gpt", "dep-gpt", MODEL, &a, ""), deployment("fresh", "dep-fresh", MODEL, &a, "")],
        general,
    );
    std::fs::write(&gateway.config_path, &changed).unwrap();

    for bearer in [None, Some("sk-wrong"), Some("sk-admin-12"), Some("sk-admin-1234")] {
        let response = admin_reload(&gateway, bearer);
        assert_eq!(response.status, 401, "{bearer:?}: {}", response.text());
        assert!(response.json()["error"]["message"].as_str().unwrap().contains("master_key"), "{}", response.text());
    }
    // With a master key, API calls need it too.
    let chat = |key: &str| {
        let auth = format!("Bearer {key}");
        gateway.client().request(
            "POST",
            "/v1/chat/completions",
            &[("authorization", &auth)],
            chat_body("fresh", false).as_bytes(),
        )
    };
    assert_invalid_model(&chat("sk-admin-123"), "fresh");
    assert_eq!(stderr_count(&gateway.process, "reload ("), 0, "no reload ran:\n{}", gateway.process.stderr());

    let response = admin_reload(&gateway, Some("sk-admin-123"));
    assert_eq!(response.status, 200, "{}", response.text());
    assert_eq!(response.json()["report"]["changes"]["groups_added"], json!(["fresh"]));
    assert_served_by(&chat("sk-admin-123"), "dep-fresh");

    // An invalid file: 400 with every error and its key path; the config in service stays.
    std::fs::write(&gateway.config_path, format!("{}{general}", invalid_yaml(&a))).unwrap();
    let response = admin_reload(&gateway, Some("sk-admin-123"));
    assert_eq!(response.status, 400, "{}", response.text());
    let error = &response.json()["error"];
    let message = error["message"].as_str().expect("an OpenAI-shaped error");
    assert!(message.contains(STRATEGY_ERROR), "{message}");
    assert!(message.contains(MODEL_ERROR), "{message}");
    assert!(error["type"].is_string(), "{error}");
    gateway.process.wait_for_stderr("reload (POST /admin/reload) refused", LOG_DEADLINE);
    assert_served_by(&chat("sk-admin-123"), "dep-fresh");
    assert_eq!(metric(&gateway, "pointwork_reloads_total{outcome=\"ok\"}"), 1);
    assert_eq!(metric(&gateway, "pointwork_reloads_total{outcome=\"failed\"}"), 1);

    // A reload that rotates the key: the next reload needs the new one.
    let rotated = "general_settings:\n  master_key: sk-admin-456\n";
    std::fs::write(&gateway.config_path, config(&[deployment("gpt", "dep-gpt", MODEL, &a, "")], rotated)).unwrap();
    assert_eq!(admin_reload(&gateway, Some("sk-admin-123")).status, 200);
    assert_eq!(admin_reload(&gateway, Some("sk-admin-123")).status, 401, "the old key no longer works");
    assert_eq!(admin_reload(&gateway, Some("sk-admin-456")).status, 200);
}

// ---------------------------------------------------------------------------------------------
// State across reloads

#[test]
fn cooldown_survives_a_reload_for_the_same_id_and_is_dropped_with_the_id() {
    let a = Mock::start("a", &[]);
    let b = Mock::start("b", &[]);
    let settings = "router_settings:\n  allowed_fails: 0\n  cooldown_time: 60\n  num_retries: 0\n";
    let pair = |a_id: &str, extra: &[String]| {
        let mut entries = vec![deployment("gpt", a_id, MODEL, &a, ""), deployment("gpt", "dep-b", MODEL, &b, "")];
        entries.extend_from_slice(extra);
        config(&entries, settings)
    };
    let gateway = Gateway::start_with(&pair("dep-a", &[]), GatewayOptions { shards: 1, ..GatewayOptions::default() });

    // A fails once: with allowed_fails 0 it cools down for 60 s.
    a.control(json!({"fault": "status:500"}));
    let mut failed = false;
    for _ in 0..SHUFFLE_TRIES {
        let response = gateway.chat("gpt");
        if a.request_count() > 0 {
            assert_ne!(response.status, 200, "A's 500 reached the client (no retries): {}", response.text());
            failed = true;
            break;
        }
        assert_served_by(&response, "dep-b");
    }
    assert!(failed, "A was never picked in {SHUFFLE_TRIES} requests");
    // From now on A would answer; only its cooldown keeps it out.
    a.control(json!({"fault": null}));
    let only_b = |label: &str| {
        for i in 0..32 {
            let response = gateway.chat("gpt");
            assert_eq!(response.status, 200, "{label} request {i}: {}", response.text());
            assert_eq!(response.deployment(), "dep-b", "{label} request {i}: A is still cooling down");
        }
        assert_eq!(a.request_count(), 1, "{label}: A was not tried again");
    };
    only_b("before any reload");

    // An unrelated change: A keeps its id, so it keeps its cooldown.
    let extra = [deployment("extra", "dep-extra", MODEL, &b, "")];
    let response = admin_reload(&gateway, None);
    assert_eq!(response.status, 200, "{}", response.text());
    assert_eq!(response.json()["report"]["changes"]["groups_added"], json!([]), "same file: no change");
    std::fs::write(&gateway.config_path, pair("dep-a", &extra)).unwrap();
    let response = admin_reload(&gateway, None);
    assert_eq!(response.status, 200, "{}", response.text());
    assert_eq!(response.json()["report"]["changes"]["groups_added"], json!(["extra"]));
    assert_served_by(&gateway.chat("extra"), "dep-extra");
    only_b("after a reload that kept A's id");

    // A's entry gets another id: a new deployment, with no cooldown.
    std::fs::write(&gateway.config_path, pair("dep-a2", &extra)).unwrap();
    let response = admin_reload(&gateway, None);
    assert_eq!(response.status, 200, "{}", response.text());
    let changes = &response.json()["report"]["changes"];
    assert_eq!(changes["deployments_added"], json!(["dep-a2"]), "{changes}");
    assert_eq!(changes["deployments_removed"], json!(["dep-a"]), "{changes}");
    let mut served_by_a = false;
    for _ in 0..SHUFFLE_TRIES {
        let response = gateway.chat("gpt");
        assert_eq!(response.status, 200, "{}", response.text());
        if response.deployment() == "dep-a2" {
            served_by_a = true;
            break;
        }
    }
    assert!(served_by_a, "A under its new id was never picked in {SHUFFLE_TRIES} requests");
    assert_eq!(a.request_count(), 2);

    // And the old id back (removed, then re-added): its state went with its removal.
    a.control(json!({"fault": "status:500"}));
    let mut failed = false;
    for _ in 0..SHUFFLE_TRIES {
        let response = gateway.chat("gpt");
        if a.request_count() > 2 {
            assert_ne!(response.status, 200, "{}", response.text());
            failed = true;
            break;
        }
    }
    assert!(failed, "A was never picked in {SHUFFLE_TRIES} requests");
    a.control(json!({"fault": null}));
    std::fs::write(&gateway.config_path, pair("dep-a", &extra)).unwrap();
    assert_eq!(admin_reload(&gateway, None).status, 200);
    let served = (0..SHUFFLE_TRIES).any(|_| {
        let response = gateway.chat("gpt");
        assert_eq!(response.status, 200, "{}", response.text());
        response.deployment() == "dep-a"
    });
    assert!(served, "dep-a, re-added, never picked: the cooldown of dep-a2 leaked to it?");
}

// ---------------------------------------------------------------------------------------------
// Reloads under load

/// What the load threads saw.
#[derive(Default)]
struct Tally {
    failures: Vec<String>,
    /// (sent, done) of every stream that ended with `[DONE]`.
    streams: Vec<(Instant, Instant)>,
    plain: usize,
}

/// One request on `client` (reconnecting if the gateway closed it); `Err` describes a failure.
fn one_request(
    client: &mut Option<Client>,
    addr: SocketAddr,
    stream: bool,
    tally: &Mutex<Tally>,
) -> Result<(), String> {
    let c = client.get_or_insert_with(|| Client::connect(addr));
    let sent = Instant::now();
    c.send(
        "POST",
        "/v1/chat/completions",
        &[("content-type", "application/json")],
        chat_body("gpt", stream).as_bytes(),
    );
    let head = c.read_head().map_err(|e| format!("head: {e}"))?;
    let close = head.header("connection").is_some_and(|v| v.eq_ignore_ascii_case("close"));
    if head.status != 200 {
        let body = c.read_body(&head).unwrap_or_default();
        return Err(format!("status {}: {}", head.status, String::from_utf8_lossy(&body)));
    }
    if stream {
        let events = c.events().collect_all().map_err(|e| format!("stream: {e}"))?;
        match events.last() {
            Some(e) if e.text == "data: [DONE]" => {}
            _ => {
                return Err(format!("stream without [DONE]: {:?}", events.iter().map(|e| &e.text).collect::<Vec<_>>()))
            }
        }
        if events.iter().any(|e| e.text.contains("\"error\"")) {
            return Err(format!("error event in the stream: {events:?}"));
        }
        tally.lock().unwrap().streams.push((sent, Instant::now()));
    } else {
        let body = c.read_body(&head).map_err(|e| format!("body: {e}"))?;
        let v: Value = serde_json::from_slice(&body).map_err(|e| format!("not JSON ({e})"))?;
        if v["object"] != "chat.completion" {
            return Err(format!("not a completion: {v}"));
        }
        tally.lock().unwrap().plain += 1;
    }
    if close {
        *client = None;
    }
    Ok(())
}

#[test]
fn twenty_reloads_under_load_lose_no_request() {
    let a = Mock::start("a", &["--latency-ms", "2", "--chunks", "10", "--chunk-delay-ms", "30"]);
    let b = Mock::start("b", &["--latency-ms", "2", "--chunks", "10", "--chunk-delay-ms", "30"]);
    // Both serve `gpt`; the second adds a deployment to it (and a group), the first removes them.
    let one = config(&[deployment("gpt", "dep-a", MODEL, &a, "")], "");
    let two = config(
        &[
            deployment("gpt", "dep-a", MODEL, &a, ""),
            deployment("gpt", "dep-b", MODEL, &b, ""),
            deployment("extra", "dep-extra", MODEL, &b, ""),
        ],
        "",
    );
    let gateway = Gateway::start_with(&one, GatewayOptions { shards: 2, ..GatewayOptions::default() });
    let addr = gateway.addr;

    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicUsize::new(0));
    let tally = Arc::new(Mutex::new(Tally::default()));
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let (stop, done, tally) = (stop.clone(), done.clone(), tally.clone());
            std::thread::spawn(move || {
                let mut client = None;
                let mut i = 0usize;
                while !stop.load(Ordering::Relaxed) {
                    // Threads 0 and 1 stream every other request, 2 and 3 mostly plain ones.
                    let stream = if t < 2 { i.is_multiple_of(2) } else { i.is_multiple_of(5) };
                    if let Err(e) = one_request(&mut client, addr, stream, &tally) {
                        tally.lock().unwrap().failures.push(format!("thread {t} request {i}: {e}"));
                        client = None;
                    }
                    done.fetch_add(1, Ordering::Relaxed);
                    i += 1;
                }
            })
        })
        .collect();

    let started = Instant::now();
    let mut reloads = Vec::new();
    for n in 0..20 {
        // Let some requests complete between reloads (so that every reload lands under load).
        let seen = done.load(Ordering::Relaxed);
        let until = Instant::now() + Duration::from_secs(10);
        while done.load(Ordering::Relaxed) < seen + 4 {
            assert!(Instant::now() < until, "the load stalled before reload {n}");
            assert!(!threads.iter().any(|t| t.is_finished()), "a load thread died");
            std::thread::sleep(Duration::from_millis(2));
        }
        let yaml = if n % 2 == 0 { &two } else { &one };
        let begun = Instant::now();
        if n % 4 < 2 {
            let line = sighup_reload(&gateway, yaml);
            assert!(line.contains("now "), "reload {n} refused: {line}");
        } else {
            std::fs::write(&gateway.config_path, yaml).unwrap();
            let response = admin_reload(&gateway, None);
            assert_eq!(response.status, 200, "reload {n}: {}", response.text());
        }
        reloads.push((begun, Instant::now()));
    }
    let took = started.elapsed();
    // Some more load on the last config, then stop.
    let seen = done.load(Ordering::Relaxed);
    let until = Instant::now() + Duration::from_secs(10);
    while done.load(Ordering::Relaxed) < seen + 8 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(2));
    }
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().expect("a load thread panicked");
    }

    let tally = tally.lock().unwrap();
    assert!(tally.failures.is_empty(), "{} failed requests:\n{}", tally.failures.len(), tally.failures.join("\n"));
    assert!(took < Duration::from_secs(30), "20 reloads took {took:?}");
    let spanning = tally.streams.iter().filter(|(s, e)| reloads.iter().any(|(b, d)| s < b && e > d)).count();
    assert!(spanning > 0, "no stream was in flight across a reload ({} streams)", tally.streams.len());
    assert!(tally.plain > 20, "only {} plain requests", tally.plain);
    assert_eq!(metric(&gateway, "pointwork_reloads_total{outcome=\"ok\"}"), 20);
    assert_eq!(metric(&gateway, "pointwork_reloads_total{outcome=\"failed\"}"), 0);
    assert_eq!(stderr_count(&gateway.process, "reload (SIGHUP): "), 10);
    assert_eq!(stderr_count(&gateway.process, "reload (POST /admin/reload): "), 10);
    eprintln!(
        "20 reloads in {took:?}; {} streams ({spanning} across a reload), {} plain requests",
        tally.streams.len(),
        tally.plain
    );
}
