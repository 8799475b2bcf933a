//! Changing a key: `/key/update` (a merge patch), `/key/regenerate` (a new key on the same
//! row), `/key/block` and `/key/unblock`. Each is one statement that also announces the key
//! (`key:<token>`; a regenerated key announces the old token and the new one).

use serde_json::{json, Map, Value};
use tokio_postgres::Client;

use super::common::{
    abbreviate, bad_request, body_object, http_error, is_token, not_found, row_json, sha256_hex, token_of, Answer,
};
use super::fields::{self, METADATA_FIELDS, NOW};
use super::keys::{check_alias_free, check_custom, random_key, KEY_FIELDS, KEY_REQUEST_FIELDS};
use super::sql::{archive_cte, query, Params, KEYS};
use super::{Ctx, ManageCall, ManageReply};

/// The stored row of the key the body names, by `key` (raw or hash) or else `key_alias`
/// (LiteLLM's `_get_and_validate_existing_key`, with its texts).
async fn find_key(client: &Client, body: &Map<String, Value>) -> Result<(String, Value), ManageReply> {
    if let Some(key) = body.get("key").and_then(Value::as_str) {
        let sql = format!("SELECT token, to_jsonb(k) FROM {KEYS} k WHERE token = $1");
        let rows = query(client, &sql, &[&token_of(key)]).await?;
        return rows.first().map(|r| (r.get(0), r.get(1))).ok_or_else(|| not_found("Key not found.", Some("key")));
    }
    let Some(alias) = body.get("key_alias").and_then(Value::as_str) else {
        return Err(bad_request("either key or key_alias must be provided", Some("key")));
    };
    let sql = format!("SELECT token, to_jsonb(k) FROM {KEYS} k WHERE key_alias = $1 LIMIT 2");
    let rows = query(client, &sql, &[&alias]).await?;
    match rows.len() {
        0 => Err(not_found(&format!("Key not found. No key with key_alias='{alias}'."), Some("key_alias"))),
        1 => Ok((rows[0].get(0), rows[0].get(1))),
        _ => Err(bad_request(
            &format!("Multiple keys share key_alias='{alias}', so it cannot be used as an identifier."),
            Some("key_alias"),
        )),
    }
}

/// The `SET` list of a merge patch: fields left out keep their value, `null` clears;
/// `duration` sets `expires`, `budget_duration` sets `budget_reset_at` too, `tags` & co.
/// merge into `metadata`.
fn patch(
    params: &mut Params,
    body: &Map<String, Value>,
    stored: &Value,
    caller: &str,
) -> Result<Vec<String>, ManageReply> {
    fields::check(body, &[KEY_FIELDS, METADATA_FIELDS, KEY_REQUEST_FIELDS])?;
    fields::check_budget(body, "max_budget")?;
    let expires = fields::interval(body, "duration", &["-1"])?;
    let reset = fields::budget_period(body, "budget_duration")?;
    let mut doc = body.clone();
    if let Some(metadata) = fields::merged_metadata(body, stored.get("metadata")) {
        doc.insert("metadata".into(), metadata);
    }
    let json = params.json(Value::Object(doc.clone()));
    let mut set: Vec<String> =
        fields::columns(&json, &doc, KEY_FIELDS).into_iter().map(|(c, e)| format!("{c} = {e}")).collect();
    if let Some(expires) = expires {
        set.push(format!("expires = {}", fields::later(&params.opt_text(expires))));
    }
    if let Some(reset) = reset {
        set.push(format!("budget_reset_at = {}", fields::reset_at(&params.opt_text(reset))));
    }
    set.push(format!("updated_at = {NOW}"));
    set.push(format!("updated_by = {}", params.text(caller)));
    Ok(set)
}

pub(crate) async fn update(cx: &Ctx, call: &ManageCall) -> Answer {
    let body = body_object(&call.body)?;
    let (token, stored) = find_key(&cx.client, &body).await?;
    check_alias_free(&cx.client, &body, Some(&token)).await?;
    let mut params = Params::default();
    let set = patch(&mut params, &body, &stored, call.caller.name())?;
    let at = params.text(token.clone());
    let notify = params.notify("key", "k.token");
    let sql = format!(
        "WITH k AS (UPDATE {KEYS} SET {} WHERE token = {at} RETURNING *) SELECT to_jsonb(k), {notify} FROM k",
        set.join(", ")
    );
    let rows = params.query(&cx.client, &sql).await?;
    let row = rows.first().ok_or_else(|| not_found("Key not found.", Some("key")))?;
    // LiteLLM echoes the key as passed; a raw key is never sent back, so this is its hash.
    let mut out = json!({"key": token});
    if let (Some(out), Value::Object(row)) = (out.as_object_mut(), row_json(row.get(0))) {
        out.extend(row);
    }
    Ok(out)
}

/// `/key/regenerate` (key in the body) and `/key/{key}/regenerate`: a new raw key (or the
/// body's `new_key`), its hash replacing `token` on the same row, with the body's other
/// fields applied as `/key/update` applies them. The old row is archived as LiteLLM does.
pub(crate) async fn regenerate(cx: &Ctx, call: &ManageCall, path_key: Option<String>) -> Answer {
    let mut body = body_object(&call.body)?;
    let key = body.get("key").and_then(Value::as_str).map(str::to_string).or(path_key);
    let Some(key) = key.filter(|k| !k.is_empty()) else {
        return Err(http_error(400, "No key passed in."));
    };
    // LiteLLM: a value without "sk" is a hash already.
    let old = if key.contains("sk") { sha256_hex(&key) } else { key.clone() };
    let sql = format!("SELECT to_jsonb(k) FROM {KEYS} k WHERE token = $1");
    let Some(stored) = query(&cx.client, &sql, &[&old]).await?.first().map(|r| r.get::<_, Value>(0)) else {
        let shown = if key.starts_with("sk-") { abbreviate(&key) } else { key.clone() };
        return Err(http_error(404, &format!("Key {shown} not found.")));
    };
    let raw = match body.get("new_key").and_then(Value::as_str) {
        Some(new_key) => {
            check_custom(new_key)?;
            new_key.to_string()
        }
        None => random_key()?,
    };
    let new = sha256_hex(&raw);
    check_alias_free(&cx.client, &body, Some(&old)).await?;
    body.remove("key");
    body.remove("new_key");
    let mut params = Params::default();
    let mut set = patch(&mut params, &body, &stored, call.caller.name())?;
    set.push(format!("token = {}", params.text(new.clone())));
    set.push(format!("key_name = {}", params.text(abbreviate(&raw))));
    let at = params.text(old.clone());
    let archive = archive_cte(&cx.client, &mut params, "old", call.caller.name()).await?;
    let (notify_old, notify_new) = (params.notify("key", &at), params.notify("key", "k.token"));
    let mut ctes = vec![format!("old AS (SELECT * FROM {KEYS} WHERE token = {at})")];
    ctes.extend(archive);
    ctes.push(format!("k AS (UPDATE {KEYS} SET {} WHERE token = {at} RETURNING *)", set.join(", ")));
    let sql = format!("WITH {} SELECT to_jsonb(k), {notify_old}, {notify_new} FROM k", ctes.join(", "));
    let rows = params.query(&cx.client, &sql).await?;
    let row = rows.first().ok_or_else(|| http_error(404, "Key not found."))?;
    let mut out = match row_json(row.get(0)) {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    out.remove("token");
    out.insert("key".into(), json!(raw));
    out.insert("token_id".into(), json!(new));
    out.insert("token".into(), Value::Null);
    Ok(Value::Object(out))
}

/// `/key/block` and `/key/unblock`: body `{"key": "sk-…" | "<64 hex>"}`; the updated row.
pub(crate) async fn set_blocked(cx: &Ctx, call: &ManageCall, blocked: bool) -> Answer {
    let body = body_object(&call.body)?;
    let Some(key) = body.get("key") else { return Err(super::common::missing("key", &body)) };
    let key = key.as_str().unwrap_or_default();
    let token = if key.starts_with("sk-") {
        sha256_hex(key)
    } else if is_token(key) {
        key.to_string()
    } else {
        return Err(bad_request("Invalid key format.", Some("key")));
    };
    let mut params = Params::default();
    let at = params.text(token);
    let flag = if blocked { "true" } else { "false" };
    let notify = params.notify("key", "k.token");
    let sql = format!(
        "WITH k AS (UPDATE {KEYS} SET blocked = {flag}, updated_at = {NOW} WHERE token = {at} RETURNING *) \
         SELECT to_jsonb(k), {notify} FROM k"
    );
    let rows = params.query(&cx.client, &sql).await?;
    let row = rows.first().ok_or_else(|| not_found("Key not found.", Some("key")))?;
    Ok(row_json(row.get(0)))
}
