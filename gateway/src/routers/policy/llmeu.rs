//! The policy router's request overrides: an `llmeu` object in the body, or `x-llmeu-*`
//! headers. They can only narrow the policy: a residency narrows its classes and regions, a
//! price cap can only lower it (a higher one is ignored), a retention above the policy's is
//! refused; `allow_partners` admits partner endpoints for the call, as the policy router's
//! contract allows. The `llmeu` member never goes upstream (see `facts.rs`).

use pointwork_core::policy::{Admission, PolicyRequest, Residency};
use serde::Deserialize;

/// What a request asks of the policy router.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlmeuAsk {
    pub residency: Option<String>,
    pub max_usd_per_1m: Option<f64>,
    pub allow_partners: Option<bool>,
    pub task: Option<String>,
    pub language: Option<String>,
    pub retention: Option<u32>,
    pub data_class: Option<String>,
}

/// The header of each field (`x-llmeu-residency`, …).
pub const HEADERS: [(&str, &str); 7] = [
    ("x-llmeu-residency", "residency"),
    ("x-llmeu-max-usd-per-1m", "max_usd_per_1m"),
    ("x-llmeu-allow-partners", "allow_partners"),
    ("x-llmeu-task", "task"),
    ("x-llmeu-language", "language"),
    ("x-llmeu-retention", "retention"),
    ("x-llmeu-data-class", "data_class"),
];

impl LlmeuAsk {
    /// The body's `llmeu` object (its raw JSON), field by field; a field of the wrong type or an
    /// unknown field is an error naming it.
    pub fn from_body(raw: &[u8]) -> Result<LlmeuAsk, String> {
        let ask: LlmeuAsk = serde_json::from_slice(raw).map_err(|e| format!("invalid 'llmeu': {e}"))?;
        if ask.max_usd_per_1m.is_some_and(|cap| !cap.is_finite() || cap < 0.0) {
            return Err("invalid 'llmeu.max_usd_per_1m': expected a number of 0 or more".into());
        }
        Ok(ask)
    }

    /// Adds what a header says where the body's object does not say it (names in any case).
    pub fn add_header(&mut self, name: &str, value: &str) -> Result<(), String> {
        let name = name.to_ascii_lowercase();
        let bad = |what: &str| format!("invalid '{name}' header: expected {what}, got {value:?}");
        let value = value.trim();
        match name.as_str() {
            "x-llmeu-residency" => set(&mut self.residency, value.to_string()),
            "x-llmeu-task" => set(&mut self.task, value.to_string()),
            "x-llmeu-language" => set(&mut self.language, value.to_string()),
            "x-llmeu-data-class" => set(&mut self.data_class, value.to_string()),
            "x-llmeu-max-usd-per-1m" => {
                let cap = value.parse::<f64>().ok().filter(|c| c.is_finite() && *c >= 0.0);
                set(&mut self.max_usd_per_1m, cap.ok_or_else(|| bad("a number of 0 or more"))?)
            }
            "x-llmeu-allow-partners" => {
                let allow = match value {
                    "true" | "1" => true,
                    "false" | "0" => false,
                    _ => return Err(bad("true or false")),
                };
                set(&mut self.allow_partners, allow)
            }
            "x-llmeu-retention" => set(&mut self.retention, value.parse().map_err(|_| bad("a number of days"))?),
            _ => {}
        }
        Ok(())
    }

    /// The policy request: these overrides and what the facts say of the request. A residency
    /// nobody knows is an error naming the valid ones.
    pub fn policy_request(
        &self,
        model: Option<&str>,
        has_image: bool,
        needed_tokens: u64,
    ) -> Result<PolicyRequest, String> {
        let residency = match &self.residency {
            None => None,
            Some(name) => Some(Residency::named(name).ok_or_else(|| {
                format!("invalid 'llmeu.residency': unknown residency {name:?}; valid: {}", Residency::NAMES)
            })?),
        };
        Ok(PolicyRequest {
            model: model.map(Into::into),
            residency,
            max_usd_per_1m: self.max_usd_per_1m,
            allow_partners: self.allow_partners.unwrap_or(false),
            task: self.task.as_deref().map(Into::into),
            language: self.language.as_deref().map(Into::into),
            has_image,
            needed_tokens,
        })
    }

    /// What the admission checks around the decision read.
    pub fn admission(&self, spent_today_usd: f64) -> Admission<'_> {
        Admission { retention: self.retention, data_class: self.data_class.as_deref(), spent_today_usd }
    }
}

/// The body's value wins over a header's.
fn set<T>(field: &mut Option<T>, value: T) {
    if field.is_none() {
        *field = Some(value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_body_object_is_read_strictly() {
        let ask = LlmeuAsk::from_body(
            br#"{"residency":"eu-owned","max_usd_per_1m":1.5,"allow_partners":true,"task":"coding","language":"de","retention":0,"data_class":"internal"}"#,
        )
        .unwrap();
        assert_eq!(ask.residency.as_deref(), Some("eu-owned"));
        assert_eq!((ask.max_usd_per_1m, ask.allow_partners, ask.retention), (Some(1.5), Some(true), Some(0)));
        let unknown = LlmeuAsk::from_body(br#"{"residence":"eu"}"#).unwrap_err();
        assert!(unknown.starts_with("invalid 'llmeu': unknown field `residence`"), "{unknown}");
        let wrong = LlmeuAsk::from_body(br#"{"allow_partners":"yes"}"#).unwrap_err();
        assert!(wrong.contains("invalid type"), "{wrong}");
        assert!(LlmeuAsk::from_body(br#"{"max_usd_per_1m":-1}"#).unwrap_err().contains("max_usd_per_1m"));
        assert!(LlmeuAsk::from_body(b"[]").is_err());
    }

    #[test]
    fn headers_fill_what_the_body_does_not_say() {
        let mut ask = LlmeuAsk::from_body(br#"{"residency":"de"}"#).unwrap();
        ask.add_header("x-llmeu-residency", "any").unwrap();
        ask.add_header("X-LLMEU-Task", "coding").unwrap();
        ask.add_header("x-llmeu-allow-partners", "true").unwrap();
        ask.add_header("x-llmeu-max-usd-per-1m", " 0.75 ").unwrap();
        assert_eq!(ask.residency.as_deref(), Some("de"), "the body wins");
        assert_eq!(
            (ask.task.as_deref(), ask.allow_partners, ask.max_usd_per_1m),
            (Some("coding"), Some(true), Some(0.75))
        );
        let err = LlmeuAsk::default().add_header("x-llmeu-retention", "forever").unwrap_err();
        assert_eq!(err, r#"invalid 'x-llmeu-retention' header: expected a number of days, got "forever""#);
        assert!(LlmeuAsk::default().add_header("x-llmeu-allow-partners", "maybe").is_err());
        assert_eq!(HEADERS.len(), 7);
    }

    #[test]
    fn the_policy_request_names_a_known_residency_or_refuses() {
        let ask = LlmeuAsk { residency: Some("eu-hosted".into()), task: Some("coding".into()), ..LlmeuAsk::default() };
        let req = ask.policy_request(Some("m"), true, 1200).unwrap();
        assert_eq!(req.residency.unwrap().name.as_ref(), "eu-hosted");
        assert_eq!((req.model.as_deref(), req.has_image, req.needed_tokens), (Some("m"), true, 1200));
        let bad = LlmeuAsk { residency: Some("mars".into()), ..LlmeuAsk::default() };
        let err = bad.policy_request(None, false, 0).unwrap_err();
        assert!(
            err.starts_with(r#"invalid 'llmeu.residency': unknown residency "mars"; valid: eu-owned, eu-hosted, any"#),
            "{err}"
        );
    }
}
