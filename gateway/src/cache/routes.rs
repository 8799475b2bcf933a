//! The cache as the routes of one config have it (a leaf: the routes name it, it names none of
//! the gateway).

use std::sync::Arc;

use pointwork_config::{CacheSettings, CacheStore, Config, RedisServer};
use pointwork_core::RouteKind;

use crate::upstream::target::Target;

/// The cache as the routes of one config have it.
#[derive(Debug)]
pub(crate) struct CacheRoutes {
    pub(crate) settings: CacheSettings,
    /// The cluster's Redis, for `type: redis`.
    pub(crate) redis: Option<RedisPlace>,
    /// The cluster's `key_prefix` (`pointwork` without a cluster).
    pub(crate) key_prefix: String,
}

impl CacheRoutes {
    /// The cache `config` turns on, if any.
    pub(crate) fn new(config: &Config) -> Option<Arc<CacheRoutes>> {
        let settings = config.cache.clone()?;
        let cluster = config.gateway.cluster.as_ref();
        let redis = match settings.store {
            CacheStore::Redis => Some(RedisPlace::new(cluster?.redis.clone())),
            CacheStore::Local => None,
        };
        let key_prefix =
            cluster.map_or_else(|| pointwork_config::DEFAULT_KEY_PREFIX.to_string(), |c| c.key_prefix.clone());
        Some(Arc::new(CacheRoutes { settings, redis, key_prefix }))
    }

    /// Whether answers of `route` are cached (`supported_call_types`).
    pub(crate) fn serves(&self, route: RouteKind) -> bool {
        let s = &self.settings.surfaces;
        match route {
            RouteKind::ChatCompletions => s.chat,
            RouteKind::Embeddings => s.embeddings,
            RouteKind::Messages => s.messages,
            RouteKind::Responses => s.responses,
        }
    }
}

/// A Redis server and its address, resolved when the routes are built (at start, on a reload:
/// never on a shard, where a slow name lookup would hold every request).
#[derive(Debug)]
pub(crate) struct RedisPlace {
    pub(crate) server: RedisServer,
    /// Where to connect, or why its name did not resolve (every read is then a miss).
    pub(crate) target: Result<Target, String>,
}

impl RedisPlace {
    pub(crate) fn new(server: RedisServer) -> RedisPlace {
        let scheme = if server.tls { "https" } else { "http" };
        let host = if server.host.contains(':') { format!("[{}]", server.host) } else { server.host.clone() };
        let target = Target::parse(&format!("{scheme}://{host}:{}", server.port)).map_err(|e| e.to_string());
        RedisPlace { server, target }
    }
}
