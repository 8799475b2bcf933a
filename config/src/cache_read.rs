//! Reads the response cache (issue 35) as LiteLLM 1.110.2's proxy reads it
//! (`proxy_server.py`, `caching/caching.py`), and Pointwork's own `pointwork.cache` bounds.
//!
//! Only `litellm_settings.cache: true` turns a cache on. Its type is `cache_params.type`; with
//! none, LiteLLM makes a cache without `cache_params` (or with an empty one) a Redis cache named
//! by the `REDIS_*` variables, and any other an in-memory one (`Cache()`'s default type). A Redis
//! cache uses the cluster's Redis: its server keys are the cluster's (`cluster_read.rs`), so the
//! cache is decided before the cluster and settled after it ([`settle_cache`]).

use std::time::Duration;

use crate::cache::{
    CacheMode, CacheSettings, CacheStore, CacheSurfaces, DEFAULT_LOCAL_TTL, DEFAULT_MAX_BYTES, DEFAULT_MAX_ITEM_BYTES,
    DEFAULT_MAX_MESSAGES, DEFAULT_REDIS_TIMEOUT, DEFAULT_REDIS_TTL,
};
use crate::check::{Checker, Fields, KeyPath};
use crate::cluster::ClusterSettings;
use crate::cluster_read::{is_cache_server_key, ClusterSection, RedisPlaces, ServerKeys};
use crate::duration::DURATION;
use crate::kinds::{self, Kind};
use crate::node::Node;

/// The `litellm_settings` keys read here (the router's reader passes them by).
pub(crate) const LITELLM_SETTINGS_KEYS: [&str; 2] = ["cache", "cache_params"];

/// LiteLLM's cache types (`LiteLLMCacheType`), in the order its error names them.
const LITELLM_TYPES: [&str; 8] =
    ["local", "redis", "redis-semantic", "valkey-semantic", "s3", "qdrant-semantic", "azure-blob", "gcs"];

/// LiteLLM's call type names (`CallTypes` of `supported_call_types`).
const LITELLM_CALL_TYPES: [&str; 14] = [
    "completion",
    "acompletion",
    "embedding",
    "aembedding",
    "atranscription",
    "transcription",
    "atext_completion",
    "text_completion",
    "arerank",
    "rerank",
    "responses",
    "aresponses",
    "anthropic_messages",
    "aanthropic_messages",
];

/// `pointwork.cache`'s keys.
const BOUND_KEYS: [&str; 3] = ["max_bytes", "max_item_bytes", "redis_timeout"];

/// The shortest and the longest `pointwork.cache.redis_timeout`.
const REDIS_TIMEOUT_RANGE: (Duration, Duration) = (Duration::from_millis(1), Duration::from_secs(5));

/// What a `cache_params` key Pointwork's cache does not use is told.
const NOT_READ: &str = "not read: Pointwork's response cache does not use it";

/// What `litellm_settings` says of the cache, before the cluster is resolved.
pub(crate) struct CacheSaid {
    /// `litellm_settings.cache`.
    path: KeyPath,
    store: CacheStore,
    mode: CacheMode,
    ttl: Option<Duration>,
    /// `default_in_memory_ttl`, which replaces `ttl` for a local cache.
    memory_ttl: Option<(Duration, KeyPath)>,
    /// `default_in_redis_ttl`, which replaces `ttl` for a Redis cache.
    redis_ttl: Option<(Duration, KeyPath)>,
    namespace: Option<String>,
    surfaces: CacheSurfaces,
    max_messages: Option<usize>,
}

/// `pointwork.cache`, checked.
pub(crate) struct CacheBounds {
    path: KeyPath,
    max_bytes: u64,
    max_item_bytes: usize,
    redis_timeout: Option<(Duration, KeyPath)>,
}

/// Reads `litellm_settings.cache` and `cache_params`. A Redis cache's server keys go to
/// `redis.cache`, unless nothing names a server (then a warning says the cache is off).
/// `None`: no cache (off, a type Pointwork does not serve, or nothing to cache; a warning or
/// an error says which).
pub(crate) fn read_cache<'n>(
    c: &mut Checker,
    litellm_settings: Option<(&'n Node, KeyPath)>,
    redis: &mut RedisPlaces<'n>,
    cluster: Option<&ClusterSection>,
) -> Option<CacheSaid> {
    let (node, section) = litellm_settings?;
    if !matches!(node, Node::Map(_)) {
        return None;
    }
    let cache_path = section.key("cache");
    let on = match node.get("cache") {
        None | Some(Node::Null) => false,
        Some(value) => c.read(value, &cache_path, &kinds::BOOL).unwrap_or(false),
    };
    let params_path = section.key("cache_params");
    let params = node.get("cache_params").filter(|n| !matches!(n, Node::Null));
    if !on {
        if params.is_some() {
            c.warn(&params_path, "not read: LiteLLM reads cache_params only with litellm_settings.cache: true");
        }
        return None;
    }
    let mut params = match params {
        Some(p) => Some(c.map(p, params_path)?),
        None => None,
    };
    let has_keys = params.as_ref().is_some_and(|p| p.untaken().next().is_some());
    let kind = match params.as_mut().and_then(|p| p.take("type")).filter(|(n, _)| !matches!(n, Node::Null)) {
        Some((node, path)) => Some((c.read(node, &path, &kinds::STRING)?.trim().to_string(), path)),
        None => None,
    };
    let store = match kind.as_ref().map(|(k, path)| (k.as_str(), path)) {
        None if has_keys => {
            let why = "not read: LiteLLM makes a cache_params without a type an in-memory cache (type: local); \
                       set type: redis for a Redis cache";
            warn_server_keys(c, params.as_mut(), why);
            CacheStore::Local
        }
        None | Some(("redis", _)) => CacheStore::Redis,
        Some(("local", _)) => {
            warn_server_keys(c, params.as_mut(), "not read: a local cache is in this instance's memory");
            CacheStore::Local
        }
        Some(("disk", path)) => {
            c.warn(path, "LiteLLM 1.110.2 removed the disk cache (it refuses type: disk): no response cache");
            return None;
        }
        Some((other, path)) if LITELLM_TYPES.contains(&other) => {
            c.warn(path, format!("a {other} cache is not served by Pointwork: no response cache"));
            return None;
        }
        Some((other, path)) => {
            c.error(path, format!("unknown cache type {other:?}; LiteLLM's types: {}", LITELLM_TYPES.join(", ")));
            return None;
        }
    };
    let server = (store == CacheStore::Redis).then(|| ServerKeys::take_cache(params.as_mut(), &cache_path));
    let errors = c.error_count();
    let said = match params.as_mut() {
        Some(p) => read_params(c, p, &cache_path, store),
        None => Some(CacheSaid::new(cache_path.clone(), store)),
    };
    if let Some(p) = &params {
        for (_, _, path) in p.untaken() {
            c.warn(path, NOT_READ);
        }
    }
    if let Some(server) = server {
        let disabled = cluster.is_some_and(ClusterSection::is_disabled);
        let named = server.name_a_host()
            || redis.router.as_ref().is_some_and(ServerKeys::name_a_host)
            || ["REDIS_HOST", "REDIS_URL"].iter().any(|name| c.env.lookup(name).is_some_and(|v| !v.trim().is_empty()));
        if !disabled && !named && server.is_empty() {
            c.warn(
                &cache_path,
                "no Redis server is named (cache_params.host or url, router_settings.redis_host or redis_url, \
                 REDIS_HOST or REDIS_URL): the cache is off",
            );
            return None;
        }
        redis.cache = Some(server);
    }
    said.filter(|_| c.error_count() == errors)
}

/// The server keys of a cache that is not Redis: each is warned with `why`, and taken.
fn warn_server_keys(c: &mut Checker, params: Option<&mut Fields>, why: &str) {
    let Some(params) = params else { return };
    let keys: Vec<&str> = params.untaken().map(|(key, _, _)| key).filter(|key| is_cache_server_key(key)).collect();
    for key in keys {
        if let Some((_, path)) = params.take(key) {
            c.warn(path, why);
        }
    }
}

impl CacheSaid {
    fn new(path: KeyPath, store: CacheStore) -> CacheSaid {
        CacheSaid {
            path,
            store,
            mode: CacheMode::DefaultOn,
            ttl: None,
            memory_ttl: None,
            redis_ttl: None,
            namespace: None,
            surfaces: CacheSurfaces::ALL,
            max_messages: Some(DEFAULT_MAX_MESSAGES),
        }
    }
}

/// The keys of `cache_params` that shape the cache (the server keys are the cluster's). `None`
/// when it caches nothing (a warning says so). The server keys of a local cache are left for
/// the caller's warnings, as are the keys read nowhere.
fn read_params(c: &mut Checker, p: &mut Fields, cache_path: &KeyPath, store: CacheStore) -> Option<CacheSaid> {
    let mut said = CacheSaid::new(cache_path.clone(), store);
    if let Some(mode) = c.optional(p, "mode", &MODE) {
        said.mode = mode;
    }
    said.ttl = c.optional(p, "ttl", &kinds::POSITIVE_SECONDS);
    said.memory_ttl = with_path(c, p, "default_in_memory_ttl", &kinds::POSITIVE_SECONDS);
    said.redis_ttl = with_path(c, p, "default_in_redis_ttl", &kinds::POSITIVE_SECONDS);
    said.namespace = c.optional(p, "namespace", &kinds::STRING).filter(|n| !n.is_empty());
    match p.take("max_messages") {
        None => {}
        Some((Node::Null, _)) => said.max_messages = None,
        Some((node, path)) => said.max_messages = c.read(node, &path, &MAX_MESSAGES).map(Some)?,
    }
    match p.take("supported_call_types") {
        None => Some(said),
        Some((Node::Null, path)) => {
            c.warn(path, "null: nothing is cached (LiteLLM caches no call type): no response cache");
            None
        }
        Some((node, path)) => {
            let names = c.read(node, &path, &kinds::STRING_LIST)?;
            said.surfaces = surfaces(c, &names, &path)?;
            Some(said)
        }
    }
}

/// The surfaces `supported_call_types` names; `None` when none (a warning says so).
fn surfaces(c: &mut Checker, names: &[String], path: &KeyPath) -> Option<CacheSurfaces> {
    let mut surfaces = CacheSurfaces::NONE;
    for (i, name) in names.iter().enumerate() {
        if surfaces.add(name.trim()).is_some() {
            continue;
        }
        if LITELLM_CALL_TYPES.contains(&name.trim()) {
            c.warn(path.index(i), format!("Pointwork does not cache {name} calls"));
        } else {
            let known = LITELLM_CALL_TYPES.join(", ");
            c.warn(path.index(i), format!("not a LiteLLM call type, nothing is cached for it; LiteLLM's: {known}"));
        }
    }
    if surfaces == CacheSurfaces::NONE {
        c.warn(path, "names no call type Pointwork caches: nothing is cached, no response cache");
        return None;
    }
    Some(surfaces)
}

fn with_path<T>(c: &mut Checker, p: &mut Fields, key: &str, kind: &Kind<T>) -> Option<(T, KeyPath)> {
    c.optional(p, key, kind).map(|v| (v, p.path.key(key)))
}

const MODE: Kind<CacheMode> = Kind {
    expected: "one of default_on, default_off",
    parse: |n| match n {
        Node::Str(s) if s.trim() == "default_on" => Some(CacheMode::DefaultOn),
        Node::Str(s) if s.trim() == "default_off" => Some(CacheMode::DefaultOff),
        _ => None,
    },
    secret: false,
};

const MAX_MESSAGES: Kind<usize> = Kind {
    expected: "a non-negative integer, or null for no limit",
    parse: |n| (kinds::NON_NEGATIVE_INT.parse)(n).and_then(|i| usize::try_from(i).ok()),
    secret: false,
};

const MAX_ITEM_BYTES: Kind<usize> =
    Kind { expected: "a positive integer (bytes)", parse: kinds::POSITIVE_USIZE.parse, secret: false };

const MAX_BYTES: Kind<u64> =
    Kind { expected: "a positive integer (bytes)", parse: kinds::POSITIVE_INT.parse, secret: false };

const REDIS_TIMEOUT: Kind<Duration> = Kind {
    expected: r#"a duration from 1ms to 5s, like "50ms""#,
    parse: |n| (DURATION.parse)(n).filter(|d| (REDIS_TIMEOUT_RANGE.0..=REDIS_TIMEOUT_RANGE.1).contains(d)),
    secret: false,
};

/// Reads `pointwork.cache` (strict: an unknown key is refused).
pub(crate) fn read_cache_bounds(c: &mut Checker, mut fields: Fields) -> CacheBounds {
    let max_bytes = c.optional(&mut fields, "max_bytes", &MAX_BYTES);
    let item_path = fields.path.key("max_item_bytes");
    let max_item_bytes = c.optional(&mut fields, "max_item_bytes", &MAX_ITEM_BYTES);
    let redis_timeout = with_path(c, &mut fields, "redis_timeout", &REDIS_TIMEOUT);
    c.refuse_unknown(&fields, &BOUND_KEYS);
    let bound = max_bytes.unwrap_or(DEFAULT_MAX_BYTES);
    let max_item_bytes = match max_item_bytes {
        Some(item) if item as u64 > bound => {
            c.error(item_path, format!("must be at most max_bytes ({bound}), got {item}"));
            item
        }
        Some(item) => item,
        // The default, or the whole cache when it is smaller.
        None => DEFAULT_MAX_ITEM_BYTES.min(usize::try_from(bound).unwrap_or(usize::MAX)),
    };
    CacheBounds { path: fields.path.clone(), max_bytes: bound, max_item_bytes, redis_timeout }
}

/// The cache once the cluster is resolved: a Redis cache without Redis (`pointwork.cluster.enabled:
/// false`, a placeholder host) is kept in memory, with a warning; the TTL is its store's.
pub(crate) fn settle_cache(
    c: &mut Checker,
    said: Option<CacheSaid>,
    bounds: Option<CacheBounds>,
    cluster: Option<&ClusterSettings>,
    cluster_off: Option<&str>,
) -> Option<CacheSettings> {
    let Some(mut said) = said else {
        if let Some(b) = bounds {
            c.warn(&b.path, "not read: there is no response cache (see litellm_settings.cache)");
        }
        return None;
    };
    if said.store == CacheStore::Redis && cluster.is_none() {
        // Without a reason, Redis's keys were refused: the config fails anyway.
        let why = cluster_off?;
        c.warn(&said.path, format!("Redis is off ({why}): the cache is in this instance's memory (type: local)"));
        said.store = CacheStore::Local;
    }
    let (own, other, default, other_key) = match said.store {
        CacheStore::Local => (said.memory_ttl, said.redis_ttl, DEFAULT_LOCAL_TTL, "default_in_memory_ttl"),
        CacheStore::Redis => (said.redis_ttl, said.memory_ttl, DEFAULT_REDIS_TTL, "default_in_redis_ttl"),
    };
    if let Some((_, path)) = other {
        c.warn(path, format!("not read: this cache's store reads {other_key}"));
    }
    let redis_timeout = match (&said.store, bounds.as_ref().and_then(|b| b.redis_timeout.clone())) {
        (CacheStore::Local, Some((_, path))) => {
            c.warn(path, "not read: the cache is in this instance's memory, not in Redis");
            DEFAULT_REDIS_TIMEOUT
        }
        (_, timeout) => timeout.map_or(DEFAULT_REDIS_TIMEOUT, |(t, _)| t),
    };
    Some(CacheSettings {
        ttl: own.map(|(t, _)| t).or(said.ttl).unwrap_or(default),
        store: said.store,
        mode: said.mode,
        namespace: said.namespace,
        surfaces: said.surfaces,
        max_messages: said.max_messages,
        max_bytes: bounds.as_ref().map_or(DEFAULT_MAX_BYTES, |b| b.max_bytes),
        max_item_bytes: bounds.as_ref().map_or(DEFAULT_MAX_ITEM_BYTES, |b| b.max_item_bytes),
        redis_timeout,
    })
}
