//! A shard's keep-alive pool of idle upstream connections, keyed by `scheme://host:port`.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::conn::UpstreamConn;

/// Most idle connections kept per upstream; more are closed when returned.
const MAX_IDLE_PER_KEY: usize = 512;

pub struct Pool {
    /// foldhash: SipHash cost 200 instructions per request here.
    idle: HashMap<String, Vec<(UpstreamConn, Instant)>, foldhash::fast::RandomState>,
    idle_timeout: Duration,
}

impl Pool {
    pub fn new(idle_timeout: Duration) -> Pool {
        Pool { idle: HashMap::default(), idle_timeout }
    }

    /// The most recently used idle connection that has not idled out and that the upstream
    /// has not closed.
    pub fn take(&mut self, key: &str, now: Instant) -> Option<UpstreamConn> {
        let list = self.idle.get_mut(key)?;
        while let Some((conn, since)) = list.pop() {
            if now.saturating_duration_since(since) < self.idle_timeout && conn.is_idle_and_open() {
                return Some(conn);
            }
        }
        None
    }

    pub fn put(&mut self, key: &str, conn: UpstreamConn, now: Instant) {
        if let Some(list) = self.idle.get_mut(key) {
            if list.len() < MAX_IDLE_PER_KEY {
                list.push((conn, now));
            }
            return;
        }
        self.idle.insert(key.to_string(), vec![(conn, now)]);
    }

    /// Closes connections idle longer than the timeout (run from a periodic task).
    pub fn evict_idle(&mut self, now: Instant) {
        let timeout = self.idle_timeout;
        for list in self.idle.values_mut() {
            list.retain(|(_, since)| now.saturating_duration_since(*since) < timeout);
        }
    }

    pub fn idle_count(&self) -> usize {
        self.idle.values().map(Vec::len).sum()
    }
}
