//! Which handler serves which method and path.

use pointwork_core::RouteKind;

use crate::errors::openai_error;
use crate::http::request::Method;
use crate::pipeline;
use crate::request::Request;
use crate::respond::{self, Reply};
use crate::responses;
use crate::server::{admin, count_tokens, health_report};
use crate::shard::Shard;
use crate::tcp_or_tls::ClientConn;

/// What a path names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Endpoint<'a> {
    Api(RouteKind),
    Models,
    Liveliness,
    Readiness,
    /// LiteLLM's `/health`: the deployments' health checks.
    Health,
    Metrics,
    AdminReload,
    /// `/admin/endpoints/{id}/status`: the id as sent (percent-encoded, may hold `/`).
    AdminEndpointStatus(&'a str),
    DryRun,
    /// `/v1/messages/count_tokens`: Anthropic's count, or the gateway's own estimate.
    CountTokens,
    /// `/v1/responses/{id}` and `/v1/responses/{id}/input_items`: the path after `/responses/`.
    StoredResponse(&'a str),
    /// `/model/info`, `/v1/model/info`, `/v2/model/info`: LiteLLM's list of deployments.
    ModelInfo,
    /// LiteLLM's management API: `/key/*`, `/team/*`, `/user/*`, `/spend/logs`.
    Management,
    /// The MCP gateway: `/mcp`, `/mcp/{servers}`, `/{server}/mcp`.
    Mcp(crate::mcp::endpoint::Place<'a>),
    /// `/mcp-rest/tools/list` and `/mcp-rest/tools/call`.
    McpRest(crate::mcp::rest::RestOp),
    /// LiteLLM's `/cache/ping` and `/cache/delete`.
    Cache(crate::cache::admin::CacheOp),
    /// The live view: `/ui`, its assets and `/ui/api/*` (the path after `/ui`).
    Ui(&'a str),
    /// `/admin/deployments/{id}/{action}`: the path after `/admin/deployments/`.
    DeploymentAction(&'a str),
}

fn endpoint(path: &str) -> Option<Endpoint<'_>> {
    let path = path.split_once('?').map_or(path, |(p, _)| p);
    let path = path.strip_prefix("/v1").filter(|p| p.starts_with('/')).unwrap_or(path);
    match path {
        "/chat/completions" => Some(Endpoint::Api(RouteKind::ChatCompletions)),
        "/embeddings" => Some(Endpoint::Api(RouteKind::Embeddings)),
        "/messages" => Some(Endpoint::Api(RouteKind::Messages)),
        "/messages/count_tokens" => Some(Endpoint::CountTokens),
        "/responses" => Some(Endpoint::Api(RouteKind::Responses)),
        "/models" => Some(Endpoint::Models),
        "/health/liveliness" | "/health/liveness" => Some(Endpoint::Liveliness),
        "/health/readiness" => Some(Endpoint::Readiness),
        "/health" => Some(Endpoint::Health),
        "/metrics" => Some(Endpoint::Metrics),
        "/admin/reload" => Some(Endpoint::AdminReload),
        "/route" => Some(Endpoint::DryRun),
        "/model/info" | "/v2/model/info" => Some(Endpoint::ModelInfo),
        _ if path.starts_with("/responses/") => Some(Endpoint::StoredResponse(&path["/responses/".len()..])),
        _ if path.starts_with("/cache/") => crate::cache::admin::CacheOp::of(path).map(Endpoint::Cache),
        _ if path == "/ui" || path.starts_with("/ui/") => Some(Endpoint::Ui(&path["/ui".len()..])),
        _ if path.starts_with("/admin/deployments/") => {
            Some(Endpoint::DeploymentAction(&path["/admin/deployments/".len()..]))
        }
        _ if crate::database::manage::is_management(path) => Some(Endpoint::Management),
        _ if path.ends_with("mcp") || path.contains("/mcp") => crate::mcp::endpoint::place(path)
            .map(Endpoint::Mcp)
            .or_else(|| crate::mcp::rest::rest_op(path).map(Endpoint::McpRest)),
        _ => path
            .strip_prefix("/admin/endpoints/")
            .and_then(|p| p.strip_suffix("/status"))
            .map(Endpoint::AdminEndpointStatus),
    }
}

/// Serves one request; returns whether the connection stays open.
pub async fn dispatch(shard: &Shard, req: Request<'_>, client: &mut ClientConn) -> bool {
    let head = req.head;
    // While draining, every response closes its connection so that clients move elsewhere.
    let keep_alive = head.keep_alive && !shard.hub.is_draining();
    // HEAD is GET without the body: every answer to it, errors included, keeps only its head.
    let method = if head.method == Method::Head { Method::Get } else { head.method };
    let found = endpoint(&head.path);
    let mut reply = match (found, method) {
        (Some(Endpoint::Api(route)), Method::Post) => match admin::authorize_api(shard, &req).await {
            Ok(caller) => return pipeline::serve(shard, route, &head.path, &req, &caller, client, keep_alive).await,
            Err(reply) => reply,
        },
        (Some(e @ Endpoint::CountTokens), Method::Post)
        | (Some(e @ Endpoint::StoredResponse(_)), Method::Get | Method::Delete) => {
            // Boxed, one wait for both: they may ask a provider (or Redis), and most requests
            // are neither.
            Box::pin(asked_of_others(shard, e, method, &req)).await
        }
        (Some(Endpoint::Models), Method::Get) => match admin::authorize_api(shard, &req).await {
            Ok(caller) => {
                admin::models(shard, &caller, req.anthropic.version.is_some() || req.anthropic.api_key.is_some())
            }
            Err(reply) => reply,
        },
        (Some(Endpoint::ModelInfo), Method::Get) => match admin::authorize_api(shard, &req).await {
            Ok(caller) => {
                let query = head.path.split_once('?').map_or("", |(_, q)| q);
                let routes = shard.hub.routes.load();
                crate::model_info::serve(&routes.model_info, &routes.snapshot, &caller, query)
            }
            Err(reply) => reply,
        },
        (Some(Endpoint::Management), Method::Get | Method::Post | Method::Delete) => {
            Box::pin(crate::database::manage::serve(shard, &req, method)).await
        }
        (Some(Endpoint::Health), Method::Get) => {
            let query = head.path.split_once('?').map_or("", |(_, q)| q);
            // Boxed: it may wait for probes, and most requests are not it.
            Box::pin(health_report::serve(shard, &req, query)).await
        }
        (Some(Endpoint::Mcp(place)), _) => {
            // Boxed: it waits for MCP servers, and most requests are not for it.
            return Box::pin(crate::mcp::endpoint::serve(shard, &req, place, method, client, keep_alive)).await;
        }
        (Some(Endpoint::Cache(op)), m) if m == op.method().0 => match admin::authorize(shard, req.authorization) {
            // Boxed: it may wait for Redis, and most requests are not it.
            Ok(_) => Box::pin(crate::cache::admin::serve(shard, op, req.body)).await,
            Err(reply) => reply,
        },
        (Some(Endpoint::Ui(rest)), Method::Get) => {
            // Boxed: most requests are not it.
            Box::pin(crate::ui::serve(shard, &req, rest)).await
        }
        (Some(Endpoint::DeploymentAction(rest)), Method::Post) => match admin::authorize(shard, req.authorization) {
            Ok(caller) => Box::pin(crate::ui::actions::serve(shard, &caller, rest, req.body)).await,
            Err(reply) => reply,
        },
        (Some(Endpoint::McpRest(op)), m) if m == crate::mcp::rest::allowed(op) => {
            Box::pin(crate::mcp::rest::serve(shard, &req, op)).await
        }
        (Some(Endpoint::Liveliness), Method::Get) => Reply::json(200, br#""I'm alive!""#.to_vec()),
        (Some(Endpoint::Readiness), Method::Get) if shard.hub.is_draining() => {
            Reply::json(503, br#"{"status":"draining"}"#.to_vec())
        }
        (Some(Endpoint::Readiness), Method::Get) => readiness(shard),
        (Some(Endpoint::Metrics), Method::Get) if shard.hub.routes.load().keys.metrics_need_key => {
            match admin::authorize(shard, req.authorization) {
                Ok(_) => admin::metrics(shard),
                Err(reply) => reply,
            }
        }
        (Some(Endpoint::Metrics), Method::Get) => admin::metrics(shard),
        (Some(Endpoint::AdminReload), Method::Post) => match admin::authorize(shard, req.authorization) {
            Ok(_) => admin::reload(shard).await,
            Err(reply) => reply,
        },
        (Some(Endpoint::DryRun), Method::Post) => match admin::authorize(shard, req.authorization) {
            Ok(_) => admin::dry_run(shard, &head.path, req.body),
            Err(reply) => reply,
        },
        (Some(Endpoint::AdminEndpointStatus(id)), Method::Post) => match admin::authorize(shard, req.authorization) {
            Ok(_) => admin::set_endpoint_status(shard, id, req.body),
            Err(reply) => reply,
        },
        (Some(e), _) => {
            let mut r = Reply::json(405, openai_error(405, &format!("method not allowed on {}", head.path), None));
            let allowed: &[u8] = if matches!(
                e,
                Endpoint::Api(_)
                    | Endpoint::AdminReload
                    | Endpoint::AdminEndpointStatus(_)
                    | Endpoint::DeploymentAction(_)
                    | Endpoint::DryRun
                    | Endpoint::CountTokens
                    | Endpoint::McpRest(crate::mcp::rest::RestOp::CallTool)
            ) {
                b"POST"
            } else {
                b"GET, HEAD"
            };
            let allowed = if matches!(e, Endpoint::StoredResponse(_)) { &b"GET, HEAD, DELETE"[..] } else { allowed };
            let allowed = if matches!(e, Endpoint::Management) { &b"GET, POST, DELETE"[..] } else { allowed };
            let allowed = if let Endpoint::Cache(op) = e { op.method().1.as_bytes() } else { allowed };
            r.header("allow", allowed);
            r
        }
        (None, _) => Reply::json(404, openai_error(404, &format!("no route for {}", head.path), None)),
    };
    reply.head_only = head.method == Method::Head;
    // The Messages API's errors are Anthropic's shape, the gateway's own included.
    if matches!(found, Some(Endpoint::Api(RouteKind::Messages) | Endpoint::CountTokens)) {
        reply = respond::for_route(RouteKind::Messages, reply);
    }
    respond::send(client, reply, keep_alive).await
}

/// `GET /health/readiness`: healthy, and with a database whether it answers (LiteLLM's `db`
/// field; 503 while it is away, unless `allow_requests_on_db_unavailable`).
fn readiness(shard: &Shard) -> Reply {
    let Some(db) = shard.hub.database.get() else {
        return Reply::json(200, br#"{"status":"healthy","db":"Not connected"}"#.to_vec());
    };
    if db.status.is_connected() {
        return Reply::json(200, br#"{"status":"healthy","db":"connected"}"#.to_vec());
    }
    let status = if db.settings.allow_requests_on_db_unavailable { 200 } else { 503 };
    Reply::json(status, br#"{"status":"unhealthy","db":"disconnected"}"#.to_vec())
}

/// `POST /v1/messages/count_tokens` and the stored responses: answers that may come from a
/// provider.
async fn asked_of_others(shard: &Shard, endpoint: Endpoint<'_>, method: Method, req: &Request<'_>) -> Reply {
    if let Err(reply) = admin::authorize_api(shard, req).await {
        return reply;
    }
    let stored = match endpoint {
        Endpoint::StoredResponse(rest) => responses::endpoints::parse(rest, method == Method::Delete),
        _ => return count_tokens::count_tokens(shard, req).await,
    };
    match stored {
        Some((id, ask)) => responses::endpoints::answer(shard, id, ask).await,
        None => Reply::json(404, openai_error(404, &format!("no route for {}", req.head.path), None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_with_and_without_v1() {
        assert_eq!(endpoint("/v1/chat/completions"), Some(Endpoint::Api(RouteKind::ChatCompletions)));
        assert_eq!(endpoint("/chat/completions?x=1"), Some(Endpoint::Api(RouteKind::ChatCompletions)));
        assert_eq!(endpoint("/v1/embeddings"), Some(Endpoint::Api(RouteKind::Embeddings)));
        assert_eq!(endpoint("/v1/models"), Some(Endpoint::Models));
        assert_eq!(endpoint("/health/readiness"), Some(Endpoint::Readiness));
        assert_eq!(endpoint("/health?model=m"), Some(Endpoint::Health));
        assert_eq!(endpoint("/metrics"), Some(Endpoint::Metrics));
        assert_eq!(endpoint("/admin/reload"), Some(Endpoint::AdminReload));
        assert_eq!(endpoint("/v1/route?seed=3"), Some(Endpoint::DryRun));
        assert_eq!(endpoint("/v1/responses"), Some(Endpoint::Api(RouteKind::Responses)));
        assert_eq!(endpoint("/responses?x=1"), Some(Endpoint::Api(RouteKind::Responses)));
        assert_eq!(endpoint("/v1/responses/resp_1/input_items"), Some(Endpoint::StoredResponse("resp_1/input_items")));
        assert_eq!(endpoint("/admin/endpoints/eu-1/status"), Some(Endpoint::AdminEndpointStatus("eu-1")));
        assert_eq!(endpoint("/admin/endpoints/a/b/status?x=1"), Some(Endpoint::AdminEndpointStatus("a/b")));
        assert_eq!(endpoint("/admin/endpoints//status"), Some(Endpoint::AdminEndpointStatus("")));
        assert_eq!(endpoint("/admin/endpoints/eu-1"), None);
        assert_eq!(endpoint("/admin/endpoints/status"), None);
        assert_eq!(endpoint("/cache/ping"), Some(Endpoint::Cache(crate::cache::admin::CacheOp::Ping)));
        assert_eq!(endpoint("/cache/delete"), Some(Endpoint::Cache(crate::cache::admin::CacheOp::Delete)));
        assert_eq!(endpoint("/cache/flushall"), None);
        assert_eq!(endpoint("/ui"), Some(Endpoint::Ui("")));
        assert_eq!(endpoint("/ui/api/live?since=3"), Some(Endpoint::Ui("/api/live")));
        assert_eq!(endpoint("/uix"), None);
        assert_eq!(endpoint("/admin/deployments/a/block"), Some(Endpoint::DeploymentAction("a/block")));
        assert_eq!(endpoint("/v1x/models"), None);
        assert_eq!(endpoint("/v1"), None);
        assert_eq!(endpoint("/mcp"), Some(Endpoint::Mcp(crate::mcp::endpoint::Place::All)));
        assert_eq!(endpoint("/github/mcp"), Some(Endpoint::Mcp(crate::mcp::endpoint::Place::Servers("github"))));
        assert_eq!(
            endpoint("/mcp-rest/tools/list?server_id=a"),
            Some(Endpoint::McpRest(crate::mcp::rest::RestOp::ListTools))
        );
    }
}
