//! The live view's API through the real gateway: who may read it, that nothing is noted before
//! someone watches and after the watch ends, what a decision and a deployment's state and
//! counts say, and the page's files with their headers.

mod common;
#[path = "cluster/redis_server.rs"]
#[allow(dead_code)]
mod redis_server;

use std::time::Duration;

use common::{config, deployment, wait_until, Gateway, GatewayOptions, Mock, Response, LOG_DEADLINE};
use pointwork_gateway::keys::digest_hex;
use serde_json::Value;

const MASTER: &str = "sk-master-7777";
const OPS: &str = "sk-ops-1212";

/// Group `a` on two deployments (`a-ok` on `ok`, `a-bad` on `bad`), group `b` on `b-ok`; the
/// master key, the admin key `ops` and the virtual key `sk-user-1`.
fn yaml(ok: &Mock, bad: &Mock) -> String {
    let rest = format!(
        "general_settings: {{master_key: {MASTER}}}\nrouter_settings: {{allowed_fails: 0, cooldown_time: 60}}\n\
         pointwork:\n  auth:\n    admin_keys:\n      - {{name: ops, sha256: {}}}\n    virtual_keys:\n      - {{name: user, sha256: {}}}\n",
        digest_hex(OPS.as_bytes()),
        digest_hex(b"sk-user-1"),
    );
    let entries = [
        deployment("a", "a-ok", "openai/gpt-4o-mini", ok, ""),
        deployment("a", "a-bad", "openai/gpt-4o-mini", bad, ""),
        deployment("b", "b-ok", "openai/gpt-4o-mini", ok, ""),
    ];
    config(&entries, &rest)
}

fn live(gateway: &Gateway, key: Option<&str>, since: u64) -> Response {
    let auth = key.map(|k| format!("Bearer {k}"));
    let headers: Vec<(&str, &str)> = auth.iter().map(|a| ("authorization", a.as_str())).collect();
    gateway.client().request("GET", &format!("/ui/api/live?since={since}"), &headers, b"")
}

fn chat(gateway: &Gateway, model: &str) -> Response {
    let body = format!(r#"{{"model":"{model}","messages":[{{"role":"user","content":"hi"}}]}}"#);
    let auth = format!("Bearer {MASTER}");
    gateway.client().request("POST", "/v1/chat/completions", &[("authorization", &auth)], body.as_bytes())
}

fn deployment_of<'a>(live: &'a Value, id: &str) -> &'a Value {
    let all = live["groups"].as_array().unwrap().iter().flat_map(|g| g["deployments"].as_array().unwrap());
    all.into_iter().find(|d| d["id"] == id).unwrap_or_else(|| panic!("{id} not in {live}"))
}

#[test]
fn only_the_master_key_or_an_admin_key_reads_the_api_and_the_page_holds_no_config() {
    let (ok, bad) = (Mock::start("ok", &[]), Mock::start("bad", &[]));
    let gateway = Gateway::start(&yaml(&ok, &bad));
    for key in [None, Some("sk-user-1"), Some("sk-wrong")] {
        let r = live(&gateway, key, 0);
        assert_eq!(r.status, 401, "{key:?}: {}", r.text());
        assert!(r.json()["error"]["message"].is_string(), "{}", r.text());
        assert!(!r.text().contains("a-ok"));
    }
    for key in [MASTER, OPS] {
        let r = live(&gateway, Some(key), 0);
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(r.json()["caller"], if key == MASTER { "master" } else { "ops" });
    }
    let page = gateway.get("/ui");
    assert_eq!(page.status, 200);
    assert_eq!(page.header("content-type"), Some("text/html; charset=utf-8"));
    let policy = page.header("content-security-policy").unwrap_or_default();
    assert!(policy.contains("default-src 'none'") && policy.contains("connect-src 'self'"), "{policy}");
    for name in ["a-ok", "a-bad", "b-ok", "gpt-4o-mini"] {
        assert!(!page.text().contains(name), "the page names {name}");
    }
    let script = gateway.get("/ui/app.js");
    assert_eq!(script.status, 200);
    let tag = script.header("etag").expect("an etag").to_string();
    let again = gateway.client().request("GET", "/ui/app.js", &[("if-none-match", &tag)], b"");
    assert_eq!(again.status, 304);
    assert!(again.body.is_empty());
    assert_eq!(gateway.get("/ui/nothing.js").status, 404);
    let post = gateway.client().request("POST", "/ui/api/live", &[("authorization", &format!("Bearer {MASTER}"))], b"");
    assert_eq!(post.status, 405);
}

#[test]
fn decisions_are_noted_only_while_someone_watches_and_say_why() {
    let (ok, bad) = (Mock::start("ok", &[]), Mock::start("bad", &["--fault", "status:500"]));
    // Two shards: what each notes reaches the one board.
    let gateway = Gateway::start_with(&yaml(&ok, &bad), GatewayOptions { shards: 2, ..Default::default() });
    // Unwatched: served, nothing noted (a-bad fails once and cools down for 60 s).
    for _ in 0..30 {
        assert_eq!(chat(&gateway, "a").status, 200);
    }
    let first = live(&gateway, Some(MASTER), 0).json();
    assert_eq!(first["watching"], false);
    assert_eq!(first["decisions"], Value::Array(vec![]), "{first}");
    assert_eq!(first["last_seq"], 0);
    assert_eq!(deployment_of(&first, "a-ok")["per_minute"]["requests"], 0);
    let bad_now = deployment_of(&first, "a-bad");
    assert_eq!(bad_now["state"], "cooling_down", "{bad_now}");
    assert_eq!(bad_now["cooldown"]["cause"], "status_500");
    let left = bad_now["cooldown"]["seconds_left"].as_f64().unwrap();
    assert!(left > 0.0 && left <= 60.0, "{left}");

    // Watched: each request's decision, with the candidate dropped and why.
    let mut seen: Vec<Value> = Vec::new();
    let mut last = 0;
    wait_until(LOG_DEADLINE, "decisions noted", || {
        assert_eq!(chat(&gateway, "a").status, 200);
        let now = live(&gateway, Some(MASTER), last).json();
        last = now["last_seq"].as_u64().unwrap();
        seen.extend(now["decisions"].as_array().unwrap().iter().cloned());
        seen.len() >= 3
    });
    let d = &seen[0];
    assert_eq!((d["model"].as_str(), d["group"].as_str(), d["winner"].as_str()), (Some("a"), Some("a"), Some("a-ok")));
    assert_eq!(d["status"], 200);
    assert_eq!(d["key"], "master");
    assert_eq!(d["path"], "/v1/chat/completions");
    let candidates = d["candidates"].as_array().unwrap();
    let of = |id: &str| candidates.iter().find(|c| c["id"] == id).cloned().unwrap_or_default();
    assert_eq!(of("a-ok")["status"], "winner");
    assert_eq!(
        (of("a-bad")["status"].as_str(), of("a-bad")["removed_by"].as_str()),
        (Some("removed"), Some("cooldown"))
    );
    let reason = d["route_reason"].as_str().unwrap_or_default();
    assert!(reason.contains("a-ok") && reason.contains("cooldown"), "{reason}");
    // The same line as the response's header.
    let header = chat(&gateway, "a").header("x-pointwork-route").map(str::to_owned);
    assert_eq!(header.as_deref(), Some(reason));

    // One decision whole.
    let seq = d["seq"].as_u64().unwrap();
    let auth = format!("Bearer {MASTER}");
    let whole = gateway.client().request("GET", &format!("/ui/api/decision/{seq}"), &[("authorization", &auth)], b"");
    assert_eq!(whole.status, 200, "{}", whole.text());
    let whole = whole.json();
    assert_eq!(whole["winner_detail"]["id"], "a-ok");
    assert!(whole["candidates"].as_array().unwrap().iter().all(|c| c["upstream_model"] == "gpt-4o-mini"), "{whole}");
    let gone = gateway.client().request("GET", "/ui/api/decision/999999", &[("authorization", &auth)], b"");
    assert_eq!(gone.status, 404);

    // Counts per minute: the attempts sent while watched.
    let before =
        deployment_of(&live(&gateway, Some(MASTER), last).json(), "a-ok")["per_minute"]["requests"].as_u64().unwrap();
    for _ in 0..20 {
        assert_eq!(chat(&gateway, "a").status, 200);
    }
    wait_until(LOG_DEADLINE, "20 more requests counted", || {
        let now = live(&gateway, Some(MASTER), last).json();
        let per_minute = &deployment_of(&now, "a-ok")["per_minute"];
        // The mock reports usage: tokens and spend are known once read.
        per_minute["requests"].as_u64().unwrap() >= before + 20 && per_minute["tokens"].as_u64().unwrap_or(0) > 0
    });
}

#[test]
fn the_watch_ends_five_seconds_after_the_last_poll() {
    let (ok, bad) = (Mock::start("ok", &[]), Mock::start("bad", &[]));
    // One shard: its notes reach the board in the order they were taken.
    let gateway = Gateway::start(&yaml(&ok, &bad));
    let mut last = live(&gateway, Some(MASTER), 0).json()["last_seq"].as_u64().unwrap();
    wait_until(LOG_DEADLINE, "a decision noted", || {
        assert_eq!(chat(&gateway, "b").status, 200);
        let now = live(&gateway, Some(MASTER), 0).json();
        last = now["last_seq"].as_u64().unwrap();
        last > 0
    });
    // A wait on the clock by design: the watch lasts five seconds, and a shard looks at it
    // every quarter second.
    std::thread::sleep(Duration::from_millis(5_600));
    for _ in 0..10 {
        assert_eq!(chat(&gateway, "a").status, 200);
    }
    // Watched again: the next `b` is noted, and no `a` before it was.
    let mut noted: Vec<Value> = Vec::new();
    live(&gateway, Some(MASTER), last);
    wait_until(LOG_DEADLINE, "the next decision noted", || {
        assert_eq!(chat(&gateway, "b").status, 200);
        let now = live(&gateway, Some(MASTER), last).json();
        noted = now["decisions"].as_array().unwrap().clone();
        !noted.is_empty()
    });
    assert!(noted.iter().all(|d| d["model"] == "b"), "unwatched requests were noted: {noted:?}");
}

#[test]
fn the_instances_sharing_redis_are_named_while_someone_watches() {
    let redis = redis_server::RedisServer::start();
    let mock = Mock::start("m", &[]);
    let yaml = |name: &str| {
        let entries = [deployment("a", "a-1", "openai/gpt-4o-mini", &mock, "")];
        let rest = format!(
            "router_settings: {{redis_host: 127.0.0.1, redis_port: {}}}\npointwork:\n  cluster: {{instance: {name}, sync_interval: 50ms}}\n",
            redis.port
        );
        config(&entries, &rest)
    };
    let (one, _two) = (Gateway::start(&yaml("pw-one")), Gateway::start(&yaml("pw-two")));
    let mut now = Value::Null;
    wait_until(LOG_DEADLINE, "both instances named", || {
        now = one.get("/ui/api/live").json();
        let cluster = &now["cluster"];
        let members = cluster["members"].as_array().cloned().unwrap_or_default();
        let mut names: Vec<String> = members.iter().filter_map(|m| m["instance"].as_str().map(str::to_owned)).collect();
        names.sort();
        names == ["pw-one", "pw-two"] && cluster["redis_up"] == true && cluster["instances"] == 2
    });
    assert_eq!(now["instance"], "pw-one", "{now}");
}
