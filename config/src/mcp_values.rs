//! The values of an `mcp_servers` entry that need more than a [`Kind`](crate::kinds::Kind):
//! the credential (`auth_type` with `auth_value`), header maps and names, the URL, and the server
//! id LiteLLM derives for an entry that does not pin one.

use base64::Engine;
use sha2::{Digest, Sha256};

use crate::check::{Checker, Fields};
use crate::kinds::{self, Kind};
use crate::mcp::McpAuth;
use crate::node::Node;

const AUTH_TYPES: Kind<&'static str> = Kind {
    expected: "one of none, bearer_token, api_key, basic, token, authorization",
    parse: |n| match n {
        Node::Str(s) => {
            ["none", "bearer_token", "api_key", "basic", "token", "authorization"].into_iter().find(|t| *t == s.trim())
        }
        _ => None,
    },
    secret: false,
};

/// `auth_type` with `authentication_token` (else `auth_value`), as the header value LiteLLM
/// sends: a `Bearer ` or `token ` written before the credential is not doubled, `basic`'s
/// `user:password` is base64-encoded. A type without a value, or a value without a type, sends
/// nothing (as LiteLLM) and is warned about.
pub(crate) fn auth(c: &mut Checker, f: &mut Fields) -> Option<McpAuth> {
    let type_path = f.path.key("auth_type");
    let kind = c.optional(f, "auth_type", &AUTH_TYPES);
    let token = c.optional(f, "authentication_token", &kinds::SECRET);
    let value = c.optional(f, "auth_value", &kinds::SECRET);
    let value = token.or(value).map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
    let auth = match (kind, value) {
        (None | Some("none"), None) => McpAuth::None,
        (None | Some("none"), Some(_)) => {
            let path = f.path.key("auth_value");
            c.warn(path, "ignored: no auth_type says how to send it (none is sent)");
            McpAuth::None
        }
        (Some(kind), None) => {
            c.warn(type_path, format!("{kind} without auth_value: no credential is sent"));
            McpAuth::None
        }
        (Some("bearer_token"), Some(v)) => McpAuth::Bearer(strip_scheme(&v, "Bearer").to_string()),
        (Some("token"), Some(v)) => McpAuth::Token(strip_scheme(&v, "token").to_string()),
        (Some("basic"), Some(v)) => McpAuth::Basic(basic_credentials(&v)),
        (Some("api_key"), Some(v)) => McpAuth::ApiKey(v),
        (Some(_), Some(v)) => McpAuth::Authorization(v),
    };
    Some(auth)
}

/// The credential after a leading `scheme` (any case) and the space after it; the value as it is
/// when it does not start with the scheme or has nothing after it.
fn strip_scheme<'v>(value: &'v str, scheme: &str) -> &'v str {
    match value.split_once(char::is_whitespace) {
        Some((first, rest)) if first.eq_ignore_ascii_case(scheme) && !rest.trim().is_empty() => rest.trim(),
        _ => value,
    }
}

/// LiteLLM's `to_basic_credentials`: `user:password` is encoded; `Basic <base64>` is kept as its
/// credentials; `Basic user:password` (not base64) is encoded without the scheme.
pub(crate) fn basic_credentials(value: &str) -> String {
    let b64 = base64::engine::general_purpose::STANDARD;
    let credentials = strip_scheme(value, "Basic");
    if credentials.len() != value.len() && b64.decode(credentials).is_ok() {
        return credentials.to_string();
    }
    b64.encode(credentials)
}

/// A map of strings under `key` (`static_headers`: header names and values; `env`: variables),
/// in the order written. Numbers are taken as written (YAML leaves `PORT: 8080` a number).
pub(crate) fn string_map(c: &mut Checker, f: &mut Fields, key: &str, headers: bool) -> Vec<(String, String)> {
    let Some((node, path)) = f.take(key) else { return Vec::new() };
    if matches!(node, Node::Null) {
        return Vec::new();
    }
    let Some(node) = c.resolved(node, &path) else { return Vec::new() };
    let Some(map) = c.map(&node, path) else { return Vec::new() };
    let mut out = Vec::new();
    for (name, value, path) in map.untaken() {
        let value = match value {
            Node::Str(s) => s.clone(),
            Node::Int(i) => i.to_string(),
            Node::Float(x) => x.to_string(),
            other => {
                c.error(&path, format!("expected a string, got {}", other.describe_kind()));
                continue;
            }
        };
        if headers && !is_header_name(name) {
            c.error(&path, "not a header name (letters, digits and !#$%&'*+-.^_`|~)");
        } else if headers && value.contains(['\r', '\n', '\0']) {
            c.error(&path, "a header value must not contain a line break or NUL");
        } else {
            out.push((name.to_string(), if headers { value.trim().to_string() } else { value }));
        }
    }
    out
}

/// `extra_headers`: the names of the caller's headers passed on.
pub(crate) fn header_names(c: &mut Checker, f: &mut Fields) -> Vec<String> {
    let path = f.path.key("extra_headers");
    let names = c.optional(f, "extra_headers", &kinds::STRING_LIST).unwrap_or_default();
    for (i, name) in names.iter().enumerate() {
        if !is_header_name(name) {
            c.error(path.index(i), format!("{name:?} is not a header name (letters, digits and !#$%&'*+-.^_`|~)"));
        }
    }
    names
}

/// An HTTP field name (RFC 9110's token).
fn is_header_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// `url` of an http or sse server: an `http://` or `https://` URL with a host.
pub(crate) fn url(c: &mut Checker, f: &mut Fields, transport: &str) -> Option<String> {
    let url = c.optional(f, "url", &kinds::STRING);
    let path = f.path.key("url");
    let Some(url) = url else {
        c.error(path, format!("required for transport {transport} (an http:// or https:// URL)"));
        return None;
    };
    let url = url.trim();
    let rest = ["http://", "https://"].iter().find_map(|scheme| {
        url.get(..scheme.len()).filter(|s| s.eq_ignore_ascii_case(scheme)).map(|_| &url[scheme.len()..])
    });
    match rest {
        Some(rest) if !rest.is_empty() && !rest.starts_with(['/', '?', '#']) && !rest.contains(char::is_whitespace) => {
            Some(url.to_string())
        }
        _ => {
            c.error(path, format!("expected an http:// or https:// URL with a host, got {url:?}"));
            None
        }
    }
}

/// The id LiteLLM gives a config server that pins none: the first 32 hex digits of the SHA-256
/// of `name|url|transport|auth_type|alias` (`source` is `url|transport|auth_type`), so a key's
/// object permission written by LiteLLM names the same server here.
pub(crate) fn derived_server_id(name: &str, source: &str, alias: Option<&str>) -> String {
    let digest = Sha256::digest(format!("{name}|{source}|{}", alias.unwrap_or("")));
    digest[..16].iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_credentials_are_encoded_once() {
        assert_eq!(basic_credentials("user:pass"), "dXNlcjpwYXNz");
        assert_eq!(basic_credentials("Basic dXNlcjpwYXNz"), "dXNlcjpwYXNz");
        assert_eq!(basic_credentials("basic user:pass"), "dXNlcjpwYXNz");
        // Without the scheme LiteLLM encodes whatever is written, base64 or not.
        assert_eq!(basic_credentials("dXNlcjpwYXNz"), "ZFhObGNqcHdZWE56");
    }

    #[test]
    fn a_scheme_written_before_the_credential_is_not_doubled() {
        assert_eq!(strip_scheme("Bearer abc", "Bearer"), "abc");
        assert_eq!(strip_scheme("bearer abc", "Bearer"), "abc");
        assert_eq!(strip_scheme("Bearerabc", "Bearer"), "Bearerabc");
        assert_eq!(strip_scheme("Bearer ", "Bearer"), "Bearer ");
    }

    #[test]
    fn derived_ids_are_litellms() {
        // hashlib.sha256(b"github|https://api.githubcopilot.com/mcp|http||").hexdigest()[:32]
        let id = derived_server_id("github", "https://api.githubcopilot.com/mcp|http|", None);
        assert_eq!(id, "d7ae332d01f2fb4e2ec4912da756f5a2");
    }
}
