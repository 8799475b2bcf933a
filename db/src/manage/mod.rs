//! LiteLLM's management API over its own tables: `/key/*`, `/team/*`, `/user/*`,
//! `/spend/logs`. Rows are written as LiteLLM writes them, so that a LiteLLM proxy (and its
//! admin UI) on the same database reads them. Every change is announced on the changes
//! channel (`crate::notify`) when it commits, so that every instance acts on it.

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
}

/// Serves one call.
pub async fn handle(_cx: &Ctx, call: &ManageCall) -> ManageReply {
    ManageReply::error(404, "not_found", &format!("no management route for {} {}", call.method, call.path), None)
}
