//! Each shard's database keys: found once through the database thread, then served from the
//! shard's own map with no lock and no wait. The thread marks an entry stale when the key, its
//! team or its user changes (on any instance); the shard then asks again.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use pointwork_core::KeyLimits;
use pointwork_db::{KeyEntry, Lookup};

use crate::errors::typed_error;
use crate::keys::{Caller, VirtualKey};
use crate::respond::Reply;
use crate::shard::Shard;

/// At most this many keys per shard; past it the map starts over (each key costs one trip to
/// the thread again, never a database query: the thread keeps them all).
const MAX_KEYS: usize = 1_000_000;

#[derive(Default)]
pub struct ShardKeys {
    keys: RefCell<HashMap<[u8; 32], Arc<VirtualKey>>>,
    /// Digests the database thread said are no key, each with when it said so and the count of
    /// key changes then: a wrong key costs the thread nothing more while neither ten seconds
    /// nor any key change (`DbStatus::key_changes`, on any instance) has passed.
    wrong: RefCell<HashMap<[u8; 32], (Instant, u64)>>,
}

/// How long a shard remembers a wrong key (the database thread's own memory of it is as long).
const WRONG_FOR: Duration = Duration::from_secs(10);
/// At most this many wrong keys per shard; past it the shard starts over.
const MAX_WRONG: usize = 100_000;

impl ShardKeys {
    /// The key with this digest, unless the shard never saw it or it changed since.
    pub fn get(&self, digest: &[u8; 32]) -> Option<Arc<VirtualKey>> {
        let keys = self.keys.borrow();
        let key = keys.get(digest)?;
        if key.db.as_ref().is_some_and(|entry| entry.is_stale()) {
            return None;
        }
        Some(key.clone())
    }

    /// Whether the thread said this digest is no key, recently and with no key changed since.
    fn known_wrong(&self, digest: &[u8; 32], changes: u64, now: Instant) -> bool {
        self.wrong
            .borrow()
            .get(digest)
            .is_some_and(|(at, seen)| *seen == changes && now.duration_since(*at) < WRONG_FOR)
    }

    fn remember_wrong(&self, digest: [u8; 32], changes: u64, now: Instant) {
        let mut wrong = self.wrong.borrow_mut();
        if wrong.len() >= MAX_WRONG {
            wrong.clear();
        }
        wrong.insert(digest, (now, changes));
    }

    fn insert(&self, digest: [u8; 32], key: Arc<VirtualKey>) {
        let mut keys = self.keys.borrow_mut();
        if keys.len() >= MAX_KEYS {
            keys.clear();
        }
        keys.insert(digest, key);
    }
}

/// The caller a key unknown to the config names: this shard's cached database key, else the
/// database thread's answer (boxed by the caller: the one wait on the way of a request).
pub async fn find(shard: &Shard, digest: [u8; 32]) -> Result<Caller, Reply> {
    let Some(db) = shard.hub.database.get() else { return Err(invalid_key()) };
    // Read before asking: a change heard while the answer travels makes the answer stale.
    let (changes, now) = (db.status.key_changes.load(Ordering::Relaxed), Instant::now());
    if shard.db_keys.known_wrong(&digest, changes, now) {
        return Err(invalid_key());
    }
    let answer = match db.lookup(digest) {
        Some(reply) => reply.await.unwrap_or(Lookup::Unavailable),
        None => Lookup::Unavailable,
    };
    match answer {
        Lookup::Found(entry) => {
            let key = Arc::new(virtual_key(entry, digest));
            shard.db_keys.insert(digest, key.clone());
            Ok(Caller::Virtual(key))
        }
        Lookup::Unknown => {
            shard.db_keys.remember_wrong(digest, changes, now);
            Err(invalid_key())
        }
        // LiteLLM's `allow_requests_on_db_unavailable`: let the request through, with no key's
        // rules (there is no key to read them from).
        Lookup::Unavailable if db.settings.allow_requests_on_db_unavailable => Ok(Caller::Anyone),
        Lookup::Unavailable => Err(Reply::json(
            503,
            typed_error(
                503,
                "no_db_connection",
                "Service Unavailable, the authentication database is temporarily unreachable. Please retry shortly.",
                None,
            ),
        )),
    }
}

/// LiteLLM's answer to a key it does not have.
fn invalid_key() -> Reply {
    Reply::json(
        401,
        typed_error(401, "token_not_found_in_db", "Authentication Error, Invalid API key provided.", Some("key")),
    )
}

/// The request path's view of a database key: its model list, rpm / tpm (budgets are the
/// accounts', checked in `admit`) and tags.
fn virtual_key(entry: Arc<KeyEntry>, digest: [u8; 32]) -> VirtualKey {
    let r = &entry.record;
    let models = (!pointwork_db::means_every_model(&r.models)).then(|| r.models.clone());
    let mut key = VirtualKey {
        name: r.name.clone(),
        digest,
        models,
        limits: KeyLimits { rpm: r.rpm_limit, tpm: r.tpm_limit, max_budget: None, budget_duration: None },
        tags: r.tags.clone(),
        meter: entry.key.meter.clone(),
        models_body: None,
        policy: None,
        mcp_servers: r.mcp_servers.clone(),
        mcp_tools: r.mcp_tools.clone(),
        allowed_cache_controls: r.allowed_cache_controls.clone(),
        db: None,
    };
    // Its `/v1/models` is made when asked, from the routes of then (`server::admin::models`).
    key.db = Some(entry);
    key
}
