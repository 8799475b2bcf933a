//! Several gateway instances sharing state through a real `redis-server` (issue 17): a
//! cooldown, a key's rpm and budget, a pinned session, spend across a restart of every
//! instance, and Redis going away and coming back under load.

mod common;
#[path = "cluster/redis_server.rs"]
mod redis_server;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use std::net::SocketAddr;

use common::http::Client;
use common::{chat_body, deployment, until_tried, wait_until, Gateway, GatewayOptions, Mock, Response};
use pointwork_gateway::keys::digest_hex;
use redis_server::RedisServer;
use serde_json::json;

const MODEL: &str = "openai/gpt-4o-mini";
const SYNC: &str = "50ms";

/// An instance's config: `entries`, Redis named as LiteLLM's docs name it, `router` and
/// `pointwork` lines added to their sections.
fn instance_yaml(redis: &RedisServer, name: &str, entries: &[String], router: &str, pointwork: &str) -> String {
    format!(
        "model_list:\n{}router_settings:\n  redis_host: 127.0.0.1\n  redis_port: {}\n{router}pointwork:\n  cluster: {{instance: {name}, sync_interval: {SYNC}}}\n{pointwork}",
        entries.concat(),
        redis.port
    )
}

fn start(yaml: &str) -> Gateway {
    let gateway = Gateway::start_with(yaml, GatewayOptions { shards: 2, ..GatewayOptions::default() });
    gateway.process.wait_for_stderr("cluster: Redis at", Duration::from_secs(10));
    gateway
}

/// Whether the dry run on `gateway` shows `id` removed by a cooldown.
fn cooling_down(gateway: &Gateway, id: &str) -> bool {
    let out = gateway.post("/v1/route", &chat_body("gpt", false)).json();
    out["candidates"].as_array().into_iter().flatten().any(|c| c["id"] == id && c["removed_by"] == "cooldown")
}

#[test]
fn a_cooldown_started_on_one_instance_holds_on_the_others_within_100_ms() {
    let redis = RedisServer::start();
    let (dead, live) = (Mock::start("dead", &[]), Mock::start("live", &[]));
    dead.control(json!({"fault": "status:500"}));
    let entries = [deployment("gpt", "dep-dead", MODEL, &dead, ""), deployment("gpt", "dep-live", MODEL, &live, "")];
    let router = "  allowed_fails: 0\n  cooldown_time: 60\n  num_retries: 0\n";
    let [a, b, c] = ["a", "b", "c"].map(|n| start(&instance_yaml(&redis, n, &entries, router, "")));
    for g in [&a, &b, &c] {
        wait_until(Duration::from_secs(5), "3 instances share", || g.metric("pointwork_cluster_instances") == 3.0);
    }
    // A failure on instance a cools dep-dead down there...
    let responses = until_tried(&a, &dead, "gpt");
    assert_eq!(responses.last().unwrap().status, 500);
    let seen = Instant::now();
    assert!(cooling_down(&a, "dep-dead"));
    // ... and on b and c, as soon as the event crossed Redis.
    let on_b = wait_until(Duration::from_secs(2), "b sees the cooldown", || cooling_down(&b, "dep-dead"));
    let on_c = wait_until(Duration::from_secs(2), "c sees the cooldown", || cooling_down(&c, "dep-dead"));
    let both = seen.elapsed();
    eprintln!("cooldown seen on b after {on_b:?}, on c after {:?} (both {both:?})", on_b + on_c);
    assert!(both < Duration::from_millis(100), "b and c saw a's cooldown only after {both:?}");
    // Neither sends dep-dead another request.
    let before = dead.request_count();
    for g in [&b, &c] {
        for _ in 0..20 {
            assert_eq!(g.chat("gpt").deployment(), "dep-live");
        }
    }
    assert_eq!(dead.request_count(), before);
    assert!(b.metric("pointwork_cluster_events_received_total") >= 1.0);
    assert!(a.metric("pointwork_cluster_events_published_total") >= 1.0);
}

fn key(name: &str, secret: &str, extra: &str) -> String {
    format!("      - {{name: {name}, sha256: {}{extra}}}\n", digest_hex(secret.as_bytes()))
}

fn with_key(gateway: &Gateway, secret: &str) -> Response {
    with_key_at(gateway.addr, secret)
}

fn with_key_at(addr: SocketAddr, secret: &str) -> Response {
    let bearer = format!("Bearer {secret}");
    Client::connect(addr).request(
        "POST",
        "/v1/chat/completions",
        &[("authorization", &bearer)],
        chat_body("gpt", false).as_bytes(),
    )
}

/// Per-minute limits start over with the minute: a test of them starts early in one.
fn early_in_a_minute() {
    let second = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() % 60;
    if second > 45 {
        std::thread::sleep(Duration::from_secs(61 - second));
    }
}

fn minute_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() / 60
}

/// rpm 30 over 3 instances hammered at once: at least the limit and at most the documented
/// bound, 30 + (3 − 1) × ⌈30 / 3⌉ = 50, are admitted in the minute.
#[test]
fn a_keys_rpm_holds_across_three_instances_under_load() {
    let redis = RedisServer::start();
    let mock = Mock::start("m", &[]);
    let secret = "sk-shared-rpm";
    let pointwork = format!("  auth:\n    virtual_keys:\n{}", key("shared", secret, ", rpm: 30"));
    let entries = [deployment("gpt", "dep", MODEL, &mock, "")];
    let gateways: Vec<Gateway> =
        ["a", "b", "c"].iter().map(|n| start(&instance_yaml(&redis, n, &entries, "", &pointwork))).collect();
    for g in &gateways {
        wait_until(Duration::from_secs(5), "3 instances share", || g.metric("pointwork_cluster_instances") == 3.0);
    }
    early_in_a_minute();
    let minute = minute_now();
    // A second of load: twenty reconciles.
    let addrs: Vec<_> = gateways.iter().map(|g| g.addr).collect();
    let (admitted, refused) = common::load::admitted_and_refused(&addrs, 2, |addr| with_key_at(addr, secret).status);
    assert_eq!(minute_now(), minute, "the minute turned during the test");
    eprintln!("rpm 30 over 3 instances: {admitted} admitted, {refused} refused");
    assert!((30..=50).contains(&admitted), "{admitted} admitted ({refused} refused)");
    assert!(refused > 0);
    // Every instance's meter agrees on the key's requests this minute, once reconciled.
    for g in &gateways {
        wait_until(Duration::from_secs(2), "the instances agree on the count", || {
            let text = g.get("/metrics").text();
            text.contains(&format!("pointwork_key_requests_this_minute{{key=\"shared\"}} {admitted}\n"))
        });
    }
}

/// A deployment whose every response costs well over a cent (the mock reports ~30 tokens).
fn priced(mock: &Mock) -> String {
    deployment("gpt", "dep", MODEL, mock, "input_cost_per_token: 0.001, output_cost_per_token: 0.001")
}

#[test]
fn a_keys_budget_holds_across_instances_and_outlives_a_restart_of_every_instance() {
    let redis = RedisServer::start();
    let mock = Mock::start("m", &[]);
    let secret = "sk-shared-budget";
    let pointwork = format!("  auth:\n    virtual_keys:\n{}", key("money", secret, ", max_budget: 0.1"));
    let entries = [priced(&mock)];
    let yaml = |n: &str| instance_yaml(&redis, n, &entries, "", &pointwork);
    let (a, b) = (start(&yaml("a")), start(&yaml("b")));
    // a spends the whole budget (each response costs ~0.03).
    let mut served_on_a = 0;
    while with_key(&a, secret).status == 200 {
        served_on_a += 1;
        assert!(served_on_a < 20, "a never refused");
    }
    assert!(served_on_a >= 3, "{served_on_a}");
    // b learns a's spend at its next reconciles (its metric reads the meter without spending):
    // it refuses the key's first request there.
    let took = wait_until(Duration::from_secs(2), "b knows a's spend", || {
        b.metric("pointwork_key_spend_usd{key=\"money\"}") >= 0.1
    });
    eprintln!("b knew a's spend after {took:?}");
    let refusal = with_key(&b, secret);
    assert_eq!(refusal.status, 400);
    assert!(refusal.text().contains("Budget has been exceeded"), "{}", refusal.text());
    // Every instance stops; fresh ones come up with the spend Redis recorded.
    drop((a, b));
    let (a2, b2) = (start(&yaml("a")), start(&yaml("b")));
    for g in [&a2, &b2] {
        let r = with_key(g, secret);
        assert_eq!(r.status, 400, "{}", r.text());
    }
    let spend = a2.metric("pointwork_key_spend_usd{key=\"money\"}");
    assert!(spend >= 0.1, "{spend}");
}

#[test]
fn a_pinned_session_moving_between_instances_stays_on_its_deployment() {
    let redis = RedisServer::start();
    let (x, y) = (Mock::start("x", &[]), Mock::start("y", &[]));
    let entries = [deployment("gpt", "dep-x", MODEL, &x, ""), deployment("gpt", "dep-y", MODEL, &y, "")];
    let router = "  optional_pre_call_checks: [session_affinity]\n";
    let [a, b, c] = ["a", "b", "c"].map(|n| start(&instance_yaml(&redis, n, &entries, router, "")));
    let session = |s: &str| {
        json!({"model": "gpt", "metadata": {"session_id": s}, "messages": [{"role": "user", "content": "hi"}]})
            .to_string()
    };
    for i in 0..8 {
        let conversation = format!("conv-{i}");
        let first = a.post("/v1/chat/completions", &session(&conversation));
        let pinned = first.deployment().to_string();
        // The pin crossed Redis when b's dry run sees it.
        wait_until(Duration::from_secs(2), "b knows the pin", || {
            let route = b.post("/v1/route", &session(&conversation)).json();
            let candidates = route["candidates"].as_array().cloned().unwrap_or_default();
            route["winner"]["id"] == pinned.as_str() && candidates.iter().any(|c| c["removed_by"] == "affinity_pinned")
        });
        for g in [&b, &c, &a, &c, &b] {
            let r = g.post("/v1/chat/completions", &session(&conversation));
            assert_eq!(r.deployment(), pinned, "{conversation}: {:?}", r.header("x-pointwork-route"));
        }
    }
}

#[test]
fn redis_killed_and_restarted_under_load_fails_no_request() {
    let mut redis = RedisServer::start();
    let mock = Mock::start("m", &[]);
    let entries = [deployment("gpt", "dep", MODEL, &mock, "")];
    let router = "  allowed_fails: 0\n  cooldown_time: 60\n";
    let (a, b) = (
        start(&instance_yaml(&redis, "a", &entries, router, "")),
        start(&instance_yaml(&redis, "b", &entries, router, "")),
    );
    let stop = AtomicBool::new(false);
    let (served, failed) = (AtomicU64::new(0), Arc::new(AtomicU64::new(0)));
    std::thread::scope(|s| {
        for addr in [a.addr, b.addr] {
            let (stop, served, failed) = (&stop, &served, &failed);
            s.spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let r = Client::connect(addr).post_json("/v1/chat/completions", &chat_body("gpt", false));
                    if r.status == 200 {
                        served.fetch_add(1, Ordering::Relaxed);
                    } else {
                        failed.fetch_add(1, Ordering::Relaxed);
                        eprintln!("failed: {} {}", r.status, r.text());
                    }
                }
            });
        }
        for g in [&a, &b] {
            wait_until(Duration::from_secs(5), "redis up", || g.metric("pointwork_cluster_redis_up") == 1.0);
        }
        redis.kill();
        for g in [&a, &b] {
            wait_until(Duration::from_secs(5), "redis down noticed", || g.metric("pointwork_cluster_redis_up") == 0.0);
            assert_eq!(g.get("/health/readiness").status, 200, "readiness stays ready");
        }
        let during_outage = served.load(Ordering::Relaxed);
        wait_until(Duration::from_secs(5), "requests served while Redis is away", || {
            served.load(Ordering::Relaxed) > during_outage + 50
        });
        redis.restart();
        for g in [&a, &b] {
            wait_until(Duration::from_secs(10), "redis back", || g.metric("pointwork_cluster_redis_up") == 1.0);
        }
        stop.store(true, Ordering::Relaxed);
    });
    assert_eq!(failed.load(Ordering::Relaxed), 0);
    assert!(served.load(Ordering::Relaxed) > 100);
    for g in [&a, &b] {
        let stderr = g.process.stderr();
        assert_eq!(stderr.matches("is out of reach").count(), 1, "said once:\n{stderr}");
        wait_until(Duration::from_secs(2), "said reached again", || {
            g.process.stderr().matches("reached: sharing state").count() == 2
        });
    }
    // Sharing works again: a cooldown started on a reaches b.
    mock.control(json!({"fault": "status:500"}));
    assert_eq!(a.chat("gpt").status, 500);
    wait_until(Duration::from_secs(2), "b sees the cooldown after Redis came back", || cooling_down(&b, "dep"));
}

#[test]
fn a_redis_that_hangs_for_seconds_changes_nothing_on_the_request_path() {
    let redis = RedisServer::start();
    let mock = Mock::start("m", &[]);
    let secret = "sk-while-hung";
    let pointwork = format!("  auth:\n    virtual_keys:\n{}", key("busy", secret, ", rpm: 100000"));
    let entries = [deployment("gpt", "dep", MODEL, &mock, "")];
    let (a, b) = (
        start(&instance_yaml(&redis, "a", &entries, "", &pointwork)),
        start(&instance_yaml(&redis, "b", &entries, "", &pointwork)),
    );
    for g in [&a, &b] {
        wait_until(Duration::from_secs(5), "redis up", || g.metric("pointwork_cluster_redis_up") == 1.0);
    }
    let stop = AtomicBool::new(false);
    let (served, failed, slowest_ms) = (AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0));
    std::thread::scope(|s| {
        for addr in [a.addr, b.addr] {
            let (stop, served, failed, slowest_ms) = (&stop, &served, &failed, &slowest_ms);
            s.spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let started = Instant::now();
                    let status = with_key_at(addr, secret).status;
                    slowest_ms.fetch_max(started.elapsed().as_millis() as u64, Ordering::Relaxed);
                    let counter = if status == 200 { served } else { failed };
                    counter.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
        redis.pause();
        // Seconds of a Redis that answers nothing: every command waits for its timeout.
        let paused = Instant::now();
        for g in [&a, &b] {
            wait_until(Duration::from_secs(5), "the hang noticed", || g.metric("pointwork_cluster_redis_up") == 0.0);
        }
        let before = served.load(Ordering::Relaxed);
        wait_until(Duration::from_secs(5), "requests served while Redis hangs", || {
            served.load(Ordering::Relaxed) > before + 100 && paused.elapsed() > Duration::from_secs(3)
        });
        redis.resume();
        for g in [&a, &b] {
            wait_until(Duration::from_secs(10), "redis back", || g.metric("pointwork_cluster_redis_up") == 1.0);
        }
        stop.store(true, Ordering::Relaxed);
    });
    let slowest = slowest_ms.load(Ordering::Relaxed);
    eprintln!("{} served while Redis hung, slowest request {slowest} ms", served.load(Ordering::Relaxed));
    assert_eq!(failed.load(Ordering::Relaxed), 0);
    assert!(slowest < 500, "a request took {slowest} ms while Redis hung");
}

#[test]
fn an_instance_started_without_redis_serves_alone_and_shares_once_redis_comes() {
    let mut redis = RedisServer::start();
    redis.kill();
    let mock = Mock::start("m", &[]);
    let entries = [deployment("gpt", "dep", MODEL, &mock, "")];
    let a = start(&instance_yaml(&redis, "a", &entries, "", ""));
    for _ in 0..20 {
        assert_eq!(a.chat("gpt").status, 200);
    }
    assert_eq!(a.metric("pointwork_cluster_redis_up"), 0.0);
    assert_eq!(a.get("/health/readiness").status, 200);
    redis.restart();
    wait_until(Duration::from_secs(10), "redis reached", || a.metric("pointwork_cluster_redis_up") == 1.0);
    a.process.wait_for_stderr("reached: sharing state", Duration::from_secs(2));
    let stderr = a.process.stderr();
    assert_eq!(stderr.matches("is out of reach").count(), 1, "said once:\n{stderr}");
    assert_eq!(stderr.matches("reached: sharing state").count(), 1, "{stderr}");
    assert_eq!(a.metric("pointwork_cluster_instances"), 1.0);
}

/// A CA, and a certificate for localhost it signed: (CA PEM, certificate PEM, key PEM) files.
fn pki(dir: &common::TempDir) -> (String, String, String) {
    use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.distinguished_name.push(DnType::CommonName, "pointwork cluster tests CA");
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    let key = KeyPair::generate().unwrap();
    let cert = CertificateParams::new(vec!["localhost".to_owned()]).unwrap().signed_by(&key, &ca).unwrap();
    let path = |name: &str, pem: String| dir.write(name, &pem).display().to_string();
    (path("ca.pem", ca.pem()), path("redis.pem", cert.pem()), path("redis.key", key.serialize_pem()))
}

#[test]
fn instances_share_through_a_redis_that_speaks_only_tls() {
    let dir = common::TempDir::new("redis-tls");
    let (ca, cert, key) = pki(&dir);
    let redis = RedisServer::start_tls(&cert, &key);
    let (dead, live) = (Mock::start("dead", &[]), Mock::start("live", &[]));
    dead.control(json!({"fault": "status:500"}));
    let entries = [deployment("gpt", "dep-dead", MODEL, &dead, ""), deployment("gpt", "dep-live", MODEL, &live, "")];
    let yaml = |name: &str| {
        format!(
            "model_list:\n{}router_settings:\n  redis_url: rediss://localhost:{}/0\n  allowed_fails: 0\n  cooldown_time: 60\n  num_retries: 0\npointwork:\n  cluster: {{instance: {name}, sync_interval: {SYNC}}}\n",
            entries.concat(),
            redis.port
        )
    };
    // The site CA is trusted the way the system's certificates are named: SSL_CERT_FILE.
    let trusted = |name: &str| {
        let options =
            GatewayOptions { shards: 2, env: vec![("SSL_CERT_FILE", ca.as_str())], ..GatewayOptions::default() };
        let g = Gateway::start_with(&yaml(name), options);
        wait_until(Duration::from_secs(10), "redis over TLS", || g.metric("pointwork_cluster_redis_up") == 1.0);
        g
    };
    let (a, b) = (trusted("a"), trusted("b"));
    until_tried(&a, &dead, "gpt");
    wait_until(Duration::from_secs(2), "b sees the cooldown over TLS", || cooling_down(&b, "dep-dead"));
    // Without the CA the server's certificate is refused: that instance serves alone and says why.
    let other_dir = common::TempDir::new("redis-tls-other");
    let (other_ca, _, _) = pki(&other_dir);
    let env = vec![("SSL_CERT_FILE", other_ca.as_str())];
    let untrusting = Gateway::start_with(&yaml("c"), GatewayOptions { shards: 1, env, ..GatewayOptions::default() });
    let said = untrusting.process.wait_for_stderr("is out of reach", Duration::from_secs(10));
    assert!(said.to_lowercase().contains("certificate"), "{said}");
    // It serves on its own state: the others' cooldown is not known there.
    assert!(!cooling_down(&untrusting, "dep-dead"));
    assert!(untrusting.chat("gpt").header("x-pointwork-deployment").is_some());
}

#[test]
fn without_redis_configured_nothing_of_the_cluster_runs() {
    let mock = Mock::start("m", &[]);
    let yaml = format!("model_list:\n{}", deployment("gpt", "dep", MODEL, &mock, ""));
    let g = Gateway::start_with(&yaml, GatewayOptions { shards: 2, ..GatewayOptions::default() });
    assert_eq!(g.chat("gpt").status, 200);
    assert!(!g.get("/metrics").text().contains("pointwork_cluster_"));
    assert!(!g.process.stderr().contains("cluster"), "{}", g.process.stderr());
    let threads = std::fs::read_dir(format!("/proc/{}/task", g.process.pid())).unwrap();
    let names: Vec<String> = threads
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .map(|n| n.trim().to_string())
        .collect();
    assert!(names.iter().any(|n| n.starts_with("shard-")), "{names:?}");
    assert!(!names.iter().any(|n| n.starts_with("cluster")), "{names:?}");
}

/// Spend made while Redis was away is counted once when it is back, even by a Redis that lost
/// everything: each instance's count is absolute, so writing it again adds nothing twice.
#[test]
fn spend_made_while_redis_was_away_is_counted_once_when_it_returns() {
    let mut redis = RedisServer::start();
    let mock = Mock::start("m", &[]);
    let secret = "sk-outage-spend";
    let pointwork = format!("  auth:\n    virtual_keys:\n{}", key("money", secret, ", max_budget: 100"));
    let entries = [priced(&mock)];
    let (a, b) = (
        start(&instance_yaml(&redis, "a", &entries, "", &pointwork)),
        start(&instance_yaml(&redis, "b", &entries, "", &pointwork)),
    );
    let spend = |g: &Gateway| g.metric("pointwork_key_spend_usd{key=\"money\"}");
    for _ in 0..3 {
        assert_eq!(with_key(&a, secret).status, 200);
    }
    let before = spend(&a);
    wait_until(Duration::from_secs(2), "b knows a's spend", || spend(&b) == before);
    redis.kill();
    wait_until(Duration::from_secs(5), "a notices", || a.metric("pointwork_cluster_redis_up") == 0.0);
    for _ in 0..2 {
        assert_eq!(with_key(&a, secret).status, 200);
    }
    assert_eq!(with_key(&b, secret).status, 200);
    let (on_a, on_b) = (spend(&a), spend(&b));
    assert!(on_a > before && on_b > before, "{before} {on_a} {on_b}");
    redis.restart();
    for g in [&a, &b] {
        wait_until(Duration::from_secs(10), "redis back", || g.metric("pointwork_cluster_redis_up") == 1.0);
    }
    // Every request counted once: a's five and b's one, on both instances.
    let per_request = before / 3.0;
    let total = 6.0 * per_request;
    for g in [&a, &b] {
        wait_until(Duration::from_secs(2), "both agree on the whole spend", || (spend(g) - total).abs() < 1e-9);
    }
    // And it stays so over more reconciles.
    for g in [&a, &b] {
        let syncs = g.metric("pointwork_cluster_syncs_total");
        wait_until(Duration::from_secs(2), "three more reconciles", || {
            g.metric("pointwork_cluster_syncs_total") >= syncs + 3.0
        });
        assert!((spend(g) - total).abs() < 1e-9, "{} != {total}: counted twice?", spend(g));
    }
}

#[test]
fn a_policys_daily_budget_holds_across_instances() {
    let redis = RedisServer::start();
    let mock = Mock::start("m", &[]);
    let entries = [format!(
        "  - model_name: qwen\n    litellm_params: {{model: openai/qwen, api_base: \"{}\", api_key: sk-q, input_cost_per_token: 0.001, output_cost_per_token: 0.001}}\n    model_info: {{id: qwen-de, sovereignty_class: eu_owned_eu_operated, region: de-ber}}\n",
        mock.api_base()
    )];
    let pointwork = "  policies:\n    eu-strict: {max_usd_per_day: 0.1}\n  default_policy: eu-strict\n";
    let (a, b) = (
        start(&instance_yaml(&redis, "a", &entries, "", pointwork)),
        start(&instance_yaml(&redis, "b", &entries, "", pointwork)),
    );
    let chat = |g: &Gateway| g.post("/v1/chat/completions", &chat_body("qwen", false));
    let mut served = 0;
    while chat(&a).status == 200 {
        served += 1;
        assert!(served < 20, "a never refused");
    }
    let refusal = chat(&a);
    assert!(refusal.text().contains("max_usd_per_day"), "{}", refusal.text());
    // a's record reaches Redis at its next reconciles, b's reconciles after that read it.
    for g in [&a, &b] {
        let syncs = g.metric("pointwork_cluster_syncs_total");
        wait_until(Duration::from_secs(2), "two reconciles", || {
            g.metric("pointwork_cluster_syncs_total") >= syncs + 2.0
        });
    }
    let on_b = chat(&b);
    assert_eq!(on_b.status, 400, "{}", on_b.text());
    assert!(on_b.text().contains("max_usd_per_day"), "{}", on_b.text());
}

/// An instance that drains writes its counts a last time before it exits: the spend of its last
/// requests is in the record even when its next reconcile was far away.
#[test]
fn a_draining_instance_writes_its_last_spend_before_it_exits() {
    let redis = RedisServer::start();
    let mock = Mock::start("m", &[]);
    let secret = "sk-last-words";
    let pointwork = format!("  auth:\n    virtual_keys:\n{}", key("money", secret, ", max_budget: 100"));
    let entries = [priced(&mock)];
    let slow = instance_yaml(&redis, "a", &entries, "", &pointwork)
        .replace(&format!("sync_interval: {SYNC}"), "sync_interval: 10s");
    let mut a = start(&slow);
    for _ in 0..3 {
        assert_eq!(with_key(&a, secret).status, 200);
    }
    let spent = a.metric("pointwork_key_spend_usd{key=\"money\"}");
    assert!(spent > 0.0);
    common::send_signal(&a.process, libc::SIGTERM);
    assert!(a.process.wait_exit(Duration::from_secs(10)).success());
    assert!(!a.process.stderr().contains("did not take the last counts"), "{}", a.process.stderr());
    // A fresh instance reads the record at its first reconcile, before it says it is sharing.
    let b = start(&instance_yaml(&redis, "b", &entries, "", &pointwork));
    assert_eq!(b.metric("pointwork_key_spend_usd{key=\"money\"}"), spent);
    assert_eq!(b.metric("pointwork_cluster_instances"), 1.0, "a left the instances sharing the limits");
}

/// Under usage-based routing the deployments' requests this minute add up over instances: a
/// deployment whose rpm one instance used up leaves the chain on the other.
#[test]
fn the_usage_based_strategys_minute_counts_add_up_across_instances() {
    let redis = RedisServer::start();
    let (x, y) = (Mock::start("x", &[]), Mock::start("y", &[]));
    let entries = [deployment("gpt", "dep-x", MODEL, &x, "rpm: 3"), deployment("gpt", "dep-y", MODEL, &y, "rpm: 1000")];
    let router = "  routing_strategy: usage-based-routing-v2\n";
    early_in_a_minute();
    let (a, b) = (
        start(&instance_yaml(&redis, "a", &entries, router, "")),
        start(&instance_yaml(&redis, "b", &entries, router, "")),
    );
    // On a, dep-x serves until its rpm is used; then only dep-y does.
    let mut on_x = 0;
    for _ in 0..common::SHUFFLE_TRIES {
        if a.chat("gpt").deployment() == "dep-x" {
            on_x += 1;
        }
        if on_x == 3 {
            break;
        }
    }
    assert_eq!(on_x, 3);
    for _ in 0..5 {
        assert_eq!(a.chat("gpt").deployment(), "dep-y");
    }
    // b learns a's usage at a's next tick: its chain drops dep-x for its rpm.
    let took = wait_until(Duration::from_secs(2), "b counts a's requests on dep-x", || {
        let out = b.post("/v1/route", &chat_body("gpt", false)).json();
        out["candidates"].as_array().into_iter().flatten().any(|c| c["id"] == "dep-x" && c["removed_by"] == "rpm_limit")
    });
    eprintln!("b saw dep-x's rpm used after {took:?}");
    for _ in 0..5 {
        assert_eq!(b.chat("gpt").deployment(), "dep-y");
    }
}
