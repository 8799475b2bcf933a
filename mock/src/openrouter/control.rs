//! What tests set on the OpenRouter emulation at run time, as pure functions over the current
//! setting and a request body: per-provider behaviour (`POST /mock/openrouter/providers`) and
//! the account's allowed providers (`POST /mock/openrouter/account`).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};

/// How one provider (an endpoint slug like `novita/fp8`, or an organisation like `novita` for
/// all its endpoints) answers the chats routed to it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub(crate) struct ProviderBehaviour {
    /// Fail with this status (429: OpenRouter's upstream rate-limit body).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Fail only this many more requests, then serve again; `None`: every request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub times: Option<u64>,
    /// A chat whose input (body bytes / 4) exceeds this many tokens gets a 400 context length.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_cap_tokens: Option<u64>,
}

impl ProviderBehaviour {
    fn is_empty(&self) -> bool {
        self.status.is_none() && self.input_cap_tokens.is_none()
    }
}

/// Everything set through `/mock/openrouter/*`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Control {
    /// By provider slug or organisation.
    pub providers: BTreeMap<String, ProviderBehaviour>,
    /// The account's allowed-providers setting (organisations); `None`: every provider.
    pub allowed_providers: Option<Vec<String>>,
}

impl Control {
    /// The behaviour for `slug`: its own entry, else its organisation's.
    pub(crate) fn behaviour_key<'s>(&self, slug: &'s str) -> Option<&'s str> {
        [slug, organisation(slug)].into_iter().find(|key| self.providers.contains_key(*key))
    }

    /// Counts one failure of the entry at `key` against its `times`, dropping the failure
    /// (and an entry left empty) once used up.
    pub(crate) fn spend_failure(&mut self, key: &str) {
        let Some(behaviour) = self.providers.get_mut(key) else {
            return;
        };
        if let Some(times) = behaviour.times {
            if times <= 1 {
                behaviour.status = None;
                behaviour.times = None;
            } else {
                behaviour.times = Some(times - 1);
            }
        }
        if behaviour.is_empty() {
            self.providers.remove(key);
        }
    }

    /// Whether the account may use `slug` (its organisation, or the slug itself, is listed).
    pub(crate) fn allows(&self, slug: &str) -> bool {
        self.allowed_providers.as_ref().is_none_or(|allowed| {
            allowed
                .iter()
                .any(|entry| entry.eq_ignore_ascii_case(slug) || entry.eq_ignore_ascii_case(organisation(slug)))
        })
    }

    /// `{"slug": {"status": 429, "times": 2, "input_cap_tokens": 1000}, …}`.
    pub(crate) fn providers_json(&self) -> Vec<u8> {
        serde_json::to_vec(&self.providers).unwrap_or_else(|_| b"{}".to_vec())
    }

    /// `{"allowed_providers": [..] | null}`.
    pub(crate) fn account_json(&self) -> Vec<u8> {
        serde_json::json!({ "allowed_providers": self.allowed_providers }).to_string().into_bytes()
    }
}

/// The organisation of a provider slug (`novita/fp8` → `novita`).
pub(crate) fn organisation(slug: &str) -> &str {
    slug.split_once('/').map_or(slug, |(organisation, _)| organisation)
}

/// A provider name the mock may put into a header and JSON: printable ASCII, no spaces, quotes
/// or backslashes.
pub(crate) fn is_plain_slug(slug: &str) -> bool {
    !slug.is_empty() && slug.bytes().all(|byte| byte.is_ascii_graphic() && byte != b'"' && byte != b'\\')
}

/// Merges `{"slug": {...} | null, …}` into `control`: each named slug's behaviour is replaced as
/// a whole (`null` or `{}` removes it); the others stay. Nothing changes when any entry is bad.
pub(crate) fn apply_providers(control: &mut Control, body: &[u8]) -> Result<(), String> {
    let entries: Map<String, Value> =
        serde_json::from_slice(body).map_err(|error| format!("providers body: {error}"))?;
    let mut changes = Vec::with_capacity(entries.len());
    for (slug, value) in entries {
        if !is_plain_slug(&slug) {
            return Err(format!("provider {slug:?} must be printable ASCII without spaces or quotes"));
        }
        let behaviour = match value {
            Value::Null => ProviderBehaviour::default(),
            Value::Object(fields) => provider_behaviour(&slug, &fields)?,
            _ => return Err(format!("provider {slug:?}: expected an object or null")),
        };
        changes.push((slug, behaviour));
    }
    for (slug, behaviour) in changes {
        if behaviour.is_empty() {
            control.providers.remove(&slug);
        } else {
            control.providers.insert(slug, behaviour);
        }
    }
    Ok(())
}

fn provider_behaviour(slug: &str, fields: &Map<String, Value>) -> Result<ProviderBehaviour, String> {
    let mut behaviour = ProviderBehaviour::default();
    let whole = |key: &str, value: &Value, least: u64| {
        value
            .as_u64()
            .filter(|&number| number >= least)
            .ok_or_else(|| format!("provider {slug:?}: {key} must be a whole number of at least {least}"))
    };
    for (key, value) in fields {
        match key.as_str() {
            "status" => {
                let status = whole(key, value, 400)?;
                behaviour.status = Some(
                    u16::try_from(status)
                        .ok()
                        .filter(|status| *status <= 599)
                        .ok_or_else(|| format!("provider {slug:?}: status must be between 400 and 599"))?,
                );
            }
            "times" => behaviour.times = Some(whole(key, value, 1)?),
            "input_cap_tokens" => behaviour.input_cap_tokens = Some(whole(key, value, 0)?),
            other => {
                return Err(format!(
                    "provider {slug:?}: unknown field {other:?} (known: status, times, input_cap_tokens)"
                ))
            }
        }
    }
    if behaviour.times.is_some() && behaviour.status.is_none() {
        return Err(format!("provider {slug:?}: times needs a status"));
    }
    Ok(behaviour)
}

/// Reads `{"allowed_providers": ["novita", "deepinfra"] | null}` into `control`.
pub(crate) fn apply_account(control: &mut Control, body: &[u8]) -> Result<(), String> {
    let fields: Map<String, Value> = serde_json::from_slice(body).map_err(|error| format!("account body: {error}"))?;
    let mut allowed = control.allowed_providers.clone();
    for (key, value) in &fields {
        match key.as_str() {
            "allowed_providers" => {
                allowed = match value {
                    Value::Null => None,
                    Value::Array(items) if !items.is_empty() => Some(
                        items
                            .iter()
                            .map(|item| item.as_str().filter(|name| is_plain_slug(name)).map(str::to_owned))
                            .collect::<Option<Vec<String>>>()
                            .ok_or("allowed_providers must hold provider names without spaces or quotes")?,
                    ),
                    _ => return Err("allowed_providers must be a non-empty list of provider names, or null".to_owned()),
                }
            }
            other => return Err(format!("unknown account field {other:?} (known: allowed_providers)")),
        }
    }
    control.allowed_providers = allowed;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn applied(body: &str) -> Result<Control, String> {
        let mut control = Control::default();
        apply_providers(&mut control, body.as_bytes()).map(|()| control)
    }

    #[test]
    fn reads_statuses_counts_and_caps() {
        let control =
            applied(r#"{"novita/fp8": {"status": 429, "times": 2}, "baseten/fp8": {"input_cap_tokens": 1000}}"#)
                .expect("valid");
        assert_eq!(
            control.providers["novita/fp8"],
            ProviderBehaviour { status: Some(429), times: Some(2), input_cap_tokens: None }
        );
        assert_eq!(control.providers["baseten/fp8"].input_cap_tokens, Some(1000));
        let json: Value = serde_json::from_slice(&control.providers_json()).expect("json");
        assert_eq!(
            json,
            serde_json::json!({"baseten/fp8": {"input_cap_tokens": 1000}, "novita/fp8": {"status": 429, "times": 2}})
        );
    }

    #[test]
    fn entries_replace_whole_and_null_removes() {
        let mut control = applied(r#"{"novita/fp8": {"status": 429}, "z-ai/fp8": {"status": 503}}"#).expect("valid");
        apply_providers(&mut control, br#"{"novita/fp8": {"input_cap_tokens": 5}, "z-ai/fp8": null}"#).expect("valid");
        assert_eq!(control.providers.len(), 1);
        assert_eq!(
            control.providers["novita/fp8"],
            ProviderBehaviour { input_cap_tokens: Some(5), ..Default::default() }
        );
    }

    #[test]
    fn refuses_bad_entries_without_changing_anything() {
        for body in [
            r#"{"a": {"status": 200}}"#,
            r#"{"a": {"status": 600}}"#,
            r#"{"a": {"times": 2}}"#,
            r#"{"a": {"status": 429, "times": 0}}"#,
            r#"{"a": {"input_cap_tokens": -1}}"#,
            r#"{"a": {"sttaus": 429}}"#,
            r#"{"a b": {"status": 429}}"#,
            r#"{"a": 429}"#,
            r#"[]"#,
        ] {
            let mut control = applied(r#"{"keep": {"status": 500}}"#).expect("valid");
            let before = control.clone();
            assert!(apply_providers(&mut control, body.as_bytes()).is_err(), "{body}");
            assert_eq!(control, before, "{body}");
        }
        let mut control = Control::default();
        let half_good = br#"{"good/fp8": {"status": 429}, "bad/fp8": {"status": 200}}"#;
        assert!(apply_providers(&mut control, half_good).is_err());
        assert_eq!(control, Control::default(), "a bad entry refuses the whole body");
    }

    #[test]
    fn times_run_out_then_the_provider_serves() {
        let mut control = applied(r#"{"novita": {"status": 429, "times": 2, "input_cap_tokens": 9}}"#).expect("valid");
        assert_eq!(control.behaviour_key("novita/fp8"), Some("novita"), "an organisation covers its endpoints");
        control.spend_failure("novita");
        assert_eq!(control.providers["novita"].times, Some(1));
        control.spend_failure("novita");
        assert_eq!(control.providers["novita"], ProviderBehaviour { input_cap_tokens: Some(9), ..Default::default() });
        let mut control = applied(r#"{"x/y": {"status": 429, "times": 1}}"#).expect("valid");
        control.spend_failure("x/y");
        assert!(control.providers.is_empty());
    }

    #[test]
    fn the_account_list_filters_by_organisation() {
        let mut control = Control::default();
        assert!(control.allows("anything/fp8"));
        apply_account(&mut control, br#"{"allowed_providers": ["novita", "deepinfra"]}"#).expect("valid");
        assert!(control.allows("novita/fp8") && control.allows("deepinfra") && !control.allows("baseten/fp8"));
        assert_eq!(control.account_json(), br#"{"allowed_providers":["novita","deepinfra"]}"#);
        for bad in [r#"{"allowed_providers": []}"#, r#"{"allowed_providers": [3]}"#, r#"{"allowed": null}"#] {
            assert!(apply_account(&mut control, bad.as_bytes()).is_err(), "{bad}");
        }
        apply_account(&mut control, br#"{"allowed_providers": null}"#).expect("valid");
        assert_eq!(control.allowed_providers, None);
    }
}
