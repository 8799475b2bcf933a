//! A request's cache key (helper: key derivation). The model group and every member of the
//! body that can change the answer, canonical (members sorted at every depth, no whitespace,
//! numbers as parsed), hashed with SHA-256; never the caller's key.
//!
//! The material hashed is, each part on its own line:
//!
//! ```text
//! pointwork-cache-1
//! {the route's path, e.g. /chat/completions}
//! {the namespace as a JSON string, or null}
//! {the body, canonical, with `model` set to the model group and NOT_KEYED left out}
//! ```
//!
//! Unlike LiteLLM (Python `str()` of each keyed parameter, in the order the request has them),
//! the body is keyed whole but for the members in [`NOT_KEYED`], in one canonical form: a
//! parameter LiteLLM does not know yet still tells two requests apart.

use std::io::Write;

use pointwork_core::RouteKind;
use serde_json::{Map, Value};

/// The first line of the material: a new version makes every earlier entry unreachable.
const VERSION: &str = "pointwork-cache-1";

/// Body members that cannot change the answer, left out of the key. LiteLLM keys only the
/// providers' API parameters; these are its own (`types/litellm_params.py`) that a client sends:
/// - the cache's own controls: `cache`, `caching`, `ttl`;
/// - what is logged or tracked, never sent to the model: `metadata`, `litellm_metadata`,
///   `tags`, `litellm_trace_id`, `litellm_session_id`, `litellm_call_id`, `no-log`,
///   `litellm_request_debug`;
/// - what the proxy adds to a request it forwards: `proxy_server_request`, `secret_fields`;
/// - how an answer is waited for, not what it is: `timeout`, `request_timeout`,
///   `stream_timeout`, `num_retries`, `max_retries`.
///
/// Everything else is keyed, `stream`, `stream_options` and `user` included (as LiteLLM keys
/// them), and so are members that choose where a request goes (`fallbacks`, `api_base`, …):
/// keying too much only splits entries, keying too little would serve a wrong answer.
pub(crate) const NOT_KEYED: [&str; 18] = [
    "cache",
    "caching",
    "litellm_call_id",
    "litellm_metadata",
    "litellm_request_debug",
    "litellm_session_id",
    "litellm_trace_id",
    "max_retries",
    "metadata",
    "no-log",
    "num_retries",
    "proxy_server_request",
    "request_timeout",
    "secret_fields",
    "stream_timeout",
    "tags",
    "timeout",
    "ttl",
];

/// A request's key: the digest (64 lowercase hex digits) and the namespace it is kept under.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CacheKey {
    pub(crate) hex: String,
    pub(crate) namespace: Option<String>,
}

impl CacheKey {
    /// The key as LiteLLM names it (`x-litellm-cache-key`, `/cache/delete`): `[namespace:]hex`.
    pub(crate) fn litellm_key(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{ns}:{}", self.hex),
            None => self.hex.clone(),
        }
    }

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
    // The material is written whole, then hashed once (ring's SHA-256: SHA-NI, or AVX2/SSSE3
    // assembly on CPUs without it).
    let mut material: Vec<u8> = Vec::with_capacity(1024);
    let _ = write!(material, "{VERSION}\n{}\n", route.path());
    match namespace {
        Some(ns) => write_string(&mut material, ns),
        None => material.extend_from_slice(b"null"),
    }
    material.extend_from_slice(b"\n");
    let model = Value::String(model.to_string());
    let mut members: Vec<(&str, &Value)> = body
        .iter()
        .filter(|(name, _)| !NOT_KEYED.contains(&name.as_str()) && name.as_str() != "model")
        .map(|(name, value)| (name.as_str(), value))
        .collect();
    members.push(("model", &model));
    members.sort_unstable_by(|a, b| a.0.cmp(b.0));
    write_members(&mut material, members);
    let digest = ring::digest::digest(&ring::digest::SHA256, &material);
    CacheKey { hex: hex(digest.as_ref()), namespace: namespace.map(str::to_string) }
}

/// `{"name":value,…}` with the members in the order given.
fn write_members<'a>(out: &mut Vec<u8>, members: impl IntoIterator<Item = (&'a str, &'a Value)>) {
    out.extend_from_slice(b"{");
    for (i, (name, value)) in members.into_iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(b",");
        }
        write_string(out, name);
        out.extend_from_slice(b":");
        write_value(out, value);
    }
    out.extend_from_slice(b"}");
}

/// A value in canonical JSON: members sorted at every depth, no whitespace, a number that is a
/// whole number written as an integer (`1.0` as `1`), strings as serde writes them.
fn write_value(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(b) => out.extend_from_slice(if *b { &b"true"[..] } else { &b"false"[..] }),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.extend_from_slice(b"[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(b",");
                }
                write_value(out, item);
            }
            out.extend_from_slice(b"]");
        }
        Value::Object(map) => {
            let mut members: Vec<(&str, &Value)> = map.iter().map(|(k, v)| (k.as_str(), v)).collect();
            members.sort_unstable_by(|a, b| a.0.cmp(b.0));
            write_members(out, members);
        }
    }
}

fn write_number(out: &mut Vec<u8>, n: &serde_json::Number) {
    let _ = if let Some(i) = n.as_i64() {
        write!(out, "{i}")
    } else if let Some(u) = n.as_u64() {
        write!(out, "{u}")
    } else {
        let f = n.as_f64().unwrap_or(0.0);
        // A whole float within i64 is written as that integer, so that 1.0 and 1 are one key.
        if f.fract() == 0.0 && f.abs() < 9.2e18 {
            write!(out, "{}", f as i64)
        } else {
            write!(out, "{f}")
        }
    };
}

/// A string as serde writes it: its plain runs copied a block at a time, the rest escaped.
fn write_string(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    let mut plain = crate::dialect::json_plain::plain_blocks(bytes);
    // A block may end inside a character.
    while !s.is_char_boundary(plain) {
        plain -= 1;
    }
    out.push(b'"');
    out.extend_from_slice(&bytes[..plain]);
    let rest = &s[plain..];
    if rest.bytes().any(crate::dialect::json_plain::is_special) {
        // Writing a str into a Vec cannot fail; it quotes what it writes: drop the quotes.
        let at = out.len();
        let _ = serde_json::to_writer(&mut *out, rest);
        out.remove(at);
        out.pop();
    } else {
        out.extend_from_slice(rest.as_bytes());
    }
    out.push(b'"');
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 15)] as char);
    }
    out
}

/// How many messages the request carries, as LiteLLM's `max_messages` counts them: `messages`
/// (chat, Messages), the `input` items of a Responses request (a string is one), none for
/// embeddings.
pub(crate) fn message_count(route: RouteKind, body: &Map<String, Value>) -> usize {
    match route {
        RouteKind::ChatCompletions | RouteKind::Messages => {
            body.get("messages").and_then(Value::as_array).map_or(0, Vec::len)
        }
        // LiteLLM's `_is_conversation_item`: an object whose `type` is not `file`.
        RouteKind::Responses => match body.get("input") {
            Some(Value::Array(items)) => {
                items.iter().filter(|i| i.as_object().is_some_and(|o| o.get("type") != Some(&"file".into()))).count()
            }
            Some(Value::String(_)) => 1,
            _ => 0,
        },
        RouteKind::Embeddings => 0,
    }
}

#[cfg(test)]
#[path = "key_tests.rs"]
mod tests;
