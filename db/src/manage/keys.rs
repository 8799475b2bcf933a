//! `POST /key/generate`: a new virtual key, written as LiteLLM's `generate_key_helper_fn`
//! writes it (same columns, same defaults), so LiteLLM and its admin UI read it as theirs.

use base64::Engine;
use ring::rand::SecureRandom;
use serde_json::{json, Map, Value};
use tokio_postgres::Client;

use super::common::{abbreviate, bad_request, body_object, http_error, row_json, sha256_hex, Answer};
use super::fields::{self, f, Field, Kind, METADATA_FIELDS, NOW};
use super::sql::{Params, KEYS};
use super::{Ctx, ManageCall, ManageReply};

/// Body fields that are columns of `LiteLLM_VerificationToken` of the same name.
pub(crate) const KEY_FIELDS: &[Field] = &[
    f("key_alias", Kind::Text),
    f("models", Kind::Texts),
    f("spend", Kind::Float),
    f("max_budget", Kind::Float),
    f("user_id", Kind::Text),
    f("team_id", Kind::Text),
    f("max_parallel_requests", Kind::Int),
    f("metadata", Kind::Object),
    f("tpm_limit", Kind::Limit),
    f("rpm_limit", Kind::Limit),
    f("tpd_limit", Kind::Limit),
    f("budget_duration", Kind::Text),
    f("model_max_budget", Kind::Object),
    f("aliases", Kind::Object),
    f("config", Kind::Object),
    f("permissions", Kind::Object),
    f("blocked", Kind::Bool),
    f("allowed_cache_controls", Kind::Texts),
    f("allowed_routes", Kind::Texts),
    f("organization_id", Kind::Text),
    f("key_type", Kind::Text),
    f("agent_id", Kind::Text),
    f("budget_fallbacks", Kind::Object),
    f("access_group_ids", Kind::Texts),
];

/// Request-only fields of the key routes (not columns).
pub(crate) const KEY_REQUEST_FIELDS: &[Field] = &[
    f("key", Kind::Text),
    f("duration", Kind::Text),
    f("new_key", Kind::Text),
    f("key_aliases", Kind::Texts),
    f("keys", Kind::Texts),
];

/// What LiteLLM writes when the request leaves a column out (`GenerateKeyRequest`'s defaults).
fn defaults() -> Map<String, Value> {
    let d = json!({"models": [], "spend": 0.0, "metadata": {}, "aliases": {}, "config": {}, "permissions": {},
        "model_max_budget": {}, "allowed_cache_controls": []});
    d.as_object().cloned().unwrap_or_default()
}

/// A key about to be inserted.
pub(crate) struct NewKey {
    /// The raw `sk-…` key: only ever in the response that creates it.
    pub raw: String,
    pub token: String,
    /// Defaults + the body (metadata merged): what the columns read.
    pub doc: Map<String, Value>,
    pub expires: Option<String>,
    pub reset: Option<String>,
}

impl NewKey {
    /// Checks the body and makes the key (random, or the body's own `key`).
    pub(crate) fn prepare(body: &Map<String, Value>) -> Result<NewKey, ManageReply> {
        fields::check(body, &[KEY_FIELDS, METADATA_FIELDS, KEY_REQUEST_FIELDS])?;
        fields::check_budget(body, "max_budget")?;
        let raw = match body.get("key").and_then(Value::as_str) {
            Some(custom) => {
                check_custom(custom)?;
                custom.to_string()
            }
            None => random_key()?,
        };
        let expires = fields::interval(body, "duration", &[])?.flatten();
        let reset = fields::budget_period(body, "budget_duration")?.flatten();
        let mut doc = defaults();
        for (k, v) in body {
            if !v.is_null() || !doc.contains_key(k) {
                doc.insert(k.clone(), v.clone());
            }
        }
        if let Some(metadata) = fields::merged_metadata(body, None) {
            doc.insert("metadata".into(), metadata);
        }
        Ok(NewKey { token: sha256_hex(&raw), raw, doc, expires, reset })
    }

    /// `INSERT … SELECT <columns> {tail} … RETURNING *`; `tail` may join a CTE (`FROM u`).
    pub(crate) fn insert_sql(&self, params: &mut Params, caller: &str, tail: &str) -> String {
        let doc = params.json(Value::Object(self.doc.clone()));
        let mut cols = fields::columns(&doc, &self.doc, KEY_FIELDS);
        cols.push(("token".into(), params.text(self.token.clone())));
        cols.push(("key_name".into(), params.text(abbreviate(&self.raw))));
        let by = params.text(caller);
        cols.push(("created_by".into(), by.clone()));
        cols.push(("updated_by".into(), by));
        cols.push(("expires".into(), fields::later(&params.opt_text(self.expires.clone()))));
        cols.push(("budget_reset_at".into(), fields::reset_at(&params.opt_text(self.reset.clone()))));
        cols.push(("created_at".into(), NOW.into()));
        cols.push(("updated_at".into(), NOW.into()));
        let (names, exprs): (Vec<_>, Vec<_>) = cols.into_iter().unzip();
        format!(
            "INSERT INTO {KEYS} ({}) SELECT {} {tail} ON CONFLICT (token) DO NOTHING RETURNING *",
            names.join(", "),
            exprs.join(", ")
        )
    }

    /// GenerateKeyResponse: the request's fields, the row, the raw `key`, `token` = `token_id`
    /// = its hash.
    pub(crate) fn response(&self, body: &Map<String, Value>, row: Value) -> Value {
        let mut out = body.clone();
        if let Value::Object(row) = row_json(row) {
            out.extend(row);
        }
        out.insert("key".into(), json!(self.raw));
        out.insert("token".into(), json!(self.token));
        out.insert("token_id".into(), json!(self.token));
        out.entry("expires").or_insert(Value::Null);
        Value::Object(out)
    }
}

/// `sk-` + the URL-safe base64 of 16 random bytes (LiteLLM's `secrets.token_urlsafe(16)`).
pub(crate) fn random_key() -> Result<String, ManageReply> {
    let mut bytes = [0u8; 16];
    ring::rand::SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| ManageReply::error(500, "internal_server_error", "no randomness available to make a key", None))?;
    Ok(format!("sk-{}", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)))
}

/// A key chosen by the caller: `sk-…`, at least 16 characters (LiteLLM's texts; the key
/// itself is masked in them).
pub(crate) fn check_custom(key: &str) -> Result<(), ManageReply> {
    if !key.starts_with("sk-") {
        let masked = if key.len() > 8 && key.is_char_boundary(4) && key.is_char_boundary(key.len() - 4) {
            format!("{}****{}", &key[..4], &key[key.len() - 4..])
        } else {
            "****".to_string()
        };
        return Err(http_error(
            400,
            &format!("Invalid key format. LiteLLM Virtual Key must start with 'sk-'. Received: {masked}"),
        ));
    }
    if key.len() < 16 {
        return Err(http_error(400, "Invalid key format. LiteLLM Virtual Key must be at least 16 characters long."));
    }
    Ok(())
}

/// LiteLLM requires key aliases to be unique across keys (`_enforce_unique_key_alias`).
pub(crate) async fn check_alias_free(
    client: &Client,
    body: &Map<String, Value>,
    own_token: Option<&str>,
) -> Result<(), ManageReply> {
    let Some(alias) = body.get("key_alias").and_then(Value::as_str) else { return Ok(()) };
    let sql = format!("SELECT 1 FROM {KEYS} WHERE key_alias = $1 AND token IS DISTINCT FROM $2 LIMIT 1");
    let taken = super::sql::query(client, &sql, &[&alias, &own_token]).await?;
    if taken.is_empty() {
        return Ok(());
    }
    Err(bad_request(
        &format!("Key with alias '{alias}' already exists. Unique key aliases across all keys are required."),
        Some("key_alias"),
    ))
}

pub(crate) async fn generate(cx: &Ctx, call: &ManageCall) -> Answer {
    let body = body_object(&call.body)?;
    let new = NewKey::prepare(&body)?;
    check_alias_free(&cx.client, &body, None).await?;
    let mut params = Params::default();
    let insert = new.insert_sql(&mut params, call.caller.name(), "");
    let notify = params.notify("key", "k.token");
    let sql = format!("WITH k AS ({insert}) SELECT to_jsonb(k), {notify} FROM k");
    let rows = params.query(&cx.client, &sql).await?;
    let Some(row) = rows.first() else {
        // The token exists: LiteLLM's upsert would hand back that other key's row.
        return Err(bad_request("A key with this value already exists. Pass another `key`, or none.", Some("key")));
    };
    Ok(new.response(&body, row.get(0)))
}
