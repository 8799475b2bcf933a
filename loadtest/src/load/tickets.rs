//! The session store of one thread's connections to one target: what lets a new connection
//! resume. rustls's own in-memory cache keeps 8 TLS 1.3 tickets per server, which is right for a
//! browser but not for a generator opening a new connection per request on many connections at
//! once: each takes a ticket when it starts and gets new ones only after its handshake, so with
//! more than 8 under way the pool runs dry and handshakes that could resume go full. This pool
//! holds as many tickets as the connections need (one each, plus what the server sends beyond).

use std::collections::VecDeque;
use std::fmt;
use std::sync::Mutex;

use rustls::client::{ClientSessionStore, Tls12ClientSessionValue, Tls13ClientSessionValue};
use rustls::pki_types::ServerName;
use rustls::NamedGroup;

/// One target's sessions. Every connection using it talks to the same server, under one name,
/// so the name is not kept: whatever the server gave one connection, another can offer.
pub struct TicketPool {
    /// Locked by one thread only (the store is per thread), so never contended.
    state: Mutex<Sessions>,
    /// TLS 1.3 tickets kept at most; beyond it the oldest go.
    capacity: usize,
}

#[derive(Default)]
struct Sessions {
    kx_hint: Option<NamedGroup>,
    tls12: Option<Tls12ClientSessionValue>,
    /// Oldest first; the newest is offered first.
    tls13: VecDeque<Tls13ClientSessionValue>,
}

impl TicketPool {
    /// A pool for `connections` connections (at least 8 tickets, as rustls's cache keeps).
    pub fn new(connections: usize) -> TicketPool {
        let capacity = connections.saturating_mul(2).max(8);
        TicketPool { state: Mutex::new(Sessions::default()), capacity }
    }

    fn with<T>(&self, edit: impl FnOnce(&mut Sessions) -> T) -> T {
        // A panic while holding the lock leaves plain data behind: keep using it.
        let mut sessions = self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        edit(&mut sessions)
    }
}

impl fmt::Debug for TicketPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The sessions are secrets: only how many.
        let tickets = self.with(|sessions| sessions.tls13.len());
        f.debug_struct("TicketPool").field("tickets", &tickets).field("capacity", &self.capacity).finish()
    }
}

impl ClientSessionStore for TicketPool {
    fn set_kx_hint(&self, _: ServerName<'static>, group: NamedGroup) {
        self.with(|sessions| sessions.kx_hint = Some(group));
    }

    fn kx_hint(&self, _: &ServerName<'_>) -> Option<NamedGroup> {
        self.with(|sessions| sessions.kx_hint)
    }

    fn set_tls12_session(&self, _: ServerName<'static>, value: Tls12ClientSessionValue) {
        self.with(|sessions| sessions.tls12 = Some(value));
    }

    fn tls12_session(&self, _: &ServerName<'_>) -> Option<Tls12ClientSessionValue> {
        self.with(|sessions| sessions.tls12.clone())
    }

    fn remove_tls12_session(&self, _: &ServerName<'static>) {
        self.with(|sessions| sessions.tls12 = None);
    }

    fn insert_tls13_ticket(&self, _: ServerName<'static>, value: Tls13ClientSessionValue) {
        self.with(|sessions| {
            if sessions.tls13.len() >= self.capacity {
                sessions.tls13.pop_front();
            }
            sessions.tls13.push_back(value);
        });
    }

    fn take_tls13_ticket(&self, _: &ServerName<'static>) -> Option<Tls13ClientSessionValue> {
        self.with(|sessions| sessions.tls13.pop_back())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_at_least_what_rustls_keeps() {
        assert_eq!(TicketPool::new(1).capacity, 8);
        assert_eq!(TicketPool::new(32).capacity, 64);
        let pool = TicketPool::new(3);
        let name = ServerName::try_from("localhost").unwrap();
        assert!(pool.take_tls13_ticket(&name).is_none());
        assert!(pool.kx_hint(&name).is_none());
        pool.set_kx_hint(name.clone(), NamedGroup::X25519);
        assert_eq!(pool.kx_hint(&name), Some(NamedGroup::X25519));
        assert_eq!(format!("{pool:?}"), "TicketPool { tickets: 0, capacity: 8 }");
    }
}
