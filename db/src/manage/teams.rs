//! `/team/new`, `/team/update`, `/team/delete` (with the team's keys), `/team/info`,
//! `/team/list` over `LiteLLM_TeamTable`; changes announce `team:<id>` (and `key:<token>`
//! for each key a deletion takes with it).

use serde_json::{json, Map, Value};

use super::common::{body_object, http_error, kind_for, missing, py_dict, row_json, Answer, Query};
use super::fields::{self, f, Field, Kind, METADATA_FIELDS, NOW};
use super::sql::{archive_cte, query, Params, KEYS, TEAMS};
use super::{Ctx, ManageCall, ManageReply};

/// Body fields that are columns of `LiteLLM_TeamTable` of the same name.
const TEAM_FIELDS: &[Field] = &[
    f("team_alias", Kind::Text),
    f("organization_id", Kind::Text),
    f("members_with_roles", Kind::List),
    f("admins", Kind::Texts),
    f("members", Kind::Texts),
    f("metadata", Kind::Object),
    f("tpm_limit", Kind::Limit),
    f("rpm_limit", Kind::Limit),
    f("tpd_limit", Kind::Limit),
    f("max_budget", Kind::Float),
    f("soft_budget", Kind::Float),
    f("budget_duration", Kind::Text),
    f("models", Kind::Texts),
    f("blocked", Kind::Bool),
    f("max_parallel_requests", Kind::Int),
    f("model_max_budget", Kind::Object),
    f("access_group_ids", Kind::Texts),
];

const TEAM_ID: &[Field] = &[f("team_id", Kind::Text)];

/// The body checked, with `tags` & co. merged into `metadata`; `blocked: null` is dropped
/// (the column is NOT NULL).
fn team_doc(body: &Map<String, Value>, stored: Option<&Value>) -> Result<Map<String, Value>, ManageReply> {
    fields::check(body, &[TEAM_FIELDS, METADATA_FIELDS, TEAM_ID])?;
    fields::check_budget(body, "max_budget")?;
    let mut doc = body.clone();
    if doc.get("blocked").is_some_and(Value::is_null) {
        doc.remove("blocked");
    }
    if let Some(metadata) = fields::merged_metadata(body, stored) {
        doc.insert("metadata".into(), metadata);
    }
    Ok(doc)
}

pub(crate) async fn new(cx: &Ctx, call: &ManageCall) -> Answer {
    let body = body_object(&call.body)?;
    let mut doc = team_doc(&body, None)?;
    let reset = fields::budget_period(&body, "budget_duration")?.flatten();
    for (k, v) in [("models", json!([])), ("metadata", json!({})), ("members_with_roles", json!([]))] {
        doc.entry(k).or_insert(v);
    }
    let mut params = Params::default();
    let json = params.json(Value::Object(doc.clone()));
    let mut cols = fields::columns(&json, &doc, TEAM_FIELDS);
    cols.push(("team_id".into(), format!("COALESCE({json}->>'team_id', gen_random_uuid()::text)")));
    cols.push(("budget_reset_at".into(), fields::reset_at(&params.opt_text(reset))));
    cols.push(("created_at".into(), NOW.into()));
    cols.push(("updated_at".into(), NOW.into()));
    let (names, exprs): (Vec<_>, Vec<_>) = cols.into_iter().unzip();
    let notify = params.notify("team", "t.team_id");
    let sql = format!(
        "WITH t AS (INSERT INTO {TEAMS} ({}) SELECT {} ON CONFLICT (team_id) DO NOTHING RETURNING *) SELECT to_jsonb(t), {notify} FROM t",
        names.join(", "),
        exprs.join(", ")
    );
    let rows = params.query(&cx.client, &sql).await?;
    match rows.first() {
        Some(row) => Ok(row_json(row.get(0))),
        None => {
            let id = body.get("team_id").and_then(Value::as_str).unwrap_or_default();
            Err(http_error(400, &format!("Team id = {id} already exists. Please use a different team id.")))
        }
    }
}

/// The stored team, or LiteLLM's 404.
async fn stored(cx: &Ctx, team_id: &str) -> Result<Value, ManageReply> {
    let sql = format!("SELECT to_jsonb(t) FROM {TEAMS} t WHERE team_id = $1");
    let rows = query(&cx.client, &sql, &[&team_id]).await?;
    rows.first().map(|r| r.get(0)).ok_or_else(|| http_error(404, &format!("Team not found, passed team_id={team_id}")))
}

/// `POST /team/update`: a merge patch; `{"team_id", "data": <row>}`.
pub(crate) async fn update(cx: &Ctx, call: &ManageCall) -> Answer {
    let body = body_object(&call.body)?;
    fields::check(&body, &[TEAM_ID])?;
    let Some(team_id) = body.get("team_id").and_then(Value::as_str).map(str::to_string) else {
        return Err(missing("team_id", &body));
    };
    let before = stored(cx, &team_id).await?;
    let doc = team_doc(&body, before.get("metadata"))?;
    let reset = fields::budget_period(&body, "budget_duration")?;
    let mut params = Params::default();
    let json = params.json(Value::Object(doc.clone()));
    let mut set: Vec<String> =
        fields::columns(&json, &doc, TEAM_FIELDS).into_iter().map(|(c, e)| format!("{c} = {e}")).collect();
    if let Some(reset) = reset {
        set.push(format!("budget_reset_at = {}", fields::reset_at(&params.opt_text(reset))));
    }
    set.push(format!("updated_at = {NOW}"));
    let at = params.text(team_id.clone());
    let notify = params.notify("team", "t.team_id");
    let sql = format!(
        "WITH t AS (UPDATE {TEAMS} SET {} WHERE team_id = {at} RETURNING *) SELECT to_jsonb(t), {notify} FROM t",
        set.join(", ")
    );
    let rows = params.query(&cx.client, &sql).await?;
    let row = rows.first().ok_or_else(|| http_error(404, &format!("Team not found, passed team_id={team_id}")))?;
    Ok(json!({"team_id": team_id, "data": row_json(row.get(0))}))
}

/// `POST /team/delete` `{"team_ids": [...]}`: the teams and their keys (archived), every one
/// announced. An unknown team is FastAPI's raw `{"detail": {"error": …}}`, as in LiteLLM.
pub(crate) async fn delete(cx: &Ctx, call: &ManageCall) -> Answer {
    let body = body_object(&call.body)?;
    fields::check(&body, &[&[f("team_ids", Kind::Texts)]])?;
    let Some(ids) = body.get("team_ids").and_then(Value::as_array) else {
        return Err(missing("team_ids", &body));
    };
    let ids: Vec<String> = ids.iter().filter_map(|v| v.as_str().map(str::to_string)).collect();
    let sql = format!("SELECT team_id FROM {TEAMS} WHERE team_id = ANY($1)");
    let found: Vec<String> = query(&cx.client, &sql, &[&ids]).await?.iter().map(|r| r.get(0)).collect();
    if let Some(absent) = ids.iter().find(|id| !found.contains(id)) {
        let detail = json!({"detail": {"error": format!("Team not found, passed team_id={absent}")}});
        return Err(ManageReply::json(404, &detail));
    }
    let mut params = Params::default();
    let at = params.texts(ids.clone());
    let archive = archive_cte(&cx.client, &mut params, "keys", call.caller.name()).await?;
    let (notify_key, notify_team) = (params.notify("key", "keys.token"), params.notify("team", "teams.team_id"));
    let mut ctes = vec![format!("keys AS (DELETE FROM {KEYS} WHERE team_id = ANY({at}) RETURNING *)")];
    ctes.extend(archive);
    ctes.push(format!("teams AS (DELETE FROM {TEAMS} WHERE team_id = ANY({at}) RETURNING team_id)"));
    let sql =
        format!("WITH {} SELECT {notify_key} FROM keys UNION ALL SELECT {notify_team} FROM teams", ctes.join(", "));
    params.query(&cx.client, &sql).await?;
    Ok(json!({ "deleted_teams": ids }))
}

/// A team row with its keys (`keys`, each a key row) and `team_memberships` (always empty:
/// Pointwork does not keep LiteLLM's per-member budgets).
const WITH_KEYS: &str =
    "to_jsonb(t) || jsonb_build_object('keys', COALESCE((SELECT jsonb_agg(to_jsonb(k) ORDER BY k.created_at) \
     FROM \"LiteLLM_VerificationToken\" k WHERE k.team_id = t.team_id), '[]'::jsonb), 'team_memberships', '[]'::jsonb)";

/// Times marked UTC in a team and in each of its keys.
fn team_json(value: Value) -> Value {
    let mut team = row_json(value);
    if let Some(Value::Array(keys)) = team.get_mut("keys") {
        for key in keys.iter_mut() {
            *key = row_json(key.take());
        }
    }
    team
}

/// `GET /team/info?team_id=`: `{"team_id", "team_info", "keys", "team_memberships"}`.
pub(crate) async fn info(cx: &Ctx, call: &ManageCall) -> Answer {
    let q = Query::parse(&call.query);
    let Some(team_id) = q.get("team_id") else {
        return Err(ManageReply::error(
            400,
            kind_for(400),
            &py_dict("message", "Malformed request. No team id passed in."),
            None,
        ));
    };
    let sql = format!("SELECT {WITH_KEYS} FROM {TEAMS} t WHERE team_id = $1");
    let rows = query(&cx.client, &sql, &[&team_id]).await?;
    let Some(row) = rows.first() else {
        let message = py_dict("message", &format!("Team not found, passed team id: {team_id}."));
        return Err(ManageReply::error(404, kind_for(404), &message, None));
    };
    let mut info = match team_json(row.get(0)) {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    let keys = info.remove("keys").unwrap_or(json!([]));
    let memberships = info.remove("team_memberships").unwrap_or(json!([]));
    Ok(json!({"team_id": team_id, "team_info": info, "keys": keys, "team_memberships": memberships}))
}

/// `GET /team/list[?user_id=&organization_id=]`: a list of teams by alias, each with its
/// keys; `user_id` keeps the teams it is a member of (`members_with_roles`).
pub(crate) async fn list(cx: &Ctx, call: &ManageCall) -> Answer {
    let q = Query::parse(&call.query);
    let mut params = Params::default();
    let mut filters = vec!["true".to_string()];
    if let Some(user) = q.get("user_id") {
        let member = params.json(json!([{ "user_id": user }]));
        filters.push(format!("jsonb_typeof(t.members_with_roles) = 'array' AND t.members_with_roles @> {member}"));
    }
    if let Some(org) = q.get("organization_id") {
        filters.push(format!("t.organization_id = {}", params.text(org)));
    }
    let sql = format!(
        "SELECT {WITH_KEYS} FROM {TEAMS} t WHERE {} ORDER BY t.team_alias NULLS LAST, t.team_id",
        filters.join(" AND ")
    );
    let rows = params.query(&cx.client, &sql).await?;
    Ok(Value::Array(rows.iter().map(|r| team_json(r.get(0))).collect()))
}
