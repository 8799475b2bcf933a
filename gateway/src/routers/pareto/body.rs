//! The request body and the `provider` block: whether a request carries its own
//! `provider.only` (refused under `strict_provider`), and the deployment's `extra_body` members
//! with the `provider` block as the walk rewrote it (the forward phase adds those the request
//! does not set itself, as LiteLLM does: `crate::pipeline::parameters`).

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use pointwork_core::DeploymentIdx;

use crate::pipeline::parameters::TopKeys;
use crate::routes::Routes;

/// Whether the request pins its own providers: `provider.only` at the top level (how the
/// OpenAI SDK's `extra_body` arrives) or under a literal `extra_body.provider`.
pub(crate) fn carries_provider_only(top: &TopKeys<'_>) -> bool {
    let parse = |raw: Option<&RawValue>| raw.and_then(|r| serde_json::from_str::<Value>(r.get()).ok());
    let only_in = |block: Option<&Value>| block.and_then(|p| p.get("only")).is_some_and(|o| !o.is_null());
    let (provider, extra_body) = (parse(top.provider), parse(top.extra_body));
    only_in(provider.as_ref()) || only_in(extra_body.as_ref().and_then(|e| e.get("provider")))
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

/// The `provider` block sent to deployment `idx` when the walk edits it (`edit`), else `None`:
/// the configured one, if any, goes as written.
pub(crate) fn walked_provider_block(
    routes: &Routes,
    edit: Option<&ProviderEdit>,
    idx: DeploymentIdx,
) -> Option<String> {
    let pin = routes.pareto.as_ref().map(|p| &p.pins[idx.get()]);
    match (edit, pin) {
        (Some(edit), Some(pin)) => provider_block(pin.provider.as_deref(), edit),
        _ => None,
    }
}

/// Deployment `configured`'s `extra_body` members, the `provider` block (`walked`, else the
/// configured one) first.
pub(crate) fn extra_body_members<'a>(
    configured: &'a [(Box<str>, Box<str>)],
    walked: Option<&'a str>,
) -> impl Iterator<Item = (&'a str, &'a str)> {
    let configured_block = configured.iter().find(|(name, _)| &**name == "provider").map(|(_, v)| &**v);
    let block = walked.or(configured_block).map(|block| ("provider", block));
    block.into_iter().chain(configured.iter().filter(|(name, _)| &**name != "provider").map(|(n, v)| (&**n, &**v)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_top_level_names_and_the_callers_own_provider_pins_are_read() {
        let body = br#"{"model":"m","provider":{"only":["a/fp8"]},"messages":[]}"#;
        let top = TopKeys::read(body);
        assert_eq!(top.names, ["model", "provider", "messages"]);
        assert!(carries_provider_only(&top));
        let carries = |body: &[u8]| carries_provider_only(&TopKeys::read(body));
        assert!(carries(br#"{"model":"m","extra_body":{"provider":{"only":["x"]}}}"#));
        assert!(!carries(br#"{"model":"m","provider":{"sort":"price"}}"#));
        assert!(!carries(br#"{"model":"m","provider":{"only":null}}"#));
        assert!(!carries(br#"{"model":"m"}"#));
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
