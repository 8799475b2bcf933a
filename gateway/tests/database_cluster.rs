//! Database keys' and teams' limits shared by several instances (issue 31): two gateways on one
//! PostgreSQL (LiteLLM's schema) and one `redis-server`, a row as LiteLLM writes it, requests
//! alternating between the instances — the limit holds for the pair, not for each.

mod common;
#[path = "../../db/tests/support/postgres.rs"]
mod postgres;
#[allow(dead_code)]
#[path = "cluster/redis_server.rs"]
mod redis_server;

use std::net::SocketAddr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::http::Client;
use common::{chat_body, config, deployment, priced, Gateway, GatewayOptions, Mock, Response};
use pointwork_gateway::keys::digest_hex;
use postgres::Postgres;
use redis_server::RedisServer;
use serde_json::json;

const MASTER: &str = "sk-master-2718";

fn start(mock: &Mock, url: &str, redis: &RedisServer, name: &str) -> Gateway {
    let yaml = config(
        &[priced(mock), deployment("big", "dep-big", "openai/gpt-4o", mock, "")],
        &format!(
            "general_settings:\n  master_key: {MASTER}\n  database_url: {url}\nrouter_settings:\n  redis_host: 127.0.0.1\n  redis_port: {}\npointwork:\n  cluster: {{instance: {name}, sync_interval: 50ms}}\n",
            redis.port
        ),
    );
    let gateway = Gateway::start_with(&yaml, GatewayOptions { shards: 2, ..GatewayOptions::default() });
    gateway.process.wait_for_stderr("cluster: Redis at", Duration::from_secs(10));
    gateway
}

fn chat(gateway: &Gateway, key: &str, model: &str) -> Response {
    chat_at(gateway.addr, key)(model)
}

/// A chat request to `addr`, sendable from another thread.
fn chat_at(addr: SocketAddr, key: &str) -> impl FnOnce(&str) -> Response {
    let bearer = format!("Bearer {key}");
    move |model| {
        let body = chat_body(model, false);
        Client::connect(addr).request("POST", "/v1/chat/completions", &[("authorization", &bearer)], body.as_bytes())
    }
}

/// Waits until both instances reconciled twice more: each has published what it counted and
/// read what the other did.
fn reconciled(gateways: [&Gateway; 2]) {
    for g in gateways {
        let before = g.metric("pointwork_cluster_syncs_total");
        common::wait_until(Duration::from_secs(5), "two reconciles", || {
            g.metric("pointwork_cluster_syncs_total") >= before + 2.0
        });
    }
}

/// Per-minute limits start over with the minute: a test of them starts early in one.
fn early_in_a_minute() -> u64 {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs();
    if now % 60 > 40 {
        std::thread::sleep(Duration::from_secs(61 - now % 60));
    }
    minute_now()
}

fn minute_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() / 60
}

/// Sends `limit` requests alternating between `a` and `b` (each instance seeing the other's
/// count before the next), all admitted; then one more on each, refused. Returns a refusal.
fn alternate_until_refused(a: &Gateway, b: &Gateway, key: &str, limit: usize) -> Response {
    let minute = early_in_a_minute();
    for i in 0..limit {
        let gateway = if i % 2 == 0 { a } else { b };
        let r = chat(gateway, key, "gpt");
        assert_eq!(r.status, 200, "request {} of {limit}: {}", i + 1, r.text());
        reconciled([a, b]);
    }
    let refused = [chat(a, key, "gpt"), chat(b, key, "gpt")];
    assert_eq!(minute_now(), minute, "the minute turned during the test");
    for r in &refused {
        assert_eq!(r.status, 429, "{}", r.text());
        assert_eq!(r.header("retry-after"), Some("60"));
    }
    refused.into_iter().next().unwrap()
}

fn message(r: &Response) -> (String, String) {
    let e = &r.json()["error"];
    (e["type"].as_str().unwrap_or("").to_string(), e["message"].as_str().unwrap_or("").to_string())
}

#[test]
fn a_database_keys_and_teams_rpm_hold_across_two_instances() {
    let redis = RedisServer::start();
    let pg = Postgres::start();
    let db = "shared_rpm";
    let url = pg.litellm_database(db);
    pg.insert_key(db, "sk-rpm-six-000000001", ", rpm_limit, key_alias", ", 6, 'six'");
    pg.psql(db, "INSERT INTO \"LiteLLM_TeamTable\" (team_id, models, spend, rpm_limit) VALUES ('t-four', '{}', 0, 4)");
    pg.insert_key(db, "sk-team-four-0000001", ", team_id", ", 't-four'");
    pg.insert_key(db, "sk-team-four-0000002", ", team_id", ", 't-four'");
    let mock = Mock::start("m", &[]);
    let (a, b) = (start(&mock, &url, &redis, "a"), start(&mock, &url, &redis, "b"));
    for g in [&a, &b] {
        common::wait_until(Duration::from_secs(5), "2 instances share", || {
            g.metric("pointwork_cluster_instances") == 2.0
        });
    }

    let refused = alternate_until_refused(&a, &b, "sk-rpm-six-000000001", 6);
    let token = digest_hex(b"sk-rpm-six-000000001");
    let (kind, text) = message(&refused);
    assert_eq!(kind, "throttling_error");
    let expected = format!("Rate limit exceeded for api_key: {token}. Limit type: requests. Current limit: 6, Remaining: 0. Limit resets at: ");
    assert!(text.starts_with(&expected) && text.ends_with(" UTC"), "{text}");

    // The team's 4 a minute, spread over its two keys and the two instances.
    let minute = early_in_a_minute();
    for (i, key) in ["sk-team-four-0000001", "sk-team-four-0000002"].iter().cycle().take(4).enumerate() {
        let gateway = if i % 2 == 0 { &a } else { &b };
        assert_eq!(chat(gateway, key, "gpt").status, 200, "team request {}", i + 1);
        reconciled([&a, &b]);
    }
    for (gateway, key) in [(&a, "sk-team-four-0000002"), (&b, "sk-team-four-0000001")] {
        let r = chat(gateway, key, "gpt");
        assert_eq!(r.status, 429, "{}", r.text());
        let (kind, text) = message(&r);
        assert_eq!(kind, "throttling_error");
        assert!(
            text.starts_with(
                "Rate limit exceeded for team: t-four. Limit type: requests. Current limit: 4, Remaining: 0."
            ),
            "{text}"
        );
    }
    assert_eq!(minute_now(), minute, "the minute turned during the test");
}

#[test]
fn a_model_budget_spent_on_one_instance_refuses_on_the_other() {
    let redis = RedisServer::start();
    let pg = Postgres::start();
    let db = "shared_model_budget";
    let url = pg.litellm_database(db);
    let budget = r#"{"gpt": {"budget_limit": 0.05, "time_period": "1d"}}"#;
    pg.insert_key(db, "sk-model-budget-0001", ", model_max_budget", &format!(", '{budget}'"));
    let mock = Mock::start("m", &[]);
    let (a, b) = (start(&mock, &url, &redis, "a"), start(&mock, &url, &redis, "b"));
    // 0.03 a request: one on each instance spends 0.06 of the pair's 0.05.
    assert_eq!(chat(&a, "sk-model-budget-0001", "gpt").status, 200);
    assert_eq!(chat(&b, "sk-model-budget-0001", "gpt").status, 200);
    let token = digest_hex(b"sk-model-budget-0001");
    for g in [&a, &b] {
        common::wait_until(Duration::from_secs(5), "the pair's spend refuses", || {
            chat(g, "sk-model-budget-0001", "gpt").status == 422
        });
        let (kind, text) = message(&chat(g, "sk-model-budget-0001", "gpt"));
        assert_eq!(kind, "budget_exceeded");
        assert_eq!(text, format!("LiteLLM Virtual Key: {token}, key_alias: None, exceeded budget for model=gpt"));
        assert_eq!(chat(g, "sk-model-budget-0001", "big").status, 200, "another model still serves");
    }
}

#[test]
fn a_database_keys_max_parallel_requests_hold_across_two_instances() {
    let redis = RedisServer::start();
    let pg = Postgres::start();
    let db = "shared_parallel";
    let url = pg.litellm_database(db);
    const KEY: &str = "sk-parallel-two-0001";
    pg.insert_key(db, KEY, ", max_parallel_requests", ", 2");
    let mock = Mock::start("m", &[]);
    let (a, b) = (start(&mock, &url, &redis, "a"), start(&mock, &url, &redis, "b"));
    assert_eq!(chat(&b, KEY, "gpt").status, 200, "b knows the key");
    // Two slow requests in flight on a...
    mock.control(json!({"latency_ms": 3000}));
    let before = mock.request_count();
    let slow: Vec<_> = (0..2)
        .map(|_| {
            let send = chat_at(a.addr, KEY);
            std::thread::spawn(move || send("gpt"))
        })
        .collect();
    common::wait_until(Duration::from_secs(5), "two requests in flight on a", || mock.request_count() >= before + 2);
    reconciled([&a, &b]);
    // ... leave b no place.
    let refused = chat(&b, KEY, "gpt");
    assert_eq!(refused.status, 429, "{}", refused.text());
    let (kind, text) = message(&refused);
    assert_eq!(kind, "throttling_error");
    let token = digest_hex(KEY.as_bytes());
    let expected = format!(
        "Rate limit exceeded for api_key: {token}. Limit type: max_parallel_requests. Current limit: 2, Remaining: 0."
    );
    assert!(text.starts_with(&expected), "{text}");
    for request in slow {
        assert_eq!(request.join().unwrap().status, 200);
    }
    mock.control(json!({"latency_ms": 0}));
    common::wait_until(Duration::from_secs(5), "b to admit once a's requests ended", || {
        chat(&b, KEY, "gpt").status == 200
    });
}

#[test]
fn a_database_keys_and_teams_tpm_hold_across_two_instances() {
    let redis = RedisServer::start();
    let pg = Postgres::start();
    let db = "shared_tpm";
    let url = pg.litellm_database(db);
    pg.insert_key(db, "sk-tpm-fifty-0000001", ", tpm_limit", ", 50");
    pg.psql(
        db,
        "INSERT INTO \"LiteLLM_TeamTable\" (team_id, models, spend, tpm_limit) VALUES ('t-tokens', '{}', 0, 50)",
    );
    pg.insert_key(db, "sk-team-tokens-00001", ", team_id", ", 't-tokens'");
    pg.insert_key(db, "sk-team-tokens-00002", ", team_id", ", 't-tokens'");
    let mock = Mock::start("m", &[]);
    let (a, b) = (start(&mock, &url, &redis, "a"), start(&mock, &url, &redis, "b"));
    // 30 tokens a request: one on each instance uses 60 of the pair's 50 a minute.
    let minute = early_in_a_minute();
    let cases = [
        (["sk-tpm-fifty-0000001"; 2], format!("api_key: {}", digest_hex(b"sk-tpm-fifty-0000001"))),
        (["sk-team-tokens-00001", "sk-team-tokens-00002"], "team: t-tokens".to_string()),
    ];
    for (keys, descriptor) in cases {
        assert_eq!(chat(&a, keys[0], "gpt").status, 200);
        reconciled([&a, &b]);
        assert_eq!(chat(&b, keys[1], "gpt").status, 200, "30 of 50 used: b admits");
        reconciled([&a, &b]);
        for (gateway, key) in [(&a, keys[1]), (&b, keys[0])] {
            let r = chat(gateway, key, "gpt");
            assert_eq!(r.status, 429, "{}", r.text());
            let (kind, text) = message(&r);
            assert_eq!(kind, "throttling_error");
            let expected =
                format!("Rate limit exceeded for {descriptor}. Limit type: tokens. Current limit: 50, Remaining: 0.");
            assert!(text.starts_with(&expected), "{text}");
        }
    }
    assert_eq!(minute_now(), minute, "the minute turned during the test");
}

/// rpm 30 over 2 instances hammered at once from a key's first request (each instance finds
/// the key in the database under load): at least the limit and at most the documented bound,
/// 30 + (2 − 1) × ⌈30 / 2⌉ = 45, are admitted in the minute.
#[test]
fn a_database_keys_rpm_holds_across_two_instances_under_load() {
    let redis = RedisServer::start();
    let pg = Postgres::start();
    let db = "shared_rpm_load";
    let url = pg.litellm_database(db);
    const KEY: &str = "sk-rpm-load-00000001";
    pg.insert_key(db, KEY, ", rpm_limit", ", 30");
    let mock = Mock::start("m", &[]);
    let (a, b) = (start(&mock, &url, &redis, "a"), start(&mock, &url, &redis, "b"));
    for g in [&a, &b] {
        common::wait_until(Duration::from_secs(5), "2 instances share", || {
            g.metric("pointwork_cluster_instances") == 2.0
        });
    }
    let minute = early_in_a_minute();
    let (admitted, refused) =
        common::load::admitted_and_refused(&[a.addr, b.addr], 3, |addr| chat_at(addr, KEY)("gpt").status);
    assert_eq!(minute_now(), minute, "the minute turned during the test");
    eprintln!("rpm 30 over 2 instances: {admitted} admitted, {refused} refused");
    assert!((30..=45).contains(&admitted), "{admitted} admitted ({refused} refused)");
    assert!(refused > 0);
}
