//! `/key/info`, `/key/list` and `/key/delete`. Keys are named by their hash in answers:
//! LiteLLM echoes whatever the caller passed (raw keys included); Pointwork never sends a raw
//! key back except when it creates one.

use serde_json::{json, Value};

use super::common::{
    bad_request, body_object, detail, http_error, not_found, row_json, token_of, unprocessable, Answer, Query,
};
use super::fields::{self, f, Kind, NOW};
use super::sql::{archive_cte, has_archive, query, Params, DELETED_KEYS, KEYS};
use super::{Ctx, ManageCall};

/// LiteLLM's key status: blocked → revoked, past `expires` → expired, else active.
fn status_sql() -> String {
    format!("CASE WHEN k.blocked THEN 'revoked' WHEN k.expires < {NOW} THEN 'expired' ELSE 'active' END")
}

/// `GET /key/info?key=`: `{"key", "info": {<row without token>, "status"}}`; a deleted key
/// is found in LiteLLM's archive, with status "deleted".
pub(crate) async fn info(cx: &Ctx, call: &ManageCall) -> Answer {
    let query_string = Query::parse(&call.query);
    let Some(key) = query_string.get("key") else {
        return Err(bad_request("Pass the key to look up: /key/info?key=<sk-… or its hash>", Some("key")));
    };
    let token = token_of(key);
    let sql = format!("SELECT to_jsonb(k), {} FROM {KEYS} k WHERE token = $1", status_sql());
    let mut found =
        query(&cx.client, &sql, &[&token]).await?.first().map(|r| (r.get::<_, Value>(0), r.get::<_, String>(1)));
    if found.is_none() && has_archive(&cx.client).await? {
        let sql = format!("SELECT to_jsonb(d) FROM {DELETED_KEYS} d WHERE token = $1 ORDER BY deleted_at DESC LIMIT 1");
        found = query(&cx.client, &sql, &[&token]).await?.first().map(|r| (r.get(0), "deleted".to_string()));
    }
    let Some((row, status)) = found else {
        return Err(not_found("Key not found in database", Some("key")));
    };
    let mut info = row_json(row);
    if let Some(map) = info.as_object_mut() {
        map.remove("token");
        map.insert("status".into(), json!(status));
    }
    Ok(json!({"key": token, "info": info}))
}

/// `GET /key/list`: newest first, paged; hashes, or whole rows with `return_full_object`.
/// The admin UI's session keys (team `litellm-dashboard`) are left out, as LiteLLM does.
pub(crate) async fn list(cx: &Ctx, call: &ManageCall) -> Answer {
    let q = Query::parse(&call.query);
    let page = q.int("page", 1, 1, i64::MAX / 1000)?;
    let size = q.int("size", 10, 1, 100)?;
    let full = q.bool("return_full_object", false)?;
    let mut params = Params::default();
    let mut filters = vec!["k.team_id IS DISTINCT FROM 'litellm-dashboard'".to_string()];
    for (name, column) in [
        ("user_id", "user_id"),
        ("team_id", "team_id"),
        ("key_alias", "key_alias"),
        ("organization_id", "organization_id"),
    ] {
        if let Some(value) = q.get(name) {
            filters.push(format!("k.{column} = {}", params.text(value)));
        }
    }
    if let Some(hash) = q.get("key_hash") {
        filters.push(format!("k.token = {}", params.text(token_of(hash))));
    }
    let filter = filters.join(" AND ");
    let total_sql = format!("SELECT count(*) FROM {KEYS} k WHERE {filter}");
    let total: i64 = params.query(&cx.client, &total_sql).await?.first().map(|r| r.get(0)).unwrap_or(0);
    let limit = params.int(size);
    let offset = params.int((page - 1) * size);
    let sql = format!(
        "SELECT to_jsonb(k) FROM {KEYS} k WHERE {filter} ORDER BY k.created_at DESC NULLS LAST, k.token DESC LIMIT {limit} OFFSET {offset}"
    );
    let rows = params.query(&cx.client, &sql).await?;
    let keys: Vec<Value> = rows
        .iter()
        .map(|r| {
            let row = row_json(r.get(0));
            if full {
                row
            } else {
                row.get("token").cloned().unwrap_or(Value::Null)
            }
        })
        .collect();
    Ok(json!({"keys": keys, "total_count": total, "current_page": page, "total_pages": (total + size - 1) / size}))
}

/// `POST /key/delete` `{"keys": [...]}` or `{"key_aliases": [...]}`: the rows are archived
/// and deleted, and each deleted key announced.
pub(crate) async fn delete(cx: &Ctx, call: &ManageCall) -> Answer {
    let body = body_object(&call.body)?;
    fields::check(&body, &[&[f("keys", Kind::Texts), f("key_aliases", Kind::Texts)]])?;
    let strings = |name: &str| -> Vec<String> {
        body.get(name)
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect())
            .unwrap_or_default()
    };
    let (tokens, aliases): (Vec<String>, Vec<String>) =
        (strings("keys").iter().map(|k| token_of(k)).collect(), strings("key_aliases"));
    if tokens.is_empty() && aliases.is_empty() {
        let msg = "Value error, At least one of 'keys' or 'key_aliases' must be provided.";
        return Err(unprocessable(vec![detail("value_error", &["body"], msg, Value::Object(body.clone()))]));
    }
    let mut params = Params::default();
    let (t, a) =
        (params.texts(tokens.clone()), params.texts(if tokens.is_empty() { aliases.clone() } else { Vec::new() }));
    let archive = archive_cte(&cx.client, &mut params, "gone", call.caller.name()).await?;
    let notify = params.notify("key", "gone.token");
    let mut ctes =
        vec![format!("gone AS (DELETE FROM {KEYS} WHERE token = ANY({t}) OR key_alias = ANY({a}) RETURNING *)")];
    ctes.extend(archive);
    let sql = format!("WITH {} SELECT gone.token, {notify} FROM gone", ctes.join(", "));
    let rows = params.query(&cx.client, &sql).await?;
    if rows.is_empty() {
        return Err(http_error(404, "No keys found"));
    }
    let deleted = if tokens.is_empty() { aliases } else { tokens };
    Ok(json!({ "deleted_keys": deleted }))
}
