//! LiteLLM's REST face of the MCP gateway, for callers without an MCP client:
//! `GET /mcp-rest/tools/list[?server_id=NAME]` and `POST /mcp-rest/tools/call` with
//! `{"server_id", "name", "arguments"}`, answered as LiteLLM answers them.

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{json, Value};

use crate::http::request::Method;
use crate::mcp::methods::{self, Reach, Served};
use crate::mcp::{access, endpoint, names, relay};
use crate::request::Request;
use crate::respond::Reply;
use crate::shard::Shard;

/// What a `/mcp-rest/…` path names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RestOp {
    ListTools,
    CallTool,
}

pub fn rest_op(path: &str) -> Option<RestOp> {
    match path.split_once('?').map_or(path, |(p, _)| p) {
        "/mcp-rest/tools/list" => Some(RestOp::ListTools),
        "/mcp-rest/tools/call" => Some(RestOp::CallTool),
        _ => None,
    }
}

/// The method each operation takes.
pub fn allowed(op: RestOp) -> Method {
    match op {
        RestOp::ListTools => Method::Get,
        RestOp::CallTool => Method::Post,
    }
}

/// The REST calls' own ids, so that their records never meet a session's.
static CALLS: AtomicU64 = AtomicU64::new(0);

pub async fn serve(shard: &Shard, req: &Request<'_>, op: RestOp) -> Reply {
    let caller = match endpoint::caller(shard, req).await {
        Ok(caller) => caller,
        Err(reply) => return reply,
    };
    let settings = shard.hub.routes.load().mcp.clone();
    let query = req.head.path.split_once('?').map_or("", |(_, q)| q);
    let named = match op {
        RestOp::ListTools => query_value(query, "server_id").or_else(|| query_value(query, "mcp_server_name")),
        RestOp::CallTool => None,
    };
    let body: Value = match op {
        RestOp::CallTool => match serde_json::from_slice(req.body) {
            Ok(v @ Value::Object(_)) => v,
            _ => return detail(400, "invalid_request", "the body must be a JSON object"),
        },
        RestOp::ListTools => Value::Null,
    };
    let named = named.or_else(|| body["server_id"].as_str().map(str::to_string));
    let scope = match named.as_deref().map(|n| access::scoped(&settings, n)) {
        Some(Ok(servers)) => Some(servers.into_iter().map(|s| s.name.clone()).collect::<Vec<_>>()),
        Some(Err(unknown)) if op == RestOp::ListTools => {
            let message = format!("Server with id {unknown} not found");
            return Reply::json(
                200,
                json!({"tools": [], "error": "server_not_found", "message": message}).to_string().into_bytes(),
            );
        }
        Some(Err(unknown)) => return detail(404, "server_not_found", &format!("MCP server '{unknown}' was not found")),
        None => None,
    };
    if let Some(scope) = &scope {
        if let Some(server) = settings.servers.iter().find(|s| scope.contains(&s.name) && !access::may_use(&caller, s))
        {
            let message = format!("The key is not allowed to access server {}", server.name);
            return match op {
                RestOp::ListTools => Reply::json(
                    200,
                    json!({"tools": [], "error": "access_denied", "message": message}).to_string().into_bytes(),
                ),
                RestOp::CallTool => detail(403, "access_denied", &message),
            };
        }
    }
    let reach = Reach {
        settings: &settings,
        upstreams: shard.hub.mcp.get().map(|u| &**u),
        caller: &caller,
        servers: access::reachable(&settings, &caller, scope.as_deref()),
        headers: Vec::new(),
    };
    match op {
        RestOp::ListTools => list(&reach).await,
        RestOp::CallTool => call(shard, req, &reach, &caller, &body).await,
    }
}

async fn list(reach: &Reach<'_>) -> Reply {
    let Served::Now(Ok(listed)) = methods::serve(reach, "tools/list", None).await else {
        return detail(500, "server_error", "listing the tools failed");
    };
    let tools: Vec<Value> = listed["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|tool| {
            let (server, bare) = names::split(reach.settings, tool["name"].as_str()?)?;
            let mut tool = tool.clone();
            tool["name"] = Value::String(bare.to_string());
            tool["mcp_info"] = json!({"server_name": server.name, "server_id": server.name, "alias": server.prefix});
            Some(tool)
        })
        .collect();
    Reply::json(
        200,
        json!({"tools": tools, "error": null, "message": "Successfully retrieved tools"}).to_string().into_bytes(),
    )
}

async fn call(
    shard: &Shard,
    req: &Request<'_>,
    reach: &Reach<'_>,
    caller: &crate::keys::Caller,
    body: &Value,
) -> Reply {
    let Some(server) = body["server_id"].as_str().and_then(|_| reach.servers.first()) else {
        return detail(400, "missing_parameter", "server_id is required in request body");
    };
    let Some(name) = body["name"].as_str() else {
        return detail(400, "missing_parameter", "name is required in request body");
    };
    // The tool's own name, or the namespaced one.
    let own = names::split(reach.settings, name).filter(|(s, _)| s.name == server.name).map_or(name, |(_, t)| t);
    let params = json!({"name": names::join(reach.settings, server, own), "arguments": body.get("arguments").cloned().unwrap_or(json!({}))});
    let forwarded = match methods::serve(reach, "tools/call", Some(&params)).await {
        Served::Forwarded(f) => f,
        Served::Now(Err(e)) => return detail(404, "tool_not_found", &e.message),
        Served::Now(Ok(result)) => return Reply::json(200, result.to_string().into_bytes()),
    };
    let place = relay::CallPlace {
        shard,
        path: &req.head.path,
        session: relay::REST_SESSION,
        caller: caller.name(),
        started: std::time::Instant::now(),
        trace: req.trace,
    };
    let id = Value::from(CALLS.fetch_add(1, Ordering::Relaxed));
    match relay::whole(&place, reach, "tools/call", &id, forwarded).await {
        Some(Ok(result)) => Reply::json(200, result.to_string().into_bytes()),
        Some(Err(e)) => detail(502, "server_error", &e.message),
        None => detail(499, "cancelled", "the call was cancelled"),
    }
}

/// FastAPI's error shape, as LiteLLM's REST endpoints answer.
fn detail(status: u16, error: &str, message: &str) -> Reply {
    Reply::json(status, json!({"detail": {"error": error, "message": message}}).to_string().into_bytes())
}

fn query_value(query: &str, key: &str) -> Option<String> {
    query
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v.replace("%2C", ",").replace("%2c", ","))
}
