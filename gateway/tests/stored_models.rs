//! Models stored in LiteLLM's database (`general_settings.store_model_in_db`, issue 31), through
//! real gateways on a real PostgreSQL carrying LiteLLM's real schema: a row as LiteLLM writes
//! it (encrypted with the salt key, its api key in a credential row) serves; `/model/new` on one
//! instance serves on the other within a second, `/model/update` moves it, `/model/delete`
//! removes it, a stream in flight across the changes completes, and a SIGHUP reload keeps the
//! stored models.

mod common;
#[path = "../../db/tests/support/postgres.rs"]
mod postgres;

use std::time::Duration;

use common::{chat_body, config, deployment, priced, recorded_headers, Gateway, GatewayOptions, Mock, Response};
use pointwork_db::crypto::SecretKey;
use postgres::Postgres;
use serde_json::json;

const MASTER: &str = "sk-master-2718";
const SALT: &str = "sk-salt-stored-models";

fn yaml(mock: &Mock, url: &str, extra: &str) -> String {
    config(
        &[priced(mock)],
        &format!(
            "general_settings:\n  master_key: {MASTER}\n  database_url: {url}\n  store_model_in_db: true\n{extra}"
        ),
    )
}

fn start(yaml: &str) -> Gateway {
    Gateway::start_with(yaml, GatewayOptions { shards: 2, env: vec![("LITELLM_SALT_KEY", SALT)], ..Default::default() })
}

fn chat(gateway: &Gateway, model: &str) -> Response {
    let bearer = format!("Bearer {MASTER}");
    let body = chat_body(model, false);
    gateway.client().request("POST", "/v1/chat/completions", &[("authorization", &bearer)], body.as_bytes())
}

fn manage(gateway: &Gateway, path: &str, body: serde_json::Value) -> Response {
    let bearer = format!("Bearer {MASTER}");
    gateway.client().request("POST", path, &[("authorization", &bearer)], body.to_string().as_bytes())
}

fn error_kind(response: &Response) -> (u16, String) {
    (response.status, response.json()["error"]["type"].as_str().unwrap_or("").to_string())
}

#[test]
fn a_row_litellm_wrote_serves_with_its_credentials_api_key_and_survives_a_reload() {
    let pg = Postgres::start();
    let url = pg.litellm_database("stored_litellm");
    let (file_mock, db_mock) = (Mock::start("file", &[]), Mock::start("db", &[]));
    let key = SecretKey::from_signing_key(SALT);
    let e = |v: &str| key.encrypt(v).unwrap();
    let params = json!({"model": e("openai/gpt-4o"), "api_base": e(&db_mock.api_base()),
        "litellm_credential_name": e("shared-openai")});
    let creds = json!({"api_key": e("sk-from-credential")});
    // Compiles, but its deployment cannot be built: a key that does not load.
    let service_account = json!({"type": "service_account", "client_email": "a@b", "token_uri": "https://x/token",
        "private_key": "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"});
    let bad_key = json!({"model": "vertex_ai/gemini-1.5-pro", "vertex_project": "p", "vertex_location": "us-central1",
        "vertex_credentials": service_account.to_string()});
    pg.psql(
        "stored_litellm",
        &format!(
            "INSERT INTO \"LiteLLM_CredentialsTable\" (credential_id, credential_name, credential_values, created_by, updated_by) \
             VALUES ('c-1', 'shared-openai', '{creds}', 'admin', 'admin'); \
             INSERT INTO \"LiteLLM_ProxyModelTable\" (model_id, model_name, litellm_params, model_info, created_by, updated_by) \
             VALUES ('lm-1', 'db-gpt', '{params}', '{{\"id\": \"lm-1\"}}', 'admin', 'admin'), \
                    ('lm-bad', 'db-bad', '{{\"model\": \"openai/x\", \"api_base\": \"not a url\"}}', NULL, 'admin', 'admin'), \
                    ('lm-badkey', 'db-vertex', '{bad_key}', NULL, 'admin', 'admin')"
        ),
    );
    // A file model that always fails, falling back to a model only the database has.
    let broken = Mock::start("broken", &["--fault", "status:503"]);
    let config = config(
        &[priced(&file_mock), deployment("gpt-broken", "dep-broken", "openai/gpt-4o", &broken, "")],
        &format!(
            "router_settings:\n  fallbacks: [{{gpt-broken: [db-gpt]}}]\ngeneral_settings:\n  master_key: {MASTER}\n  \
             database_url: {url}\n  store_model_in_db: true\n  proxy_config_reload_interval_seconds: 1\n"
        ),
    );
    let gateway = start(&config);
    common::assert_served_by(&chat(&gateway, "gpt-broken"), "lm-1");
    let r = chat(&gateway, "db-gpt");
    common::assert_served_by(&r, "lm-1");
    let seen = db_mock.requests();
    assert!(seen.len() >= 2);
    for request in &seen {
        assert_eq!(recorded_headers(request, "authorization"), ["Bearer sk-from-credential"], "the credential's key");
    }
    assert_served_by_file(&gateway);
    assert!(gateway.get("/metrics").text().contains("pointwork_db_stored_models 1\n"), "lm-1 serves, lm-bad not");
    let said = gateway.process.stderr();
    assert!(said.contains("LiteLLM_ProxyModelTable[model_id=lm-bad].litellm_params.api_base: "), "{said}");
    assert!(said.contains("LiteLLM_ProxyModelTable[model_id=lm-badkey]: deployment lm-badkey: "), "{said}");
    assert!(!said.contains("sk-from-credential"), "a secret is never logged");

    // A row a LiteLLM proxy adds announces nothing: the poll (LiteLLM's
    // proxy_config_reload_interval_seconds) finds it.
    let plain = json!({"model": "openai/gpt-4o", "api_base": db_mock.api_base(), "api_key": "sk-plain"});
    pg.psql(
        "stored_litellm",
        &format!(
            "INSERT INTO \"LiteLLM_ProxyModelTable\" (model_id, model_name, litellm_params, created_by, updated_by) \
             VALUES ('lm-2', 'db-polled', '{plain}', 'admin', 'admin')"
        ),
    );
    common::wait_until(Duration::from_secs(5), "the poll to find the new row", || {
        chat(&gateway, "db-polled").status == 200
    });

    common::send_signal(&gateway.process, libc::SIGHUP);
    gateway.process.wait_for_stderr("reload (SIGHUP)", Duration::from_secs(10));
    let said = gateway.process.stderr();
    assert!(said.contains("reload (SIGHUP): ") && !said.contains("refused"), "{said}");
    common::assert_served_by(&chat(&gateway, "db-gpt"), "lm-1");
    assert_served_by_file(&gateway);
}

fn assert_served_by_file(gateway: &Gateway) {
    common::assert_served_by(&chat(gateway, "gpt"), "dep-gpt");
}

#[test]
fn model_new_update_and_delete_on_one_instance_reach_the_other_within_a_second() {
    let pg = Postgres::start();
    let url = pg.litellm_database("stored_changes");
    let (file_mock, first, second) = (Mock::start("file", &[]), Mock::start("first", &[]), Mock::start("second", &[]));
    let config = yaml(&file_mock, &url, "");
    let (a, b) = (start(&config), start(&config));
    let unknown = error_kind(&chat(&b, "db-live"));
    assert_ne!(unknown.0, 200);
    // A database key for the model to come, seen by b before the model is there.
    let made = manage(&a, "/key/generate", json!({"models": ["db-live"]}));
    let key = made.json()["key"].as_str().unwrap().to_string();
    assert_eq!(listed_models(&b, &key), Vec::<String>::new());

    let made = manage(
        &a,
        "/model/new",
        json!({"model_name": "db-live", "litellm_params": {"model": "openai/gpt-4o-mini",
            "api_base": first.api_base(), "api_key": "sk-live"}, "model_info": {"id": "live-1"}}),
    );
    assert_eq!(made.status, 200, "{}", made.text());
    assert_eq!(made.json()["model_id"], "live-1");
    let waited =
        common::wait_until(Duration::from_secs(5), "b to serve the new model", || chat(&b, "db-live").status == 200);
    assert!(waited < Duration::from_secs(1), "took {waited:?}");
    common::assert_served_by(&chat(&b, "db-live"), "live-1");
    assert!(first.request_count() > 0);
    assert_eq!(listed_models(&b, &key), ["db-live"], "the key's /v1/models follows the stored models");
    assert_model_info_lists_both(&b, &first);

    // A slow stream on b, in flight across the update and the delete.
    first.control(json!({"chunks": 10, "chunk_delay_ms": 150}));
    let streaming = std::thread::spawn({
        let addr = b.addr;
        move || {
            let mut c = common::http::Client::connect(addr);
            let bearer = format!("Bearer {MASTER}");
            c.send(
                "POST",
                "/v1/chat/completions",
                &[("authorization", &bearer)],
                chat_body("db-live", true).as_bytes(),
            );
            let head = c.read_head().expect("a head");
            assert_eq!(head.status, 200);
            c.events().collect_all().expect("the whole stream")
        }
    });
    std::thread::sleep(Duration::from_millis(200));

    let moved = manage(
        &a,
        "/model/update",
        json!({"model_info": {"id": "live-1"}, "litellm_params": {"api_base": second.api_base()}}),
    );
    assert_eq!(moved.status, 200, "{}", moved.text());
    let waited = common::wait_until(Duration::from_secs(5), "b to send it to the second mock", || {
        second.clear_requests();
        chat(&b, "db-live").status == 200 && second.request_count() > 0
    });
    assert!(waited < Duration::from_secs(1), "took {waited:?}");

    let file_model = manage(&a, "/model/update", json!({"model_info": {"id": "dep-gpt"}, "litellm_params": {}}));
    assert_eq!(
        (file_model.status, file_model.json()["error"]["message"].as_str()),
        (400, Some("{'error': \"Can't edit model. Model in config. Store model in db via `/model/new`. to edit.\"}"))
    );

    assert_eq!(manage(&a, "/model/block", json!({"model_id": "live-1"})).status, 200);
    common::wait_until(Duration::from_secs(5), "b to stop serving the blocked model", || {
        chat(&b, "db-live").status != 200
    });
    assert_eq!(manage(&a, "/model/unblock", json!({"model_id": "live-1"})).status, 200);
    common::wait_until(Duration::from_secs(5), "b to serve it again", || chat(&b, "db-live").status == 200);
    let file_model = manage(&a, "/model/block", json!({"model_id": "dep-gpt"}));
    assert_eq!(
        (file_model.status, file_model.json()["error"]["message"].as_str()),
        (400, Some("Cannot edit config-based model. Store model in DB via /model/new first."))
    );

    let gone = manage(&a, "/model/delete", json!({"id": "live-1"}));
    assert_eq!((gone.status, gone.json()), (200, json!({"message": "Model: live-1 deleted successfully"})));
    let waited = common::wait_until(Duration::from_secs(5), "b to forget the model", || {
        error_kind(&chat(&b, "db-live")) == unknown
    });
    assert!(waited < Duration::from_secs(1), "took {waited:?}");
    assert_served_by_file(&b);

    let events = streaming.join().expect("the stream's thread");
    assert_eq!(events.last().map(|e| e.text.as_str()), Some("data: [DONE]"), "the stream in flight completed");
    assert!(!events.iter().any(|e| e.text.contains("\"error\"")), "{events:?}");
    assert!(events.len() >= 10, "every chunk: {}", events.len());
}

fn listed_models(gateway: &Gateway, key: &str) -> Vec<String> {
    let bearer = format!("Bearer {key}");
    let r = gateway.client().request("GET", "/v1/models", &[("authorization", &bearer)], b"");
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()["data"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap().to_string()).collect()
}

/// `/model/info` lists the file's deployment and the stored one (marked `db_model`), never a key.
fn assert_model_info_lists_both(gateway: &Gateway, mock: &Mock) {
    let bearer = format!("Bearer {MASTER}");
    let get = |path: &str| gateway.client().request("GET", path, &[("authorization", &bearer)], b"");
    let all = get("/model/info");
    assert_eq!(all.status, 200, "{}", all.text());
    let data = all.json()["data"].as_array().cloned().unwrap();
    let ids: Vec<(&str, bool)> =
        data.iter().map(|d| (d["model_info"]["id"].as_str().unwrap(), d["model_info"]["db_model"] == true)).collect();
    assert_eq!(ids, [("dep-gpt", false), ("live-1", true)]);
    let live = &data[1];
    assert_eq!(live["model_name"], "db-live");
    assert_eq!(live["litellm_params"], json!({"model": "openai/gpt-4o-mini", "api_base": mock.api_base()}));
    assert!(!all.text().contains("sk-live") && !all.text().contains("sk-dep-gpt"), "no key is shown");
    let one = get("/v1/model/info?litellm_model_id=live-1").json();
    assert_eq!(one["data"].as_array().map(Vec::len), Some(1));
    assert_eq!(get("/v2/model/info").json()["data"].as_array().map(Vec::len), Some(2));
    let missing = get("/model/info?litellm_model_id=nope");
    assert_eq!(missing.status, 400);
    assert_eq!(missing.json()["error"]["message"], "{'error': 'Model id = nope not found on litellm proxy'}");
}

#[test]
fn without_store_model_in_db_model_new_answers_litellms_error() {
    let pg = Postgres::start();
    let url = pg.litellm_database("stored_off");
    let mock = Mock::start("m", &[]);
    let config =
        config(&[priced(&mock)], &format!("general_settings:\n  master_key: {MASTER}\n  database_url: {url}\n"));
    let gateway = start(&config);
    let r = manage(&gateway, "/model/new", json!({"model_name": "x", "litellm_params": {"model": "openai/gpt-4o"}}));
    assert_eq!(r.status, 500);
    assert_eq!(
        r.json()["error"]["message"],
        "{'error': \"Set `'STORE_MODEL_IN_DB='True'` in your env to enable this feature.\"}"
    );
    let bearer = "Bearer sk-not-an-admin";
    let r = gateway.client().request("POST", "/model/new", &[("authorization", bearer)], b"{}");
    assert_eq!(r.status, 401, "admins only: {}", r.text());
}
