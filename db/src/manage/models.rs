//! `/model/new`, `/model/update`, `/model/delete` over `LiteLLM_ProxyModelTable`, written as
//! LiteLLM's `model_management_endpoints.py` writes it: every string of `litellm_params`
//! encrypted (`encrypt_value_helper`), `model_info` as given with its `id` = `model_id`. Each
//! change is one statement announcing `models`: every instance reads the stored models again
//! and serves them.

use serde_json::{json, Map, Value};

use super::common::{body_object, detail, http_error, row_json, unprocessable, uuid4, Answer};
use super::fields::NOW;
use super::sql::Params;
use super::{Ctx, ManageCall, ManageReply};
use crate::crypto::SecretKey;
use crate::models::{encrypt_all, LITELLM_PARAM_DEFAULTS, MODELS, MODEL_INFO_DEFAULTS};

/// LiteLLM's answer when `store_model_in_db` is off.
pub(crate) const STORE_MODEL_IN_DB_OFF: &str = "Set `'STORE_MODEL_IN_DB='True'` in your env to enable this feature.";

fn store_model_in_db_off() -> ManageReply {
    http_error(500, STORE_MODEL_IN_DB_OFF)
}

/// A plain exception in LiteLLM's model routes: 400 with its text (`proxy_exception_for`).
fn plain_error(message: &str) -> ManageReply {
    ManageReply::error(400, "invalid_request_error", message, None)
}

fn secret_key(cx: &Ctx) -> Result<&SecretKey, ManageReply> {
    cx.secret_key.as_ref().ok_or_else(|| {
        ManageReply::error(
            500,
            "internal_server_error",
            "no key to encrypt the model's secrets with: set general_settings.master_key or LITELLM_SALT_KEY",
            None,
        )
    })
}

/// FastAPI's 422 for a field that is missing or not an object/string, at `loc`.
fn invalid(loc: &[&str], kind: &str, msg: &str, input: Value) -> ManageReply {
    unprocessable(vec![detail(kind, loc, msg, input)])
}

/// An object field of the body (absent or null: `None`).
fn object<'b>(body: &'b Map<String, Value>, key: &str) -> Result<Option<&'b Map<String, Value>>, ManageReply> {
    match body.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(map)) => Ok(Some(map)),
        Some(other) => Err(invalid(
            &["body", key],
            "model_attributes_type",
            "Input should be a valid dictionary or object to extract fields from",
            other.clone(),
        )),
    }
}

fn string<'b>(body: &'b Map<String, Value>, key: &str, loc: &[&str]) -> Result<Option<&'b str>, ManageReply> {
    match body.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(invalid(loc, "string_type", "Input should be a valid string", other.clone())),
    }
}

/// The params without nulls (LiteLLM's `model_dump(exclude_none=True)`).
fn without_nulls(map: &Map<String, Value>) -> Map<String, Value> {
    map.iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// `POST /model/new`: `{"model_name", "litellm_params": {"model", …}, "model_info"?}`. The
/// row holds what LiteLLM's `add_model_to_db` writes: the params and `model_info` with the
/// defaults pydantic fills in, `model_info.id` a new UUID when not given.
pub(crate) async fn new(cx: &Ctx, call: &ManageCall) -> Answer {
    let body = body_object(&call.body)?;
    let model_name = string(&body, "model_name", &["body", "model_name"])?;
    let params = object(&body, "litellm_params")?;
    let mut missing = Vec::new();
    if model_name.is_none() {
        missing.push(detail("missing", &["body", "model_name"], "Field required", Value::Object(body.clone())));
    }
    match params {
        None => {
            missing.push(detail("missing", &["body", "litellm_params"], "Field required", Value::Object(body.clone())))
        }
        Some(p) => {
            if string(p, "model", &["body", "litellm_params", "model"])?.is_none() {
                let input = Value::Object(p.clone());
                missing.push(detail("missing", &["body", "litellm_params", "model"], "Field required", input));
            }
        }
    }
    if !missing.is_empty() {
        return Err(unprocessable(missing));
    }
    // Both are there: a missing one was a 422 above.
    let (Some(model_name), Some(params)) = (model_name, params) else { return Err(unprocessable(missing)) };
    let mut model_info = object(&body, "model_info")?.map(without_nulls).unwrap_or_default();
    if !cx.store_model_in_db {
        return Err(store_model_in_db_off());
    }
    let key = secret_key(cx)?;
    // `ModelInfo.__init__`: an integer id is its text, none a new UUID.
    let model_id = match model_info.get("id") {
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => n.to_string(),
        _ => match string(&model_info, "id", &["body", "model_info", "id"])? {
            Some(id) => id.to_string(),
            None => uuid4()?,
        },
    };
    model_info.insert("id".into(), json!(model_id));
    for (name, default) in MODEL_INFO_DEFAULTS {
        model_info.entry(*name).or_insert(json!(default));
    }
    let mut params = without_nulls(params);
    for (name, default) in LITELLM_PARAM_DEFAULTS {
        params.entry(*name).or_insert(json!(default));
    }
    let sealed = encrypt_all(&params, key, cx.encryption).map_err(|e| plain_error(&e))?;
    let mut p = Params::default();
    let by = p.text(call.caller.name());
    // `Deployment.blocked`, written only when given (the column came with a later migration).
    let (blocked_column, blocked) = match body.get("blocked").and_then(Value::as_bool) {
        Some(b) => (", blocked", format!(", {}", p.bool(b))),
        None => ("", String::new()),
    };
    let sql = format!(
        "WITH m AS (INSERT INTO {MODELS} (model_id, model_name, litellm_params, model_info, created_by, updated_by, \
         created_at, updated_at{blocked_column}) VALUES ({}, {}, {}, {}, {by}, {by}, {NOW}, {NOW}{blocked}) \
         RETURNING *) SELECT to_jsonb(m), {} FROM m",
        p.text(model_id),
        p.text(model_name),
        p.json(Value::Object(sealed)),
        p.json(Value::Object(model_info)),
        p.notify_models(),
    );
    let rows = p.query(&cx.client, &sql).await?;
    let row = rows
        .first()
        .map(|r| r.get::<_, Value>(0))
        .ok_or_else(|| http_error(500, "Failed to add model to db. Check your server logs for more details."))?;
    Ok(row_json(row))
}

/// `POST /model/update`: `{"model_info": {"id"}, "model_name"?, "litellm_params"?}` — the
/// params given (not null) replace the stored ones, encrypted; the rest stay.
pub(crate) async fn update(cx: &Ctx, call: &ManageCall) -> Answer {
    let body = body_object(&call.body)?;
    let model_name = string(&body, "model_name", &["body", "model_name"])?;
    let params = object(&body, "litellm_params")?;
    let Some(model_info) = object(&body, "model_info")? else { return Err(plain_error("model_info not provided")) };
    let Some(model_id) = string(model_info, "id", &["body", "model_info", "id"])? else {
        return Err(plain_error("model_info.id not provided"));
    };
    let mut p = Params::default();
    let id = p.text(model_id);
    let found = p.query(&cx.client, &format!("SELECT 1 FROM {MODELS} WHERE model_id = {id}")).await?;
    if found.is_empty() {
        return Err(plain_error("model not found"));
    }
    if !cx.store_model_in_db {
        return Err(store_model_in_db_off());
    }
    let Some(params) = params else { return Err(plain_error("litellm_params not provided")) };
    let key = secret_key(cx)?;
    let sealed = encrypt_all(&without_nulls(params), key, cx.encryption).map_err(|e| plain_error(&e))?;
    let info = without_nulls(model_info);
    let sql = format!(
        "WITH m AS (UPDATE {MODELS} SET litellm_params = litellm_params || {}, \
         model_name = COALESCE({}, model_name), model_info = COALESCE(model_info, '{{}}'::jsonb) || {}, \
         updated_by = {}, updated_at = {NOW} WHERE model_id = {id} RETURNING *) SELECT to_jsonb(m), {} FROM m",
        p.json(Value::Object(sealed)),
        p.opt_text(model_name.map(str::to_string)),
        p.json(Value::Object(info)),
        p.text(call.caller.name()),
        p.notify_models(),
    );
    let rows = p.query(&cx.client, &sql).await?;
    let row = rows.first().map(|r| r.get::<_, Value>(0)).ok_or_else(|| plain_error("model not found"))?;
    Ok(row_json(row))
}

/// `POST /model/delete`: `{"id": "<model_id>"}`.
pub(crate) async fn delete(cx: &Ctx, call: &ManageCall) -> Answer {
    let body = body_object(&call.body)?;
    let Some(model_id) = string(&body, "id", &["body", "id"])? else {
        return Err(invalid(&["body", "id"], "missing", "Field required", Value::Object(body.clone())));
    };
    let not_found = || http_error(400, &format!("Model with id={model_id} not found in db"));
    let mut p = Params::default();
    let id = p.text(model_id);
    if !cx.store_model_in_db {
        let found = p.query(&cx.client, &format!("SELECT 1 FROM {MODELS} WHERE model_id = {id}")).await?;
        return Err(if found.is_empty() { not_found() } else { store_model_in_db_off() });
    }
    let sql = format!(
        "WITH m AS (DELETE FROM {MODELS} WHERE model_id = {id} RETURNING model_id) SELECT model_id, {} FROM m",
        p.notify_models()
    );
    let rows = p.query(&cx.client, &sql).await?;
    if rows.is_empty() {
        return Err(not_found());
    }
    Ok(json!({ "message": format!("Model: {model_id} deleted successfully") }))
}

/// `POST /model/block`, `/model/unblock`: `{"model_id"}` — the row's `blocked` column, which
/// every instance reads as `model_info.blocked` (the deployment serves no request).
pub(crate) async fn set_blocked(cx: &Ctx, call: &ManageCall, blocked: bool) -> Answer {
    let body = body_object(&call.body)?;
    let Some(model_id) = string(&body, "model_id", &["body", "model_id"])? else {
        return Err(invalid(&["body", "model_id"], "missing", "Field required", Value::Object(body.clone())));
    };
    if !cx.store_model_in_db {
        let message = "Model updates only supported for DB-stored models";
        return Err(ManageReply::error(400, "validation_error", message, None));
    }
    let mut p = Params::default();
    let sql = format!(
        "WITH m AS (UPDATE {MODELS} SET blocked = {}, updated_by = {}, updated_at = {NOW} WHERE model_id = {} \
         RETURNING *) SELECT to_jsonb(m), {} FROM m",
        p.bool(blocked),
        p.text(call.caller.name()),
        p.text(model_id),
        p.notify_models(),
    );
    let rows = p.query(&cx.client, &sql).await?;
    match rows.first() {
        Some(row) => Ok(row_json(row.get(0))),
        None => Err(ManageReply::error(404, "not_found_error", &format!("Model {model_id} not found on proxy."), None)),
    }
}
