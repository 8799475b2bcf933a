//! A request's cache key (helper: key derivation). The model group and every member of the
//! body that can change the answer, canonical (members sorted at every depth, no whitespace,
//! numbers as parsed), hashed with SHA-256; never the caller's key.

use pointwork_core::RouteKind;
use serde_json::{Map, Value};

/// A request's key: the digest (64 lowercase hex digits) and the namespace it is kept under.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CacheKey {
    pub(crate) hex: String,
    pub(crate) namespace: Option<String>,
}

impl CacheKey {
    /// Where the entry is kept: `{prefix}:cache:[{namespace}:]{hex}` (the local cache uses the
    /// same text with an empty prefix).
    pub(crate) fn storage_key(&self, prefix: &str) -> String {
        match &self.namespace {
            Some(ns) => format!("{prefix}:cache:{ns}:{}", self.hex),
            None => format!("{prefix}:cache:{}", self.hex),
        }
    }
}

/// The key of a request to `route` for model group `model` with body `body`, kept under
/// `namespace`.
pub(crate) fn derive(route: RouteKind, model: &str, body: &Map<String, Value>, namespace: Option<&str>) -> CacheKey {
    let _ = (route, model, body);
    CacheKey { hex: String::new(), namespace: namespace.map(str::to_string) }
}

/// How many messages the request carries, as LiteLLM's `max_messages` counts them: `messages`
/// (chat, Messages), the `input` items of a Responses request (a string is one), none for
/// embeddings.
pub(crate) fn message_count(route: RouteKind, body: &Map<String, Value>) -> usize {
    let _ = (route, body);
    0
}
