//! `POST /user/new` (the user row, and with `auto_create_key` — the default — a key for that
//! user, in the same statement) and `GET /user/info`.

use serde_json::{json, Map, Value};

use super::common::{
    bad_request, body_object, detail, http_error, kind_for, row_json, unprocessable, uuid4, Answer, Query,
};
use super::fields::{self, f, Field, Kind, METADATA_FIELDS, NOW};
use super::keys::{NewKey, KEY_FIELDS};
use super::sql::{query, Params, KEYS, TEAMS, USERS};
use super::{Ctx, ManageCall, ManageReply};

/// Body fields that are columns of `LiteLLM_UserTable` of the same name.
const USER_FIELDS: &[Field] = &[
    f("user_id", Kind::Text),
    f("user_email", Kind::Text),
    f("user_alias", Kind::Text),
    f("user_role", Kind::Text),
    f("teams", Kind::Texts),
    f("team_id", Kind::Text),
    f("organization_id", Kind::Text),
    f("max_budget", Kind::Float),
    f("budget_duration", Kind::Text),
    f("models", Kind::Texts),
    f("metadata", Kind::Object),
    f("tpm_limit", Kind::Limit),
    f("rpm_limit", Kind::Limit),
    f("max_parallel_requests", Kind::Int),
    f("model_max_budget", Kind::Object),
    f("allowed_cache_controls", Kind::Texts),
    f("spend", Kind::Float),
];

/// `LitellmUserRoles`.
const ROLES: &[&str] =
    &["proxy_admin", "proxy_admin_viewer", "org_admin", "internal_user", "internal_user_viewer", "team", "customer"];

/// The fields of a `/user/new` body that shape the user's key too (LiteLLM's
/// `generate_key_helper_fn` passes them to both rows; the user's budget stays the user's).
const KEY_SHARED: &[&str] = &[
    "key_alias",
    "duration",
    "models",
    "aliases",
    "config",
    "metadata",
    "tpm_limit",
    "rpm_limit",
    "max_parallel_requests",
    "team_id",
    "allowed_cache_controls",
    "permissions",
    "model_max_budget",
    "blocked",
    "tags",
    "guardrails",
];

pub(crate) async fn new(cx: &Ctx, call: &ManageCall) -> Answer {
    let mut body = body_object(&call.body)?;
    fields::check(&body, &[USER_FIELDS, &[f("auto_create_key", Kind::Bool)]])?;
    fields::check_budget(&body, "max_budget")?;
    if let Some(role) = body.get("user_role").and_then(Value::as_str).filter(|r| !ROLES.contains(r)) {
        let msg = format!("Input should be {}", ROLES.iter().map(|r| format!("'{r}'")).collect::<Vec<_>>().join(", "));
        return Err(unprocessable(vec![detail("enum", &["body", "user_role"], &msg, json!(role))]));
    }
    let user_id = match body.get("user_id").and_then(Value::as_str) {
        Some(id) => id.to_string(),
        None => uuid4()?,
    };
    body.insert("user_id".into(), json!(user_id));
    check_new(cx, &body, &user_id).await?;
    let reset = fields::budget_period(&body, "budget_duration")?.flatten();
    let mut doc = body.clone();
    for (k, v) in [("models", json!([])), ("metadata", json!({})), ("spend", json!(0.0))] {
        if doc.get(k).is_none_or(Value::is_null) {
            doc.insert(k.into(), v);
        }
    }
    if let Some(metadata) = fields::merged_metadata(&body, None) {
        doc.insert("metadata".into(), metadata);
    }
    let key = if body.get("auto_create_key").and_then(Value::as_bool).unwrap_or(true) {
        let mut key_body: Map<String, Value> = body
            .iter()
            .filter(|(k, _)| KEY_SHARED.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        key_body.insert("user_id".into(), json!(user_id));
        fields::check(&key_body, &[KEY_FIELDS, METADATA_FIELDS])?;
        Some(NewKey::prepare(&key_body)?)
    } else {
        None
    };

    let mut params = Params::default();
    let json = params.json(Value::Object(doc.clone()));
    let mut cols = fields::columns(&json, &doc, USER_FIELDS);
    cols.push(("budget_reset_at".into(), fields::reset_at(&params.opt_text(reset))));
    cols.push(("created_at".into(), NOW.into()));
    cols.push(("updated_at".into(), NOW.into()));
    let (names, exprs): (Vec<_>, Vec<_>) = cols.into_iter().unzip();
    let mut ctes = vec![format!(
        "u AS (INSERT INTO {USERS} ({}) SELECT {} ON CONFLICT (user_id) DO NOTHING RETURNING *)",
        names.join(", "),
        exprs.join(", ")
    )];
    let notify_user = params.notify("user", "u.user_id");
    let key_columns = match &key {
        Some(key) => {
            ctes.push(format!("k AS ({})", key.insert_sql(&mut params, call.caller.name(), "FROM u")));
            let notify_key = params.notify("key", "k.token");
            format!("(SELECT to_jsonb(k) FROM k), (SELECT {notify_key} FROM k)")
        }
        None => "NULL::jsonb, NULL::text".to_string(),
    };
    let sql = format!("WITH {} SELECT to_jsonb(u), {notify_user}, {key_columns} FROM u", ctes.join(", "));
    let rows = params.query(&cx.client, &sql).await?;
    let Some(row) = rows.first() else {
        return Err(http_error(400, &format!("User with id {user_id} already exists")));
    };
    let user = row_json(row.get(0));
    // NewUserResponse: the key's fields, then the user's over them (LiteLLM's order).
    let mut out = match (&key, row.get::<_, Option<Value>>(2)) {
        (Some(key), Some(key_row)) => key.response(&body, key_row),
        _ => json!({"key": null}),
    };
    if let (Some(out), Value::Object(user)) = (out.as_object_mut(), user) {
        out.extend(user);
    }
    Ok(out)
}

/// LiteLLM refuses a user id or an email that exists (400 `User with id … already exists`).
async fn check_new(cx: &Ctx, body: &Map<String, Value>, user_id: &str) -> Result<(), ManageReply> {
    let sql = format!("SELECT 1 FROM {USERS} WHERE user_id = $1");
    if !query(&cx.client, &sql, &[&user_id]).await?.is_empty() {
        return Err(http_error(400, &format!("User with id {user_id} already exists")));
    }
    if let Some(email) = body.get("user_email").and_then(Value::as_str) {
        let sql = format!("SELECT 1 FROM {USERS} WHERE lower(user_email) = lower($1)");
        if !query(&cx.client, &sql, &[&email]).await?.is_empty() {
            return Err(http_error(400, &format!("User with email {email} already exists")));
        }
    }
    Ok(())
}

/// `GET /user/info?user_id=`: `{"user_id", "user_info", "keys", "teams"}`.
pub(crate) async fn info(cx: &Ctx, call: &ManageCall) -> Answer {
    let q = Query::parse(&call.query);
    let Some(user_id) = q.get("user_id") else {
        return Err(bad_request("Pass the user to look up: /user/info?user_id=<id>", Some("user_id")));
    };
    let sql = format!("SELECT to_jsonb(u) FROM {USERS} u WHERE user_id = $1");
    let rows = query(&cx.client, &sql, &[&user_id]).await?;
    let Some(row) = rows.first() else {
        return Err(ManageReply::error(404, kind_for(404), &format!("User {user_id} not found"), None));
    };
    let user = row_json(row.get(0));
    let sql = format!("SELECT to_jsonb(k) FROM {KEYS} k WHERE user_id = $1 ORDER BY created_at");
    let keys: Vec<Value> = query(&cx.client, &sql, &[&user_id]).await?.iter().map(|r| row_json(r.get(0))).collect();
    let member = json!([{ "user_id": user_id }]);
    let sql = format!(
        "SELECT to_jsonb(t) FROM {TEAMS} t WHERE t.team_id = ANY(COALESCE((SELECT teams FROM {USERS} WHERE user_id = $1), '{{}}')) \
         OR (jsonb_typeof(t.members_with_roles) = 'array' AND t.members_with_roles @> $2::jsonb) ORDER BY t.team_alias NULLS LAST"
    );
    let teams: Vec<Value> =
        query(&cx.client, &sql, &[&user_id, &member]).await?.iter().map(|r| row_json(r.get(0))).collect();
    Ok(json!({"user_id": user_id, "user_info": user, "keys": keys, "teams": teams}))
}
