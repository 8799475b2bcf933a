//! LiteLLM's management API over its own tables: `/key/*`, `/team/*`, `/user/*`,
//! `/spend/logs`, `/model/new|update|delete|block|unblock`. Rows are written as LiteLLM writes them, so
//! that a LiteLLM proxy (and its admin UI) on the same database reads them. Every change is
//! announced on the changes channel (`crate::notify`) when it commits, so that every
//! instance acts on it.

mod common;
mod fields;
mod key_edit;
mod key_read;
mod keys;
mod models;
mod spend_logs;
mod sql;
mod teams;
mod users;

use std::rc::Rc;

use tokio_postgres::Client;

/// One management call, as the gateway received it.
#[derive(Clone, Debug)]
pub struct ManageCall {
    /// `GET`, `POST`, `DELETE`.
    pub method: &'static str,
    /// The path without its query (`/key/generate`).
    pub path: String,
    /// The query string without `?` (`key=sk-…`), percent-encoded as sent.
    pub query: String,
    pub body: Vec<u8>,
    pub caller: Caller,
}

/// Who calls: only the proxy's admins reach the management API (the gateway refuses every
/// other key before the call is made).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Caller {
    /// The master key or an admin key (`pointwork.auth.admin_keys`), by name.
    Admin(String),
}

impl Caller {
    /// The name written to `created_by` / `updated_by` / `deleted_by`.
    pub fn name(&self) -> &str {
        match self {
            Caller::Admin(name) => name,
        }
    }
}

/// The answer: a status and a JSON body.
#[derive(Clone, Debug, PartialEq)]
pub struct ManageReply {
    pub status: u16,
    pub body: Vec<u8>,
}

impl ManageReply {
    pub fn json(status: u16, value: &serde_json::Value) -> ManageReply {
        ManageReply { status, body: value.to_string().into_bytes() }
    }

    /// LiteLLM's `ProxyException` shape: `{"error":{"message","type","param","code"}}`.
    pub fn error(status: u16, kind: &str, message: &str, param: Option<&str>) -> ManageReply {
        let value = serde_json::json!({"error": {
            "message": message, "type": kind, "param": param, "code": status.to_string(),
        }});
        ManageReply::json(status, &value)
    }

    /// The thread's queue is full.
    pub fn busy() -> ManageReply {
        ManageReply::error(503, "service_unavailable", "the database thread is busy; try again", None)
    }

    /// The database is out of reach.
    pub fn unavailable(error: &str) -> ManageReply {
        ManageReply::error(503, "no_db_connection", &format!("the database is out of reach: {error}"), None)
    }
}

/// What a management call may use: the connection, and a way to say what changed.
pub struct Ctx {
    pub client: Rc<Client>,
    /// `general_settings.store_model_in_db`: without it `/model/new` & co. answer LiteLLM's
    /// error.
    pub store_model_in_db: bool,
    /// What stored secrets are encrypted with (`LITELLM_SALT_KEY`, else the master key).
    pub secret_key: Option<crate::crypto::SecretKey>,
    /// How new secrets are sealed (`general_settings.encryption_algorithm`).
    pub encryption: crate::crypto::Algorithm,
}

/// Serves one call: routes it, and turns what the route answers into a reply (200 with its
/// JSON, or the error it chose).
pub async fn handle(cx: &Ctx, call: &ManageCall) -> ManageReply {
    let answer = match (call.method, call.path.trim_end_matches('/')) {
        ("POST", "/key/generate") => keys::generate(cx, call).await,
        ("POST", "/key/update") => key_edit::update(cx, call).await,
        ("POST", "/key/delete") => key_read::delete(cx, call).await,
        ("GET", "/key/info") => key_read::info(cx, call).await,
        ("GET", "/key/list") => key_read::list(cx, call).await,
        ("POST", "/key/regenerate") => key_edit::regenerate(cx, call, None).await,
        ("POST", "/key/block") => key_edit::set_blocked(cx, call, true).await,
        ("POST", "/key/unblock") => key_edit::set_blocked(cx, call, false).await,
        ("POST", path) if path.starts_with("/key/") && path.ends_with("/regenerate") => {
            let key = &path["/key/".len()..path.len() - "/regenerate".len()];
            key_edit::regenerate(cx, call, Some(common::decode_segment(key))).await
        }
        ("POST", "/team/new") => teams::new(cx, call).await,
        ("POST", "/team/update") => teams::update(cx, call).await,
        ("POST", "/team/delete") => teams::delete(cx, call).await,
        ("GET", "/team/info") => teams::info(cx, call).await,
        ("GET", "/team/list") => teams::list(cx, call).await,
        ("POST", "/user/new") => users::new(cx, call).await,
        ("GET", "/user/info") => users::info(cx, call).await,
        ("GET", "/spend/logs") => spend_logs::logs(cx, call).await,
        ("POST", "/model/new") => models::new(cx, call).await,
        ("POST", "/model/update") => models::update(cx, call).await,
        ("POST", "/model/delete") => models::delete(cx, call).await,
        ("POST", "/model/block") => models::set_blocked(cx, call, true).await,
        ("POST", "/model/unblock") => models::set_blocked(cx, call, false).await,
        (_, path) if ROUTES.contains(&path) => Err(ManageReply::error(
            405,
            "method_not_allowed",
            &format!("{} is not allowed on {path}", call.method),
            None,
        )),
        _ => Err(ManageReply::error(
            404,
            "not_found_error",
            &format!("no management route for {} {}", call.method, call.path),
            None,
        )),
    };
    match answer {
        Ok(value) => ManageReply::json(200, &value),
        Err(reply) => reply,
    }
}

/// Every path served, for telling a wrong method (405) from a wrong path (404).
const ROUTES: &[&str] = &[
    "/key/generate",
    "/key/update",
    "/key/delete",
    "/key/info",
    "/key/list",
    "/key/regenerate",
    "/key/block",
    "/key/unblock",
    "/team/new",
    "/team/update",
    "/team/delete",
    "/team/info",
    "/team/list",
    "/user/new",
    "/user/info",
    "/spend/logs",
    "/model/new",
    "/model/update",
    "/model/delete",
    "/model/block",
    "/model/unblock",
];
