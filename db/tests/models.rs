//! Models stored in the database (`store_model_in_db`) on a real PostgreSQL carrying LiteLLM's
//! real schema: `/model/new`, `/model/update`, `/model/delete` write rows as LiteLLM does (every
//! string of `litellm_params` encrypted with the salt key), a row LiteLLM wrote (with a
//! credential it refers to) is read back decrypted, and the database thread hands the models
//! over at start and after every change.

#[path = "support/postgres.rs"]
mod postgres;

use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use pointwork_db::crypto::SecretKey;
use pointwork_db::manage::Caller;
use pointwork_db::{Database, DbModels, DbSettings, ManageCall};
use postgres::Postgres;
use serde_json::{json, Value};

const SALT: &str = "sk-salt-for-models-test";

struct Env<'a> {
    pg: &'a Postgres,
    name: &'static str,
    db: Database,
    models: mpsc::Receiver<DbModels>,
}

fn env<'a>(pg: &'a Postgres, name: &'static str, store_model_in_db: bool) -> Env<'a> {
    let url = pg.litellm_database(name);
    let (tx, models) = mpsc::channel();
    let mut settings = DbSettings::new(url);
    settings.master_key = Some("sk-master".into());
    settings.salt_key = Some(SALT.into());
    settings.store_model_in_db = store_model_in_db;
    settings.on_models = Some(Arc::new(move |m| {
        let _ = tx.send(m);
    }));
    let db = Database::start(settings).expect("database thread");
    Env { pg, name, db, models }
}

impl Env<'_> {
    fn call(&self, path: &str, body: Value) -> (u16, Value) {
        let call = ManageCall {
            method: "POST",
            path: path.into(),
            query: String::new(),
            body: body.to_string().into_bytes(),
            caller: Caller::Admin("admin".into()),
        };
        let mut rx = self.db.manage(call);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match rx.try_recv() {
                Ok(Some(reply)) => return (reply.status, serde_json::from_slice(&reply.body).expect("JSON")),
                Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
                other => panic!("no answer to {path}: {other:?}"),
            }
        }
    }

    fn psql(&self, sql: &str) -> String {
        self.pg.psql(self.name, sql)
    }

    /// The next models handed over whose rows satisfy `until`.
    fn models_until(&self, what: &str, until: impl Fn(&DbModels) -> bool) -> DbModels {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.models.recv_timeout(left) {
                Ok(m) if until(&m) => return m,
                Ok(_) => continue,
                Err(_) => panic!("the models were never handed over with {what}"),
            }
        }
    }
}

fn message(body: &Value) -> (String, String) {
    let e = &body["error"];
    (e["type"].as_str().unwrap_or_default().into(), e["message"].as_str().unwrap_or_default().into())
}

#[test]
fn models_in_the_database() {
    let pg = Postgres::start();
    new_update_delete_write_rows_as_litellm(&pg);
    rows_litellm_wrote_are_read_with_their_credential(&pg);
    without_store_model_in_db_litellms_error(&pg);
    aes_gcm_when_the_config_says_so(&pg);
}

fn aes_gcm_when_the_config_says_so(pg: &Postgres) {
    let url = pg.litellm_database("models_gcm");
    let mut settings = DbSettings::new(url);
    settings.salt_key = Some(SALT.into());
    settings.store_model_in_db = true;
    settings.encryption = pointwork_db::crypto::Algorithm::AesGcm;
    let db = Database::start(settings).expect("database thread");
    let (tx, models) = mpsc::channel();
    drop(tx);
    let env = Env { pg, name: "models_gcm", db, models };
    let body = json!({"model_name": "g", "litellm_params": {"model": "openai/gpt-4o", "api_key": "sk-gcm"}});
    let (status, row) = env.call("/model/new", body);
    assert_eq!(status, 200, "{row}");
    let sealed = row["litellm_params"]["api_key"].as_str().unwrap();
    assert!(sealed.starts_with("v2:gcm:"), "{sealed}");
    assert_eq!(SecretKey::from_signing_key(SALT).decrypt(sealed).unwrap(), "sk-gcm");
}

fn new_update_delete_write_rows_as_litellm(pg: &Postgres) {
    let env = env(pg, "models_crud", true);
    let at_start = env.models_until("nothing stored", |m| m.rows.is_empty());
    assert!(at_start.warnings.is_empty());
    let body = json!({"model_name": "db-gpt", "litellm_params": {"model": "openai/gpt-4o", "api_key": "sk-up-1",
        "api_base": "http://127.0.0.1:9/v1", "rpm": 5}, "model_info": {"id": "m-1", "mode": "chat"}});
    let (status, row) = env.call("/model/new", body);
    assert_eq!(status, 200, "{row}");
    assert_eq!((row["model_id"].as_str(), row["model_name"].as_str()), (Some("m-1"), Some("db-gpt")));
    assert_eq!(row["created_by"], "admin");
    assert!(row["created_at"].as_str().unwrap().ends_with('Z'));
    let key = SecretKey::from_signing_key(SALT);
    let stored: Value = serde_json::from_str(
        &env.psql("SELECT litellm_params FROM \"LiteLLM_ProxyModelTable\" WHERE model_id = 'm-1'"),
    )
    .unwrap();
    assert_eq!(stored["rpm"], 5, "numbers are stored as they are");
    for (k, plain) in [("model", "openai/gpt-4o"), ("api_key", "sk-up-1"), ("api_base", "http://127.0.0.1:9/v1")] {
        let sealed = stored[k].as_str().unwrap();
        assert_ne!(sealed, plain, "{k} is stored encrypted");
        assert_eq!(key.decrypt(sealed).unwrap(), plain, "with the salt key, as LiteLLM does");
    }
    assert_eq!(row["litellm_params"], stored, "the answer is the row, as LiteLLM's");
    assert_eq!(stored["use_in_pass_through"], false, "with the defaults LiteLLM writes");
    assert_eq!(
        env.psql("SELECT model_info::text FROM \"LiteLLM_ProxyModelTable\""),
        r#"{"id": "m-1", "mode": "chat", "db_model": false, "member_auto_router": false}"#
    );
    let models = env.models_until("m-1", |m| m.rows.len() == 1);
    let m = &models.rows[0];
    assert_eq!((m.model_id.as_str(), m.model_name.as_str()), ("m-1", "db-gpt"));
    assert_eq!(m.litellm_params["api_key"], "sk-up-1", "handed over decrypted");
    assert_eq!(m.model_info["id"], "m-1");
    assert_eq!(m.model_info["db_model"], true);

    let (status, row) = env.call(
        "/model/update",
        json!({"model_info": {"id": "m-1"}, "litellm_params": {"api_base": "http://127.0.0.1:10/v1", "api_key": null}}),
    );
    assert_eq!(status, 200, "{row}");
    let models = env.models_until("the new api_base", |m| {
        m.rows.first().is_some_and(|r| r.litellm_params["api_base"] == "http://127.0.0.1:10/v1")
    });
    assert_eq!(models.rows[0].litellm_params["api_key"], "sk-up-1", "a null leaves the stored value");
    assert_eq!(models.rows[0].litellm_params["rpm"], 5);

    let (status, body) = env.call("/model/update", json!({"model_info": {"id": "nope"}, "litellm_params": {}}));
    assert_eq!((status, message(&body)), (400, ("invalid_request_error".into(), "model not found".into())));
    let (status, body) = env.call("/model/update", json!({"litellm_params": {}}));
    assert_eq!((status, message(&body).1), (400, "model_info not provided".into()));

    let paused =
        json!({"model_name": "p", "litellm_params": {"model": "openai/x"}, "model_info": {"id": 7}, "blocked": true});
    let (status, row) = env.call("/model/new", paused);
    assert_eq!((status, &row["model_id"], &row["blocked"]), (200, &json!("7"), &json!(true)), "{row}");
    assert_eq!(env.call("/model/delete", json!({"id": "7"})).0, 200);

    let (status, body) = env.call("/model/new", json!({"model_name": "x", "litellm_params": {}}));
    assert_eq!(status, 422);
    assert_eq!(body["detail"][0]["loc"], json!(["body", "litellm_params", "model"]));

    let (status, row) = env.call("/model/block", json!({"model_id": "m-1"}));
    assert_eq!((status, &row["blocked"]), (200, &json!(true)), "{row}");
    env.models_until("m-1 blocked", |m| m.rows.first().is_some_and(|r| r.model_info["blocked"] == true));
    let (status, row) = env.call("/model/unblock", json!({"model_id": "m-1"}));
    assert_eq!((status, &row["blocked"]), (200, &json!(false)), "{row}");
    env.models_until("m-1 unblocked", |m| m.rows.first().is_some_and(|r| r.model_info["blocked"] == false));
    let (status, body) = env.call("/model/block", json!({"model_id": "nope"}));
    assert_eq!((status, message(&body)), (404, ("not_found_error".into(), "Model nope not found on proxy.".into())));

    let (status, body) = env.call("/model/delete", json!({"id": "m-1"}));
    assert_eq!((status, body), (200, json!({"message": "Model: m-1 deleted successfully"})));
    env.models_until("no model", |m| m.rows.is_empty());
    let (status, body) = env.call("/model/delete", json!({"id": "m-1"}));
    assert_eq!(
        (status, message(&body)),
        (400, ("invalid_request_error".into(), "{'error': 'Model with id=m-1 not found in db'}".into()))
    );
}

fn rows_litellm_wrote_are_read_with_their_credential(pg: &Postgres) {
    let url = pg.litellm_database("models_litellm");
    let key = SecretKey::from_signing_key(SALT);
    let e = |v: &str| key.encrypt(v).unwrap();
    let params = json!({"model": e("openai/gpt-4o-mini"), "litellm_credential_name": e("shared-openai"),
        "api_base": e("http://127.0.0.1:11/v1")});
    let creds = json!({"api_key": e("sk-from-credential"), "api_base": e("http://ignored/v1")});
    pg.psql(
        "models_litellm",
        &format!(
            "INSERT INTO \"LiteLLM_CredentialsTable\" (credential_id, credential_name, credential_values, created_by, updated_by) \
             VALUES ('c-1', 'shared-openai', '{creds}', 'admin', 'admin'); \
             INSERT INTO \"LiteLLM_ProxyModelTable\" (model_id, model_name, litellm_params, model_info, created_by, updated_by) \
             VALUES ('lm-1', 'litellm-gpt', '{params}', '{{\"id\": \"lm-1\"}}', 'admin', 'admin')"
        ),
    );
    let (tx, rx) = mpsc::channel();
    let mut settings = DbSettings::new(url);
    settings.salt_key = Some(SALT.into());
    settings.store_model_in_db = true;
    settings.on_models = Some(Arc::new(move |m| {
        let _ = tx.send(m);
    }));
    let _db = Database::start(settings).expect("database thread");
    let models = rx.recv_timeout(Duration::from_secs(5)).expect("models at start");
    assert_eq!(models.rows.len(), 1, "{models:?}");
    let p = &models.rows[0].litellm_params;
    assert_eq!(p["model"], "openai/gpt-4o-mini");
    assert_eq!(p["api_key"], "sk-from-credential", "the credential fills in the key");
    assert_eq!(p["api_base"], "http://127.0.0.1:11/v1", "the row's own values win");
    assert!(p.get("litellm_credential_name").is_none());
}

fn without_store_model_in_db_litellms_error(pg: &Postgres) {
    let env = env(pg, "models_off", false);
    let (status, body) =
        env.call("/model/new", json!({"model_name": "x", "litellm_params": {"model": "openai/gpt-4o"}}));
    assert_eq!(
        (status, message(&body)),
        (
            500,
            (
                "internal_server_error".into(),
                "{'error': \"Set `'STORE_MODEL_IN_DB='True'` in your env to enable this feature.\"}".into()
            )
        )
    );
    let (status, body) = env.call("/model/block", json!({"model_id": "x"}));
    assert_eq!(
        (status, message(&body)),
        (400, ("validation_error".into(), "Model updates only supported for DB-stored models".into()))
    );
    assert!(env.models.recv_timeout(Duration::from_millis(300)).is_err(), "no models are read");
}

/// A database away at start: no models yet, and the thread keeps trying; once the database
/// is back the models are handed over without a notification.
#[test]
fn models_arrive_once_the_database_comes_back() {
    let mut pg = Postgres::start();
    let url = pg.litellm_database("models_later");
    pg.psql(
        "models_later",
        "INSERT INTO \"LiteLLM_ProxyModelTable\" (model_id, model_name, litellm_params, created_by, updated_by) \
         VALUES ('later-1', 'g', '{\"model\": \"openai/x\"}', 'a', 'a')",
    );
    pg.stop();
    let (tx, rx) = mpsc::channel();
    let mut settings = DbSettings::new(url);
    settings.store_model_in_db = true;
    settings.connect_timeout = Duration::from_millis(500);
    settings.on_models = Some(Arc::new(move |m| {
        let _ = tx.send(m);
    }));
    let db = Database::start(settings).expect("the thread starts with the database away");
    assert!(!db.status.is_connected());
    assert!(rx.recv_timeout(Duration::from_millis(1500)).is_err(), "nothing to hand over yet");
    pg.start_again();
    let models = rx.recv_timeout(Duration::from_secs(10)).expect("the models once the database is back");
    assert_eq!(models.rows.iter().map(|r| r.model_id.as_str()).collect::<Vec<_>>(), ["later-1"]);
}
