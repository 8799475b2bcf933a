//! The cache phase of a request: its controls and key, the lookup, and what a miss keeps to
//! store its answer once it ended well.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use pointwork_config::CacheMode;
use pointwork_core::RouteKind;
use serde_json::{Map, Value};

use super::counts::CacheCounts;
use super::entry::Entry;
use super::keep::Keep;
use super::redis::{RedisRead, RedisStore};
use super::routes::{CacheRoutes, RedisPlace};
use super::{controls, key, HEADER_CACHE, HEADER_CACHE_KEY};
use crate::errors::openai_error;
use crate::facts::Extracted;
use crate::http::write;
use crate::keys::Caller;
use crate::request::Request;
use crate::respond::Reply;
use crate::shard::Shard;
use crate::upstream::exchange::Delivered;
use crate::upstream::tee::Tee;

/// What the lookup decided.
pub(crate) enum Looked {
    /// The answer, from the cache.
    Hit(Hit),
    /// The request goes on to the routers; its answer may be stored.
    Go(Box<Miss>),
    /// Its controls are refused (a bad value, or one its key may not set).
    Refused(Reply),
}

/// A hit: the entry, its key's digest, and the key as LiteLLM names it.
pub(crate) struct Hit {
    pub(crate) entry: Entry,
    pub(crate) hex: String,
    pub(crate) litellm_key: String,
}

/// A request that goes on: the headers its answer carries, and where its answer is stored.
pub(crate) struct Miss {
    /// `x-pointwork-cache` and `x-pointwork-cache-key`, rendered.
    pub(crate) headers: Vec<u8>,
    store: Option<Store>,
}

/// Where and how long an answer is kept, and the tee reading it.
struct Store {
    cache: Arc<CacheRoutes>,
    key: String,
    ttl: Duration,
    route: RouteKind,
    stream: bool,
    keep: RefCell<Keep>,
}

impl Miss {
    fn bypass() -> Box<Miss> {
        let mut headers = Vec::new();
        write::header(&mut headers, HEADER_CACHE, b"bypass");
        Box::new(Miss { headers, store: None })
    }

    /// The tee the answer goes through, when it may be stored.
    pub(crate) fn tee(&self) -> Option<&dyn Tee> {
        self.store.as_ref().map(|s| s as &dyn Tee)
    }

    /// Stores the answer `d` delivered, when it ended well: a 200 that arrived whole and within
    /// `max_item_bytes`, a stream that ended as its API ends one.
    pub(crate) fn store(&self, shard: &Shard, d: &Delivered) {
        let Some(store) = &self.store else { return };
        let (cache, counts) = (&store.cache, &shard.hub.cache.counts);
        let body = store.keep.replace(Keep::new(0)).finish();
        let ended = d.status == 200 && d.body_failure.is_none() && !d.client_failed;
        let body = match body.filter(|b| ended && (!store.stream || stream_ended(store.route, b))) {
            Some(body) => body,
            None => return CacheCounts::add(&counts.not_stored, 1),
        };
        let entry = Entry { stored_ms: now_ms(), stream: store.stream, body: Arc::from(body) };
        CacheCounts::add(&counts.stores, 1);
        match &cache.redis {
            Some(place) => redis_store(shard, place, cache).set(store.key.clone(), entry.encode(), store.ttl),
            None => {
                let (key, max) = (store.key.clone(), cache.settings.max_bytes);
                let placed = shard.hub.cache.local.put(key, entry, store.ttl, now_ms(), max);
                CacheCounts::add(&counts.evictions, placed.evicted);
            }
        }
    }
}

impl Tee for Store {
    fn saw(&self, bytes: &[u8]) {
        self.keep.borrow_mut().saw(bytes);
    }
}

/// Whether a stream's events end as its API ends a stream that completed.
fn stream_ended(route: RouteKind, body: &[u8]) -> bool {
    let has = |needle: &[u8]| memchr::memmem::rfind(body, needle).is_some();
    match route {
        RouteKind::ChatCompletions => has(b"data: [DONE]"),
        RouteKind::Messages => has(b"event: message_stop"),
        RouteKind::Responses => has(b"event: response.completed") || has(b"\"type\":\"response.completed\""),
        RouteKind::Embeddings => false,
    }
}

/// Looks the request up. `extracted`: its facts (the model group is the model it names).
pub(crate) async fn look(
    shard: &Shard,
    cache: &Arc<CacheRoutes>,
    route: RouteKind,
    request: &Request<'_>,
    extracted: &Extracted,
    caller: &Caller,
) -> Looked {
    let counts = &shard.hub.cache.counts;
    let settings = &cache.settings;
    if !cache.serves(route) {
        return bypass(counts);
    }
    let Ok(body) = serde_json::from_slice::<Map<String, Value>>(request.body) else {
        return bypass(counts);
    };
    let allowed = caller.virtual_key().map(|k| k.allowed_cache_controls.as_slice());
    let controls = match controls::read(&body, request.raw_head, allowed) {
        Ok(controls) => controls,
        Err(refused) => {
            let reply = Reply::json(refused.status, openai_error(refused.status, &refused.message, None));
            return Looked::Refused(reply);
        }
    };
    let opted_out = settings.mode == CacheMode::DefaultOff && !controls.use_cache;
    let too_long = settings.max_messages.is_some_and(|max| key::message_count(route, &body) > max);
    if opted_out || too_long || (controls.no_cache && controls.no_store) {
        return bypass(counts);
    }
    let namespace = controls.namespace.as_deref().or(settings.namespace.as_deref());
    // Keys under different policies never share an answer (a residency policy's caller is
    // never served what another policy allowed).
    let scoped = caller.virtual_key().and_then(|k| k.policy.as_deref()).map(|policy| match namespace {
        Some(ns) => format!("{ns}:policy={policy}"),
        None => format!("policy={policy}"),
    });
    let key = key::derive(route, &extracted.facts.model, &body, scoped.as_deref().or(namespace));
    let storage_key = key.storage_key(&cache.key_prefix);
    let stream = extracted.facts.stream;
    if !controls.no_cache {
        if let Some(entry) = read(shard, cache, &storage_key).await {
            let young =
                controls.max_age.is_none_or(|max| now_ms().saturating_sub(entry.stored_ms) <= max.as_millis() as u64);
            if entry.stream == stream && young {
                CacheCounts::add(&counts.hits, 1);
                CacheCounts::add(&counts.hit_bytes, entry.body.len() as u64);
                let litellm_key = key.litellm_key();
                return Looked::Hit(Hit { entry, hex: key.hex, litellm_key });
            }
        }
    }
    let result: &[u8] = if controls.no_cache { b"bypass" } else { b"miss" };
    CacheCounts::add(if controls.no_cache { &counts.bypasses } else { &counts.misses }, 1);
    let mut headers = Vec::new();
    write::header(&mut headers, HEADER_CACHE, result);
    write::header(&mut headers, HEADER_CACHE_KEY, key.hex.as_bytes());
    let store = (!controls.no_store).then(|| Store {
        cache: cache.clone(),
        key: storage_key,
        ttl: controls.ttl.unwrap_or(settings.ttl),
        route,
        stream,
        keep: RefCell::new(Keep::new(settings.max_item_bytes)),
    });
    Looked::Go(Box::new(Miss { headers, store }))
}

fn bypass(counts: &CacheCounts) -> Looked {
    CacheCounts::add(&counts.bypasses, 1);
    Looked::Go(Miss::bypass())
}

/// The entry under `key`: from memory, or from Redis (an entry that does not decode is a miss,
/// and deleted).
async fn read(shard: &Shard, cache: &CacheRoutes, key: &str) -> Option<Entry> {
    let counts = &shard.hub.cache.counts;
    let Some(place) = &cache.redis else {
        return shard.hub.cache.local.get(key, now_ms());
    };
    let store = redis_store(shard, place, cache);
    match store.get(key).await {
        RedisRead::Found(bytes) => {
            let entry = Entry::decode(&bytes);
            if entry.is_none() {
                CacheCounts::add(&counts.corrupt, 1);
                store.delete(key.to_string());
            }
            entry
        }
        RedisRead::Missing => None,
        RedisRead::Unavailable => {
            CacheCounts::add(&counts.redis_unavailable, 1);
            None
        }
    }
}

/// This shard's store for `place` (made at first use, and again when a reload names another
/// server or timeout).
pub(crate) fn redis_store(shard: &Shard, place: &RedisPlace, cache: &CacheRoutes) -> Rc<RedisStore> {
    let mut slot = shard.cache_redis.borrow_mut();
    match &*slot {
        Some(store) if store.is_for(&place.server, cache.settings.redis_timeout) => store.clone(),
        _ => {
            let tls = shard.upstream.tls.clone();
            let store = Rc::new(RedisStore::new(place, cache.settings.redis_timeout, tls));
            *slot = Some(store.clone());
            store
        }
    }
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}
