//! `/mcp` over Streamable HTTP: `POST` carries the client's JSON-RPC messages (one or a
//! batch), `DELETE` ends its session, `GET` opens the session's stream of what the gateway
//! pushes (the lists changed by a reload). The
//! paths `/mcp/a,b` and `/a/mcp`, or the header `x-mcp-servers: a,b`, narrow a session to
//! those servers. The key comes in `x-litellm-api-key` (LiteLLM's, for clients whose
//! `Authorization` belongs to someone else) or `Authorization`.

use serde_json::{json, Value};

use crate::http::request::Method;
use crate::keys::Caller;
use crate::mcp::methods::{self, Reach, Served};
use crate::mcp::rpc::{self, Message, RpcError};
use crate::mcp::{access, headers, relay};
use crate::request::Request;
use crate::respond::{self, Reply};
use crate::shard::Shard;
use crate::tcp_or_tls::ClientConn;

/// The protocol versions the gateway speaks, newest first.
pub const PROTOCOL_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
pub const SESSION_HEADER: &str = "mcp-session-id";

/// The servers a path names: `/mcp` (every server), `/mcp/a,b` or `/a/mcp`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place<'a> {
    All,
    Servers(&'a str),
}

/// The MCP place `path` names (after any `/v1`), if it is one.
pub fn place(path: &str) -> Option<Place<'_>> {
    let path = path.trim_end_matches('/');
    if path == "/mcp" {
        return Some(Place::All);
    }
    if let Some(servers) = path.strip_prefix("/mcp/").filter(|s| !s.is_empty() && !s.contains('/')) {
        return Some(Place::Servers(servers));
    }
    path.strip_prefix('/')
        .and_then(|p| p.strip_suffix("/mcp"))
        .filter(|s| !s.is_empty() && !s.contains('/') && *s != "mcp")
        .map(Place::Servers)
}

/// Serves one request to an MCP place; returns whether the connection stays open.
pub async fn serve(
    shard: &Shard,
    req: &Request<'_>,
    place: Place<'_>,
    method: Method,
    client: &mut ClientConn,
    keep_alive: bool,
) -> bool {
    let reply = match method {
        Method::Post | Method::Delete | Method::Get => match caller(shard, req).await {
            Ok(caller) if method == Method::Delete => delete(shard, req, &caller),
            Ok(caller) if method == Method::Get => match stream(shard, req, &caller) {
                Ok(pushed) => {
                    crate::mcp::pushed::serve(pushed, client).await;
                    return false;
                }
                Err(reply) => reply,
            },
            Ok(caller) => return Box::pin(post(shard, req, place, &caller, client, keep_alive)).await,
            Err(reply) => reply,
        },
        _ => {
            let mut r = Reply::json(405, rpc::error_body(rpc::REFUSED, "Method Not Allowed: use POST, GET or DELETE"));
            r.header("allow", b"GET, POST, DELETE");
            r
        }
    };
    respond::send(client, reply, keep_alive).await
}

/// The caller, from `x-litellm-api-key` (with or without `Bearer `) or `Authorization`; the
/// refusal in JSON-RPC's shape.
pub(crate) async fn caller(shard: &Shard, req: &Request<'_>) -> Result<Caller, Reply> {
    let litellm_key = headers::find(req.raw_head, "x-litellm-api-key");
    let outcome = match litellm_key {
        Some(key) => {
            let key = key.strip_prefix(b"Bearer ").unwrap_or(key);
            crate::server::admin::authorize_key(shard, None, Some(key)).await
        }
        None => crate::server::admin::authorize_key(shard, req.authorization, req.anthropic.api_key).await,
    };
    outcome.map_err(|refusal| {
        let message = serde_json::from_slice::<Value>(&refusal.body)
            .ok()
            .and_then(|v| v["error"]["message"].as_str().map(str::to_string))
            .unwrap_or_else(|| "Authentication Error".into());
        Reply::json(refusal.status, rpc::error_body(rpc::REFUSED, &message))
    })
}

fn owner(caller: &Caller) -> Option<String> {
    match caller {
        Caller::Virtual(k) => Some(format!("key:{}", k.digest_hex())),
        other => other.name().map(str::to_string),
    }
}

/// `GET /mcp`: the session's stream of what the gateway pushes, once its session is known.
fn stream(
    shard: &Shard,
    req: &Request<'_>,
    caller: &Caller,
) -> Result<futures_channel::mpsc::UnboundedReceiver<crate::mcp::pushed::Pushed>, Reply> {
    let Some(id) = headers::find_str(req.raw_head, SESSION_HEADER) else {
        return Err(Reply::json(400, rpc::error_body(rpc::REFUSED, "Bad Request: Mcp-Session-Id header is required")));
    };
    match shard.hub.mcp_clients.sessions.resume(id, owner(caller).as_deref()) {
        Some(_) => Ok(shard.hub.mcp_clients.listen()),
        None => Err(Reply::json(404, rpc::error_body(rpc::REFUSED, "Session not found: initialize a new one"))),
    }
}

fn delete(shard: &Shard, req: &Request<'_>, caller: &Caller) -> Reply {
    let Some(id) = headers::find_str(req.raw_head, SESSION_HEADER) else {
        return Reply::json(400, rpc::error_body(rpc::REFUSED, "Bad Request: Mcp-Session-Id header is required"));
    };
    match shard.hub.mcp_clients.sessions.close(id, owner(caller).as_deref()) {
        true => Reply::json(200, Vec::new()),
        false => Reply::json(404, rpc::error_body(rpc::REFUSED, "Session not found")),
    }
}

async fn post(
    shard: &Shard,
    req: &Request<'_>,
    place: Place<'_>,
    caller: &Caller,
    client: &mut ClientConn,
    keep_alive: bool,
) -> bool {
    let (messages, batch) = match rpc::parse(req.body) {
        Ok(parsed) => parsed,
        Err(body) => return respond::send(client, Reply::json(400, body), keep_alive).await,
    };
    // One message that is not JSON-RPC is refused like a body that is not JSON (in a batch,
    // its error is one of the batch's answers).
    if let (false, [Err(invalid)]) = (batch, messages.as_slice()) {
        let reply = Reply::json(400, invalid.to_string().into_bytes());
        return respond::send(client, reply, keep_alive).await;
    }
    let settings = shard.hub.routes.load().mcp.clone();
    let owner = owner(caller);
    let session_id = headers::find_str(req.raw_head, SESSION_HEADER);
    let initialize = messages.iter().find_map(|m| match m {
        Ok(Message::Request { id, method, params }) if method == "initialize" => Some((id, params)),
        _ => None,
    });
    if let Some((id, params)) = initialize {
        let reply = match scope(&settings, req, place) {
            Ok(scope) => open(shard, id, params.as_ref(), owner, scope),
            Err(reply) => reply,
        };
        return respond::send(client, reply, keep_alive).await;
    }
    let session = match session_id.map(|id| (id, shard.hub.mcp_clients.sessions.resume(id, owner.as_deref()))) {
        Some((id, Some(session))) => (id.to_string(), session),
        Some((_, None)) => {
            let reply = Reply::json(404, rpc::error_body(rpc::REFUSED, "Session not found: initialize a new one"));
            return respond::send(client, reply, keep_alive).await;
        }
        None => {
            let reply = match messages.as_slice() {
                // A newer client first asks whether the gateway speaks the session-less
                // protocol; "no such method" sends it to `initialize`.
                [Ok(Message::Request { id, method, .. })] if method == "server/discover" => {
                    let body = rpc::response(id, Err(RpcError::method_not_found(method)));
                    Reply::json(200, body.to_string().into_bytes())
                }
                _ => Reply::json(400, rpc::error_body(rpc::REFUSED, "Bad Request: Mcp-Session-Id header is required")),
            };
            return respond::send(client, reply, keep_alive).await;
        }
    };
    let reach = Reach {
        settings: &settings,
        upstreams: shard.hub.mcp.get().map(|u| &**u),
        caller,
        servers: access::reachable(&settings, caller, session.1.scope.as_deref()),
        headers: if settings.servers.iter().any(|s| !s.forwarded_headers.is_empty()) {
            passable_headers(req.raw_head)
        } else {
            Vec::new()
        },
    };
    let call = relay::CallPlace {
        shard,
        path: &req.head.path,
        session: &session.0,
        caller: caller.name(),
        started: std::time::Instant::now(),
        trace: req.trace,
    };
    let streams =
        headers::find(req.raw_head, "accept").is_some_and(|a| memchr::memmem::find(a, b"text/event-stream").is_some());
    let mut responses = Vec::new();
    for message in messages {
        let (id, method, params) = match message {
            Err(invalid) => {
                responses.push(invalid);
                continue;
            }
            Ok(Message::Response) => continue,
            Ok(Message::Notification { method, params }) => {
                notified(shard, &session.0, &method, params.as_ref());
                continue;
            }
            Ok(Message::Request { id, method, params }) => (id, method, params),
        };
        // OpenTelemetry's MCP conventions carry the caller's trace in `params._meta`.
        let meta = shard.export.as_ref().and_then(|_| crate::export::mcp_record::in_meta(params.as_ref()));
        // Each request of a batch is timed from its own start.
        let call = relay::CallPlace { trace: meta.unwrap_or(call.trace), started: std::time::Instant::now(), ..call };
        match methods::serve(&reach, &method, params.as_ref()).await {
            Served::Now(outcome) => responses.push(rpc::response(&id, outcome)),
            Served::Forwarded(forwarded) if streams && !batch => {
                return relay::stream(&call, &reach, &method, id, forwarded, client, keep_alive).await;
            }
            Served::Forwarded(forwarded) => {
                if let Some(outcome) = relay::whole(&call, &reach, &method, &id, forwarded).await {
                    responses.push(rpc::response(&id, outcome));
                }
            }
        }
    }
    let reply = match (responses.len(), batch) {
        (0, _) => Reply::json(202, Vec::new()),
        (_, true) => Reply::json(200, Value::Array(responses).to_string().into_bytes()),
        (_, false) => Reply::json(200, responses.swap_remove(0).to_string().into_bytes()),
    };
    respond::send(client, reply, keep_alive).await
}

/// The caller's headers a server's `extra_headers` may pass on: all but the one that carried
/// the caller's key (`x-litellm-api-key` when sent, else `Authorization` and `x-api-key`).
fn passable_headers(head: &[u8]) -> Vec<(String, String)> {
    let key_headers: &[&str] = match headers::find(head, "x-litellm-api-key") {
        Some(_) => &["x-litellm-api-key"],
        None => &["authorization", "x-api-key"],
    };
    let mut all = headers::all(head);
    all.retain(|(name, _)| !key_headers.contains(&name.as_str()));
    all
}

/// The servers a new session is narrowed to: the path's, else `x-mcp-servers`'s; a name that
/// is no server is a 404.
fn scope(
    settings: &pointwork_config::McpSettings,
    req: &Request<'_>,
    place: Place<'_>,
) -> Result<Option<Vec<String>>, Reply> {
    let named = match place {
        Place::Servers(names) => Some(names),
        Place::All => headers::find_str(req.raw_head, "x-mcp-servers"),
    };
    let Some(named) = named else { return Ok(None) };
    let named = percent_decoded(named);
    match access::scoped(settings, &named) {
        Ok(servers) => Ok(Some(servers.into_iter().map(|s| s.name.clone()).collect())),
        Err(unknown) => {
            Err(Reply::json(404, rpc::error_body(rpc::REFUSED, &format!("no MCP server is named {unknown}"))))
        }
    }
}

fn percent_decoded(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1).copied().and_then(hex), bytes.get(i + 2).copied().and_then(hex)) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `initialize`: a new session, the version both speak, what the gateway offers.
fn open(shard: &Shard, id: &Value, params: Option<&Value>, owner: Option<String>, scope: Option<Vec<String>>) -> Reply {
    let asked = params.and_then(|p| p["protocolVersion"].as_str());
    let version = asked.filter(|v| PROTOCOL_VERSIONS.contains(v)).unwrap_or(PROTOCOL_VERSIONS[0]);
    let client = params.and_then(|p| p["clientInfo"]["name"].as_str()).unwrap_or("").to_string();
    let session = shard.hub.mcp_clients.sessions.open(version.to_string(), owner, scope, client);
    let result = json!({
        "protocolVersion": version,
        "capabilities": {
            "tools": {"listChanged": true},
            "prompts": {"listChanged": true},
            "resources": {"subscribe": false, "listChanged": true},
            "completions": {},
            "logging": {},
        },
        "serverInfo": {"name": "pointwork", "version": env!("CARGO_PKG_VERSION")},
        "instructions": instructions(&shard.hub.routes.load().mcp),
    });
    let mut reply = Reply::json(200, rpc::response(id, Ok(result)).to_string().into_bytes());
    reply.header(SESSION_HEADER, session.as_bytes());
    reply
}

/// One line per server: how its tools are named, and what it is for.
fn instructions(settings: &pointwork_config::McpSettings) -> String {
    let mut out = format!(
        "Tools, prompts and resources of {} MCP servers, each named SERVER{}NAME:",
        settings.servers.len(),
        settings.separator
    );
    for s in &settings.servers {
        out.push_str(&format!("\n- {}", s.prefix));
        if let Some(d) = &s.description {
            out.push_str(&format!(": {d}"));
        }
    }
    out
}

/// A client's notification: `notifications/cancelled` ends the call it names.
fn notified(shard: &Shard, session: &str, method: &str, params: Option<&Value>) {
    if method != "notifications/cancelled" {
        return;
    }
    if let Some(request) = params.and_then(|p| p.get("requestId")) {
        shard.hub.mcp_clients.cancel(session, request);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places() {
        assert_eq!(place("/mcp"), Some(Place::All));
        assert_eq!(place("/mcp/"), Some(Place::All));
        assert_eq!(place("/mcp/github"), Some(Place::Servers("github")));
        assert_eq!(place("/mcp/a,b"), Some(Place::Servers("a,b")));
        assert_eq!(place("/github/mcp"), Some(Place::Servers("github")));
        assert_eq!(place("/mcp/mcp"), Some(Place::Servers("mcp")));
        assert_eq!(place("/a/b/mcp"), None);
        assert_eq!(place("/mcpx"), None);
        assert_eq!(place("/chat/completions"), None);
        assert_eq!(percent_decoded("a%2Cb"), "a,b");
    }

    #[test]
    fn the_callers_key_is_never_a_header_to_pass_on() {
        let names = |head: &[u8]| passable_headers(head).into_iter().map(|(n, _)| n).collect::<Vec<_>>();
        let with_litellm_key = b"POST /mcp HTTP/1.1\r\nx-litellm-api-key: Bearer sk-1\r\nAuthorization: Bearer user-token\r\nx-team: a\r\n\r\n";
        assert_eq!(names(with_litellm_key), ["authorization", "x-team"]);
        let with_authorization =
            b"POST /mcp HTTP/1.1\r\nAuthorization: Bearer sk-1\r\nX-Api-Key: sk-1\r\nx-team: a\r\n\r\n";
        assert_eq!(names(with_authorization), ["x-team"]);
    }
}
