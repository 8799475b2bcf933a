//! The in-memory store (`type: local`): one per instance, shared by its shards behind a mutex
//! held only to find or place an entry (bodies are shared, never copied under it). Bounded in
//! bytes: the least recently used entries go first; an expired entry goes when it is next
//! looked at, or when its place is needed.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use super::entry::Entry;

/// The in-memory store.
#[derive(Default)]
pub(crate) struct LocalStore {
    inner: Mutex<Lru>,
}

#[derive(Default)]
struct Lru {
    entries: HashMap<String, Kept>,
    /// Use order: the oldest use first.
    order: BTreeMap<u64, String>,
    /// Counts uses.
    tick: u64,
    bytes: u64,
}

struct Kept {
    entry: Entry,
    expires_ms: u64,
    used: u64,
    weight: u64,
}

/// What a store did to make room.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Placed {
    /// Entries evicted to stay within the bound (expired ones not counted).
    pub(crate) evicted: u64,
}

impl LocalStore {
    /// The entry under `key`, unless it has expired by `now_ms` (it is then removed).
    pub(crate) fn get(&self, key: &str, now_ms: u64) -> Option<Entry> {
        let mut lru = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let lru = &mut *lru;
        let kept = lru.entries.get_mut(key)?;
        if kept.expires_ms <= now_ms {
            lru.remove(key);
            return None;
        }
        lru.tick += 1;
        lru.order.remove(&kept.used);
        kept.used = lru.tick;
        lru.order.insert(lru.tick, key.to_string());
        Some(kept.entry.clone())
    }

    /// Keeps `entry` under `key` for `ttl`, evicting the least recently used entries until all
    /// fit in `max_bytes`. An entry larger than `max_bytes` is not kept.
    pub(crate) fn put(&self, key: String, entry: Entry, ttl: Duration, now_ms: u64, max_bytes: u64) -> Placed {
        let weight = entry.weight(&key) as u64;
        let mut placed = Placed::default();
        if weight > max_bytes {
            return placed;
        }
        let mut lru = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        lru.remove(&key);
        while lru.bytes + weight > max_bytes {
            let Some((_, oldest)) = lru.order.pop_first() else { break };
            if let Some(gone) = lru.entries.remove(&oldest) {
                lru.bytes -= gone.weight;
                placed.evicted += u64::from(gone.expires_ms > now_ms);
            }
        }
        lru.tick += 1;
        let used = lru.tick;
        let expires_ms = now_ms.saturating_add(ttl.as_millis().min(u128::from(u64::MAX)) as u64);
        lru.order.insert(used, key.clone());
        lru.entries.insert(key, Kept { entry, expires_ms, used, weight });
        lru.bytes += weight;
        placed
    }

    /// Drops the entry under `key`, if there is one.
    pub(crate) fn remove(&self, key: &str) {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner).remove(key);
    }

    /// Bytes and entries kept now.
    pub(crate) fn size(&self) -> (u64, usize) {
        let lru = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        (lru.bytes, lru.entries.len())
    }
}

impl Lru {
    fn remove(&mut self, key: &str) {
        if let Some(kept) = self.entries.remove(key) {
            self.order.remove(&kept.used);
            self.bytes -= kept.weight;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn entry(len: usize) -> Entry {
        Entry { stored_ms: 0, stream: false, body: Arc::from(vec![b'x'; len]) }
    }

    const TTL: Duration = Duration::from_secs(60);

    #[test]
    fn the_least_recently_used_entries_go_first_and_the_bound_holds() {
        let store = LocalStore::default();
        let one = entry(1000).weight("a") as u64;
        let max = one * 3;
        for key in ["a", "b", "c"] {
            assert_eq!(store.put(key.into(), entry(1000), TTL, 0, max).evicted, 0);
        }
        // `a` used again: `b` is now the least recently used.
        assert!(store.get("a", 1).is_some());
        assert_eq!(store.put("d".into(), entry(1000), TTL, 1, max).evicted, 1);
        assert!(store.get("b", 2).is_none());
        assert!(store.get("a", 2).is_some() && store.get("c", 2).is_some() && store.get("d", 2).is_some());
        assert_eq!(store.size(), (max, 3));
        for i in 0..100 {
            store.put(format!("k{i}"), entry(1000), TTL, 3, max);
            assert!(store.size().0 <= max);
        }
    }

    #[test]
    fn an_expired_entry_is_a_miss_and_a_too_large_one_is_not_kept() {
        let store = LocalStore::default();
        store.put("a".into(), entry(10), Duration::from_millis(100), 1000, 1 << 20);
        assert!(store.get("a", 1099).is_some());
        assert!(store.get("a", 1100).is_none());
        assert_eq!(store.size(), (0, 0));
        store.put("big".into(), entry(2000), TTL, 0, 1000);
        assert_eq!(store.size(), (0, 0));
        // Replacing an entry does not count it twice.
        store.put("a".into(), entry(10), TTL, 0, 1 << 20);
        store.put("a".into(), entry(10), TTL, 0, 1 << 20);
        assert_eq!(store.size(), (entry(10).weight("a") as u64, 1));
    }
}
