//! The conversations the gateway keeps for the Responses API: a translated response with the
//! input it answered (what `previous_response_id` continues), and the deployment of a native
//! response (where its follow-ups go). Bounded: entries older than [`TTL`] are gone, and past
//! [`MAX_BYTES`] the least recently used go first.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

/// How long a conversation is kept after its last use.
pub(crate) const TTL: Duration = Duration::from_secs(6 * 3600);
/// The most bytes (of JSON) the kept conversations hold together.
pub(crate) const MAX_BYTES: usize = 256 << 20;

/// A translated response and the items it answered.
pub(crate) struct Conversation {
    /// The response object as the client got it.
    pub(crate) response: Value,
    /// Every input item of the conversation up to this response: the earlier turns' inputs and
    /// outputs, then this request's input.
    pub(crate) input_items: Vec<Value>,
    /// About the bytes of JSON it holds.
    pub(crate) bytes: usize,
}

impl Conversation {
    /// What a follow-up continues: the input items, then this response's output.
    pub(crate) fn items(&self) -> Vec<Value> {
        let output = self.response.get("output").and_then(Value::as_array).into_iter().flatten();
        self.input_items.iter().chain(output).cloned().collect()
    }
}

#[derive(Clone)]
pub(crate) enum Stored {
    Translated(Arc<Conversation>),
    /// A native response, by the id of the deployment that holds it.
    Native(Arc<str>),
}

impl Stored {
    /// As kept in Redis: `{"response", "input_items"}`, or `{"deployment"}` for a native one.
    pub(crate) fn to_json(&self) -> Vec<u8> {
        let value = match self {
            Stored::Translated(c) => serde_json::json!({"response": c.response, "input_items": c.input_items}),
            Stored::Native(deployment) => serde_json::json!({"deployment": &**deployment}),
        };
        value.to_string().into_bytes()
    }

    pub(crate) fn from_json(json: &[u8]) -> Option<Stored> {
        let mut value: Value = serde_json::from_slice(json).ok()?;
        if let Some(deployment) = value.get("deployment").and_then(Value::as_str) {
            return Some(Stored::Native(deployment.into()));
        }
        let response = value.get_mut("response")?.take();
        let input_items = match value.get_mut("input_items")?.take() {
            Value::Array(items) => items,
            _ => return None,
        };
        Some(Stored::Translated(Arc::new(Conversation { response, input_items, bytes: json.len() })))
    }
}

struct Entry {
    stored: Stored,
    used: Instant,
    tick: u64,
    bytes: usize,
}

/// The kept conversations by response id, least recently used first in `order`.
pub(crate) struct Conversations {
    entries: HashMap<String, Entry>,
    order: BTreeMap<u64, String>,
    tick: u64,
    bytes: usize,
    max_bytes: usize,
    ttl: Duration,
}

impl Default for Conversations {
    fn default() -> Conversations {
        Conversations::with_limits(MAX_BYTES, TTL)
    }
}

impl Conversations {
    pub(crate) fn with_limits(max_bytes: usize, ttl: Duration) -> Conversations {
        Conversations { entries: HashMap::new(), order: BTreeMap::new(), tick: 0, bytes: 0, max_bytes, ttl }
    }

    /// The entry `id`, made the most recently used; `None` when unknown or expired.
    pub(crate) fn get(&mut self, id: &str, now: Instant) -> Option<Stored> {
        let expired = self.entries.get(id).is_some_and(|e| now.saturating_duration_since(e.used) > self.ttl);
        if expired {
            self.remove(id);
            return None;
        }
        self.tick += 1;
        let entry = self.entries.get_mut(id)?;
        self.order.remove(&entry.tick);
        (entry.tick, entry.used) = (self.tick, now);
        self.order.insert(self.tick, id.to_string());
        Some(entry.stored.clone())
    }

    /// Keeps `stored` as `id`, `bytes` its size, evicting the least recently used (and every
    /// expired one) to stay within the bound.
    pub(crate) fn put(&mut self, id: &str, stored: Stored, bytes: usize, now: Instant) {
        self.remove(id);
        if bytes > self.max_bytes {
            return;
        }
        while self.bytes + bytes > self.max_bytes || self.oldest_expired(now) {
            let Some((_, oldest)) = self.order.pop_first() else { break };
            if let Some(e) = self.entries.remove(&oldest) {
                self.bytes -= e.bytes;
            }
        }
        self.tick += 1;
        self.order.insert(self.tick, id.to_string());
        self.entries.insert(id.to_string(), Entry { stored, used: now, tick: self.tick, bytes });
        self.bytes += bytes;
    }

    pub(crate) fn remove(&mut self, id: &str) -> Option<Stored> {
        let entry = self.entries.remove(id)?;
        self.order.remove(&entry.tick);
        self.bytes -= entry.bytes;
        Some(entry.stored)
    }

    fn oldest_expired(&self, now: Instant) -> bool {
        let oldest = self.order.first_key_value().and_then(|(_, id)| self.entries.get(id));
        oldest.is_some_and(|e| now.saturating_duration_since(e.used) > self.ttl)
    }

    #[cfg(test)]
    fn bytes(&self) -> usize {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn native(d: &str) -> Stored {
        Stored::Native(d.into())
    }

    fn holder(c: &mut Conversations, id: &str, now: Instant) -> Option<String> {
        match c.get(id, now)? {
            Stored::Native(d) => Some(d.to_string()),
            Stored::Translated(_) => None,
        }
    }

    #[test]
    fn the_least_recently_used_goes_first_past_the_byte_bound() {
        let now = Instant::now();
        let mut c = Conversations::with_limits(100, TTL);
        c.put("a", native("da"), 40, now);
        c.put("b", native("db"), 40, now);
        assert_eq!(holder(&mut c, "a", now).as_deref(), Some("da"));
        c.put("c", native("dc"), 40, now);
        assert!(c.get("b", now).is_none(), "b was the least recently used");
        assert_eq!(holder(&mut c, "a", now).as_deref(), Some("da"));
        assert_eq!(holder(&mut c, "c", now).as_deref(), Some("dc"));
        assert_eq!(c.bytes(), 80);
        c.put("huge", native("dh"), 101, now);
        assert!(c.get("huge", now).is_none());
        assert_eq!(c.bytes(), 80);
    }

    #[test]
    fn entries_expire_after_the_ttl_since_their_last_use() {
        let start = Instant::now();
        let mut c = Conversations::with_limits(1000, Duration::from_secs(10));
        c.put("a", native("da"), 10, start);
        c.put("b", native("db"), 10, start);
        assert!(c.get("a", start + Duration::from_secs(8)).is_some());
        assert!(c.get("b", start + Duration::from_secs(11)).is_none());
        assert!(c.get("a", start + Duration::from_secs(17)).is_some(), "used at 8 s: kept until 18 s");
        c.put("c", native("dc"), 10, start + Duration::from_secs(40));
        assert_eq!(c.bytes(), 10, "the expired one went when c came");
    }

    #[test]
    fn a_follow_up_continues_the_input_and_the_output() {
        let response = serde_json::json!({"output": [{"type": "message", "id": "m2"}]});
        let conversation = Conversation { response, input_items: vec![serde_json::json!({"id": "m1"})], bytes: 0 };
        let ids: Vec<_> = conversation.items().iter().map(|i| i["id"].as_str().unwrap().to_string()).collect();
        assert_eq!(ids, ["m1", "m2"]);
    }
}
