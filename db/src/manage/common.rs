//! What every management route shares: reading bodies and queries the way LiteLLM's FastAPI
//! does (422 `{"detail":[…]}` for a body it cannot read), LiteLLM's error texts, key hashing,
//! and turning rows into JSON with ISO 8601 times.

use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use super::ManageReply;
use crate::notify::{Change, CHANNEL};

/// A route's answer: the 200 body, or an error reply.
pub(crate) type Answer = Result<Value, ManageReply>;

/// The changes channel, for `pg_notify($n, …)` in the statement that makes the change.
pub(crate) fn channel() -> &'static str {
    CHANNEL
}

/// `key:`, `team:`, `user:`: the payload prefixes of `crate::notify`, so that the SQL that
/// builds payloads (`'key:' || token`) says what `Change::payload` says.
pub(crate) fn prefix(kind: &str) -> String {
    let change = match kind {
        "key" => Change::Key(String::new()),
        "team" => Change::Team(String::new()),
        _ => Change::User(String::new()),
    };
    change.payload()
}

/// The body as a JSON object; an empty body is `{}`. Otherwise FastAPI's 422.
pub(crate) fn body_object(body: &[u8]) -> Result<Map<String, Value>, ManageReply> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(unprocessable(vec![detail(
            "model_attributes_type",
            &["body"],
            "Input should be a valid dictionary or object to extract fields from",
            other,
        )])),
        Err(e) => Err(unprocessable(vec![json!({
            "type": "json_invalid", "loc": ["body", e.column()], "msg": "JSON decode error",
            "input": {}, "ctx": {"error": e.to_string()},
        })])),
    }
}

/// One entry of FastAPI's validation `detail` list.
pub(crate) fn detail(kind: &str, loc: &[&str], msg: &str, input: Value) -> Value {
    json!({"type": kind, "loc": loc, "msg": msg, "input": input})
}

/// FastAPI's request validation error: 422 `{"detail": [...]}`.
pub(crate) fn unprocessable(details: Vec<Value>) -> ManageReply {
    ManageReply::json(422, &json!({ "detail": details }))
}

/// 422 for a required body field that is missing.
pub(crate) fn missing(field: &str, body: &Map<String, Value>) -> ManageReply {
    unprocessable(vec![detail("missing", &["body", field], "Field required", Value::Object(body.clone()))])
}

/// LiteLLM's management handler turns `HTTPException(detail={"error": m})` into a message
/// that is Python's `str()` of that dict: `{'error': 'm'}`.
pub(crate) fn py_dict(key: &str, message: &str) -> String {
    if message.contains('\'') && !message.contains('"') {
        format!("{{'{key}': \"{message}\"}}")
    } else {
        format!("{{'{key}': '{}'}}", message.replace('\'', "\\'"))
    }
}

/// The type LiteLLM gives an HTTPException's status on management routes.
pub(crate) fn kind_for(status: u16) -> &'static str {
    match status {
        400 | 404 | 409 | 422 => "invalid_request_error",
        401 | 403 => "auth_error",
        429 => "rate_limit_error",
        _ => "internal_server_error",
    }
}

/// `HTTPException(status, detail={"error": message})` as LiteLLM answers it (its `param` is
/// always null).
pub(crate) fn http_error(status: u16, message: &str) -> ManageReply {
    ManageReply::error(status, kind_for(status), &py_dict("error", message), None)
}

pub(crate) fn bad_request(message: &str, param: Option<&str>) -> ManageReply {
    ManageReply::error(400, "bad_request_error", message, param)
}

pub(crate) fn not_found(message: &str, param: Option<&str>) -> ManageReply {
    ManageReply::error(404, "not_found_error", message, param)
}

/// A database error. Constraint violations are the caller's (a team id that exists, an
/// organization that does not): 400 naming the constraint; anything else is ours: 500.
pub(crate) fn db_error(e: tokio_postgres::Error) -> ManageReply {
    if let Some(db) = e.as_db_error() {
        let code = db.code().code();
        // 23: integrity (unique, foreign key, not null); 22: data (a bad date, a number
        // out of range).
        if code.starts_with("23") || code.starts_with("22") {
            let message = format!("{} ({})", db.message(), db.detail().unwrap_or(""));
            return ManageReply::error(400, "bad_request_error", &message, db.column());
        }
    }
    let text = match e.as_db_error() {
        Some(db) => format!("{}: {}", db.code().code(), db.message()),
        None => e.to_string(),
    };
    ManageReply::error(500, "internal_server_error", &format!("database error: {text}"), None)
}

/// `sha256(key).hexdigest()`: the `token` column.
pub(crate) fn sha256_hex(key: &str) -> String {
    Sha256::digest(key.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// LiteLLM's `hash_token_if_needed`: a raw `sk-…` key is hashed, anything else is a token.
pub(crate) fn token_of(key: &str) -> String {
    if key.starts_with("sk-") {
        sha256_hex(key)
    } else {
        key.to_string()
    }
}

pub(crate) fn is_token(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// `abbreviate_api_key`: `sk-...abcd` (the `key_name` column), never the key itself.
pub(crate) fn abbreviate(key: &str) -> String {
    if key.len() < 16 {
        return "sk-...".to_string();
    }
    let tail: String = key.chars().rev().take(4).collect::<Vec<_>>().into_iter().rev().collect();
    format!("sk-...{tail}")
}

/// A random UUID (version 4), for ids the caller leaves out (`user_id`), as LiteLLM's
/// `uuid.uuid4()`.
pub(crate) fn uuid4() -> Result<String, ManageReply> {
    use ring::rand::SecureRandom;
    let mut b = [0u8; 16];
    ring::rand::SystemRandom::new()
        .fill(&mut b)
        .map_err(|_| ManageReply::error(500, "internal_server_error", "no randomness available", None))?;
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    Ok(format!("{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..]))
}

/// Timestamp columns (LiteLLM stores UTC in `timestamp without time zone`).
const TIME_COLUMNS: &[&str] = &[
    "expires",
    "budget_reset_at",
    "created_at",
    "updated_at",
    "last_active",
    "last_rotation_at",
    "key_rotation_at",
    "settings_updated_at",
    "deleted_at",
    "last_breach_check_at",
    "startTime",
    "endTime",
    "completionStartTime",
];

/// `double precision` columns: `to_jsonb` writes 20.0 as `20`; LiteLLM (Python floats) as `20.0`.
const FLOAT_COLUMNS: &[&str] = &["spend", "max_budget", "soft_budget", "total_spend"];

/// Every number of a JSON object as a float (`{"gpt": 1}` → `{"gpt": 1.0}`): spend per
/// model, per user, per key.
pub(crate) fn floats(mut value: Value) -> Value {
    if let Value::Object(map) = &mut value {
        for v in map.values_mut() {
            if let Some(n) = v.as_f64() {
                *v = json!(n);
            }
        }
    }
    value
}

/// A row as `to_jsonb` gives it, with its times marked UTC (`…T12:00:00.123Z`), as ISO 8601
/// with a zone is what LiteLLM's clients parse, and its money as floats.
pub(crate) fn row_json(mut value: Value) -> Value {
    if let Value::Object(map) = &mut value {
        for column in FLOAT_COLUMNS {
            if let Some(n) = map.get(*column).and_then(Value::as_f64) {
                map.insert(column.to_string(), json!(n));
            }
        }
        for column in TIME_COLUMNS {
            if let Some(Value::String(text)) = map.get_mut(*column) {
                if !text.ends_with('Z') && !text.contains('+') {
                    text.push('Z');
                }
            }
        }
    }
    value
}

/// The decoded query string.
pub(crate) struct Query(Vec<(String, String)>);

impl Query {
    pub(crate) fn parse(query: &str) -> Query {
        let pairs = query.split('&').filter(|p| !p.is_empty()).map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (percent_decode(k), percent_decode(v))
        });
        Query(pairs.collect())
    }

    /// The last value given for `name` (FastAPI keeps the last), empty = absent.
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.0.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v.as_str()).filter(|v| !v.is_empty())
    }

    /// An integer query parameter within `min..=max`; FastAPI's 422 otherwise.
    pub(crate) fn int(&self, name: &str, default: i64, min: i64, max: i64) -> Result<i64, ManageReply> {
        let Some(text) = self.get(name) else { return Ok(default) };
        let loc = ["query", name];
        let n: i64 = text.parse().map_err(|_| {
            unprocessable(vec![detail(
                "int_parsing",
                &loc,
                "Input should be a valid integer, unable to parse string as an integer",
                json!(text),
            )])
        })?;
        if n < min {
            return Err(unprocessable(vec![detail(
                "greater_than_equal",
                &loc,
                &format!("Input should be greater than or equal to {min}"),
                json!(text),
            )]));
        }
        if n > max {
            return Err(unprocessable(vec![detail(
                "less_than_equal",
                &loc,
                &format!("Input should be less than or equal to {max}"),
                json!(text),
            )]));
        }
        Ok(n)
    }

    /// A boolean query parameter as pydantic reads one (`true`/`1`/`yes`/`on`, …).
    pub(crate) fn bool(&self, name: &str, default: bool) -> Result<bool, ManageReply> {
        let Some(text) = self.get(name) else { return Ok(default) };
        match text.to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" | "on" | "t" | "y" => Ok(true),
            "false" | "0" | "no" | "off" | "f" | "n" => Ok(false),
            _ => Err(unprocessable(vec![detail(
                "bool_parsing",
                &["query", name],
                "Input should be a valid boolean, unable to interpret input",
                json!(text),
            )])),
        }
    }
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                match std::str::from_utf8(&bytes[i + 1..i + 3]).ok().and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(b) => {
                        out.push(b);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A path segment, decoded (`/key/{key}/regenerate`).
pub(crate) fn decode_segment(segment: &str) -> String {
    percent_decode(&segment.replace('+', "%2B"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_and_segments_decode() {
        let q = Query::parse("key=sk-a%2Bb&page=2&x=");
        assert_eq!(q.get("key"), Some("sk-a+b"));
        assert_eq!(q.get("x"), None);
        assert_eq!(q.int("page", 1, 1, 10).unwrap(), 2);
        assert_eq!(q.int("size", 10, 1, 100).unwrap(), 10);
        assert_eq!(q.int("page", 1, 3, 10).unwrap_err().status, 422);
        assert_eq!(percent_decode("a%2"), "a%2");
        assert_eq!(decode_segment("sk-a+b%2F"), "sk-a+b/");
    }

    #[test]
    fn names_and_errors_look_like_litellm() {
        assert_eq!(abbreviate("sk-1234567890abcdef"), "sk-...cdef");
        assert_eq!(abbreviate("sk-short"), "sk-...");
        assert_eq!(py_dict("error", "No keys found"), "{'error': 'No keys found'}");
        assert_eq!(py_dict("error", "it's"), "{'error': \"it's\"}");
        assert_eq!(token_of("abc"), "abc");
        assert!(is_token(&token_of("sk-x")));
        assert_eq!(row_json(json!({"expires": "2025-01-01T00:00:00", "x": "y"}))["expires"], "2025-01-01T00:00:00Z");
    }
}
