//! LiteLLM's cache routes, for an admin: `GET /cache/ping` (is the cache there, and does its
//! Redis answer) and `POST /cache/delete` (`{"keys": [...]}`, each key as `x-litellm-cache-key`
//! names it: `[namespace:]digest`).

use serde_json::{json, Value};

use super::redis::RedisRead;
use crate::errors::openai_error;
use crate::http::request::Method;
use crate::respond::Reply;
use crate::shard::Shard;

/// Which cache route.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CacheOp {
    Ping,
    Delete,
}

impl CacheOp {
    /// The route `path` names (`/cache/ping`, `/cache/delete`), if any.
    pub(crate) fn of(path: &str) -> Option<CacheOp> {
        match path {
            "/cache/ping" => Some(CacheOp::Ping),
            "/cache/delete" => Some(CacheOp::Delete),
            _ => None,
        }
    }

    /// The method it takes, and its name (`allow`).
    pub(crate) fn method(self) -> (Method, &'static str) {
        match self {
            CacheOp::Ping => (Method::Get, "GET, HEAD"),
            CacheOp::Delete => (Method::Post, "POST"),
        }
    }
}

/// Answers `op` (the caller is an admin already).
pub(crate) async fn serve(shard: &Shard, op: CacheOp, body: &[u8]) -> Reply {
    let routes = shard.hub.routes.load_full();
    let Some(cache) = routes.cache.clone() else {
        return Reply::json(503, openai_error(503, "Cache not initialized. litellm.cache is None", None));
    };
    let redis = cache.redis.as_ref().map(|place| super::look::redis_store(shard, place, &cache));
    match op {
        CacheOp::Ping => {
            let Some(store) = redis else {
                return Reply::json(200, json!({"status": "healthy", "cache_type": "local"}).to_string().into_bytes());
            };
            let probe = format!("{}:cache:ping", cache.key_prefix);
            match store.get(&probe).await {
                RedisRead::Unavailable => Reply::json(503, openai_error(503, "Service Unhealthy", None)),
                _ => {
                    let healthy = json!({"status": "healthy", "cache_type": "redis", "ping_response": true});
                    Reply::json(200, healthy.to_string().into_bytes())
                }
            }
        }
        CacheOp::Delete => {
            let keys = match keys(body) {
                Ok(keys) => keys,
                Err(why) => return Reply::json(400, openai_error(400, &why, Some("keys"))),
            };
            for key in keys {
                let stored = format!("{}:cache:{key}", cache.key_prefix);
                match &redis {
                    Some(store) => store.delete(stored),
                    None => shard.hub.cache.local.remove(&stored),
                }
            }
            Reply::json(200, br#"{"status":"success"}"#.to_vec())
        }
    }
}

/// The body's `keys`: a list of non-empty strings.
fn keys(body: &[u8]) -> Result<Vec<String>, String> {
    const EXPECTED: &str = r#"expected a body like {"keys": ["<x-litellm-cache-key>", …]}"#;
    let body: Value = serde_json::from_slice(body).map_err(|_| EXPECTED.to_string())?;
    let Some(Value::Array(keys)) = body.get("keys") else { return Err(EXPECTED.to_string()) };
    keys.iter()
        .map(|k| k.as_str().filter(|k| !k.is_empty()).map(str::to_string).ok_or_else(|| format!("keys: {EXPECTED}")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_routes_and_the_keys_of_a_delete_are_read() {
        assert_eq!(CacheOp::of("/cache/ping"), Some(CacheOp::Ping));
        assert_eq!(CacheOp::of("/cache/delete"), Some(CacheOp::Delete));
        assert_eq!(CacheOp::of("/cache/flushall"), None);
        assert_eq!(keys(br#"{"keys": ["ab", "ns:cd"]}"#), Ok(vec!["ab".to_string(), "ns:cd".to_string()]));
        assert!(keys(br#"{"keys": "ab"}"#).is_err());
        assert!(keys(br#"{"keys": [""]}"#).is_err());
        assert!(keys(b"nope").is_err());
    }
}
