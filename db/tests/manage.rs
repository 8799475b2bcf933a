//! LiteLLM's management API (`/key/*`, `/team/*`, `/user/*`, `/spend/logs`) on a real
//! PostgreSQL carrying LiteLLM's real schema, driven through the database thread as the
//! gateway drives it. Rows are checked with psql (what LiteLLM would read), and every change
//! must reach a second connection LISTENing on the changes channel.

#[path = "support/postgres.rs"]
mod postgres;

use std::future::poll_fn;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use pointwork_db::manage::Caller;
use pointwork_db::{Database, DbSettings, ManageCall};
use postgres::Postgres;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use tokio_postgres::{AsyncMessage, NoTls};

/// One PostgreSQL for every scenario, each scenario on a database of its own, all side by
/// side. The server is owned here, so it stops when the test ends (even on failure): a
/// `static` one would be left running after the test binary exits.
type Scenario = fn(&Postgres);

#[test]
fn management_api_on_litellm_schema() {
    let pg = Postgres::start();
    let scenarios: &[(&str, Scenario)] = &[
        ("generate_writes_the_row_litellm_writes", generate_writes_the_row_litellm_writes),
        ("update_block_unblock_and_delete_change_the_row", update_block_unblock_and_delete_change_the_row),
        ("regenerate_replaces_the_token_in_place", regenerate_replaces_the_token_in_place),
        (
            "teams_are_created_changed_and_deleted_with_their_keys",
            teams_are_created_changed_and_deleted_with_their_keys,
        ),
        ("a_new_user_gets_a_key", a_new_user_gets_a_key),
        ("keys_are_listed_page_by_page", keys_are_listed_page_by_page),
        ("spend_logs_raw_and_by_day", spend_logs_raw_and_by_day),
        ("errors_have_litellm_shapes", errors_have_litellm_shapes),
    ];
    let only = std::env::var("MANAGE_SCENARIO").ok();
    let failed: Vec<&str> = std::thread::scope(|s| {
        let running: Vec<_> = scenarios
            .iter()
            .filter(|(name, _)| only.as_deref().is_none_or(|o| name.contains(o)))
            .map(|(name, scenario)| {
                let pg = &pg;
                let thread = std::thread::Builder::new().name(name.to_string()).spawn_scoped(s, move || scenario(pg));
                (*name, thread.expect("a thread"))
            })
            .collect();
        running.into_iter().filter_map(|(name, t)| t.join().is_err().then_some(name)).collect()
    });
    assert!(failed.is_empty(), "failed scenarios (their panics are above): {failed:?}");
}

/// A fresh database, the thread on it, and a listener on the changes channel.
struct Env<'a> {
    pg: &'a Postgres,
    name: &'static str,
    db: Database,
    changes: Listener,
}

fn env<'a>(pg: &'a Postgres, name: &'static str) -> Env<'a> {
    let url = pg.litellm_database(name);
    let changes = Listener::start(&url);
    let db = Database::start(DbSettings::new(url)).expect("database thread");
    Env { pg, name, db, changes }
}

impl Env<'_> {
    /// One management call; its status and JSON body.
    fn call(&self, method: &'static str, path: &str, query: &str, body: Value) -> (u16, Value) {
        let body = if body.is_null() { Vec::new() } else { body.to_string().into_bytes() };
        self.raw(method, path, query, body)
    }

    fn raw(&self, method: &'static str, path: &str, query: &str, body: Vec<u8>) -> (u16, Value) {
        let call =
            ManageCall { method, path: path.into(), query: query.into(), body, caller: Caller::Admin("admin".into()) };
        let mut rx = self.db.manage(call);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match rx.try_recv() {
                Ok(Some(reply)) => {
                    let value = serde_json::from_slice(&reply.body).expect("a JSON body");
                    return (reply.status, value);
                }
                Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
                other => panic!("no answer to {method} {path}: {other:?}"),
            }
        }
    }

    fn ok(&self, method: &'static str, path: &str, query: &str, body: Value) -> Value {
        let (status, value) = self.call(method, path, query, body);
        assert_eq!(status, 200, "{method} {path}: {value}");
        value
    }

    fn psql(&self, sql: &str) -> String {
        self.pg.psql(self.name, sql)
    }

    /// `column` of the key with this token (psql's text form).
    fn key_column(&self, token: &str, column: &str) -> String {
        self.psql(&format!("SELECT {column} FROM \"LiteLLM_VerificationToken\" WHERE token = '{token}'"))
    }
}

fn sha256(text: &str) -> String {
    Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// A second connection LISTENing on `pointwork_changes`, as every other instance does.
struct Listener(mpsc::Receiver<String>);

impl Listener {
    fn start(url: &str) -> Listener {
        let (tx, rx) = mpsc::channel();
        let (ready, is_ready) = mpsc::channel();
        let url = url.to_string();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            runtime.block_on(async move {
                let (client, mut connection) = tokio_postgres::connect(&url, NoTls).await.unwrap();
                let (found, mut payloads) = tokio::sync::mpsc::unbounded_channel();
                tokio::spawn(async move {
                    while let Some(Ok(message)) = poll_fn(|cx| connection.poll_message(cx)).await {
                        if let AsyncMessage::Notification(n) = message {
                            let _ = found.send(n.payload().to_string());
                        }
                    }
                });
                client.batch_execute("LISTEN pointwork_changes").await.unwrap();
                ready.send(()).unwrap();
                while let Some(payload) = payloads.recv().await {
                    if tx.send(payload).is_err() {
                        break;
                    }
                }
            });
        });
        is_ready.recv_timeout(Duration::from_secs(10)).expect("LISTEN");
        Listener(rx)
    }

    /// Waits for each payload (in any order), skipping others.
    fn expect(&self, payloads: &[String]) {
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut missing: Vec<&String> = payloads.iter().collect();
        let mut seen = Vec::new();
        while !missing.is_empty() {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.0.recv_timeout(left) {
                Ok(p) => {
                    missing.retain(|m| **m != p);
                    seen.push(p);
                }
                Err(_) => panic!("never announced: {missing:?} (seen {seen:?})"),
            }
        }
    }
}

fn key_change(token: &str) -> String {
    format!("key:{token}")
}

/// `{"error": {...}}` → (type, message, param, code).
fn error(body: &Value) -> (String, String, Value, String) {
    let e = &body["error"];
    let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
    (s(&e["type"]), s(&e["message"]), e["param"].clone(), s(&e["code"]))
}

fn generate_writes_the_row_litellm_writes(pg: &Postgres) {
    let env = env(pg, "m_generate");
    let body = json!({"key_alias": "alpha", "duration": "1h", "models": ["gpt", "big"], "max_budget": 2.5,
        "budget_duration": "30d", "user_id": "u1", "team_id": "t1", "tpm_limit": 100, "rpm_limit": 10,
        "max_parallel_requests": 3, "metadata": {"app": "x"}, "tags": ["a"], "aliases": {"g": "gpt"},
        "model_max_budget": {"gpt": {"budget_limit": 1.0, "time_period": "1d"}}});
    let out = env.ok("POST", "/key/generate", "", body);
    let key = out["key"].as_str().unwrap();
    assert!(key.starts_with("sk-") && key.len() == 25, "sk- + 22 URL-safe characters: {key}");
    let token = sha256(key);
    assert_eq!(out["token"], json!(token));
    assert_eq!(out["token_id"], json!(token));
    assert_eq!(out["key_name"], json!(format!("sk-...{}", &key[key.len() - 4..])));
    assert_eq!(out["duration"], json!("1h"), "request fields are echoed");
    assert_eq!(out["metadata"], json!({"app": "x", "tags": ["a"]}));
    assert!(out["expires"].as_str().unwrap().ends_with('Z'), "{}", out["expires"]);
    env.changes.expect(&[key_change(&token)]);

    assert_eq!(env.key_column(&token, "key_name"), format!("sk-...{}", &key[key.len() - 4..]));
    assert_eq!(
        env.key_column(
            &token,
            "key_alias || '|' || models::text || '|' || max_budget || '|' || user_id || '|' || team_id"
        ),
        "alpha|{gpt,big}|2.5|u1|t1"
    );
    assert_eq!(
        env.key_column(
            &token,
            "tpm_limit || '|' || rpm_limit || '|' || max_parallel_requests || '|' || budget_duration"
        ),
        "100|10|3|30d"
    );
    assert_eq!(env.key_column(&token, "metadata->'tags'"), "[\"a\"]");
    assert_eq!(
        env.key_column(&token, "aliases::text || '|' || config::text || '|' || spend || '|' || created_by"),
        "{\"g\": \"gpt\"}|{}|0|admin"
    );
    let now = "(now() AT TIME ZONE 'UTC')";
    assert_eq!(
        env.key_column(&token, &format!("abs(extract(epoch FROM expires - ({now} + interval '1 hour'))) < 60")),
        "t"
    );
    assert_eq!(
        env.key_column(
            &token,
            // LiteLLM's calendar: `30d` resets on the first of next month.
            &format!("budget_reset_at = date_trunc('month', {now}) + interval '1 month'")
        ),
        "t"
    );
    assert_eq!(env.key_column(&token, "blocked IS NULL"), "t");

    // A key of the caller's choosing; no duration = never expires, no budget period.
    let own = env.ok("POST", "/key/generate", "", json!({"key": "sk-my-own-key-0001"}));
    assert_eq!(own["key"], json!("sk-my-own-key-0001"));
    assert_eq!(own["expires"], Value::Null);
    let own_token = sha256("sk-my-own-key-0001");
    assert_eq!(
        env.key_column(&own_token, "(expires IS NULL) || '|' || (budget_reset_at IS NULL) || '|' || models::text"),
        "true|true|{}"
    );

    // LiteLLM's refusals.
    let (status, body) = env.call("POST", "/key/generate", "", json!({"key": "sk-short"}));
    assert_eq!(
        (status, error(&body).1.as_str()),
        (400, "{'error': 'Invalid key format. LiteLLM Virtual Key must be at least 16 characters long.'}")
    );
    let (status, body) = env.call("POST", "/key/generate", "", json!({"key": "pk-0123456789abcdef"}));
    assert_eq!(status, 400);
    assert!(error(&body).1.contains("must start with 'sk-'") && !error(&body).1.contains("0123456789"), "{body}");
    let (status, body) = env.call("POST", "/key/generate", "", json!({"key_alias": "alpha"}));
    assert_eq!(status, 400);
    assert_eq!(
        error(&body).1,
        "Key with alias 'alpha' already exists. Unique key aliases across all keys are required."
    );
    let (status, body) = env.call("POST", "/key/generate", "", json!({"max_budget": -1}));
    assert_eq!(
        (status, error(&body).1.as_str()),
        (400, "{'error': 'max_budget must be a non-negative finite number. Received: -1'}")
    );
    let (status, body) = env.call("POST", "/key/generate", "", json!({"duration": "soon"}));
    assert_eq!((status, error(&body).2), (400, json!("duration")));
    let (status, body) = env.call("POST", "/key/generate", "", json!({"models": "gpt", "tpm_limit": "many"}));
    assert_eq!(status, 422);
    assert_eq!(body["detail"][0]["loc"], json!(["body", "models"]));
    assert_eq!(body["detail"][1]["loc"], json!(["body", "tpm_limit"]));
    assert_eq!(env.psql("SELECT count(*) FROM \"LiteLLM_VerificationToken\""), "2", "no refused call wrote a row");
}

fn update_block_unblock_and_delete_change_the_row(pg: &Postgres) {
    let env = env(pg, "m_update");
    let out = env.ok(
        "POST",
        "/key/generate",
        "",
        json!({"key_alias": "beta", "models": ["gpt"], "max_budget": 1.0, "metadata": {"a": 1}}),
    );
    let key = out["key"].as_str().unwrap().to_string();
    let token = sha256(&key);

    // Merge patch: given fields change, omitted ones stay, null clears; tags merge into metadata.
    let up = env.ok(
        "POST",
        "/key/update",
        "",
        json!({"key": key, "max_budget": 5.0, "models": null, "tags": ["t"], "budget_duration": "1d"}),
    );
    assert_eq!(up["key"], json!(token), "the hash, never the raw key");
    assert_eq!(up["token"], json!(token));
    assert_eq!(up["max_budget"], json!(5.0));
    assert_eq!(up["key_alias"], json!("beta"));
    env.changes.expect(&[key_change(&token)]);
    assert_eq!(
        env.key_column(&token, "max_budget || '|' || (models IS NULL) || '|' || metadata::text || '|' || key_alias"),
        "5|true|{\"a\": 1, \"tags\": [\"t\"]}|beta"
    );
    assert_eq!(env.key_column(&token, "budget_reset_at > now() AT TIME ZONE 'UTC'"), "t");

    // By alias, with the hash, and `duration`.
    env.ok("POST", "/key/update", "", json!({"key_alias": "beta", "rpm_limit": 7, "duration": "2d"}));
    assert_eq!(
        env.key_column(&token, "rpm_limit || '|' || (expires > now() AT TIME ZONE 'UTC' + interval '1 day')"),
        "7|true"
    );
    env.ok("POST", "/key/update", "", json!({"key": token, "duration": null, "key_alias": "gamma"}));
    assert_eq!(env.key_column(&token, "(expires IS NULL) || '|' || key_alias"), "true|gamma");
    let (status, body) = env.call("POST", "/key/update", "", json!({"key": "sk-nope-nope-nope-nope"}));
    assert_eq!(
        (status, error(&body)),
        (404, ("not_found_error".into(), "Key not found.".into(), json!("key"), "404".into()))
    );
    let (status, body) = env.call("POST", "/key/update", "", json!({"key_alias": "beta"}));
    assert_eq!((status, error(&body).1.as_str()), (404, "Key not found. No key with key_alias='beta'."));

    let blocked = env.ok("POST", "/key/block", "", json!({"key": key}));
    assert_eq!(blocked["blocked"], json!(true));
    env.changes.expect(&[key_change(&token)]);
    assert_eq!(env.key_column(&token, "blocked"), "t");
    let info = env.ok("GET", "/key/info", &format!("key={key}"), Value::Null);
    assert_eq!((info["key"].clone(), info["info"]["status"].clone()), (json!(token), json!("revoked")));
    assert!(info["info"].get("token").is_none());
    env.ok("POST", "/key/unblock", "", json!({"key": token}));
    env.changes.expect(&[key_change(&token)]);
    assert_eq!(env.key_column(&token, "blocked"), "f");
    let (status, body) = env.call("POST", "/key/block", "", json!({"key": "not-a-key"}));
    assert_eq!((status, error(&body).1.as_str()), (400, "Invalid key format."));

    let deleted = env.ok("POST", "/key/delete", "", json!({"keys": [key]}));
    assert_eq!(deleted, json!({"deleted_keys": [token]}));
    env.changes.expect(&[key_change(&token)]);
    assert_eq!(env.key_column(&token, "count(*)"), "0");
    assert_eq!(
        env.psql(&format!("SELECT deleted_by FROM \"LiteLLM_DeletedVerificationToken\" WHERE token = '{token}'")),
        "admin"
    );
    let info = env.ok("GET", "/key/info", &format!("key={token}"), Value::Null);
    assert_eq!(info["info"]["status"], json!("deleted"));
    let (status, body) = env.call("POST", "/key/delete", "", json!({"keys": [key]}));
    assert_eq!((status, error(&body).1.as_str()), (404, "{'error': 'No keys found'}"));
    let (status, body) = env.call("POST", "/key/delete", "", json!({}));
    assert_eq!((status, body["detail"][0]["type"].clone()), (422, json!("value_error")));

    // By alias.
    env.ok("POST", "/key/generate", "", json!({"key_alias": "delta"}));
    assert_eq!(
        env.ok("POST", "/key/delete", "", json!({"key_aliases": ["delta"]})),
        json!({"deleted_keys": ["delta"]})
    );
    assert_eq!(env.psql("SELECT count(*) FROM \"LiteLLM_VerificationToken\""), "0");
}

fn regenerate_replaces_the_token_in_place(pg: &Postgres) {
    let env = env(pg, "m_regenerate");
    let out = env.ok("POST", "/key/generate", "", json!({"key_alias": "rot", "models": ["gpt"], "max_budget": 3.0}));
    let old_key = out["key"].as_str().unwrap().to_string();
    let old = sha256(&old_key);
    env.psql(&format!("UPDATE \"LiteLLM_VerificationToken\" SET spend = 1.25 WHERE token = '{old}'"));

    let new = env.ok("POST", "/key/regenerate", "", json!({"key": old_key, "max_budget": 4.0}));
    let new_key = new["key"].as_str().unwrap().to_string();
    let new_token = sha256(&new_key);
    assert_ne!(new_key, old_key);
    assert_eq!((new["token_id"].clone(), new["token"].clone()), (json!(new_token), Value::Null));
    env.changes.expect(&[key_change(&old), key_change(&new_token)]);
    assert_eq!(env.key_column(&old, "count(*)"), "0", "the old token is gone");
    assert_eq!(
        env.key_column(
            &new_token,
            "key_alias || '|' || models::text || '|' || spend || '|' || max_budget || '|' || key_name"
        ),
        format!("rot|{{gpt}}|1.25|4|sk-...{}", &new_key[new_key.len() - 4..]),
        "same row, new token"
    );
    assert_eq!(
        env.psql(&format!("SELECT count(*) FROM \"LiteLLM_DeletedVerificationToken\" WHERE token = '{old}'")),
        "1"
    );

    // `/key/{key}/regenerate`, with a chosen new key, by hash.
    let path = format!("/key/{new_token}/regenerate");
    let third = env.ok("POST", &path, "", json!({"new_key": "sk-third-key-000000"}));
    assert_eq!(third["key"], json!("sk-third-key-000000"));
    env.changes.expect(&[key_change(&new_token), key_change(&sha256("sk-third-key-000000"))]);
    assert_eq!(env.key_column(&sha256("sk-third-key-000000"), "key_alias"), "rot");

    let (status, body) = env.call("POST", "/key/sk-unknown-unknown-1234/regenerate", "", Value::Null);
    assert_eq!(status, 404);
    assert_eq!(error(&body).1, "{'error': 'Key sk-...1234 not found.'}", "a raw key is never sent back");
    let (status, _) = env.call("POST", "/key/regenerate", "", json!({}));
    assert_eq!(status, 400);
}

fn teams_are_created_changed_and_deleted_with_their_keys(pg: &Postgres) {
    let env = env(pg, "m_teams");
    let team = env.ok(
        "POST",
        "/team/new",
        "",
        json!({"team_id": "t-1", "team_alias": "One", "models": ["gpt"], "max_budget": 10.0,
        "budget_duration": "1mo", "members_with_roles": [{"role": "admin", "user_id": "u-1"}], "tags": ["x"]}),
    );
    assert_eq!(
        (team["team_id"].clone(), team["team_alias"].clone(), team["models"].clone()),
        (json!("t-1"), json!("One"), json!(["gpt"]))
    );
    assert_eq!(team["metadata"], json!({"tags": ["x"]}));
    env.changes.expect(&["team:t-1".to_string()]);
    let db_team = env.psql("SELECT max_budget || '|' || budget_duration || '|' || (budget_reset_at = date_trunc('month', now() AT TIME ZONE 'UTC') + interval '1 month') || '|' || blocked FROM \"LiteLLM_TeamTable\" WHERE team_id = 't-1'");
    assert_eq!(db_team, "10|1mo|true|false");
    let generated = env.ok("POST", "/team/new", "", json!({"team_alias": "Two"}));
    assert_eq!(generated["team_id"].as_str().unwrap().len(), 36, "a uuid4 when none is given");
    let (status, body) = env.call("POST", "/team/new", "", json!({"team_id": "t-1"}));
    assert_eq!(
        (status, error(&body).1.as_str()),
        (400, "{'error': 'Team id = t-1 already exists. Please use a different team id.'}")
    );

    let up = env.ok("POST", "/team/update", "", json!({"team_id": "t-1", "max_budget": 20.0, "blocked": true}));
    assert_eq!(
        (up["team_id"].clone(), up["data"]["max_budget"].clone(), up["data"]["team_alias"].clone()),
        (json!("t-1"), json!(20.0), json!("One"))
    );
    env.changes.expect(&["team:t-1".to_string()]);
    assert_eq!(env.psql("SELECT blocked FROM \"LiteLLM_TeamTable\" WHERE team_id = 't-1'"), "t");
    let (status, body) = env.call("POST", "/team/update", "", json!({"team_id": "t-9"}));
    assert_eq!((status, error(&body).1.as_str()), (404, "{'error': 'Team not found, passed team_id=t-9'}"));
    let (status, body) = env.call("POST", "/team/update", "", json!({"max_budget": 1}));
    assert_eq!((status, body["detail"][0]["loc"].clone()), (422, json!(["body", "team_id"])));

    let k1 = env.ok("POST", "/key/generate", "", json!({"team_id": "t-1"}))["token"].as_str().unwrap().to_string();
    let k2 = env.ok("POST", "/key/generate", "", json!({"team_id": "t-1"}))["token"].as_str().unwrap().to_string();
    let other = env.ok("POST", "/key/generate", "", json!({}))["token"].as_str().unwrap().to_string();
    let info = env.ok("GET", "/team/info", "team_id=t-1", Value::Null);
    assert_eq!(info["team_id"], json!("t-1"));
    assert_eq!(info["team_info"]["max_budget"], json!(20.0));
    assert_eq!(info["keys"].as_array().unwrap().len(), 2);
    let (status, body) = env.call("GET", "/team/info", "team_id=t-9", Value::Null);
    assert_eq!((status, error(&body).1.as_str()), (404, "{'message': 'Team not found, passed team id: t-9.'}"));
    let list = env.ok("GET", "/team/list", "", Value::Null);
    assert_eq!(
        list.as_array().unwrap().iter().map(|t| t["team_alias"].clone()).collect::<Vec<_>>(),
        vec![json!("One"), json!("Two")]
    );
    let mine = env.ok("GET", "/team/list", "user_id=u-1", Value::Null);
    assert_eq!(mine.as_array().unwrap().len(), 1);

    let (status, body) = env.call("POST", "/team/delete", "", json!({"team_ids": ["t-1", "t-9"]}));
    assert_eq!((status, body), (404, json!({"detail": {"error": "Team not found, passed team_id=t-9"}})));
    assert_eq!(env.ok("POST", "/team/delete", "", json!({"team_ids": ["t-1"]})), json!({"deleted_teams": ["t-1"]}));
    env.changes.expect(&["team:t-1".to_string(), key_change(&k1), key_change(&k2)]);
    assert_eq!(env.psql("SELECT count(*) FROM \"LiteLLM_TeamTable\" WHERE team_id = 't-1'"), "0");
    assert_eq!(
        env.psql("SELECT string_agg(token, ',') FROM \"LiteLLM_VerificationToken\""),
        other,
        "only the team's keys went"
    );
}

fn a_new_user_gets_a_key(pg: &Postgres) {
    let env = env(pg, "m_users");
    let out = env.ok(
        "POST",
        "/user/new",
        "",
        json!({"user_id": "ann", "user_email": "ann@example.com", "user_role": "internal_user",
        "max_budget": 9.0, "budget_duration": "7d", "models": ["gpt"], "key_alias": "ann-key"}),
    );
    let key = out["key"].as_str().unwrap().to_string();
    let token = sha256(&key);
    assert_eq!(
        (out["user_id"].clone(), out["user_email"].clone(), out["max_budget"].clone()),
        (json!("ann"), json!("ann@example.com"), json!(9.0))
    );
    assert_eq!(out["token"], json!(token));
    env.changes.expect(&["user:ann".to_string(), key_change(&token)]);
    let user = env.psql("SELECT user_role || '|' || max_budget || '|' || models::text || '|' || budget_duration || '|' || (budget_reset_at IS NOT NULL) FROM \"LiteLLM_UserTable\" WHERE user_id = 'ann'");
    assert_eq!(user, "internal_user|9|{gpt}|7d|true");
    assert_eq!(
        env.key_column(&token, "user_id || '|' || models::text || '|' || key_alias || '|' || (max_budget IS NULL)"),
        "ann|{gpt}|ann-key|true",
        "the budget is the user's, not the key's"
    );

    let info = env.ok("GET", "/user/info", "user_id=ann", Value::Null);
    assert_eq!(info["user_info"]["user_email"], json!("ann@example.com"));
    assert_eq!(info["keys"][0]["token"], json!(token));
    let (status, body) = env.call("GET", "/user/info", "user_id=bob", Value::Null);
    assert_eq!((status, error(&body).1.as_str()), (404, "User bob not found"));

    let (status, body) = env.call("POST", "/user/new", "", json!({"user_id": "ann"}));
    assert_eq!((status, error(&body).1.as_str()), (400, "{'error': 'User with id ann already exists'}"));
    let (status, body) = env.call("POST", "/user/new", "", json!({"user_role": "king"}));
    assert_eq!((status, body["detail"][0]["loc"].clone()), (422, json!(["body", "user_role"])));
    let bare = env.ok("POST", "/user/new", "", json!({"auto_create_key": false}));
    assert_eq!(bare["key"], Value::Null);
    assert_eq!(bare["user_id"].as_str().unwrap().len(), 36);
    assert_eq!(env.psql("SELECT count(*) FROM \"LiteLLM_VerificationToken\""), "1");
}

fn keys_are_listed_page_by_page(pg: &Postgres) {
    let env = env(pg, "m_list");
    for i in 0..5 {
        env.ok(
            "POST",
            "/key/generate",
            "",
            json!({"user_id": if i < 3 { "u-a" } else { "u-b" }, "key_alias": format!("k{i}")}),
        );
    }
    env.psql("INSERT INTO \"LiteLLM_VerificationToken\" (token, team_id) VALUES ('ui-session', 'litellm-dashboard')");
    let first = env.ok("GET", "/key/list", "page=1&size=2", Value::Null);
    assert_eq!(
        (first["total_count"].clone(), first["total_pages"].clone(), first["current_page"].clone()),
        (json!(5), json!(3), json!(1))
    );
    assert_eq!(first["keys"].as_array().unwrap().len(), 2);
    assert!(first["keys"][0].as_str().unwrap().len() == 64, "hashes by default");
    let last = env.ok("GET", "/key/list", "page=3&size=2", Value::Null);
    assert_eq!(last["keys"].as_array().unwrap().len(), 1);
    let mut all: Vec<Value> = Vec::new();
    for page in 1..=3 {
        all.extend(
            env.ok("GET", "/key/list", &format!("page={page}&size=2"), Value::Null)["keys"].as_array().unwrap().clone(),
        );
    }
    all.sort_by_key(|v| v.to_string());
    all.dedup();
    assert_eq!(all.len(), 5, "pages do not overlap");
    let mine = env.ok("GET", "/key/list", "user_id=u-b&return_full_object=true", Value::Null);
    assert_eq!(mine["total_count"], json!(2));
    assert_eq!(mine["keys"][0]["user_id"], json!("u-b"));
    let one = env.ok("GET", "/key/list", "key_alias=k1", Value::Null);
    assert_eq!(one["total_count"], json!(1));
    let (status, body) = env.call("GET", "/key/list", "size=101", Value::Null);
    assert_eq!((status, body["detail"][0]["loc"].clone()), (422, json!(["query", "size"])));
}

fn spend_logs_raw_and_by_day(pg: &Postgres) {
    let env = env(pg, "m_spend");
    let key = "sk-spender-000000000001";
    let token = sha256(key);
    let row = |id: &str, api_key: &str, user: &str, model: &str, spend: f64, at: &str| {
        format!("('{id}', 'acompletion', '{api_key}', {spend}, '{at}', '{at}', '{model}', '{user}')")
    };
    let rows = [
        row("r1", &token, "u1", "gpt", 1.0, "2025-03-01 10:00:00"),
        row("r2", &token, "u2", "big", 2.0, "2025-03-01 11:00:00"),
        row("r3", "other", "u1", "gpt", 4.0, "2025-03-02 09:00:00"),
        row("r4", &token, "u1", "gpt", 8.0, "2025-03-05 09:00:00"),
    ];
    env.psql(&format!(
        "INSERT INTO \"LiteLLM_SpendLogs\" (request_id, call_type, api_key, spend, \"startTime\", \"endTime\", model, \"user\") VALUES {}",
        rows.join(", ")
    ));
    let all = env.ok("GET", "/spend/logs", "", Value::Null);
    let ids: Vec<Value> = all.as_array().unwrap().iter().map(|r| r["request_id"].clone()).collect();
    assert_eq!(ids, vec![json!("r4"), json!("r3"), json!("r2"), json!("r1")], "newest first");
    assert_eq!(all[0]["startTime"], json!("2025-03-05T09:00:00Z"));
    let mine = env.ok("GET", "/spend/logs", &format!("api_key={key}"), Value::Null);
    assert_eq!(mine.as_array().unwrap().len(), 3, "a raw key is hashed");
    let one = env.ok("GET", "/spend/logs", "request_id=r3", Value::Null);
    assert_eq!(one.as_array().unwrap().len(), 1);
    let by_user = env.ok("GET", "/spend/logs", "user_id=u2", Value::Null);
    assert_eq!(by_user[0]["request_id"], json!("r2"));

    let days = env.ok("GET", "/spend/logs", "start_date=2025-03-01&end_date=2025-03-03", Value::Null);
    assert_eq!(
        days,
        json!([
            {"startTime": "2025-03-01", "spend": 3.0, token.clone(): 3.0, "users": {"u1": 1.0, "u2": 2.0}, "models": {"gpt": 1.0, "big": 2.0}},
            {"startTime": "2025-03-02", "spend": 4.0, "other": 4.0, "users": {"u1": 4.0}, "models": {"gpt": 4.0}},
            {"startTime": "2025-03-03", "spend": 0.0, "users": {}, "models": {}},
        ])
    );
    let raw = env.ok("GET", "/spend/logs", "start_date=2025-03-01&end_date=2025-03-02&summarize=false", Value::Null);
    assert_eq!(raw.as_array().unwrap().len(), 3, "the end date's whole day counts");
    let (status, body) = env.call("GET", "/spend/logs", "start_date=March&end_date=2025-03-02", Value::Null);
    assert_eq!((status, error(&body).2), (400, json!("start_date")));
}

fn errors_have_litellm_shapes(pg: &Postgres) {
    let env = env(pg, "m_errors");
    let (status, body) = env.call("GET", "/key/nothing", "", Value::Null);
    assert_eq!((status, error(&body).0.as_str(), error(&body).3.as_str()), (404, "not_found_error", "404"));
    let (status, _) = env.call("GET", "/key/generate", "", Value::Null);
    assert_eq!(status, 405);
    let (status, body) = env.raw("POST", "/key/generate", "", b"{not json".to_vec());
    assert_eq!((status, body["detail"][0]["type"].clone()), (422, json!("json_invalid")));
    let (status, body) = env.raw("POST", "/team/new", "", b"[1]".to_vec());
    assert_eq!((status, body["detail"][0]["type"].clone()), (422, json!("model_attributes_type")));
    let (status, body) = env.call("GET", "/key/info", "key=sk-missing-missing-1", Value::Null);
    assert_eq!(
        (status, error(&body)),
        (404, ("not_found_error".into(), "Key not found in database".into(), json!("key"), "404".into()))
    );
    let (status, body) =
        env.call("POST", "/key/generate", "", json!({"team_id": "t", "organization_id": "no-such-org"}));
    assert_eq!(
        (status, error(&body).0.as_str()),
        (400, "bad_request_error"),
        "a foreign key the caller got wrong: {body}"
    );
}
