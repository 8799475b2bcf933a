//! The answers of `/v1/responses` the mock keeps (those not sent with `store: false`), as OpenAI
//! keeps them: each with the conversation it ended, for `previous_response_id`.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde_json::Value;

/// One kept answer.
#[derive(Debug, Clone)]
pub(crate) struct StoredResponse {
    /// The response object as `GET /v1/responses/{id}` returns it.
    pub response: Arc<Value>,
    /// The conversation's items up to and including this answer's output: what a request naming
    /// it as `previous_response_id` continues.
    pub conversation: Arc<Vec<Value>>,
}

/// The last `limit` kept answers by id.
#[derive(Debug)]
pub(crate) struct ResponseStore {
    limit: usize,
    kept: Mutex<Kept>,
}

#[derive(Debug, Default)]
struct Kept {
    by_id: HashMap<String, StoredResponse>,
    /// Ids, oldest first.
    order: VecDeque<String>,
}

impl ResponseStore {
    pub(crate) fn new(limit: usize) -> Self {
        ResponseStore { limit, kept: Mutex::new(Kept::default()) }
    }

    fn locked(&self) -> MutexGuard<'_, Kept> {
        // A panic while holding this lock cannot leave the maps inconsistent: keep using them.
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn insert(&self, id: String, stored: StoredResponse) {
        if self.limit == 0 {
            return;
        }
        let mut kept = self.locked();
        while kept.order.len() >= self.limit {
            if let Some(oldest) = kept.order.pop_front() {
                kept.by_id.remove(&oldest);
            }
        }
        kept.order.push_back(id.clone());
        kept.by_id.insert(id, stored);
    }

    pub(crate) fn get(&self, id: &str) -> Option<StoredResponse> {
        self.locked().by_id.get(id).cloned()
    }

    /// Forgets `id`; `false` when it was not kept.
    pub(crate) fn remove(&self, id: &str) -> bool {
        let mut kept = self.locked();
        let removed = kept.by_id.remove(id).is_some();
        if removed {
            kept.order.retain(|kept_id| kept_id != id);
        }
        removed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(text: &str) -> StoredResponse {
        StoredResponse { response: Arc::new(Value::from(text)), conversation: Arc::new(vec![]) }
    }

    #[test]
    fn keeps_the_newest_and_forgets_on_delete() {
        let store = ResponseStore::new(2);
        for id in ["a", "b", "c"] {
            store.insert(id.to_owned(), stored(id));
        }
        assert!(store.get("a").is_none());
        assert_eq!(*store.get("c").expect("kept").response, Value::from("c"));
        assert!(store.remove("b"));
        assert!(!store.remove("b"));
        assert!(store.get("b").is_none());
        store.insert("d".to_owned(), stored("d"));
        assert!(store.get("c").is_some() && store.get("d").is_some());
    }
}
