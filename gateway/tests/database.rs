//! Keys, teams and spend in LiteLLM's own database (issue 31), through real gateways on a real
//! PostgreSQL carrying LiteLLM's real schema (the migrations of `litellm-proxy-extras`): rows
//! as LiteLLM writes them honoured on two instances, LiteLLM's refusals, spend written once per
//! request, a change on the database reaching every instance, the database going away and
//! coming back, `db init` and `check`, and the schema check. Spend under load and budgets per
//! model: `database_spend.rs`.

mod common;
#[path = "../../db/tests/support/postgres.rs"]
mod postgres;
#[path = "database/support.rs"]
mod support;

use std::time::Duration;

use common::{config, priced, Gateway, Mock};
use pointwork_gateway::keys::digest_hex;
use postgres::Postgres;
use support::{chat, error, manage, scalar, server, start, yaml, MASTER};

#[test]
fn keys_as_litellm_wrote_them_are_honoured_on_two_instances() {
    let pg = &server();
    let url = pg.litellm_database("honoured");
    let db = "honoured";
    pg.psql(db, "INSERT INTO \"LiteLLM_TeamTable\" (team_id, models, max_budget, spend) VALUES ('t-poor', '{}', 1.0, 1.5), ('t-gpt', '{gpt}', NULL, 0), ('t-off', '{}', NULL, 0)");
    pg.psql(db, "UPDATE \"LiteLLM_TeamTable\" SET blocked = true WHERE team_id = 't-off'");
    pg.insert_key(db, "sk-good-000000000001", "", "");
    pg.insert_key(db, "sk-blocked-000000002", ", blocked", ", true");
    pg.insert_key(db, "sk-expired-000000003", ", expires", ", now() - interval '1 hour'");
    pg.insert_key(db, "sk-spent-00000000004", ", max_budget, key_alias", ", 2.0, 'spent'");
    pg.psql(
        db,
        &format!(
            "UPDATE \"LiteLLM_VerificationToken\" SET spend = 2.5 WHERE token = '{}'",
            digest_hex(b"sk-spent-00000000004")
        ),
    );
    pg.insert_key(db, "sk-poorteam-00000005", ", team_id", ", 't-poor'");
    pg.insert_key(db, "sk-gptteam-000000006", ", team_id", ", 't-gpt'");
    pg.insert_key(db, "sk-offteam-000000007", ", team_id", ", 't-off'");
    pg.insert_key(db, "sk-onlybig-000000008", "", "");
    pg.psql(
        db,
        &format!(
            "UPDATE \"LiteLLM_VerificationToken\" SET models = '{{big}}' WHERE token = '{}'",
            digest_hex(b"sk-onlybig-000000008")
        ),
    );
    let mock = Mock::start("m", &[]);
    let config = yaml(&mock, &url, "");
    let (a, b) = (start(&config), start(&config));
    for gateway in [&a, &b] {
        assert_eq!(chat(gateway, "sk-good-000000000001", "gpt").status, 200);
        assert_eq!(chat(gateway, "sk-gptteam-000000006", "gpt").status, 200);
        assert_eq!(chat(gateway, "sk-onlybig-000000008", "big").status, 200);
        assert_eq!(
            error(&chat(gateway, "sk-unknown-00000009", "gpt")),
            (401, "token_not_found_in_db".into(), "Authentication Error, Invalid API key provided.".into())
        );
        assert_eq!(
            error(&chat(gateway, "sk-blocked-000000002", "gpt")),
            (
                401,
                "auth_error".into(),
                "Authentication Error, Key is blocked. Update via `/key/unblock` if you're an admin.".into()
            )
        );
        let (status, kind, message) = error(&chat(gateway, "sk-expired-000000003", "gpt"));
        assert_eq!((status, kind.as_str()), (401, "expired_key"));
        assert!(message.starts_with("Authentication Error - Expired Key. Key Expiry time "), "{message}");
        assert_eq!(
            error(&chat(gateway, "sk-spent-00000000004", "gpt")),
            (
                422,
                "budget_exceeded".into(),
                "Budget has been exceeded! Key=spent (sk-...0004) Current cost: 2.5, Max budget: 2.0".into()
            )
        );
        assert_eq!(
            error(&chat(gateway, "sk-poorteam-00000005", "gpt")),
            (
                422,
                "budget_exceeded".into(),
                "Budget has been exceeded! Team=t-poor Current cost: 1.5, Max budget: 1.0".into()
            )
        );
        let denied = "The requested model 'big' is not available for this API key, or the model name is invalid. Check the models available to you and try again.";
        assert_eq!(
            error(&chat(gateway, "sk-gptteam-000000006", "big")),
            (403, "team_model_access_denied".into(), denied.into())
        );
        let denied = denied.replace("'big'", "'gpt'");
        assert_eq!(
            error(&chat(gateway, "sk-onlybig-000000008", "gpt")),
            (403, "key_model_access_denied".into(), denied)
        );
        assert_eq!(
            error(&chat(gateway, "sk-offteam-000000007", "gpt")),
            (
                401,
                "auth_error".into(),
                "Authentication Error, Team=t-off is blocked. Update via `/team/unblock` if you're an admin.".into()
            )
        );
    }
    let ready = a.get("/health/readiness");
    assert_eq!((ready.status, ready.json()["db"].as_str()), (200, Some("connected")));
    for secret in ["sk-good-000000000001", "sk-spent-00000000004"] {
        assert!(!a.process.stderr().contains(secret), "a key is never logged");
    }
}

#[test]
fn spend_is_written_once_per_request_into_the_key_team_and_logs() {
    let pg = &server();
    let url = pg.litellm_database("spend");
    let db = "spend";
    pg.psql(db, "INSERT INTO \"LiteLLM_TeamTable\" (team_id, models, spend) VALUES ('t-1', '{}', 0)");
    pg.insert_key(db, "sk-spender-000000001", ", team_id, user_id, key_alias", ", 't-1', 'u-1', 'spender'");
    pg.psql(db, "INSERT INTO \"LiteLLM_UserTable\" (user_id, spend, models) VALUES ('u-1', 0, '{}')");
    let mock = Mock::start("m", &[]);
    let config = yaml(&mock, &url, "");
    let (a, b) = (start(&config), start(&config));
    for i in 0..20 {
        let gateway = if i % 2 == 0 { &a } else { &b };
        assert_eq!(chat(gateway, "sk-spender-000000001", "gpt").status, 200);
    }
    let token = digest_hex(b"sk-spender-000000001");
    common::wait_until(Duration::from_secs(10), "20 spend rows", || {
        pg.psql(db, "SELECT count(*) FROM \"LiteLLM_SpendLogs\"") == "20"
    });
    let logged = scalar(pg, db, "SELECT sum(spend) FROM \"LiteLLM_SpendLogs\"");
    let tokens = scalar(pg, db, "SELECT sum(total_tokens) FROM \"LiteLLM_SpendLogs\"");
    assert!(tokens > 0.0 && (logged - tokens * 0.001).abs() < 1e-9, "{logged} for {tokens} tokens");
    common::wait_until(Duration::from_secs(5), "the key's spend", || {
        let key = scalar(pg, db, &format!("SELECT spend FROM \"LiteLLM_VerificationToken\" WHERE token = '{token}'"));
        (key - logged).abs() < 1e-9
    });
    let team = scalar(pg, db, "SELECT spend FROM \"LiteLLM_TeamTable\" WHERE team_id = 't-1'");
    let user = scalar(pg, db, "SELECT spend FROM \"LiteLLM_UserTable\" WHERE user_id = 'u-1'");
    assert!((team - logged).abs() < 1e-9 && (user - logged).abs() < 1e-9, "team {team}, user {user}");
    let row = pg.psql(
        db,
        "SELECT api_key, call_type, model, model_group, model_id, custom_llm_provider, cache_hit, team_id, status, \
         total_tokens, metadata->>'user_api_key_alias' FROM \"LiteLLM_SpendLogs\" LIMIT 1",
    );
    assert_eq!(row, format!("{token}|acompletion|gpt-4o-mini|gpt|dep-gpt|openai|False|t-1|success|30|spender"));
    let ids = pg.psql(db, "SELECT count(DISTINCT request_id) FROM \"LiteLLM_SpendLogs\"");
    assert_eq!(ids, "20", "every request its own id");
}

#[test]
fn a_budget_spent_on_one_instance_refuses_on_the_other() {
    let pg = &server();
    let url = pg.litellm_database("crossed");
    let db = "crossed";
    pg.insert_key(db, "sk-budget-0000000001", ", max_budget, key_alias", ", 0.1, 'budget'");
    let mock = Mock::start("m", &[]);
    let config = yaml(&mock, &url, "");
    let (a, b) = (start(&config), start(&config));
    assert_eq!(chat(&b, "sk-budget-0000000001", "gpt").status, 200, "b knows the key, under budget");
    // 0.03 a request: a crosses the budget within a few.
    let statuses: Vec<u16> = (0..6).map(|_| chat(&a, "sk-budget-0000000001", "gpt").status).collect();
    assert!(statuses.contains(&200) && statuses.ends_with(&[422]), "{statuses:?}");
    let waited = common::wait_until(Duration::from_secs(5), "b to refuse", || {
        chat(&b, "sk-budget-0000000001", "gpt").status == 422
    });
    assert!(waited < Duration::from_secs(1), "took {waited:?}");
}

#[test]
fn a_change_to_a_key_reaches_every_instance_within_a_second() {
    let pg = &server();
    let url = pg.litellm_database("changes");
    let db = "changes";
    pg.insert_key(db, "sk-changes-000000001", "", "");
    let mock = Mock::start("m", &[]);
    let config = yaml(&mock, &url, "");
    let (a, b) = (start(&config), start(&config));
    for gateway in [&a, &b] {
        assert_eq!(chat(gateway, "sk-changes-000000001", "gpt").status, 200, "cached on both");
    }
    // What a management call on any instance does: change the row, announce it.
    let token = digest_hex(b"sk-changes-000000001");
    pg.psql(db, &format!("UPDATE \"LiteLLM_VerificationToken\" SET blocked = true WHERE token = '{token}'"));
    pg.psql(db, &format!("SELECT pg_notify('pointwork_changes', 'key:{token}')"));
    for gateway in [&a, &b] {
        let waited = common::wait_until(Duration::from_secs(5), "the block", || {
            chat(gateway, "sk-changes-000000001", "gpt").status == 401
        });
        assert!(waited < Duration::from_secs(1), "took {waited:?}");
    }
}

#[test]
fn the_database_away_and_back_loses_no_spend_and_counts_none_twice() {
    let mut pg = Postgres::start();
    let url = pg.litellm_database("away");
    let db = "away";
    pg.insert_key(db, "sk-known-00000000001", "", "");
    pg.insert_key(db, "sk-later-00000000002", "", "");
    let mock = Mock::start("m", &[]);
    let dir = common::TempDir::new("db-away");
    let spend_file = dir.path().join("spend.json");
    let extra = format!("pointwork:\n  auth:\n    spend_file: {}\n", spend_file.display());
    let gateway = start(&yaml(&mock, &url, &extra));
    assert_eq!(chat(&gateway, "sk-known-00000000001", "gpt").status, 200);
    common::wait_until(Duration::from_secs(5), "the first row", || {
        pg.psql(db, "SELECT count(*) FROM \"LiteLLM_SpendLogs\"") == "1"
    });
    pg.stop();
    common::wait_until(Duration::from_secs(5), "readiness to say so", || {
        gateway.get("/health/readiness").status == 503
    });
    for _ in 0..10 {
        assert_eq!(chat(&gateway, "sk-known-00000000001", "gpt").status, 200, "a known key keeps serving");
    }
    let (status, kind, _) = error(&chat(&gateway, "sk-later-00000000002", "gpt"));
    assert_eq!((status, kind.as_str()), (503, "no_db_connection"), "a key never seen cannot be checked");
    let metrics = gateway.get("/metrics").text();
    assert!(metrics.contains("pointwork_db_up 0"), "{metrics}");
    let pending = spend_file.with_extension("json.database-pending");
    common::wait_until(Duration::from_secs(5), "the pending file", || {
        std::fs::read_to_string(&pending).is_ok_and(|t| t.lines().count() == 10)
    });
    pg.start_again();
    let rows = || pg.psql(db, "SELECT count(*) FROM \"LiteLLM_SpendLogs\"");
    let waited = std::time::Instant::now();
    while rows() != "11" && waited.elapsed() < Duration::from_secs(15) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(rows(), "11", "every row written; the gateway said:\n{}", gateway.process.stderr());
    common::wait_until(Duration::from_secs(5), "readiness again", || gateway.get("/health/readiness").status == 200);
    assert_eq!(chat(&gateway, "sk-later-00000000002", "gpt").status, 200, "found once the database is back");
    let token = digest_hex(b"sk-known-00000000001");
    let key = scalar(&pg, db, &format!("SELECT spend FROM \"LiteLLM_VerificationToken\" WHERE token = '{token}'"));
    let logged = scalar(&pg, db, &format!("SELECT sum(spend) FROM \"LiteLLM_SpendLogs\" WHERE api_key = '{token}'"));
    assert!(logged > 0.0 && (key - logged).abs() < 1e-9, "each request counted once: {key} against {logged}");
    common::wait_until(Duration::from_secs(5), "the pending file emptied", || !pending.exists());
}

#[test]
fn a_schema_without_a_column_is_one_start_up_error_naming_it() {
    let pg = &server();
    let url = pg.litellm_database("old_schema");
    pg.psql("old_schema", "ALTER TABLE \"LiteLLM_SpendLogs\" DROP COLUMN status");
    let mock = Mock::start("m", &[]);
    let dir = common::TempDir::new("db-schema");
    let path = dir.write("config.yaml", &yaml(&mock, &url, ""));
    let out =
        std::process::Command::new(common::pointwork_bin()).args(["serve", "--config"]).arg(&path).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("table \"LiteLLM_SpendLogs\" has no column \"status\" (LiteLLM's migration 20250508072103_add_status_to_spendlogs adds it)"),
        "{stderr}"
    );
}

#[test]
fn without_a_database_the_management_api_says_it_needs_one() {
    let mock = Mock::start("m", &[]);
    let gateway = Gateway::start(&config(&[priced(&mock)], &format!("general_settings: {{master_key: {MASTER}}}\n")));
    let bearer = format!("Bearer {MASTER}");
    let r = gateway.client().request("POST", "/key/generate", &[("authorization", &bearer)], b"{}");
    let (status, kind, message) = error(&r);
    assert_eq!((status, kind.as_str()), (500, "internal_server_error"));
    assert!(message.contains("DB not connected. This endpoint needs a database; set DATABASE_URL"), "{message}");
    let ready = gateway.get("/health/readiness");
    assert_eq!(ready.json()["db"], "Not connected");
}

#[test]
fn a_key_generated_on_one_instance_serves_on_the_other_and_its_block_reaches_both() {
    let pg = &server();
    let url = pg.litellm_database("generated");
    let mock = Mock::start("m", &[]);
    let config = yaml(&mock, &url, "");
    let (a, b) = (start(&config), start(&config));
    let made = manage(&a, "POST", "/key/generate", r#"{"models": ["gpt"], "key_alias": "from-a"}"#);
    assert_eq!(made.status, 200, "{}", made.text());
    let key = made.json()["key"].as_str().unwrap().to_string();
    assert!(key.starts_with("sk-"));
    assert_eq!(chat(&b, &key, "gpt").status, 200, "b finds the key a made");
    assert_eq!(chat(&b, &key, "big").status, 403, "with its models");
    let refused = gateway_refuses_management(&b, &key);
    assert_eq!(refused, 401, "a key never calls the management API");
    assert_eq!(manage(&a, "POST", "/key/block", &format!(r#"{{"key": "{key}"}}"#)).status, 200);
    let waited = common::wait_until(Duration::from_secs(5), "b to refuse the blocked key", || {
        chat(&b, &key, "gpt").status == 401
    });
    assert!(waited < Duration::from_secs(1), "took {waited:?}");
}

fn gateway_refuses_management(gateway: &Gateway, key: &str) -> u16 {
    let bearer = format!("Bearer {key}");
    gateway.client().request("POST", "/key/generate", &[("authorization", &bearer)], b"{}").status
}

fn pointwork(args: &[&str], config: &std::path::Path) -> (bool, String, String) {
    let out = std::process::Command::new(common::pointwork_bin()).args(args).arg(config).output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

#[test]
fn db_init_makes_an_empty_database_one_the_gateway_serves_from_and_check_reports_it() {
    let pg = &server();
    let url = pg.empty_database("fresh");
    let mock = Mock::start("m", &[]);
    let dir = common::TempDir::new("db-init");
    let path = dir.write("config.yaml", &yaml(&mock, &url, ""));
    let (ok, _, stderr) = pointwork(&["check", "--config"], &path);
    assert!(!ok);
    assert!(stderr.contains("table \"LiteLLM_VerificationToken\" does not exist"), "{stderr}");
    assert!(stderr.contains("pointwork db init"), "{stderr}");

    for _ in 0..2 {
        // Twice: what exists stays.
        let (ok, stdout, stderr) = pointwork(&["db", "init", "--config"], &path);
        assert!(ok, "{stderr}");
        assert!(stdout.contains("LiteLLM's tables are there (0 keys, 0 teams, 0 users, 0 models)"), "{stdout}");
    }
    let (ok, stdout, stderr) = pointwork(&["check", "--config"], &path);
    assert!(ok, "{stderr}");
    let port = url.rsplit(':').next().unwrap().split('/').next().unwrap();
    assert!(
        stdout.contains(&format!(
            "database: postgresql://postgres@127.0.0.1:{port}/fresh: LiteLLM's schema complete; 0 keys"
        )),
        "{stdout}"
    );

    let gateway = start(&yaml(&mock, &url, ""));
    let r = manage(&gateway, "POST", "/key/generate", r#"{"models": ["gpt"]}"#);
    assert_eq!(r.status, 200, "{}", r.text());
    let key = r.json()["key"].as_str().unwrap().to_string();
    assert_eq!(chat(&gateway, &key, "gpt").status, 200);
    let (_, stdout, _) = pointwork(&["check", "--config"], &path);
    assert!(stdout.contains("schema complete; 1 keys, 0 teams"), "{stdout}");

    // A LiteLLM database as its migrations left it is complete already: init changes nothing.
    let litellm = pg.litellm_database("migrated");
    let path = dir.write("litellm.yaml", &yaml(&mock, &litellm, ""));
    let (ok, _, stderr) = pointwork(&["db", "init", "--config"], &path);
    assert!(ok, "{stderr}");
}

#[test]
fn check_says_a_database_away_without_failing() {
    let mock = Mock::start("m", &[]);
    let dir = common::TempDir::new("db-away");
    // A port nothing listens on (bound, then closed).
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let path = dir.write("config.yaml", &yaml(&mock, &format!("postgresql://u:secret@127.0.0.1:{port}/x"), ""));
    let (ok, stdout, stderr) = pointwork(&["check", "--config"], &path);
    assert!(ok, "{stderr}");
    assert!(
        stdout.contains(&format!("database: postgresql://u:****@127.0.0.1:{port}/x: away (cannot connect")),
        "{stdout}"
    );
    assert!(!stdout.contains("secret") && !stderr.contains("secret"));
    let out = std::process::Command::new(common::pointwork_bin())
        .args(["db", "init"])
        .env_remove("DATABASE_URL")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("db init: no database: set DATABASE_URL"));
}

#[test]
fn a_key_changed_by_a_writer_that_does_not_notify_is_seen_within_the_key_cache_ttl() {
    let pg = &server();
    let url = pg.litellm_database("silent");
    let db = "silent";
    for key in ["sk-silent-blocked-01", "sk-silent-spent-002", "sk-silent-deleted-3", "sk-silent-models-04"] {
        pg.insert_key(db, key, ", max_budget", ", 1.0");
    }
    let mock = Mock::start("m", &[]);
    let gateway = start(&yaml(&mock, &url, "  user_api_key_cache_ttl: 0.3\n"));
    for key in ["sk-silent-blocked-01", "sk-silent-spent-002", "sk-silent-deleted-3", "sk-silent-models-04"] {
        assert_eq!(chat(&gateway, key, "gpt").status, 200, "cached");
    }
    // What a LiteLLM proxy on the same database does: change the rows, announce nothing.
    let token = |key: &str| digest_hex(key.as_bytes());
    let set = |key: &str, what: &str| {
        pg.psql(db, &format!("UPDATE \"LiteLLM_VerificationToken\" SET {what} WHERE token = '{}'", token(key)))
    };
    set("sk-silent-blocked-01", "blocked = true");
    set("sk-silent-spent-002", "spend = spend + 5");
    set("sk-silent-models-04", "models = '{big}'");
    pg.psql(db, &format!("DELETE FROM \"LiteLLM_VerificationToken\" WHERE token = '{}'", token("sk-silent-deleted-3")));
    for (key, status) in [
        ("sk-silent-blocked-01", 401),
        ("sk-silent-spent-002", 422),
        ("sk-silent-deleted-3", 401),
        ("sk-silent-models-04", 403),
    ] {
        let waited = common::wait_until(Duration::from_secs(5), key, || chat(&gateway, key, "gpt").status == status);
        assert!(waited < Duration::from_secs(2), "{key} took {waited:?}");
    }
    let (_, kind, message) = error(&chat(&gateway, "sk-silent-spent-002", "gpt"));
    assert_eq!(kind, "budget_exceeded");
    assert!(message.contains("Current cost: 5.03, Max budget: 1.0"), "{message}");
    assert_eq!(error(&chat(&gateway, "sk-silent-deleted-3", "gpt")).1, "token_not_found_in_db");
    assert_eq!(chat(&gateway, "sk-silent-models-04", "big").status, 200, "its new models serve");
    let metrics = gateway.get("/metrics").text();
    // Blocked, deleted and models changed; a key the shard asked for again (once its refusal
    // retired it) may have been read anew before a refresh came to it.
    let changed = metrics.lines().find_map(|l| l.strip_prefix("pointwork_db_keys_changed_unannounced_total "));
    let changed: u64 = changed.and_then(|n| n.parse().ok()).unwrap_or(0);
    assert!((1..=3).contains(&changed), "{metrics}");
}

#[test]
fn a_wrong_key_remembered_by_the_shards_serves_as_soon_as_it_is_generated() {
    let pg = &server();
    let url = pg.litellm_database("wrong");
    let mock = Mock::start("m", &[]);
    let config = yaml(&mock, &url, "");
    let (a, b) = (start(&config), start(&config));
    let key = "sk-not-yet-0000000001";
    for gateway in [&a, &b] {
        for _ in 0..4 {
            assert_eq!(error(&chat(gateway, key, "gpt")).1, "token_not_found_in_db");
        }
    }
    // Generated on one instance: neither instance's memory of it as wrong outlives the change.
    let r = manage(&a, "POST", "/key/generate", &format!(r#"{{"key": "{key}"}}"#));
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(chat(&a, key, "gpt").status, 200, "at once on the instance that made it");
    common::wait_until(Duration::from_secs(1), "the other instance", || chat(&b, key, "gpt").status == 200);
}
