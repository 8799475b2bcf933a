//! What requests teach about providers, per (model, provider slug): 429s in a sliding window
//! (a provider at the threshold is "hot"), input caps for a TTL, and the account's allowed
//! providers for a TTL. Times are seconds on a monotonic clock the caller passes.

use std::collections::HashMap;

/// `openrouter_pareto_cooldown` and `openrouter_pareto_allowlist`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CooldownSettings {
    pub rate_limit_window_s: f64,
    pub rate_limit_threshold: u32,
    pub input_cap_ttl_s: f64,
    pub allowlist_ttl_s: f64,
}

impl Default for CooldownSettings {
    fn default() -> Self {
        CooldownSettings {
            rate_limit_window_s: 300.0,
            rate_limit_threshold: 3,
            input_cap_ttl_s: 3600.0,
            allowlist_ttl_s: 86_400.0,
        }
    }
}

/// Recent 429s and input caps, keyed by (model, slug).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProviderCooldowns {
    hits: HashMap<(String, String), Vec<f64>>,
    capped: HashMap<(String, String), f64>,
}

impl ProviderCooldowns {
    /// A 429 from `slug` for `model` at `at`; hits older than the window are forgotten.
    pub fn record_429(&mut self, model: &str, slug: &str, at: f64, s: &CooldownSettings) {
        let cutoff = at - s.rate_limit_window_s;
        let hits = self.hits.entry((model.to_string(), slug.to_string())).or_default();
        hits.retain(|&t| t >= cutoff);
        hits.push(at);
        self.hits.retain(|_, v| v.last().is_some_and(|&t| t >= cutoff));
    }

    pub fn is_hot(&self, model: &str, slug: &str, now: f64, s: &CooldownSettings) -> bool {
        let cutoff = now - s.rate_limit_window_s;
        let recent = self
            .hits
            .get(&(model.to_string(), slug.to_string()))
            .map_or(0, |h| h.iter().filter(|&&t| t >= cutoff).count());
        recent >= s.rate_limit_threshold as usize
    }

    pub fn record_input_cap(&mut self, model: &str, slug: &str, at: f64) {
        self.capped.insert((model.to_string(), slug.to_string()), at);
    }

    pub fn is_input_capped(&self, model: &str, slug: &str, now: f64, s: &CooldownSettings) -> bool {
        self.capped.get(&(model.to_string(), slug.to_string())).is_some_and(|&at| at >= now - s.input_cap_ttl_s)
    }
}

/// Whether a 400's body says the input was too long for the provider.
pub fn is_input_cap_error(status: u16, body: &str) -> bool {
    if status != 400 {
        return false;
    }
    let lower = body.to_ascii_lowercase();
    lower.contains("maximum context length")
        || lower.find("exceeds the maximum").is_some_and(|at| {
            let rest = lower[at + "exceeds the maximum".len()..].trim_start();
            let rest = rest.strip_prefix("allowed ").unwrap_or(rest);
            let rest = rest.strip_prefix("input ").unwrap_or(rest);
            rest.starts_with("length")
        })
}

/// The account's allowed providers (organisations), parsed from a 404 "No allowed providers"
/// body: the list after "allowed-providers setting permits only:", up to ". To change". A
/// request-level refusal ("your request's provider.only preference permits only") is no
/// account setting and gives nothing.
pub fn parse_allowed_providers(body: &str) -> Option<Vec<String>> {
    const MARKER: &str = "allowed-providers setting permits only:";
    let lower = body.to_ascii_lowercase();
    let start = lower.find(MARKER)? + MARKER.len();
    let end = start + lower[start..].find("to change")?;
    let list = body[start..end].trim_end().strip_suffix('.')?;
    let slugs: Vec<String> = list.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect();
    (!slugs.is_empty()).then_some(slugs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_429s_in_five_minutes_make_a_provider_hot_until_they_age_out() {
        let s = CooldownSettings::default();
        let mut c = ProviderCooldowns::default();
        for t in [0.0, 100.0] {
            c.record_429("m", "a/fp8", t, &s);
        }
        assert!(!c.is_hot("m", "a/fp8", 100.0, &s));
        c.record_429("m", "a/fp8", 200.0, &s);
        assert!(c.is_hot("m", "a/fp8", 200.0, &s));
        assert!(!c.is_hot("other-model", "a/fp8", 200.0, &s), "per model");
        assert!(!c.is_hot("m", "a/fp8", 301.0, &s), "the first hit aged out");
    }

    #[test]
    fn an_input_cap_lasts_its_ttl() {
        let s = CooldownSettings::default();
        let mut c = ProviderCooldowns::default();
        c.record_input_cap("m", "baseten/fp8", 10.0);
        assert!(c.is_input_capped("m", "baseten/fp8", 3610.0, &s));
        assert!(!c.is_input_capped("m", "baseten/fp8", 3610.5, &s));
    }

    #[test]
    fn input_cap_errors_and_the_allow_list_are_read_from_the_bodies() {
        assert!(is_input_cap_error(400, "This endpoint's maximum context length is 524288 tokens"));
        assert!(is_input_cap_error(400, "Input exceeds the maximum allowed input length"));
        assert!(is_input_cap_error(400, "prompt exceeds the maximum length"));
        assert!(!is_input_cap_error(429, "maximum context length"));
        assert!(!is_input_cap_error(400, "invalid model"));
        let account = "No allowed providers are available for the selected model. Providers serving typesafe/jev-1.13-20260917: typesafe, but your account's allowed-providers setting permits only: meta, baidu, google-vertex, novita. To change your allowed providers, visit: https://openrouter.ai/settings/privacy.";
        assert_eq!(parse_allowed_providers(account).unwrap(), ["meta", "baidu", "google-vertex", "novita"]);
        let request_only = "No allowed providers are available for the selected model. Providers serving anthropic/claude-3-haiku: amazon-bedrock, but your request's provider.only preference permits only: anthropic.";
        assert_eq!(parse_allowed_providers(request_only), None);
    }
}
