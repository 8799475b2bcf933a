//! A request body's top-level members as a deployment takes them: members the gateway adds
//! where the request does not set them (the deployment's `extra_body` and request defaults, a
//! stream's usage request), and `max_tokens` sent as `max_completion_tokens` to the models that
//! refuse it. One edit for a body forwarded as it came and for the OpenAI chat body a translation
//! starts from; the body is not parsed into a tree, only its top-level names are read.

use std::fmt;

use pointwork_core::{Deployment, Dialect};
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::facts::member_span;

const MAX_TOKENS: &str = "max_tokens";
const MAX_COMPLETION_TOKENS: &str = "max_completion_tokens";

/// The top level of a request body: its member names, and the raw values the gateway looks
/// into (the `provider` and `extra_body` blocks, `max_tokens`).
#[derive(Default)]
pub(crate) struct TopKeys<'a> {
    pub(crate) names: Vec<&'a str>,
    pub(crate) provider: Option<&'a RawValue>,
    pub(crate) extra_body: Option<&'a RawValue>,
    max_tokens: Option<&'a RawValue>,
}

impl<'a> TopKeys<'a> {
    /// Reads `body` (a JSON object the facts extraction already accepted; anything else
    /// reads as empty).
    pub(crate) fn read(body: &'a [u8]) -> TopKeys<'a> {
        let mut de = serde_json::Deserializer::from_slice(body);
        (&mut de).deserialize_map(TopVisitor).unwrap_or_default()
    }

    pub(crate) fn has(&self, name: &str) -> bool {
        self.names.contains(&name)
    }
}

struct TopVisitor;

impl<'de> Visitor<'de> for TopVisitor {
    type Value = TopKeys<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TopKeys<'de>, A::Error> {
        let mut keys = TopKeys::default();
        while let Some(name) = map.next_key::<&'de str>()? {
            match name {
                "provider" => keys.provider = Some(map.next_value()?),
                "extra_body" => keys.extra_body = Some(map.next_value()?),
                MAX_TOKENS => keys.max_tokens = Some(map.next_value()?),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            keys.names.push(name);
        }
        Ok(keys)
    }
}

/// Deployment `d`'s request defaults that a body of `shape` takes (`None`: none does). An
/// OpenAI chat body takes every one; a Messages or Responses body those its API names alike
/// (as LiteLLM's `anthropic_messages` and `responses` take them by name); Gemini's and
/// Bedrock's bodies get theirs through the chat body they are translated from.
pub(super) fn request_defaults(d: &Deployment, shape: Option<Dialect>) -> impl Iterator<Item = (&str, &str)> {
    let takes = move |name: &str| match shape {
        Some(Dialect::OpenAiChat) => true,
        Some(Dialect::AnthropicMessages) => matches!(name, "max_tokens" | "temperature" | "top_p" | "thinking"),
        Some(Dialect::OpenAiResponses) => matches!(
            name,
            "temperature"
                | "top_p"
                | "top_logprobs"
                | "parallel_tool_calls"
                | "store"
                | "user"
                | "service_tier"
                | "safety_identifier"
                | "prompt_cache_key"
                | "prompt_cache_retention"
        ),
        Some(Dialect::Gemini | Dialect::BedrockConverse) | None => false,
    };
    d.request_defaults.iter().map(|(n, v)| (&**n, &**v)).filter(move |(n, _)| takes(n))
}

/// `body` (a JSON object) with each of `added` (name, JSON value) that the request does not set
/// itself, nor an earlier one of `added`, put first; and, with `as_max_completion_tokens`,
/// `max_tokens` — the request's own or an added one — named `max_completion_tokens`, or left
/// out where that is set too (the request's own wins over an added one; of two added, the
/// one named `max_completion_tokens`).
pub(crate) fn edited(body: &[u8], added: &[(&str, &str)], as_max_completion_tokens: bool) -> Vec<u8> {
    let top = TopKeys::read(body);
    let own_completion_tokens =
        top.has(MAX_COMPLETION_TOKENS) || (as_max_completion_tokens && top.max_tokens.is_some());
    let added_completion_tokens = added.iter().any(|(name, _)| *name == MAX_COMPLETION_TOKENS);
    let mut members = Vec::new();
    let mut written: Vec<&str> = Vec::with_capacity(added.len());
    for &(name, value) in added {
        let name = match name {
            _ if top.has(name) => continue,
            MAX_TOKENS | MAX_COMPLETION_TOKENS if as_max_completion_tokens && own_completion_tokens => continue,
            MAX_TOKENS if as_max_completion_tokens && added_completion_tokens => continue,
            MAX_TOKENS if as_max_completion_tokens => MAX_COMPLETION_TOKENS,
            name => name,
        };
        if written.contains(&name) {
            continue;
        }
        written.push(name);
        members.push(b'"');
        // Names come from the config's map keys: quote them as JSON does.
        let quoted = serde_json::Value::from(name).to_string();
        members.extend_from_slice(&quoted.as_bytes()[1..quoted.len() - 1]);
        members.extend_from_slice(b"\":");
        members.extend_from_slice(value.as_bytes());
        members.push(b',');
    }
    // The request's own `max_tokens`: renamed, or cut when it sets `max_completion_tokens` too.
    let own = top.max_tokens.filter(|_| as_max_completion_tokens).and_then(|raw| {
        let at = raw.get().as_ptr() as usize - body.as_ptr() as usize;
        let value = at..at + raw.get().len();
        match top.has(MAX_COMPLETION_TOKENS) {
            true => member_span(body, value).map(|cut| (cut, &b""[..])),
            false => key_span(body, value.start).map(|key| (key, &br#""max_completion_tokens""#[..])),
        }
    });
    // The body is an object (the facts extraction said so): its first `{` opens it, and the
    // members put before its first one end with a comma. An empty object takes them without
    // their last comma.
    let open = body.iter().position(|&b| b == b'{').map_or(0, |at| at + 1);
    if body[open..].iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'}') && members.last() == Some(&b',') {
        members.pop();
    }
    let mut out = Vec::with_capacity(body.len() + members.len() + MAX_COMPLETION_TOKENS.len());
    out.extend_from_slice(&body[..open]);
    out.extend_from_slice(&members);
    match own {
        Some((range, with)) => {
            out.extend_from_slice(&body[open..range.start]);
            out.extend_from_slice(with);
            out.extend_from_slice(&body[range.end..]);
        }
        None => out.extend_from_slice(&body[open..]),
    }
    out
}

/// The key (quotes included) of the member whose value starts at `value` in a valid JSON body.
fn key_span(body: &[u8], value: usize) -> Option<std::ops::Range<usize>> {
    let before = |at: usize| body[..at].iter().rposition(|b| !b.is_ascii_whitespace());
    let colon = before(value).filter(|&at| body[at] == b':')?;
    let end = before(colon).filter(|&at| body[at] == b'"')?;
    // A key holds no unescaped quote, and an escaped one cannot spell `max_tokens`.
    let start = memchr::memrchr(b'"', &body[..end])?;
    Some(start..end + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(body: &str, added: &[(&str, &str)], rename: bool) -> String {
        let out = String::from_utf8(edited(body.as_bytes(), added, rename)).unwrap();
        serde_json::from_str::<serde_json::Value>(&out).unwrap_or_else(|e| panic!("{out}: {e}"));
        out
    }

    #[test]
    fn added_members_go_first_unless_the_request_or_an_earlier_one_sets_them() {
        let added = [("temperature", "0.2"), ("stop", r#"["x"]"#), ("temperature", "0.9"), ("seed", "7")];
        assert_eq!(
            edit(r#"{"model":"m","stop":null,"messages":[]}"#, &added, false),
            r#"{"temperature":0.2,"seed":7,"model":"m","stop":null,"messages":[]}"#
        );
        assert_eq!(edit(r#" { } "#, &[("n", "2"), ("seed", "1")], false), r#" {"n":2,"seed":1 } "#);
        assert_eq!(edit(r#"{"model":"m"}"#, &[], true), r#"{"model":"m"}"#);
    }

    #[test]
    fn max_tokens_goes_as_max_completion_tokens_where_asked() {
        let body = r#"{"model":"m", "max_tokens" : 5,"messages":[]}"#;
        assert_eq!(edit(body, &[], true), r#"{"model":"m", "max_completion_tokens" : 5,"messages":[]}"#);
        assert_eq!(edit(body, &[], false), body);
        // The request's own wins over a default of either name.
        assert_eq!(
            edit(body, &[("max_tokens", "9"), ("max_completion_tokens", "8")], true),
            r#"{"model":"m", "max_completion_tokens" : 5,"messages":[]}"#
        );
        // Both in the request: `max_completion_tokens` stays, `max_tokens` goes.
        assert_eq!(
            edit(r#"{"model":"m","max_tokens":5,"max_completion_tokens":6}"#, &[], true),
            r#"{"model":"m","max_completion_tokens":6}"#
        );
        assert_eq!(
            edit(r#"{"model":"m","max_completion_tokens":6,"max_tokens":5}"#, &[], true),
            r#"{"model":"m","max_completion_tokens":6}"#
        );
        // A default `max_tokens` is renamed; beside a default `max_completion_tokens` it goes.
        assert_eq!(
            edit(r#"{"model":"m"}"#, &[("max_tokens", "9")], true),
            r#"{"max_completion_tokens":9,"model":"m"}"#
        );
        assert_eq!(
            edit(r#"{"model":"m"}"#, &[("max_tokens", "9"), ("max_completion_tokens", "8")], true),
            r#"{"max_completion_tokens":8,"model":"m"}"#
        );
        assert_eq!(
            edit(r#"{"model":"m","max_completion_tokens":1}"#, &[("max_tokens", "9")], true),
            r#"{"model":"m","max_completion_tokens":1}"#
        );
        // Without the rename both names go as they are.
        assert_eq!(
            edit(r#"{"model":"m","max_tokens":5}"#, &[("max_completion_tokens", "8")], false),
            r#"{"max_completion_tokens":8,"model":"m","max_tokens":5}"#
        );
    }
}
