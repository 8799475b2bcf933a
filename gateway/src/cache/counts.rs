//! What the cache shares across shards: the in-memory store and the counts `/metrics` shows.

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};

use super::local::LocalStore;

/// The cache's part of the hub: one per process, whatever the config (empty until used).
#[derive(Default)]
pub(crate) struct CacheShared {
    pub(crate) local: LocalStore,
    pub(crate) counts: CacheCounts,
}

/// Cumulative counts, all shards together.
#[derive(Default)]
pub(crate) struct CacheCounts {
    pub(crate) hits: AtomicU64,
    pub(crate) misses: AtomicU64,
    pub(crate) bypasses: AtomicU64,
    /// Answers stored.
    pub(crate) stores: AtomicU64,
    /// Answers delivered but not stored: not a 200, cut off, not ended as their API ends one, or
    /// larger than `max_item_bytes` (an attempt that failed before anything was sent is not one).
    pub(crate) not_stored: AtomicU64,
    /// Entries the in-memory store dropped to stay within `max_bytes`.
    pub(crate) evictions: AtomicU64,
    /// Reads Redis did not answer in time (or at all): misses.
    pub(crate) redis_unavailable: AtomicU64,
    /// Entries that did not decode: misses, deleted.
    pub(crate) corrupt: AtomicU64,
    /// Bytes of answers served from the cache.
    pub(crate) hit_bytes: AtomicU64,
}

impl CacheCounts {
    pub(crate) fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }
}

impl CacheShared {
    pub(crate) fn render(&self, out: &mut String) {
        let c = &self.counts;
        let n = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let name = "pointwork_cache_requests_total";
        let _ = write!(
            out,
            "# HELP {name} Requests to a cached API, by what the cache did.\n# TYPE {name} counter\n\
             {name}{{result=\"hit\"}} {}\n{name}{{result=\"miss\"}} {}\n{name}{{result=\"bypass\"}} {}\n",
            n(&c.hits),
            n(&c.misses),
            n(&c.bypasses)
        );
        let (bytes, entries) = self.local.size();
        let series: [(&str, &str, &str, u64); 8] = [
            ("pointwork_cache_stores_total", "counter", "Answers stored.", n(&c.stores)),
            (
                "pointwork_cache_not_stored_total",
                "counter",
                "Answers delivered but not stored: not a 200, cut off, or larger than max_item_bytes.",
                n(&c.not_stored),
            ),
            (
                "pointwork_cache_evictions_total",
                "counter",
                "Entries the in-memory cache dropped to stay within max_bytes.",
                n(&c.evictions),
            ),
            ("pointwork_cache_bytes", "gauge", "Bytes the in-memory cache holds.", bytes),
            ("pointwork_cache_entries", "gauge", "Entries the in-memory cache holds.", entries as u64),
            (
                "pointwork_cache_redis_unavailable_total",
                "counter",
                "Cache reads Redis did not answer within redis_timeout (misses).",
                n(&c.redis_unavailable),
            ),
            (
                "pointwork_cache_corrupt_total",
                "counter",
                "Entries that did not decode (misses, deleted).",
                n(&c.corrupt),
            ),
            ("pointwork_cache_hit_bytes_total", "counter", "Bytes of answers served from the cache.", n(&c.hit_bytes)),
        ];
        for (name, kind, help, value) in series {
            let _ = write!(out, "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}\n");
        }
    }
}
