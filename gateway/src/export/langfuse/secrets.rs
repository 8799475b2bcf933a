//! What never leaves in a Langfuse event: the caller's metadata loses every field that names a
//! credential (LiteLLM strips `user_api_key*` and the request headers the same way) and every
//! value that looks like a key; error texts lose what looks like a key.

use serde_json::{Map, Value};

/// What a dropped or blanked value becomes.
const HIDDEN: &str = "[redacted]";

/// Metadata keys LiteLLM never logs to Langfuse (its routing internals, the request headers).
const DENIED: [&str; 4] = ["headers", "endpoint", "caching_groups", "previous_models"];

/// Parts of a key's name that say its value is a credential.
const CREDENTIAL_NAMES: [&str; 11] = [
    "api_key",
    "apikey",
    "api-key",
    "secret",
    "password",
    "passwd",
    "authorization",
    "credential",
    "cookie",
    "private_key",
    "bearer",
];

/// How values that are keys begin (OpenAI's and LiteLLM's `sk-`, Langfuse's `pk-lf-`/`sk-lf-`,
/// Anthropic's `sk-ant-`, HTTP credentials).
const KEY_PREFIXES: [&str; 5] = ["sk-", "pk-lf-", "bearer ", "basic ", "xai-"];

/// `metadata` without what names or looks like a credential, at any depth.
pub(crate) fn clean_metadata(metadata: &Map<String, Value>) -> Map<String, Value> {
    metadata.iter().filter(|(k, _)| !credential_name(k)).map(|(k, v)| (k.clone(), clean_value(v))).collect()
}

fn clean_value(value: &Value) -> Value {
    match value {
        Value::Object(m) => Value::Object(clean_metadata(m)),
        Value::Array(items) => Value::Array(items.iter().map(clean_value).collect()),
        Value::String(s) if looks_like_key(s) => Value::from(HIDDEN),
        other => other.clone(),
    }
}

/// Whether a metadata key names a credential (or is one LiteLLM leaves out).
fn credential_name(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    k.starts_with("user_api_key")
        || DENIED.contains(&k.as_str())
        || CREDENTIAL_NAMES.iter().any(|c| k.contains(c))
        || matches!(k.as_str(), "key" | "token" | "auth")
        || k.ends_with("_token")
        || k.ends_with("-token")
}

/// Whether a text value looks like a key of its own.
fn looks_like_key(s: &str) -> bool {
    let s = s.trim_start();
    KEY_PREFIXES.iter().any(|p| s.len() > p.len() + 4 && s.get(..p.len()).is_some_and(|h| h.eq_ignore_ascii_case(p)))
}

/// `text` with every word that looks like a key (`sk-…`, `Bearer …`) blanked.
pub(crate) fn scrub_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut hide_next = false;
    for (i, word) in text.split(' ').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let bare = word.trim_matches(|c: char| matches!(c, '"' | '\'' | ',' | '.' | ':' | ';' | '(' | ')'));
        let lower = bare.to_ascii_lowercase();
        if hide_next && !bare.is_empty() {
            out.push_str(HIDDEN);
            hide_next = false;
        } else if lower == "bearer" || lower == "basic" {
            out.push_str(word);
            hide_next = true;
        } else if looks_like_key(bare) {
            out.push_str(HIDDEN);
        } else {
            out.push_str(word);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn credentials_leave_the_metadata() {
        let m = json!({
            "user_api_key_hash": "abc", "api_key": "x", "OPENAI_API_KEY": "x", "langfuse_secret": "x",
            "headers": {"authorization": "x"}, "session_id": "s-1", "token": "t", "refresh_token": "t",
            "note": "sk-caller-key-123456", "nested": {"password": "p", "kept": 1, "list": ["Bearer abcdefgh", "ok"]},
            "max_tokens_hint": 5
        });
        let cleaned = Value::Object(clean_metadata(m.as_object().unwrap()));
        assert_eq!(
            cleaned,
            json!({"session_id": "s-1", "note": HIDDEN, "nested": {"kept": 1, "list": [HIDDEN, "ok"]}, "max_tokens_hint": 5})
        );
    }

    #[test]
    fn keys_in_error_texts_are_blanked() {
        assert_eq!(
            scrub_text("Incorrect API key provided: sk-live-abcdef123. Bearer xyz123 refused"),
            "Incorrect API key provided: [redacted] Bearer [redacted] refused"
        );
        assert_eq!(scrub_text("upstream said 429: slow down"), "upstream said 429: slow down");
    }
}
