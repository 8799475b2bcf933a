//! The live view's admin actions on a deployment, through the real gateway with two shards and
//! `pointwork-mock` providers: `POST /admin/deployments/{id}/block`, `/unblock` and
//! `/cooldown/end` — who may call them, what they refuse, that the next requests on every shard
//! follow them, that a block outlives `POST /admin/reload`, and that each is logged; with the
//! cluster over a real `redis-server`, that an ended cooldown ends on the other instances and a
//! block stays the instance's own; with models stored in a real PostgreSQL, that a block of a
//! stored model holds across a change of the stored models and leaves its row alone.

mod common;
#[path = "../../db/tests/support/postgres.rs"]
mod postgres;
#[path = "cluster/redis_server.rs"]
#[allow(dead_code)]
mod redis_server;

use std::time::Duration;

use common::{
    chat_body, config, deployment, wait_until, Gateway, GatewayOptions, Mock, Response, LOG_DEADLINE, SHUFFLE_TRIES,
};
use pointwork_gateway::keys::digest_hex;
use postgres::Postgres;
use redis_server::RedisServer;
use serde_json::{json, Value};

const MASTER: &str = "sk-master-7777";
const OPS: &str = "sk-ops-4444";
const MODEL: &str = "openai/gpt-4o-mini";
/// Requests (each on a fresh connection, so both shards serve some) that must all avoid a
/// blocked or cooling deployment.
const ROUNDS: usize = 20;

/// Group `gpt`: `pool/a` (an id holding `/`) on mock `a` and `b` on mock `b`; the master key
/// and the admin key `ops`; one failure cools a deployment down for ten minutes.
fn yaml(a: &Mock, b: &Mock) -> String {
    yaml_with(a, b, "", "")
}

/// [`yaml`] with more `router_settings` and `pointwork` lines.
fn yaml_with(a: &Mock, b: &Mock, router: &str, pointwork: &str) -> String {
    let rest = format!(
        "router_settings:\n  num_retries: 1\n  allowed_fails: 0\n  cooldown_time: 600\n{router}\
         general_settings: {{master_key: {MASTER}}}\n\
         pointwork:\n  auth:\n    admin_keys:\n      - {{name: ops, sha256: {}}}\n{pointwork}",
        digest_hex(OPS.as_bytes())
    );
    config(&[deployment("gpt", "pool/a", MODEL, a, ""), deployment("gpt", "b", MODEL, b, "")], &rest)
}

fn two_shards(yaml: &str) -> Gateway {
    Gateway::start_with(yaml, GatewayOptions { shards: 2, ..GatewayOptions::default() })
}

fn post(gateway: &Gateway, bearer: Option<&str>, path: &str, body: &str) -> Response {
    let auth = bearer.map(|b| format!("Bearer {b}"));
    let mut headers = vec![("content-type", "application/json")];
    headers.extend(auth.iter().map(|a| ("authorization", a.as_str())));
    gateway.client().request("POST", path, &headers, body.as_bytes())
}

fn act(gateway: &Gateway, bearer: Option<&str>, id_and_action: &str) -> Response {
    post(gateway, bearer, &format!("/admin/deployments/{id_and_action}"), "")
}

fn chat(gateway: &Gateway) -> Response {
    let r = post(gateway, Some(MASTER), "/v1/chat/completions", &chat_body("gpt", false));
    assert_eq!(r.status, 200, "{}", r.text());
    r
}

/// The dry run's candidate `id` (on a fresh connection: either shard answers).
fn dry_run_candidate(gateway: &Gateway, id: &str) -> Value {
    let r = post(gateway, Some(MASTER), "/v1/route", &chat_body("gpt", false));
    assert_eq!(r.status, 200, "{}", r.text());
    let out = r.json();
    let found = out["candidates"].as_array().and_then(|c| c.iter().find(|c| c["id"] == id)).cloned();
    found.unwrap_or_else(|| panic!("no candidate {id} in {out}"))
}

fn assert_error(r: &Response, status: u16, message: &str) {
    assert_eq!(r.status, status, "{}", r.text());
    let text = r.json()["error"]["message"].as_str().unwrap_or_default().to_string();
    assert!(text.contains(message), "{message:?} not in {text:?}");
}

/// `ROUNDS` chats, each served by `b`; mock `a` gets none of them.
fn all_served_by_b(gateway: &Gateway, a: &Mock, what: &str) {
    let before = a.request_count();
    for i in 0..ROUNDS {
        let r = chat(gateway);
        assert_eq!(r.deployment(), "b", "{what}: request {i} went to {}", r.deployment());
    }
    assert_eq!(a.request_count(), before, "{what}: mock a was called");
}

/// Chats until `pool/a` serves one; panics if it never does.
fn until_a_serves(gateway: &Gateway, what: &str) {
    let served = (0..SHUFFLE_TRIES).any(|_| chat(gateway).deployment() == "pool/a");
    assert!(served, "{what}: pool/a served none of {SHUFFLE_TRIES} requests");
}

#[test]
fn only_admins_act_on_a_known_deployment() {
    let (a, b) = (Mock::start("a", &[]), Mock::start("b", &[]));
    let gateway = two_shards(&yaml(&a, &b));
    for bearer in [None, Some("sk-wrong"), Some("sk-ops-444")] {
        for action in ["pool%2Fa/block", "pool%2Fa/unblock", "pool%2Fa/cooldown/end"] {
            let r = act(&gateway, bearer, action);
            assert_eq!(r.status, 401, "{bearer:?} {action}: {}", r.text());
            assert_eq!(r.json()["error"]["type"], "authentication_error", "{}", r.text());
        }
    }
    for action in ["nope/block", "nope/unblock", "nope/cooldown/end", "pool%2Fb/block"] {
        assert_error(&act(&gateway, Some(MASTER), action), 404, "no deployment with id");
    }
    for action in ["pool%2Fa/pause", "pool%2Fa", "pool%2Fa/cooldown/start", "b/block/now"] {
        assert_error(&act(&gateway, Some(OPS), action), 400, "no action");
    }
    assert_error(&act(&gateway, Some(OPS), "pool%zz/block"), 400, "percent-encoded");
    let get = gateway.client().request("GET", "/admin/deployments/b/block", &[], b"");
    assert_ne!(get.status, 200, "{}", get.text());

    // Nothing refused changed anything, and nothing was logged.
    until_a_serves(&gateway, "after refused actions");
    assert!(!gateway.process.stderr().contains("by admin"), "{}", gateway.process.stderr());
}

#[test]
fn a_blocked_deployment_gets_no_request_until_unblocked_and_a_reload_keeps_the_block() {
    let (a, b) = (Mock::start("a", &[]), Mock::start("b", &[]));
    let gateway = two_shards(&yaml(&a, &b));
    until_a_serves(&gateway, "before the block");

    // The id holds a `/`: it travels percent-encoded.
    let r = act(&gateway, Some(OPS), "pool%2Fa/block");
    assert_eq!((r.status, r.json()), (200, json!({"id": "pool/a", "blocked": true, "blocked_by": "admin"})));
    gateway.process.wait_for_stderr("pointwork: deployment pool/a blocked by admin ops\n", LOG_DEADLINE);
    all_served_by_b(&gateway, &a, "blocked");
    let candidate = dry_run_candidate(&gateway, "pool/a");
    assert_eq!((&candidate["status"], &candidate["removed_by"]), (&json!("removed"), &json!("blocked")));
    // `GET /model/info` says what the routes do.
    let info = gateway.client().request("GET", "/model/info", &[("authorization", &format!("Bearer {MASTER}"))], b"");
    let entry = info.json()["data"].as_array().unwrap().iter().find(|e| e["model_info"]["id"] == "pool/a").cloned();
    assert_eq!(entry.map(|e| e["model_info"]["blocked"].clone()), Some(json!(true)), "{}", info.text());

    // A reload builds the routes from the file again: the admin's block stays, and the report
    // lists it.
    let r = post(&gateway, Some(MASTER), "/admin/reload", "");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["report"]["blocked_by_admin"], json!({"pool/a": true}), "{}", r.text());
    gateway.process.wait_for_stderr("admin overrides kept: pool/a blocked", LOG_DEADLINE);
    all_served_by_b(&gateway, &a, "blocked, after the reload");

    // Blocking the whole group gives the group's usual error; unblocking brings both back.
    let r = act(&gateway, Some(MASTER), "b/block");
    assert_eq!(r.status, 200, "{}", r.text());
    gateway.process.wait_for_stderr("pointwork: deployment b blocked by admin master\n", LOG_DEADLINE);
    let refused = post(&gateway, Some(MASTER), "/v1/chat/completions", &chat_body("gpt", false));
    assert!(refused.status >= 400, "{}", refused.text());
    assert!(refused.text().contains("blocked"), "{}", refused.text());
    for id in ["b", "pool%2Fa"] {
        let r = act(&gateway, Some(MASTER), &format!("{id}/unblock"));
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!((&r.json()["blocked"], &r.json()["blocked_by"]), (&json!(false), &Value::Null));
    }
    gateway.process.wait_for_stderr("pointwork: deployment pool/a unblocked by admin master\n", LOG_DEADLINE);
    until_a_serves(&gateway, "after the unblock");
    let candidate = dry_run_candidate(&gateway, "pool/a");
    assert!(candidate["removed_by"].is_null(), "{candidate}");
}

#[test]
fn ending_a_cooldown_puts_the_deployment_back_on_every_shard() {
    let (a, b) = (Mock::start("a", &["--fault", "status:500"]), Mock::start("b", &[]));
    let gateway = two_shards(&yaml(&a, &b));
    // Until pool/a failed once: it cools down for ten minutes (the retry went to b).
    until_a_tried(&gateway, &a);
    for _ in 0..ROUNDS {
        let candidate = dry_run_candidate(&gateway, "pool/a");
        assert_eq!(candidate["removed_by"], "cooldown", "{candidate}");
    }
    all_served_by_b(&gateway, &a, "cooling down");

    // The provider is fixed; an admin ends the cooldown rather than wait ten minutes.
    a.control(json!({"fault": null}));
    let r = act(&gateway, Some(MASTER), "pool%2Fa/cooldown/end");
    assert_eq!((r.status, r.json()), (200, json!({"id": "pool/a", "was_cooling_down": true})));
    gateway.process.wait_for_stderr("pointwork: deployment pool/a cooldown ended by admin master\n", LOG_DEADLINE);
    // Every shard sees it at once: dry runs on fresh connections land on both.
    for _ in 0..ROUNDS {
        let candidate = dry_run_candidate(&gateway, "pool/a");
        assert!(candidate["removed_by"].is_null(), "{candidate}");
    }
    until_a_serves(&gateway, "after the cooldown ended");

    // Nothing to end now: said so, and logged so.
    let r = act(&gateway, Some(OPS), "pool%2Fa/cooldown/end");
    assert_eq!((r.status, r.json()), (200, json!({"id": "pool/a", "was_cooling_down": false})));
    gateway.process.wait_for_stderr(
        "pointwork: deployment pool/a cooldown ended (it was not cooling down) by admin ops\n",
        LOG_DEADLINE,
    );
}

/// Chats until mock `a` received a request.
fn until_a_tried(gateway: &Gateway, a: &Mock) {
    for _ in 0..SHUFFLE_TRIES {
        chat(gateway);
        if a.request_count() > 0 {
            return;
        }
    }
    panic!("pool/a was never tried in {SHUFFLE_TRIES} requests");
}

/// Whether the dry run on `gateway` shows `pool/a` removed by a cooldown.
fn a_cooling_down(gateway: &Gateway) -> bool {
    dry_run_candidate(gateway, "pool/a")["removed_by"] == "cooldown"
}

#[test]
fn an_ended_cooldown_ends_on_every_instance_and_a_block_stays_the_instances_own() {
    let redis = RedisServer::start();
    let (a, b) = (Mock::start("a", &["--fault", "status:500"]), Mock::start("b", &[]));
    let instance = |name: &str| {
        let router = format!("  redis_host: 127.0.0.1\n  redis_port: {}\n", redis.port);
        let pointwork = format!("  cluster: {{instance: {name}, sync_interval: 50ms}}\n");
        let gateway = two_shards(&yaml_with(&a, &b, &router, &pointwork));
        gateway.process.wait_for_stderr("cluster: Redis at", Duration::from_secs(10));
        gateway
    };
    let (one, two) = (instance("one"), instance("two"));
    for g in [&one, &two] {
        wait_until(Duration::from_secs(5), "2 instances share", || g.metric("pointwork_cluster_instances") == 2.0);
    }
    // pool/a fails on instance one; the cooldown crosses to two.
    until_a_tried(&one, &a);
    wait_until(Duration::from_secs(2), "two sees the cooldown", || a_cooling_down(&two));

    // Ended on one, it ends on two as soon as the event crossed Redis.
    a.control(json!({"fault": null}));
    let r = act(&one, Some(MASTER), "pool%2Fa/cooldown/end");
    assert_eq!((r.status, r.json()), (200, json!({"id": "pool/a", "was_cooling_down": true})));
    wait_until(Duration::from_secs(2), "two sees the cooldown end", || (0..ROUNDS).all(|_| !a_cooling_down(&two)));
    until_a_serves(&two, "on two, after the cooldown ended on one");

    // A block is the routes of the instance that was asked.
    let r = act(&one, Some(MASTER), "pool%2Fa/block");
    assert_eq!(r.status, 200, "{}", r.text());
    all_served_by_b(&one, &a, "blocked on one");
    until_a_serves(&two, "on two, while blocked on one");
}

#[test]
fn a_block_of_a_stored_model_holds_when_the_stored_models_change_and_leaves_its_row_alone() {
    let pg = Postgres::start();
    let url = pg.litellm_database("actions_stored");
    let (a, moved, b) = (Mock::start("a", &[]), Mock::start("moved", &[]), Mock::start("b", &[]));
    let yaml = config(
        &[deployment("gpt", "b", MODEL, &b, "")],
        &format!("general_settings:\n  master_key: {MASTER}\n  database_url: {url}\n  store_model_in_db: true\n"),
    );
    let gateway = Gateway::start_with(
        &yaml,
        GatewayOptions { shards: 2, env: vec![("LITELLM_SALT_KEY", "sk-salt-actions")], ..Default::default() },
    );
    let stored = |path: &str, body: Value| {
        let r = post(&gateway, Some(MASTER), path, &body.to_string());
        assert_eq!(r.status, 200, "{path}: {}", r.text());
    };
    let published = |n: usize| {
        gateway.process.wait_for_stderr_count("models in the database changed: ", n, LOG_DEADLINE);
    };
    stored(
        "/model/new",
        json!({"model_name": "gpt", "litellm_params": {"model": MODEL, "api_base": a.api_base(), "api_key": "sk-a"},
               "model_info": {"id": "pool/a"}}),
    );
    published(1);
    until_a_serves(&gateway, "the stored model");

    let r = act(&gateway, Some(MASTER), "pool%2Fa/block");
    assert_eq!((r.status, r.json()), (200, json!({"id": "pool/a", "blocked": true, "blocked_by": "admin"})));
    all_served_by_b(&gateway, &a, "stored and blocked");
    // The stored models change (the model moves to another address): the block stays.
    stored("/model/update", json!({"model_info": {"id": "pool/a"}, "litellm_params": {"api_base": moved.api_base()}}));
    published(2);
    all_served_by_b(&gateway, &moved, "stored, blocked, moved");
    let row = pg.psql("actions_stored", "SELECT model_info FROM \"LiteLLM_ProxyModelTable\" WHERE model_id = 'pool/a'");
    assert!(row.contains("pool/a") && !row.contains("blocked"), "the row changed: {row}");

    assert_eq!(act(&gateway, Some(MASTER), "pool%2Fa/unblock").status, 200);
    until_a_serves(&gateway, "the stored model, unblocked");
    assert!(moved.request_count() > 0 && a.request_count() == 1, "served where the row says now");
}
