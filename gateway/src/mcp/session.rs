//! The gateway's sessions with its MCP clients (`Mcp-Session-Id`), shared by every shard: a
//! client's next request may come on another connection, to another shard. Each session
//! belongs to the key that opened it and keeps the servers its path or header named. MCP
//! requests only touch this map; the model routes never do.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use ring::rand::{SecureRandom, SystemRandom};

/// Sessions idle this long are forgotten (the client starts a new one on its 404).
pub const IDLE: Duration = Duration::from_secs(60 * 60);
/// At most this many sessions are kept; a new one beyond it pushes out the longest idle.
const MAX_SESSIONS: usize = 100_000;

/// One client's session.
#[derive(Clone, Debug)]
pub struct ClientSession {
    /// The protocol version agreed in `initialize`.
    pub protocol_version: String,
    /// Who opened it (the key's name, `master`, or none): only they may use it.
    pub owner: Option<String>,
    /// The servers its path or `x-mcp-servers` named at `initialize`; `None` = every server.
    pub scope: Option<Vec<String>>,
    /// The client's `clientInfo.name`, for the log.
    pub client: String,
    last_used: Instant,
}

#[derive(Default)]
pub struct Sessions {
    open: Mutex<HashMap<String, ClientSession>>,
}

impl Sessions {
    /// Opens a session; its id (32 hex digits from the system's random source).
    pub fn open(
        &self,
        protocol_version: String,
        owner: Option<String>,
        scope: Option<Vec<String>>,
        client: String,
    ) -> String {
        let id = random_id();
        let now = Instant::now();
        let session = ClientSession { protocol_version, owner, scope, client, last_used: now };
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        if open.len() >= MAX_SESSIONS {
            open.retain(|_, s| now.duration_since(s.last_used) < IDLE);
        }
        if open.len() >= MAX_SESSIONS {
            if let Some(oldest) = open.iter().min_by_key(|(_, s)| s.last_used).map(|(id, _)| id.clone()) {
                open.remove(&oldest);
            }
        }
        open.insert(id.clone(), session);
        id
    }

    /// The session `id`, when it is open, not idle too long, and `owner`'s; marks it used.
    pub fn resume(&self, id: &str, owner: Option<&str>) -> Option<ClientSession> {
        let now = Instant::now();
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let session = open.get_mut(id)?;
        if now.duration_since(session.last_used) >= IDLE {
            open.remove(id);
            return None;
        }
        if session.owner.as_deref() != owner {
            return None;
        }
        session.last_used = now;
        Some(session.clone())
    }

    /// Ends the session `id` (`DELETE /mcp`) when it is `owner`'s; whether it was.
    pub fn close(&self, id: &str, owner: Option<&str>) -> bool {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        match open.get(id) {
            Some(s) if s.owner.as_deref() == owner => open.remove(id).is_some(),
            _ => false,
        }
    }

    pub fn count(&self) -> usize {
        self.open.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}

fn random_id() -> String {
    let mut bytes = [0u8; 16];
    // The system's random source does not fail on Linux once the kernel's pool is ready; a
    // failure leaves a clock-derived id, still unique in this process.
    if SystemRandom::new().fill(&mut bytes).is_err() {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos();
        bytes.copy_from_slice(&nanos.to_le_bytes());
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_is_its_owners_only_and_ends_once() {
        let sessions = Sessions::default();
        let id = sessions.open("2025-06-18".into(), Some("team-a".into()), None, "client".into());
        assert_eq!(id.len(), 32);
        assert!(sessions.resume(&id, Some("team-a")).is_some());
        assert!(sessions.resume(&id, Some("team-b")).is_none());
        assert!(sessions.resume(&id, None).is_none());
        assert!(!sessions.close(&id, Some("team-b")));
        assert!(sessions.close(&id, Some("team-a")));
        assert!(sessions.resume(&id, Some("team-a")).is_none());
        assert_ne!(sessions.open("v".into(), None, None, String::new()), id);
    }
}
