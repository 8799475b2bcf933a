//! The cache as the routes of one config have it (a leaf: the routes name it, it names none of
//! the gateway).

use std::sync::Arc;

use pointwork_config::{CacheSettings, CacheStore, Config, RedisServer};
use pointwork_core::RouteKind;

/// The cache as the routes of one config have it.
#[derive(Debug)]
pub(crate) struct CacheRoutes {
    pub(crate) settings: CacheSettings,
    /// The cluster's Redis, for `type: redis`.
    pub(crate) redis: Option<RedisServer>,
    /// The cluster's `key_prefix` (`pointwork` without a cluster).
    pub(crate) key_prefix: String,
}

impl CacheRoutes {
    /// The cache `config` turns on, if any.
    pub(crate) fn new(config: &Config) -> Option<Arc<CacheRoutes>> {
        let settings = config.cache.clone()?;
        let cluster = config.gateway.cluster.as_ref();
        let redis = match settings.store {
            CacheStore::Redis => Some(cluster?.redis.clone()),
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
