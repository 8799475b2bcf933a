//! Models stored in the database (`general_settings.store_model_in_db`), read as LiteLLM's
//! `ProxyConfig` reads them: every row of `LiteLLM_ProxyModelTable` with its `litellm_params`
//! decrypted value by value (a value that does not decrypt is kept as stored), the credential
//! its `litellm_credential_name` names (`LiteLLM_CredentialsTable`, every value decrypted)
//! filling in what the params leave unset, and `model_info.id` = the row's `model_id`.
//! Compiling them into deployments is the config crate's job; what cannot be read here is
//! left out with a warning naming the row.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Map, Value};
use tokio_postgres::Client;

use crate::crypto::{Algorithm, SecretKey};

pub(crate) const MODELS: &str = "\"LiteLLM_ProxyModelTable\"";
pub(crate) const CREDENTIALS: &str = "\"LiteLLM_CredentialsTable\"";

/// The param naming a stored credential.
pub const CREDENTIAL_NAME: &str = "litellm_credential_name";

/// The params `LiteLLM_Params` has with a default that is not `None` (so LiteLLM writes them
/// into every row it stores): `/model/new` writes them too, and reading leaves them out while
/// they hold that default (they change nothing).
pub(crate) const LITELLM_PARAM_DEFAULTS: &[(&str, bool)] = &[
    ("allow_client_keepalive_override", false),
    ("use_in_pass_through", false),
    ("use_litellm_proxy", false),
    ("merge_reasoning_content_in_choices", false),
];

/// The `model_info` fields `ModelInfo` has with a default that is not `None`.
pub(crate) const MODEL_INFO_DEFAULTS: &[(&str, bool)] = &[("db_model", false), ("member_auto_router", false)];

/// One stored model, decrypted: what a `model_list` entry says. Its `Debug` shows the names
/// of its params, never their values (they hold secrets).
#[derive(Clone, PartialEq)]
pub struct ModelRow {
    pub model_id: String,
    pub model_name: String,
    pub litellm_params: Map<String, Value>,
    /// With `id` = `model_id`, `db_model: true` and `blocked` from the row's column, as
    /// LiteLLM's `get_model_info_with_id` sets them.
    pub model_info: Map<String, Value>,
}

impl std::fmt::Debug for ModelRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelRow")
            .field("model_id", &self.model_id)
            .field("model_name", &self.model_name)
            .field("litellm_params", &self.litellm_params.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl ModelRow {
    /// How warnings and errors name the row: `LiteLLM_ProxyModelTable[model_id=…]`.
    pub fn label(&self) -> String {
        row_label(&self.model_id)
    }

    /// The row as a `model_list` entry.
    pub fn entry(&self) -> Value {
        serde_json::json!({
            "model_name": self.model_name,
            "litellm_params": self.litellm_params,
            "model_info": self.model_info,
        })
    }
}

pub fn row_label(model_id: &str) -> String {
    format!("LiteLLM_ProxyModelTable[model_id={model_id}]")
}

/// Every stored model, and what was left out of them (one line per problem, naming the row).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DbModels {
    pub rows: Vec<ModelRow>,
    pub warnings: Vec<String>,
}

/// What the database thread calls with the models, at start and after each change (on the
/// database thread: it must not wait).
pub type ModelsSink = Arc<dyn Fn(DbModels) + Send + Sync>;

/// Reads every stored model and credential. `key` decrypts (none: values are kept as stored).
pub(crate) async fn read(client: &Client, key: Option<&SecretKey>) -> Result<DbModels, tokio_postgres::Error> {
    let sql = format!("SELECT to_jsonb(m) FROM {MODELS} m ORDER BY created_at, model_id");
    let rows: Vec<Value> = client.query(&sql, &[]).await?.iter().map(|r| r.get(0)).collect();
    let sql = format!("SELECT credential_name, credential_values FROM {CREDENTIALS}");
    let credentials: Vec<(String, Value)> =
        client.query(&sql, &[]).await?.iter().map(|r| (r.get(0), r.get(1))).collect();
    Ok(decode(rows, credentials, key))
}

/// The rows as read (`to_jsonb` of each) and the credentials, decrypted and joined.
pub(crate) fn decode(rows: Vec<Value>, credentials: Vec<(String, Value)>, key: Option<&SecretKey>) -> DbModels {
    let mut out = DbModels::default();
    let credentials: HashMap<String, Map<String, Value>> = credentials
        .into_iter()
        .filter_map(|(name, values)| Some((name, decrypt_all(as_object(values)?, key))))
        .collect();
    for row in rows {
        match decode_row(row, &credentials, key, &mut out.warnings) {
            Some(row) => out.rows.push(row),
            None => continue,
        }
    }
    out
}

fn decode_row(
    row: Value,
    credentials: &HashMap<String, Map<String, Value>>,
    key: Option<&SecretKey>,
    warnings: &mut Vec<String>,
) -> Option<ModelRow> {
    let model_id = row.get("model_id").and_then(Value::as_str).unwrap_or_default().to_string();
    let label = row_label(&model_id);
    let Some(model_name) = row.get("model_name").and_then(Value::as_str).map(str::to_string) else {
        warnings.push(format!("{label}.model_name: not a string; the model is left out"));
        return None;
    };
    let Some(params) = row.get("litellm_params").cloned().and_then(as_object) else {
        warnings.push(format!("{label}.litellm_params: not a JSON object; the model is left out"));
        return None;
    };
    let mut litellm_params = decrypt_all(params, key);
    for (name, default) in LITELLM_PARAM_DEFAULTS {
        if litellm_params.get(*name) == Some(&Value::Bool(*default)) {
            litellm_params.remove(*name);
        }
    }
    if let Some(Value::String(name)) = litellm_params.remove(CREDENTIAL_NAME) {
        match credentials.get(&name) {
            Some(values) => {
                for (k, v) in values {
                    litellm_params.entry(k.clone()).or_insert_with(|| v.clone());
                }
            }
            // LiteLLM: "the request runs without it".
            None => warnings.push(format!(
                "{label}.litellm_params.{CREDENTIAL_NAME}: no credential {name:?} in LiteLLM_CredentialsTable; \
                 the model serves without it"
            )),
        }
    }
    let mut model_info = row.get("model_info").cloned().and_then(as_object).unwrap_or_default();
    model_info.insert("id".into(), Value::String(model_id.clone()));
    model_info.insert("db_model".into(), Value::Bool(true));
    let blocked = row.get("blocked").and_then(Value::as_bool).unwrap_or(false);
    model_info.insert("blocked".into(), Value::Bool(blocked));
    Some(ModelRow { model_id, model_name, litellm_params, model_info })
}

/// A JSON object, or a JSON string holding one (rows written by older clients).
fn as_object(value: Value) -> Option<Map<String, Value>> {
    match value {
        Value::Object(map) => Some(map),
        Value::String(text) => match serde_json::from_str(&text) {
            Ok(Value::Object(map)) => Some(map),
            _ => None,
        },
        _ => None,
    }
}

fn decrypt_all(values: Map<String, Value>, key: Option<&SecretKey>) -> Map<String, Value> {
    let Some(key) = key else { return values };
    values
        .into_iter()
        .map(|(k, v)| match v {
            Value::String(s) => (k, Value::String(key.decrypt_or_keep(&s))),
            other => (k, other),
        })
        .collect()
}

/// `encrypt_value_helper` over every string value (what `/model/new` and `/model/update`
/// store); other values as they are.
pub(crate) fn encrypt_all(
    values: &Map<String, Value>,
    key: &SecretKey,
    algorithm: Algorithm,
) -> Result<Map<String, Value>, String> {
    values
        .iter()
        .map(|(k, v)| match v {
            Value::String(s) => Ok((k.clone(), Value::String(key.seal(s, algorithm)?))),
            other => Ok((k.clone(), other.clone())),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rows_are_decrypted_joined_with_their_credential_and_named() {
        let key = SecretKey::from_signing_key("salt");
        let params = json!({"model": key.encrypt("openai/gpt-4o").unwrap(), "api_base": "http://plain/v1",
            "rpm": 10, CREDENTIAL_NAME: key.encrypt("cred-1").unwrap(), "use_in_pass_through": false});
        let rows = vec![
            json!({"model_id": "m-1", "model_name": "gpt", "litellm_params": params, "model_info": null, "blocked": true}),
            json!({"model_id": "m-2", "model_name": "bad", "litellm_params": 7}),
            json!({"model_id": "m-3", "model_name": "s", "litellm_params": "{\"model\": \"openai/x\"}",
                "model_info": {"mode": "chat"}}),
        ];
        let creds = vec![(
            "cred-1".to_string(),
            json!({"api_key": key.encrypt("sk-up").unwrap(), "api_base": key.encrypt("http://cred/v1").unwrap()}),
        )];
        let out = decode(rows, creds, Some(&key));
        assert_eq!(out.rows.len(), 2);
        let m1 = &out.rows[0];
        assert_eq!(m1.litellm_params["model"], "openai/gpt-4o");
        assert_eq!(m1.litellm_params["api_key"], "sk-up", "the credential fills in");
        assert_eq!(m1.litellm_params["api_base"], "http://plain/v1", "but never overrides the row");
        assert_eq!(m1.litellm_params["rpm"], 10);
        assert!(!m1.litellm_params.contains_key(CREDENTIAL_NAME));
        assert!(!m1.litellm_params.contains_key("use_in_pass_through"), "LiteLLM's defaults change nothing");
        assert_eq!(
            m1.model_info,
            json!({"id": "m-1", "db_model": true, "blocked": true}).as_object().cloned().unwrap()
        );
        assert_eq!(out.rows[1].litellm_params["model"], "openai/x");
        assert_eq!(out.rows[1].model_info["mode"], "chat");
        assert_eq!(
            out.warnings,
            vec!["LiteLLM_ProxyModelTable[model_id=m-2].litellm_params: not a JSON object; the model is left out"]
        );
    }

    #[test]
    fn a_missing_credential_is_a_warning() {
        let rows = vec![
            json!({"model_id": "m", "model_name": "g", "litellm_params": {"model": "openai/x", CREDENTIAL_NAME: "nope"}}),
        ];
        let out = decode(rows, vec![], None);
        assert_eq!(out.rows.len(), 1);
        assert!(out.warnings[0].contains("no credential \"nope\""), "{:?}", out.warnings);
    }

    #[test]
    fn debug_never_shows_a_secret() {
        let rows = vec![
            json!({"model_id": "m", "model_name": "g", "litellm_params": {"model": "openai/x", "api_key": "sk-secret"}}),
        ];
        let out = decode(rows, vec![], None);
        let shown = format!("{out:?}");
        assert!(shown.contains("api_key") && !shown.contains("sk-secret"), "{shown}");
    }

    #[test]
    fn encrypting_leaves_numbers_alone() {
        let key = SecretKey::from_signing_key("k");
        for algorithm in [Algorithm::SecretBox, Algorithm::AesGcm] {
            let sealed =
                encrypt_all(json!({"model": "openai/x", "rpm": 3}).as_object().unwrap(), &key, algorithm).unwrap();
            assert_eq!(sealed["rpm"], 3);
            let model = sealed["model"].as_str().unwrap();
            assert_eq!(model.starts_with("v2:gcm:"), algorithm == Algorithm::AesGcm);
            assert_eq!(key.decrypt(model).unwrap(), "openai/x");
        }
    }
}
