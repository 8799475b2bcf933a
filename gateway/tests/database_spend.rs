//! Spend on LiteLLM's database through real gateways on a real PostgreSQL with LiteLLM's
//! schema: every request's spend written once with the database stopped under load and both
//! instances restarted, streams charged whether or not the client asked for usage, and budgets
//! per model (`model_max_budget`) of keys, teams and users.

mod common;
#[path = "../../db/tests/support/postgres.rs"]
mod postgres;
#[path = "database/support.rs"]
mod support;

use std::time::Duration;

use common::{chat_body, Gateway, Mock};
use pointwork_gateway::keys::digest_hex;
use postgres::Postgres;
use support::{chat, error, scalar, server, start, yaml};

#[test]
fn a_keys_model_max_budget_refuses_that_model_once_spent_and_serves_the_others() {
    let pg = &server();
    let url = pg.litellm_database("model_budget");
    let db = "model_budget";
    let budget = r#"{"gpt": {"budget_limit": 0.0001, "time_period": "1d"}, "big": {"budget_limit": 5}}"#;
    pg.insert_key(db, "sk-modelbudget-00001", ", model_max_budget, key_alias", &format!(", '{budget}', 'mb'"));
    let mock = Mock::start("m", &[]);
    let gateway = start(&yaml(&mock, &url, ""));
    // 0.03 a request: the first spends more than 0.0001 on gpt.
    assert_eq!(chat(&gateway, "sk-modelbudget-00001", "gpt").status, 200);
    let token = digest_hex(b"sk-modelbudget-00001");
    assert_eq!(
        error(&chat(&gateway, "sk-modelbudget-00001", "gpt")),
        (
            422,
            "budget_exceeded".into(),
            format!("LiteLLM Virtual Key: {token}, key_alias: mb, exceeded budget for model=gpt")
        )
    );
    for _ in 0..3 {
        assert_eq!(chat(&gateway, "sk-modelbudget-00001", "big").status, 200, "another model still serves");
    }
}

#[test]
fn a_teams_and_a_users_model_max_budget_refuse_with_litellms_texts() {
    let pg = &server();
    let url = pg.litellm_database("entity_model_budget");
    let db = "entity_model_budget";
    let tiny = |model: &str| format!(r#"{{"{model}": {{"budget_limit": 0.0001, "time_period": "1d"}}}}"#);
    pg.psql(
        db,
        &format!(
            "INSERT INTO \"LiteLLM_TeamTable\" (team_id, models, spend, model_max_budget) VALUES ('t-mb', '{{}}', 0, '{}')",
            tiny("gpt")
        ),
    );
    pg.psql(
        db,
        &format!(
            "INSERT INTO \"LiteLLM_UserTable\" (user_id, spend, models, model_max_budget) VALUES ('u-mb', 0, '{{}}', '{}')",
            tiny("gp*")
        ),
    );
    pg.insert_key(db, "sk-team-budget-00001", ", team_id", ", 't-mb'");
    let own = r#"{"gpt": {"budget_limit": 5, "time_period": "1d"}}"#;
    pg.insert_key(db, "sk-team-own-budget-02", ", team_id, model_max_budget", &format!(", 't-mb', '{own}'"));
    pg.insert_key(db, "sk-user-budget-00003", ", user_id", ", 'u-mb'");
    let mock = Mock::start("m", &[]);
    let gateway = start(&yaml(&mock, &url, ""));
    assert_eq!(chat(&gateway, "sk-team-budget-00001", "gpt").status, 200);
    assert_eq!(
        error(&chat(&gateway, "sk-team-budget-00001", "gpt")),
        (422, "budget_exceeded".into(), "LiteLLM Team: t-mb, exceeded budget for model=gpt".into())
    );
    assert_eq!(chat(&gateway, "sk-team-budget-00001", "big").status, 200, "another model still serves");
    for _ in 0..2 {
        assert_eq!(
            chat(&gateway, "sk-team-own-budget-02", "gpt").status,
            200,
            "the key's own entry replaces the team's"
        );
    }
    assert_eq!(chat(&gateway, "sk-user-budget-00003", "gpt").status, 200);
    assert_eq!(
        error(&chat(&gateway, "sk-user-budget-00003", "gpt")),
        (422, "budget_exceeded".into(), "LiteLLM User: u-mb, exceeded budget for model=gpt, budget_model=gp*".into())
    );
}

#[test]
fn the_database_stopped_under_load_and_both_instances_restarted_write_every_requests_spend_once() {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Arc;

    let mut pg = Postgres::start();
    let url = pg.litellm_database("load");
    let db = "load";
    pg.insert_key(db, "sk-loaded-0000000001", "", "");
    let mock = Mock::start("m", &[]);
    let dirs = [common::TempDir::new("db-load-a"), common::TempDir::new("db-load-b")];
    let configs: Vec<String> = dirs
        .iter()
        .map(|d| {
            let spend_file = d.path().join("spend.json");
            yaml(&mock, &url, &format!("pointwork:\n  auth:\n    spend_file: {}\n", spend_file.display()))
        })
        .collect();
    let pending: Vec<_> = dirs.iter().map(|d| d.path().join("spend.json.database-pending")).collect();
    let mut gateways: Vec<Gateway> = configs.iter().map(|c| start(c)).collect();
    let rows = |pg: &Postgres| pg.psql(db, "SELECT count(*) FROM \"LiteLLM_SpendLogs\"").parse::<u64>().unwrap();

    // Four callers, each alternating between the two instances, until told to stop.
    let (stop, ok) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicU64::new(0)));
    let callers: Vec<_> = (0..4)
        .map(|i| {
            let addrs: Vec<_> = gateways.iter().map(|g| g.addr).collect();
            let (stop, ok) = (stop.clone(), ok.clone());
            std::thread::spawn(move || {
                let body = chat_body("gpt", false);
                let mut n = i;
                while !stop.load(Ordering::Relaxed) {
                    let mut client = common::http::Client::connect(addrs[n % 2]);
                    let headers = [("authorization", "Bearer sk-loaded-0000000001")];
                    let r = client.request("POST", "/v1/chat/completions", &headers, body.as_bytes());
                    assert_eq!(r.status, 200, "a known key serves, database or not: {}", r.text());
                    ok.fetch_add(1, Ordering::Relaxed);
                    n += 1;
                }
            })
        })
        .collect();
    common::wait_until(Duration::from_secs(10), "rows written under load", || rows(&pg) >= 20);
    pg.stop();
    // Both instances keep serving, and keep what they cannot write.
    common::wait_until(Duration::from_secs(10), "spend waiting on both instances", || {
        pending.iter().all(|p| std::fs::read_to_string(p).is_ok_and(|t| t.lines().count() >= 5))
    });
    stop.store(true, Ordering::Relaxed);
    for caller in callers {
        caller.join().unwrap();
    }
    let served = ok.load(Ordering::Relaxed);
    // Both restart while the database is still away: the drain leaves the rest in the files.
    for gateway in &mut gateways {
        common::send_signal(&gateway.process, libc::SIGTERM);
        assert!(gateway.process.wait_exit(Duration::from_secs(15)).success());
    }
    drop(gateways);
    let gateways: Vec<Gateway> = configs.iter().map(|c| start(c)).collect();
    pg.start_again();
    let waited = std::time::Instant::now();
    while rows(&pg) < served && waited.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(rows(&pg), served, "one row per request served; the gateways said:\n{}", gateways[0].process.stderr());
    let token = digest_hex(b"sk-loaded-0000000001");
    let distinct = pg.psql(db, "SELECT count(DISTINCT request_id) FROM \"LiteLLM_SpendLogs\"");
    assert_eq!(distinct, served.to_string());
    let key = scalar(&pg, db, &format!("SELECT spend FROM \"LiteLLM_VerificationToken\" WHERE token = '{token}'"));
    let logged = scalar(&pg, db, &format!("SELECT sum(spend) FROM \"LiteLLM_SpendLogs\" WHERE api_key = '{token}'"));
    assert!((key - logged).abs() < 1e-9 && (logged - served as f64 * 0.03).abs() < 1e-6, "{key} {logged} {served}");
    for p in &pending {
        common::wait_until(Duration::from_secs(5), "the pending files emptied", || !p.exists());
    }
}

#[test]
fn a_stream_whose_client_asked_no_usage_is_charged_and_hears_no_usage_event() {
    let pg = &server();
    let url = pg.litellm_database("streams");
    let db = "streams";
    pg.insert_key(db, "sk-streams-000000001", "", "");
    let mock = Mock::start("m", &[]);
    let gateway = start(&yaml(&mock, &url, ""));
    let send = |key: Option<&str>, body: &str| {
        let bearer = key.map(|k| format!("Bearer {k}"));
        let headers: Vec<(&str, &str)> = bearer.iter().map(|b| ("authorization", b.as_str())).collect();
        gateway.client().request("POST", "/v1/chat/completions", &headers, body.as_bytes())
    };
    let asked = |i: usize| {
        let sent: serde_json::Value = serde_json::from_str(mock.requests()[i]["body"].as_str().unwrap()).unwrap();
        sent["stream_options"].clone()
    };

    // A database key's stream, no `stream_options`: the gateway asks for usage, and cuts it.
    let r = send(Some("sk-streams-000000001"), &chat_body("gpt", true));
    assert_eq!(r.status, 200);
    let text = r.text();
    assert!(text.contains("\"content\"") && text.ends_with("data: [DONE]\n\n"), "{text}");
    assert!(!text.contains("\"usage\":{"), "the client did not ask for usage: {text}");
    assert_eq!(asked(0), serde_json::json!({"include_usage": true}));
    common::wait_until(Duration::from_secs(5), "its spend row", || {
        pg.psql(db, "SELECT count(*) FROM \"LiteLLM_SpendLogs\" WHERE total_tokens > 0 AND spend > 0") == "1"
    });

    // A client that asked hears its usage, as it asked.
    let mut body: serde_json::Value = serde_json::from_str(&chat_body("gpt", true)).unwrap();
    body["stream_options"] = serde_json::json!({"include_usage": true});
    let text = send(Some("sk-streams-000000001"), &body.to_string()).text();
    assert!(text.contains("\"usage\":{"), "{text}");
    assert_eq!(asked(1), serde_json::json!({"include_usage": true}), "its own stream_options, as sent");
    common::wait_until(Duration::from_secs(5), "both spend rows", || {
        pg.psql(db, "SELECT count(*) FROM \"LiteLLM_SpendLogs\" WHERE total_tokens > 0 AND spend > 0") == "2"
    });
}
