//! What a request says about the cache (helper: controls): the body's `cache` object
//! (LiteLLM's `no-cache`, `no-store`, `ttl`, `s-maxage` / `s-max-age`, `namespace`,
//! `use-cache`), the `Cache-Control` header, and what the caller's key allows
//! (`allowed_cache_controls`).
//!
//! The body's `cache` wins over the headers where both set one control. Headers (a Pointwork
//! extension; LiteLLM reads only `s-maxage`, as the write TTL): `Cache-Control: no-cache`,
//! `no-store`, `max-age=N` (only an entry at most N seconds old is a hit), `s-maxage=N` (the
//! entry's TTL), and `x-pointwork-cache-namespace: NS`. Top-level `caching: false` skips the
//! lookup, as in LiteLLM.

use std::time::Duration;

use serde_json::{Map, Value};

/// The request header naming the namespace (the body's `cache.namespace` wins over it).
pub(crate) const HEADER_NAMESPACE: &str = "x-pointwork-cache-namespace";

/// The longest namespace, in bytes.
const NAMESPACE_MAX: usize = 128;

/// The request's cache controls.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Controls {
    /// Do not read: the answer comes from upstream (and is stored, unless `no_store`).
    pub(crate) no_cache: bool,
    /// Do not store the answer.
    pub(crate) no_store: bool,
    /// The entry's time to live, instead of the config's.
    pub(crate) ttl: Option<Duration>,
    /// Only an entry younger than this is a hit.
    pub(crate) max_age: Option<Duration>,
    /// The namespace, instead of the config's.
    pub(crate) namespace: Option<String>,
    /// `use-cache: true`: under `mode: default_off`, this request is cached.
    pub(crate) use_cache: bool,
}

/// Why a request's controls are refused: the status (400 for a bad value, 403 for a control
/// its key may not set) and the message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Refused {
    pub(crate) status: u16,
    pub(crate) message: String,
}

/// Reads the controls of a request: its body, its head (`raw_head`, for `Cache-Control`), and
/// the controls its key may set (`None` or empty: any).
pub(crate) fn read(
    body: &Map<String, Value>,
    raw_head: &[u8],
    allowed: Option<&[String]>,
) -> Result<Controls, Refused> {
    let cache = match body.get("cache") {
        None | Some(Value::Null) => None,
        Some(Value::Object(cache)) => Some(cache),
        Some(_) => return Err(bad("cache", "an object of cache controls")),
    };
    let headers = read_headers(raw_head)?;
    if let Some(allowed) = allowed.filter(|a| !a.is_empty()) {
        let permits = |name: &str| allowed.iter().any(|a| a == name);
        for name in cache.into_iter().flat_map(|c| c.keys()) {
            if !permits(name) {
                return Err(not_allowed(name));
            }
        }
        // What a header sets is named as the body would set it.
        if headers.max_age.is_some() && !permits("s-maxage") && !permits("s-max-age") {
            return Err(not_allowed("s-maxage"));
        }
        let set = [
            ("no-cache", headers.no_cache),
            ("no-store", headers.no_store),
            ("ttl", headers.ttl.is_some()),
            ("namespace", headers.namespace.is_some()),
        ];
        if let Some((name, _)) = set.into_iter().find(|(name, set)| *set && !permits(name)) {
            return Err(not_allowed(name));
        }
    }
    let mut controls = headers;
    // Top-level `caching: false` skips the lookup whatever else says.
    let caching_off = body.get("caching") == Some(&Value::Bool(false));
    controls.no_cache |= caching_off;
    let Some(cache) = cache else { return Ok(controls) };
    if let Some(v) = flag(cache, "no-cache")? {
        controls.no_cache = v;
    }
    if let Some(v) = flag(cache, "no-store")? {
        controls.no_store = v;
    }
    if let Some(v) = flag(cache, "use-cache")? {
        controls.use_cache = v;
    }
    if let Some(v) = seconds(cache, "ttl", false)? {
        controls.ttl = Some(v);
    }
    // LiteLLM reads `s-max-age` first, then `s-maxage`.
    if let Some(v) = seconds(cache, "s-max-age", true)?.or(seconds(cache, "s-maxage", true)?) {
        controls.max_age = Some(v);
    }
    match cache.get("namespace") {
        None | Some(Value::Null) => {}
        Some(Value::String(ns)) if valid_namespace(ns) => controls.namespace = Some(ns.clone()),
        Some(_) => return Err(bad("cache.namespace", NAMESPACE_EXPECTED)),
    }
    controls.no_cache |= caching_off;
    Ok(controls)
}

const NAMESPACE_EXPECTED: &str = "a non-empty string of at most 128 bytes without control characters";

/// `cache.{name}`: `true`, `false`, or not set (absent or null).
fn flag(cache: &Map<String, Value>, name: &str) -> Result<Option<bool>, Refused> {
    match cache.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(bad(&format!("cache.{name}"), "true or false")),
    }
}

/// `cache.{name}` in seconds (a number, > 0 or, with `zero_ok`, ≥ 0), or not set.
fn seconds(cache: &Map<String, Value>, name: &str, zero_ok: bool) -> Result<Option<Duration>, Refused> {
    let expected = if zero_ok { "a number of seconds, 0 or more" } else { "a number of seconds greater than 0" };
    match cache.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => {
            let secs = n.as_f64().filter(|s| if zero_ok { *s >= 0.0 } else { *s > 0.0 });
            let duration = secs.and_then(|s| Duration::try_from_secs_f64(s).ok());
            duration.map(Some).ok_or_else(|| bad(&format!("cache.{name}"), expected))
        }
        Some(_) => Err(bad(&format!("cache.{name}"), expected)),
    }
}

fn valid_namespace(ns: &str) -> bool {
    !ns.is_empty() && ns.len() <= NAMESPACE_MAX && !ns.chars().any(char::is_control)
}

/// The controls the request's headers set.
fn read_headers(raw_head: &[u8]) -> Result<Controls, Refused> {
    let mut controls = Controls::default();
    // The request line comes first; a header's name ends at its colon.
    for line in raw_head.split(|b| *b == b'\n').skip(1) {
        let Some(colon) = line.iter().position(|b| *b == b':') else { continue };
        let (name, value) = (line[..colon].trim_ascii(), line[colon + 1..].trim_ascii());
        if name.eq_ignore_ascii_case(b"cache-control") {
            for directive in value.split(|b| *b == b',') {
                cache_control(&mut controls, directive.trim_ascii())?;
            }
        } else if name.eq_ignore_ascii_case(HEADER_NAMESPACE.as_bytes()) {
            match std::str::from_utf8(value).ok().filter(|ns| valid_namespace(ns)) {
                Some(ns) => controls.namespace = Some(ns.to_string()),
                None => return Err(bad(HEADER_NAMESPACE, NAMESPACE_EXPECTED)),
            }
        }
    }
    Ok(controls)
}

/// One `Cache-Control` directive; others than `no-cache`, `no-store`, `max-age` and `s-maxage`
/// are ignored.
fn cache_control(controls: &mut Controls, directive: &[u8]) -> Result<(), Refused> {
    let (name, value) = match directive.iter().position(|b| *b == b'=') {
        Some(eq) => (directive[..eq].trim_ascii(), Some(directive[eq + 1..].trim_ascii())),
        None => (directive, None),
    };
    let lower = name.to_ascii_lowercase();
    let secs = |positive: bool| -> Result<Duration, Refused> {
        let name = String::from_utf8_lossy(&lower);
        let expected = if positive { "whole seconds greater than 0" } else { "whole seconds, 0 or more" };
        let text = value.map(|v| v.strip_prefix(b"\"").and_then(|v| v.strip_suffix(b"\"")).unwrap_or(v));
        let n = text.and_then(|t| std::str::from_utf8(t).ok()).and_then(|t| t.parse::<u64>().ok());
        n.filter(|n| !positive || *n > 0)
            .map(Duration::from_secs)
            .ok_or_else(|| bad(&format!("Cache-Control: {name}"), expected))
    };
    match lower.as_slice() {
        b"no-cache" => controls.no_cache = true,
        b"no-store" => controls.no_store = true,
        b"max-age" => controls.max_age = Some(secs(false)?),
        b"s-maxage" => controls.ttl = Some(secs(true)?),
        _ => {}
    }
    Ok(())
}

fn bad(what: &str, expected: &str) -> Refused {
    Refused { status: 400, message: format!("{what}: expected {expected}") }
}

/// LiteLLM's refusal of a control the key may not set.
fn not_allowed(name: &str) -> Refused {
    Refused {
        status: 403,
        message: format!("Not allowed to set {name} as a cache control. Contact admin to change permissions."),
    }
}

#[cfg(test)]
#[path = "controls_tests.rs"]
mod tests;
