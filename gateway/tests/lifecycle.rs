//! The gateway's lifecycle over real processes: config reloads (SIGHUP and `POST
//! /admin/reload`), routing state kept across reloads by deployment id, reloads under load, and
//! the drain on SIGTERM/SIGINT.

mod common;

use std::collections::BTreeSet;
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{chat_body, config, deployment, Client, Gateway, GatewayOptions, Mock, Process, Response, SHUFFLE_TRIES};
use serde_json::{json, Value};

const MODEL: &str = "openai/gpt-4o-mini";
/// How long a reload may take to show in the log (a debug build on a busy machine).
const LOG_DEADLINE: Duration = Duration::from_secs(20);

fn send_signal(process: &Process, signal: i32) {
    // SAFETY: kill(2) with a pid this test spawned and has not reaped yet.
    let rc = unsafe { libc::kill(process.pid() as libc::pid_t, signal) };
    assert_eq!(rc, 0, "kill({}, {signal}): {}", process.pid(), std::io::Error::last_os_error());
}

/// How often `needle` occurs in the process's stderr so far.
fn stderr_count(process: &Process, needle: &str) -> usize {
    process.stderr().matches(needle).count()
}

/// Waits until `needle` occurred `n` times on stderr; returns stderr.
fn wait_for_stderr_count(process: &Process, needle: &str, n: usize, deadline: Duration) -> String {
    let until = Instant::now() + deadline;
    loop {
        let text = process.stderr();
        if text.matches(needle).count() >= n {
            return text;
        }
        assert!(
            Instant::now() < until,
            "{}: {needle:?} not {n} times on stderr within {deadline:?}:\n{text}",
            process.name()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Rewrites the gateway's config file and sends SIGHUP; returns once the reload's log line (or
/// its refusal) appeared.
fn sighup_reload(gateway: &Gateway, yaml: &str) -> String {
    std::fs::write(&gateway.config_path, yaml).expect("rewrite the config");
    let before = stderr_count(&gateway.process, "reload (SIGHUP)");
    send_signal(&gateway.process, libc::SIGHUP);
    let text = wait_for_stderr_count(&gateway.process, "reload (SIGHUP)", before + 1, LOG_DEADLINE);
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

fn assert_served_by(response: &Response, deployment: &str) {
    assert_eq!(response.status, 200, "{}", response.text());
    assert_eq!(response.deployment(), deployment);
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
    assert!(line.starts_with("switchyard: reload (SIGHUP): "), "{line}");
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
    assert_eq!(metric(&gateway, "switchyard_reloads_total{outcome=\"ok\"}"), 1);
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
    assert_eq!(line, "switchyard: reload (SIGHUP) refused; the current config keeps serving:");
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
    assert_eq!(metric(&gateway, "switchyard_reloads_total{outcome=\"failed\"}"), 1);
    assert_eq!(metric(&gateway, "switchyard_reloads_total{outcome=\"ok\"}"), 0);

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

    // A `switchyard:` setting the running shards cannot take on is named, the rest applies.
    std::fs::write(
        &gateway.config_path,
        config(&[deployment("gpt", "dep-gpt", MODEL, &a, "")], "switchyard:\n  drain_timeout: 5s\n"),
    )
    .unwrap();
    let response = admin_reload(&gateway, None);
    assert_eq!(response.status, 200, "{}", response.text());
    let body = response.json();
    assert_eq!(body["report"]["restart_needed_for"], json!(["drain_timeout"]), "{body}");
    assert_eq!(body["report"]["changes"]["groups_removed"], json!(["fresh"]), "{body}");
    let log = gateway.process.wait_for_stderr("applied only on restart: switchyard.drain_timeout)", LOG_DEADLINE);
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
    assert_invalid_model(&gateway.chat("fresh"), "fresh");
    assert_eq!(stderr_count(&gateway.process, "reload ("), 0, "no reload ran:\n{}", gateway.process.stderr());

    let response = admin_reload(&gateway, Some("sk-admin-123"));
    assert_eq!(response.status, 200, "{}", response.text());
    assert_eq!(response.json()["report"]["changes"]["groups_added"], json!(["fresh"]));
    assert_served_by(&gateway.chat("fresh"), "dep-fresh");

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
    assert_served_by(&gateway.chat("fresh"), "dep-fresh");
    assert_eq!(metric(&gateway, "switchyard_reloads_total{outcome=\"ok\"}"), 1);
    assert_eq!(metric(&gateway, "switchyard_reloads_total{outcome=\"failed\"}"), 1);

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
    assert_eq!(metric(&gateway, "switchyard_reloads_total{outcome=\"ok\"}"), 20);
    assert_eq!(metric(&gateway, "switchyard_reloads_total{outcome=\"failed\"}"), 0);
    assert_eq!(stderr_count(&gateway.process, "reload (SIGHUP): "), 10);
    assert_eq!(stderr_count(&gateway.process, "reload (POST /admin/reload): "), 10);
    eprintln!(
        "20 reloads in {took:?}; {} streams ({spanning} across a reload), {} plain requests",
        tally.streams.len(),
        tally.plain
    );
}

// ---------------------------------------------------------------------------------------------
// Drain

/// Starts a stream and reads its head and first event.
fn start_stream(gateway: &Gateway) -> Client {
    let mut client = gateway.client();
    client.set_read_timeout(Duration::from_secs(30));
    client.send(
        "POST",
        "/v1/chat/completions",
        &[("content-type", "application/json")],
        chat_body("gpt", true).as_bytes(),
    );
    let head = client.read_head().expect("the stream's head");
    assert_eq!(head.status, 200);
    let first = client.events().next_event().expect("a first event").expect("a first event");
    assert!(first.text.contains("chat.completion.chunk"), "{}", first.text);
    client
}

/// What a new connection to the gateway gets.
#[derive(Debug, PartialEq, Eq)]
enum NewConnection {
    /// Connected and answered (the listener is still open).
    Served,
    /// Connected, then closed or reset without an answer (it raced the listener's close).
    Dropped,
    /// The connect was refused: nobody listens any more.
    Refused,
}

/// Connects to `addr` and asks for readiness; a connection that neither answers nor closes
/// within 5 s fails the test (a client left hanging).
fn new_connection(addr: SocketAddr) -> NewConnection {
    use std::io::{ErrorKind, Read, Write};
    let mut stream = match TcpStream::connect_timeout(&addr, Duration::from_secs(5)) {
        Err(e) if e.kind() == ErrorKind::ConnectionRefused => return NewConnection::Refused,
        Err(e) => panic!("connect to {addr}: {e}"),
        Ok(s) => s,
    };
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    if stream.write_all(b"GET /health/readiness HTTP/1.1\r\nhost: t\r\n\r\n").is_err() {
        return NewConnection::Dropped;
    }
    let mut buf = [0u8; 256];
    match stream.read(&mut buf) {
        Ok(0) => NewConnection::Dropped,
        Ok(_) => NewConnection::Served,
        Err(e) if e.kind() == ErrorKind::ConnectionReset => NewConnection::Dropped,
        Err(e) => panic!("a new connection during the drain got neither an answer nor a close: {e}"),
    }
}

#[test]
fn sigterm_drains_a_stream_in_flight_then_exits_zero() {
    drain_a_stream_in_flight(None);
}

#[test]
fn sigterm_drains_a_stream_in_flight_then_exits_zero_on_the_legacy_driver() {
    drain_a_stream_in_flight(Some("legacy"));
}

/// One shard: the connections opened before the drain live on the shard that holds the stream.
fn drain_a_stream_in_flight(io_driver: Option<&str>) {
    let a = Mock::start("a", &["--chunks", "10", "--chunk-delay-ms", "250"]);
    let options = GatewayOptions { io_driver, ..GatewayOptions::default() };
    let mut gateway = Gateway::start_with(&config(&[deployment("gpt", "dep-a", MODEL, &a, "")], ""), options);
    let addr = gateway.addr;
    // Connections opened before the drain: one for readiness, one for a request.
    let mut probe = gateway.client();
    assert_eq!(probe.request("GET", "/health/readiness", &[], b"").status, 200);
    let mut other = gateway.client();
    assert_served_by(&other.post_json("/v1/chat/completions", &chat_body("gpt", false)), "dep-a");
    assert_eq!(new_connection(addr), NewConnection::Served, "before the drain");
    let mut third = gateway.client();
    assert_eq!(third.request("GET", "/health/liveliness", &[], b"").status, 200);

    let mut stream = start_stream(&gateway);
    let signalled = Instant::now();
    send_signal(&gateway.process, libc::SIGTERM);
    gateway.process.wait_for_stderr("switchyard: SIGTERM: draining", LOG_DEADLINE);

    // Readiness turns false (on a connection opened before), and closes that connection.
    let ready = probe.request("GET", "/health/readiness", &[], b"");
    assert_eq!(ready.status, 503, "{}", ready.text());
    assert_eq!(ready.json(), json!({"status": "draining"}));
    assert_eq!(ready.header("connection"), Some("close"));
    assert!(probe.is_closed_by_peer());
    // A request on an open connection is still served, with `connection: close`.
    let served = other.post_json("/v1/chat/completions", &chat_body("gpt", false));
    assert_served_by(&served, "dep-a");
    assert_eq!(served.header("connection"), Some("close"));
    assert!(other.is_closed_by_peer());
    // New connections are refused once the listener closed (it closes right after the log line).
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        match new_connection(addr) {
            NewConnection::Refused => break,
            other => assert!(Instant::now() < until, "new connections still {other:?} 10 s into the drain"),
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // A stream that starts during the drain (on a connection opened before) completes too.
    third.send("POST", "/v1/chat/completions", &[], chat_body("gpt", true).as_bytes());
    let head = third.read_head().expect("the head of a stream started during the drain");
    assert_eq!(head.status, 200);
    assert_eq!(head.header("connection"), Some("close"));
    assert!(gateway.process.is_running(), "exited with the stream in flight:\n{}", gateway.process.stderr());

    // The stream in flight completes.
    let rest = stream.events().collect_all().expect("the stream ends cleanly");
    assert!(rest.len() >= 5, "most of the stream came after the signal: {} events", rest.len());
    assert_eq!(rest.last().map(|e| e.text.as_str()), Some("data: [DONE]"));
    let late = third.events().collect_all().expect("the late stream ends cleanly");
    assert_eq!(late.last().map(|e| e.text.as_str()), Some("data: [DONE]"));
    assert!(third.is_closed_by_peer());
    let finished = Instant::now();
    let status = gateway.process.wait_exit(common::EXIT_DEADLINE);
    assert_eq!(status.code(), Some(0), "{}", gateway.process.stderr());
    assert!(signalled.elapsed() < Duration::from_secs(20), "exit took {:?}", signalled.elapsed());
    assert!(finished.elapsed() < Duration::from_secs(5), "exit came {:?} after the stream ended", finished.elapsed());
    let stderr = gateway.process.stderr();
    assert!(stderr.contains("switchyard: drain: every request in flight finished; exiting"), "{stderr}");
    assert!(!stderr.contains("grace period"), "{stderr}");
}

#[test]
fn drain_timeout_ends_a_long_stream_and_exits_zero() {
    let a = Mock::start("a", &["--chunks", "10", "--chunk-delay-ms", "1000"]);
    let mut gateway =
        Gateway::start(&config(&[deployment("gpt", "dep-a", MODEL, &a, "")], "switchyard:\n  drain_timeout: 1s\n"));
    let mut stream = start_stream(&gateway);
    let signalled = Instant::now();
    send_signal(&gateway.process, libc::SIGTERM);
    let status = gateway.process.wait_exit(Duration::from_secs(15));
    let took = signalled.elapsed();
    assert_eq!(status.code(), Some(0), "{}", gateway.process.stderr());
    assert!(took >= Duration::from_millis(900), "exited after {took:?}, before the 1s grace period");
    assert!(took < Duration::from_secs(5), "exited after {took:?} with a 1s grace period");
    let stderr = gateway.process.stderr();
    assert!(stderr.contains("switchyard: SIGTERM: draining"), "{stderr}");
    assert!(stderr.contains("up to 1s for requests in flight"), "{stderr}");
    assert!(
        stderr.contains("switchyard: drain: grace period of 1s over with requests still in flight; exiting"),
        "{stderr}"
    );
    // The stream was cut: no [DONE].
    let mut events = stream.events();
    let mut texts = Vec::new();
    while let Ok(Some(e)) = events.next_event() {
        texts.push(e.text);
    }
    assert!(!texts.iter().any(|t| t == "data: [DONE]"), "{texts:?}");
}

#[test]
fn second_signal_exits_at_once_with_code_one() {
    let a = Mock::start("a", &["--chunks", "10", "--chunk-delay-ms", "1000"]);
    let mut gateway = Gateway::start(&config(&[deployment("gpt", "dep-a", MODEL, &a, "")], ""));
    let _stream = start_stream(&gateway);
    send_signal(&gateway.process, libc::SIGTERM);
    gateway.process.wait_for_stderr("switchyard: SIGTERM: draining", LOG_DEADLINE);
    assert!(gateway.process.is_running(), "the default 30s grace period holds the stream");
    let second = Instant::now();
    send_signal(&gateway.process, libc::SIGINT);
    let status = gateway.process.wait_exit(Duration::from_secs(15));
    let took = second.elapsed();
    assert_eq!(status.code(), Some(1), "{}", gateway.process.stderr());
    assert!(took < Duration::from_secs(3), "exited {took:?} after the second signal");
    let stderr = gateway.process.stderr();
    assert!(stderr.contains("switchyard: drain: second signal (SIGINT); exiting at once"), "{stderr}");
}

#[test]
fn sigint_drains_like_sigterm() {
    let a = Mock::start("a", &[]);
    let mut gateway = Gateway::start(&config(&[deployment("gpt", "dep-a", MODEL, &a, "")], ""));
    assert_served_by(&gateway.chat("gpt"), "dep-a");
    send_signal(&gateway.process, libc::SIGINT);
    let status = gateway.process.wait_exit(common::EXIT_DEADLINE);
    assert_eq!(status.code(), Some(0), "{}", gateway.process.stderr());
    let stderr = gateway.process.stderr();
    assert!(stderr.contains("switchyard: SIGINT: draining"), "{stderr}");
    assert!(stderr.contains("switchyard: drain: every request in flight finished; exiting"), "{stderr}");
}

/// Two shards: the one without the stream has nothing to wait for, yet its open connections are
/// still answered; the other holds the process until the stream ends.
#[test]
fn sigterm_over_two_shards_waits_for_the_busy_shard() {
    let a = Mock::start("a", &["--chunks", "10", "--chunk-delay-ms", "250"]);
    let options = GatewayOptions { shards: 2, ..GatewayOptions::default() };
    let mut gateway = Gateway::start_with(&config(&[deployment("gpt", "dep-a", MODEL, &a, "")], ""), options);
    let mut probes: Vec<Client> = (0..8).map(|_| gateway.client()).collect();
    for probe in &mut probes {
        assert_eq!(probe.request("GET", "/health/readiness", &[], b"").status, 200);
    }
    let mut stream = start_stream(&gateway);
    send_signal(&gateway.process, libc::SIGTERM);
    gateway.process.wait_for_stderr("switchyard: SIGTERM: draining", LOG_DEADLINE);
    // Every connection opened before, on either shard, still gets an answer: "draining", and a
    // close. (The idle shard has drained already; its connections must not be left hanging.)
    for (i, probe) in probes.iter_mut().enumerate() {
        probe.set_read_timeout(Duration::from_secs(5));
        let response = probe.request("GET", "/health/readiness", &[], b"");
        assert_eq!(response.status, 503, "probe {i}: {}", response.text());
        assert_eq!(response.json(), json!({"status": "draining"}), "probe {i}");
        assert_eq!(response.header("connection"), Some("close"), "probe {i}");
        assert!(probe.is_closed_by_peer(), "probe {i}");
    }
    let until = Instant::now() + Duration::from_secs(10);
    while new_connection(gateway.addr) != NewConnection::Refused {
        assert!(Instant::now() < until, "new connections still accepted 10 s into the drain");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(gateway.process.is_running(), "exited with the stream in flight:\n{}", gateway.process.stderr());
    let rest = stream.events().collect_all().expect("the stream ends cleanly");
    assert_eq!(rest.last().map(|e| e.text.as_str()), Some("data: [DONE]"));
    assert_eq!(gateway.process.wait_exit(common::EXIT_DEADLINE).code(), Some(0), "{}", gateway.process.stderr());
    gateway.process.wait_for_stderr("switchyard: drain: every request in flight finished; exiting", LOG_DEADLINE);
}
