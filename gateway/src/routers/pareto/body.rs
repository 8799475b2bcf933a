//! The request body and the `provider` block: which top-level members a request sets itself
//! (a deployment's `extra_body` never overrides them, as in LiteLLM), whether it carries its
//! own `provider.only` (refused under `strict_provider`), and the upstream body with the
//! deployment's `extra_body` members — the `provider` block as the walk rewrote it — added.

use std::fmt;

use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use pointwork_core::DeploymentIdx;

use crate::facts::Extracted;
use crate::http::write;
use crate::request::UpstreamHead;
use crate::routes::Routes;

/// The top level of a request body: its member names, and the raw `provider` and
/// `extra_body` values.
#[derive(Default)]
pub(crate) struct TopKeys<'a> {
    pub(crate) names: Vec<&'a str>,
    provider: Option<&'a RawValue>,
    extra_body: Option<&'a RawValue>,
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

    /// Whether the request pins its own providers: `provider.only` at the top level (how the
    /// OpenAI SDK's `extra_body` arrives) or under a literal `extra_body.provider`.
    pub(crate) fn carries_provider_only(&self) -> bool {
        let parse = |raw: Option<&RawValue>| raw.and_then(|r| serde_json::from_str::<Value>(r.get()).ok());
        let only_in = |block: Option<&Value>| block.and_then(|p| p.get("only")).is_some_and(|o| !o.is_null());
        let (provider, extra_body) = (parse(self.provider), parse(self.extra_body));
        only_in(provider.as_ref()) || only_in(extra_body.as_ref().and_then(|e| e.get("provider")))
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
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            keys.names.push(name);
        }
        Ok(keys)
    }
}

/// What the walk does to a deployment's `provider` block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ProviderEdit {
    /// Sent as the config wrote it (or not at all).
    AsIs,
    /// `only: [slug]`, `zdr: true`, `allow_fallbacks: false` over the configured block.
    Pin(String),
    /// The configured block without `only`, with `zdr: true` and `allow_fallbacks: false`:
    /// OpenRouter chooses.
    Unpin,
}

/// The `provider` block `edit` makes of `configured` (the deployment's `extra_body.provider`
/// JSON, if any); `None`: no block to send.
pub(crate) fn provider_block(configured: Option<&str>, edit: &ProviderEdit) -> Option<String> {
    let parsed = || configured.and_then(|c| serde_json::from_str::<Map<String, Value>>(c).ok()).unwrap_or_default();
    let mut block = match edit {
        ProviderEdit::AsIs => return configured.map(str::to_string),
        ProviderEdit::Pin(slug) => {
            let mut block = parsed();
            block.insert("only".into(), Value::from(vec![slug.clone()]));
            block
        }
        ProviderEdit::Unpin => {
            let mut block = parsed();
            block.remove("only");
            block
        }
    };
    block.insert("zdr".into(), Value::Bool(true));
    block.insert("allow_fallbacks".into(), Value::Bool(false));
    Some(Value::Object(block).to_string())
}

/// The upstream request for deployment `idx` with its `extra_body` members — the `provider`
/// block as the walk's `edit` makes it — that the request does not set itself.
pub(crate) fn with_extra_body(
    routes: &Routes,
    edit: Option<&ProviderEdit>,
    idx: DeploymentIdx,
    head: UpstreamHead<'_>,
    body: &[u8],
    extracted: &Extracted,
    model_json: &[u8],
) -> Vec<u8> {
    let configured = &routes.snapshot.deployment(idx).extra_body;
    let pin = routes.pareto.as_ref().map(|p| &p.pins[idx.get()]);
    let provider = match (edit, pin) {
        (Some(edit), Some(pin)) => provider_block(pin.provider.as_deref(), edit),
        _ => None,
    };
    let mut members: Vec<(&str, &str)> =
        configured.iter().filter(|(name, _)| &**name != "provider").map(|(n, v)| (&**n, &**v)).collect();
    match (&provider, configured.iter().find(|(name, _)| &**name == "provider")) {
        (Some(block), _) => members.insert(0, ("provider", block)),
        (None, Some((_, block))) => members.insert(0, ("provider", block)),
        (None, None) => {}
    }
    upstream_request_with(head, body, extracted, model_json, &members, &TopKeys::read(body))
}

/// The upstream request with `members` (name, JSON value) added at the top of the body, those
/// the request sets itself left out.
pub(crate) fn upstream_request_with(
    head: UpstreamHead<'_>,
    body: &[u8],
    extracted: &Extracted,
    model_json: &[u8],
    members: &[(&str, &str)],
    top: &TopKeys<'_>,
) -> Vec<u8> {
    let mut added = Vec::new();
    for (name, value) in members.iter().filter(|(name, _)| !top.has(name)) {
        added.push(b'"');
        // Names come from the config's map keys: quote them as JSON does.
        let quoted = Value::from(*name).to_string();
        added.extend_from_slice(&quoted.as_bytes()[1..quoted.len() - 1]);
        added.extend_from_slice(b"\":");
        added.extend_from_slice(value.as_bytes());
        added.push(b',');
    }
    let mut forwarded = Vec::with_capacity(extracted.forwarded_len(body, model_json));
    extracted.append_forwarded(&mut forwarded, body, model_json);
    // The body is an object with at least `model` in it: its first `{` opens it, and the
    // members added before the first one end with a comma.
    let open = forwarded.iter().position(|&b| b == b'{').map_or(0, |at| at + 1);
    let len = forwarded.len() + added.len();
    let mut out = Vec::with_capacity(head.len() + 32 + len);
    head.write_to(&mut out);
    write::header_decimal(&mut out, "content-length", len as u64);
    write::end_head(&mut out);
    out.extend_from_slice(&forwarded[..open]);
    out.extend_from_slice(&added);
    out.extend_from_slice(&forwarded[open..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_top_level_names_and_the_callers_own_provider_pins_are_read() {
        let body = br#"{"model":"m","provider":{"only":["a/fp8"]},"messages":[]}"#;
        let top = TopKeys::read(body);
        assert_eq!(top.names, ["model", "provider", "messages"]);
        assert!(top.carries_provider_only());
        assert!(TopKeys::read(br#"{"model":"m","extra_body":{"provider":{"only":["x"]}}}"#).carries_provider_only());
        assert!(!TopKeys::read(br#"{"model":"m","provider":{"sort":"price"}}"#).carries_provider_only());
        assert!(!TopKeys::read(br#"{"model":"m","provider":{"only":null}}"#).carries_provider_only());
        assert!(!TopKeys::read(br#"{"model":"m"}"#).carries_provider_only());
        assert!(TopKeys::read(b"[1]").names.is_empty());
    }

    #[test]
    fn the_provider_block_is_pinned_unpinned_or_left_as_written() {
        let configured = r#"{"only":["a/fp8","b/fp8"],"quantizations":["fp8"]}"#;
        let pinned = provider_block(Some(configured), &ProviderEdit::Pin("b/fp8".into())).unwrap();
        let v: Value = serde_json::from_str(&pinned).unwrap();
        assert_eq!(v["only"], serde_json::json!(["b/fp8"]));
        assert_eq!((v["zdr"].clone(), v["allow_fallbacks"].clone()), (Value::Bool(true), Value::Bool(false)));
        assert_eq!(v["quantizations"], serde_json::json!(["fp8"]));
        let unpinned: Value =
            serde_json::from_str(&provider_block(Some(configured), &ProviderEdit::Unpin).unwrap()).unwrap();
        assert!(unpinned.get("only").is_none());
        assert_eq!(unpinned["zdr"], Value::Bool(true));
        assert_eq!(provider_block(Some(configured), &ProviderEdit::AsIs).as_deref(), Some(configured));
        assert_eq!(provider_block(None, &ProviderEdit::AsIs), None);
        let fresh: Value =
            serde_json::from_str(&provider_block(None, &ProviderEdit::Pin("n/fp8".into())).unwrap()).unwrap();
        assert_eq!(fresh, serde_json::json!({"only": ["n/fp8"], "zdr": true, "allow_fallbacks": false}));
    }
}
