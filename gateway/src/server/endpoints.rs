//! Which handler serves which method and path.

use monoio::net::TcpStream;
use switchyard_core::RouteKind;

use crate::errors::openai_error;
use crate::http::request::{Method, RequestHead};
use crate::proxy;
use crate::respond::{self, Reply};
use crate::shard::Shard;

/// What a path names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Endpoint {
    Api(RouteKind),
    Models,
    Liveliness,
    Readiness,
}

fn endpoint(path: &str) -> Option<Endpoint> {
    let path = path.split_once('?').map_or(path, |(p, _)| p);
    let path = path.strip_prefix("/v1").filter(|p| p.starts_with('/')).unwrap_or(path);
    match path {
        "/chat/completions" => Some(Endpoint::Api(RouteKind::ChatCompletions)),
        "/embeddings" => Some(Endpoint::Api(RouteKind::Embeddings)),
        "/models" => Some(Endpoint::Models),
        "/health/liveliness" | "/health/liveness" => Some(Endpoint::Liveliness),
        "/health/readiness" => Some(Endpoint::Readiness),
        _ => None,
    }
}

/// Serves one request; returns whether the connection stays open.
pub async fn dispatch(shard: &Shard, head: &RequestHead, body: &[u8], client: &mut TcpStream) -> bool {
    let keep_alive = head.keep_alive;
    let reply = match (endpoint(&head.path), head.method) {
        (Some(Endpoint::Api(route)), Method::Post) => {
            return proxy::serve(shard, route, body, client, keep_alive).await;
        }
        (Some(Endpoint::Models), Method::Get) => Reply::json(200, shard.routes.load().models_body.clone()),
        (Some(Endpoint::Liveliness), Method::Get) => Reply::json(200, br#""I'm alive!""#.to_vec()),
        (Some(Endpoint::Readiness), Method::Get) => Reply::json(200, br#"{"status":"healthy"}"#.to_vec()),
        (Some(_), _) => {
            let mut r = Reply::json(405, openai_error(405, &format!("method not allowed on {}", head.path), None));
            r.header("allow", if matches!(endpoint(&head.path), Some(Endpoint::Api(_))) { b"POST" } else { b"GET" });
            r
        }
        (None, _) => Reply::json(404, openai_error(404, &format!("no route for {}", head.path), None)),
    };
    respond::send(client, reply, keep_alive).await
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
        assert_eq!(endpoint("/v1x/models"), None);
        assert_eq!(endpoint("/v1"), None);
    }
}
