//! The response cache (issue 35): LiteLLM's `litellm_settings.cache: true` with its
//! `cache_params`, and Pointwork's own bounds under `pointwork.cache`. Reading them is
//! `cache_read.rs`; this file holds the types.

use std::time::Duration;

/// LiteLLM's in-memory cache's default time to live (`InMemoryCache`'s 600 s).
pub const DEFAULT_LOCAL_TTL: Duration = Duration::from_secs(600);
/// LiteLLM's Redis cache's default time to live (`BaseCache`'s 60 s).
pub const DEFAULT_REDIS_TTL: Duration = Duration::from_secs(60);
/// LiteLLM's `max_messages` when not set.
pub const DEFAULT_MAX_MESSAGES: usize = 4;
/// `pointwork.cache.max_bytes` when not set: the in-memory cache's bound.
pub const DEFAULT_MAX_BYTES: u64 = 256 * 1024 * 1024;
/// `pointwork.cache.max_item_bytes` when not set (LiteLLM's 1024 KB per item).
pub const DEFAULT_MAX_ITEM_BYTES: usize = 1024 * 1024;
/// `pointwork.cache.redis_timeout` when not set: the longest a request waits for Redis.
pub const DEFAULT_REDIS_TIMEOUT: Duration = Duration::from_millis(50);

/// The response cache, when `litellm_settings.cache` is true and its type is one Pointwork
/// serves (`None` in [`Config`](crate::Config) otherwise).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheSettings {
    pub store: CacheStore,
    /// `cache_params.mode`: `default_on` caches every request of a supported surface;
    /// `default_off` only those that ask with `cache: {"use-cache": true}`.
    pub mode: CacheMode,
    /// `cache_params.default_in_memory_ttl` / `default_in_redis_ttl` for its store (which
    /// replace `ttl`, as in LiteLLM), else `ttl`, else [`DEFAULT_LOCAL_TTL`] /
    /// [`DEFAULT_REDIS_TTL`]: how long an entry lives unless the request says otherwise.
    pub ttl: Duration,
    /// `cache_params.namespace`: every key is prefixed with it (a request's own namespace
    /// replaces it).
    pub namespace: Option<String>,
    /// `cache_params.supported_call_types`, as the surfaces they name.
    pub surfaces: CacheSurfaces,
    /// `cache_params.max_messages` (default 4, `null` = no limit): a request with more
    /// messages (or Responses input items) is neither read nor stored.
    pub max_messages: Option<usize>,
    /// `pointwork.cache.max_bytes`: the in-memory cache's bound (least recently used entries
    /// go first).
    pub max_bytes: u64,
    /// `pointwork.cache.max_item_bytes`: a larger answer is not stored.
    pub max_item_bytes: usize,
    /// `pointwork.cache.redis_timeout`: a Redis read or write that takes longer is a miss.
    pub redis_timeout: Duration,
}

/// Where entries are kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheStore {
    /// `type: local` (or a `cache_params` without a type, LiteLLM's default; or a Redis cache with
    /// Redis off): in this instance's memory, shared by its shards.
    Local,
    /// `type: redis` (or `cache: true` with no `cache_params`): in the cluster's Redis
    /// ([`ClusterSettings`](crate::ClusterSettings)`.redis`, which `cache_params`' server keys
    /// name when `router_settings` does not), shared by every instance.
    /// Keys are `{key_prefix}:cache:[{namespace}:]{sha256 hex}`.
    Redis,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CacheMode {
    #[default]
    DefaultOn,
    DefaultOff,
}

/// Which APIs are cached (LiteLLM's `supported_call_types` names, e.g. `acompletion`,
/// `aembedding`, `anthropic_messages`, `aresponses`, and their sync spellings).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheSurfaces {
    pub chat: bool,
    pub embeddings: bool,
    pub messages: bool,
    pub responses: bool,
}

impl CacheSurfaces {
    pub const ALL: CacheSurfaces = CacheSurfaces { chat: true, embeddings: true, messages: true, responses: true };
    pub const NONE: CacheSurfaces = CacheSurfaces { chat: false, embeddings: false, messages: false, responses: false };

    /// The surface a LiteLLM call type name turns on, or `None` when it names one Pointwork
    /// does not cache (`transcription`, `rerank`, `text_completion`, …) or none at all.
    pub fn add(&mut self, call_type: &str) -> Option<()> {
        match call_type {
            "completion" | "acompletion" => self.chat = true,
            "embedding" | "aembedding" => self.embeddings = true,
            "anthropic_messages" | "aanthropic_messages" => self.messages = true,
            "responses" | "aresponses" => self.responses = true,
            _ => return None,
        }
        Some(())
    }
}

impl Default for CacheSettings {
    fn default() -> Self {
        CacheSettings {
            store: CacheStore::Local,
            mode: CacheMode::DefaultOn,
            ttl: DEFAULT_LOCAL_TTL,
            namespace: None,
            surfaces: CacheSurfaces::ALL,
            max_messages: Some(DEFAULT_MAX_MESSAGES),
            max_bytes: DEFAULT_MAX_BYTES,
            max_item_bytes: DEFAULT_MAX_ITEM_BYTES,
            redis_timeout: DEFAULT_REDIS_TIMEOUT,
        }
    }
}
