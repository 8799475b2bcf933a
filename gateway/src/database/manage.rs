//! LiteLLM's management API (`/key/*`, `/team/*`, `/user/*`, `/spend/logs`, `/model/new`,
//! `/model/update`, `/model/delete`, `/model/block`, `/model/unblock`): for the proxy's admins
//! only (the master key or an admin key), served by the database thread. Without a database,
//! LiteLLM's own answer that it needs one.

use pointwork_db::{manage::Caller as ManageCaller, ManageCall};

use crate::errors::typed_error;
use crate::http::request::Method;
use crate::keys::Caller;
use crate::request::Request;
use crate::respond::Reply;
use crate::shard::Shard;

/// LiteLLM's `CommonProxyErrors.db_not_connected_error`.
pub const DB_NOT_CONNECTED: &str = "DB not connected. This endpoint needs a database; set DATABASE_URL to a \
PostgreSQL connection string (postgresql://...) to enable it. See https://docs.litellm.ai/docs/proxy/virtual_keys";

/// Whether `path` (without its query) is the management API's.
pub fn is_management(path: &str) -> bool {
    ["/key/", "/team/", "/user/"].iter().any(|p| path.starts_with(p))
        || ["/spend/logs", "/model/new", "/model/update", "/model/delete", "/model/block", "/model/unblock"]
            .contains(&path)
}

/// Serves one management call.
pub async fn serve(shard: &Shard, req: &Request<'_>, method: Method) -> Reply {
    let (path, query) = req.head.path.split_once('?').unwrap_or((&req.head.path, ""));
    let admin = match shard.hub.routes.load().keys.admin_caller(req.authorization) {
        Ok(Caller::Master) => "master".to_string(),
        Ok(Caller::Admin(name)) => name.to_string(),
        Ok(Caller::Anyone) => "anyone".to_string(),
        Ok(Caller::Virtual(_)) | Err(_) => return only_admins(path),
    };
    let Some(db) = shard.hub.database.get() else {
        let message = format!("{{'error': '{DB_NOT_CONNECTED}'}}");
        return Reply::json(500, typed_error(500, "internal_server_error", &message, None));
    };
    if let Some(refusal) = refuse_file_model(path, &shard.hub.routes.load(), req.body, db.settings.store_model_in_db) {
        return refusal;
    }
    let method = match method {
        Method::Get | Method::Head => "GET",
        Method::Post => "POST",
        Method::Delete => "DELETE",
        _ => "OTHER",
    };
    let call = ManageCall {
        method,
        path: path.to_string(),
        query: query.to_string(),
        body: req.body.to_vec(),
        caller: ManageCaller::Admin(admin),
    };
    match db.manage(call).await {
        Ok(reply) => Reply::json(reply.status, reply.body),
        Err(_) => Reply::json(503, typed_error(503, "no_db_connection", "the database thread is gone", None)),
    }
}

/// LiteLLM's answer to `/model/update` of a deployment of the config file (no row to change).
const CONFIG_MODEL_UPDATE: &str =
    "{'error': \"Can't edit model. Model in config. Store model in db via `/model/new`. to edit.\"}";
/// And to `/model/block`, `/model/unblock` of one.
const CONFIG_MODEL_BLOCK: &str = "Cannot edit config-based model. Store model in DB via /model/new first.";

/// LiteLLM's refusal to change a deployment of the config file (it has no row), if the call
/// would change one.
fn refuse_file_model(
    path: &str,
    routes: &crate::routes::Routes,
    body: &[u8],
    store_model_in_db: bool,
) -> Option<Reply> {
    let body = serde_json::from_slice::<serde_json::Value>(body).ok()?;
    let is_file_model = |id: Option<&str>| {
        id.is_some_and(|id| routes.model_info.iter().any(|e| e.id == id && e.json["model_info"]["db_model"] == false))
    };
    match path {
        "/model/update" if is_file_model(body["model_info"]["id"].as_str()) => {
            Some(Reply::json(400, typed_error(400, "invalid_request_error", CONFIG_MODEL_UPDATE, None)))
        }
        "/model/block" | "/model/unblock" if store_model_in_db && is_file_model(body["model_id"].as_str()) => {
            Some(Reply::json(400, typed_error(400, "validation_error", CONFIG_MODEL_BLOCK, None)))
        }
        _ => None,
    }
}

/// LiteLLM's refusal of the management API to anyone but the proxy's admins.
fn only_admins(route: &str) -> Reply {
    let message = format!(
        "Authentication Error, Only proxy admin can be used to generate, delete, update info for new keys/users/teams. Route={route}. Your role=unknown. Your user_id=*******"
    );
    Reply::json(401, typed_error(401, "auth_error", &message, None))
}
