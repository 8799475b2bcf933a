//! What requests teach about providers, per (model, provider slug): 429s in a sliding window
//! (a provider at the threshold is "hot"), input caps for a TTL, and the account's allowed
//! providers for a TTL. Times are seconds on a monotonic clock the caller passes.

use std::collections::HashMap;
use std::time::{Duration, Instant};

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

/// Recent 429s and input caps, by model then slug (looked up without allocating).
#[derive(Clone, Debug, PartialEq)]
pub struct ProviderCooldowns {
    /// The window, threshold and TTL (the shard sets them from the config).
    pub settings: CooldownSettings,
    hits: HashMap<Box<str>, HashMap<Box<str>, Vec<Instant>>>,
    capped: HashMap<Box<str>, HashMap<Box<str>, Option<Instant>>>,
}

fn slot<'m, V: Default>(map: &'m mut HashMap<Box<str>, HashMap<Box<str>, V>>, model: &str, slug: &str) -> &'m mut V {
    if !map.contains_key(model) {
        map.insert(model.into(), HashMap::new());
    }
    // Invariant: inserted just above.
    let slugs = map.get_mut(model).expect("model entry");
    if !slugs.contains_key(slug) {
        slugs.insert(slug.into(), V::default());
    }
    slugs.get_mut(slug).expect("slug entry")
}

fn secs(s: f64) -> Duration {
    Duration::try_from_secs_f64(s).unwrap_or(Duration::MAX)
}

impl Default for ProviderCooldowns {
    fn default() -> Self {
        ProviderCooldowns::new(CooldownSettings::default())
    }
}

impl ProviderCooldowns {
    pub fn new(settings: CooldownSettings) -> ProviderCooldowns {
        ProviderCooldowns { settings, hits: HashMap::new(), capped: HashMap::new() }
    }

    /// A 429 from `slug` for `model` at `at`; hits older than the window are forgotten.
    pub fn record_429(&mut self, model: &str, slug: &str, at: Instant) {
        let window = secs(self.settings.rate_limit_window_s);
        let hits = slot(&mut self.hits, model, slug);
        hits.retain(|&t| at.saturating_duration_since(t) <= window);
        hits.push(at);
    }

    pub fn is_hot(&self, model: &str, slug: &str, now: Instant) -> bool {
        let window = secs(self.settings.rate_limit_window_s);
        let recent = self
            .hits
            .get(model)
            .and_then(|m| m.get(slug))
            .map_or(0, |h| h.iter().filter(|&&t| now.saturating_duration_since(t) <= window).count());
        recent >= self.settings.rate_limit_threshold as usize
    }

    pub fn record_input_cap(&mut self, model: &str, slug: &str, at: Instant) {
        *slot(&mut self.capped, model, slug) = Some(at);
    }

    pub fn is_input_capped(&self, model: &str, slug: &str, now: Instant) -> bool {
        let ttl = secs(self.settings.input_cap_ttl_s);
        self.capped
            .get(model)
            .and_then(|m| m.get(slug))
            .and_then(|&at| at)
            .is_some_and(|at| now.saturating_duration_since(at) <= ttl)
    }

    /// How many providers of `model` are hot at `now`.
    pub fn hot_count(&self, model: &str, now: Instant) -> usize {
        self.hits.get(model).map_or(0, |slugs| slugs.keys().filter(|s| self.is_hot(model, s, now)).count())
    }

    /// Whether anything at all was recorded for `model` (the common case, nothing, is one
    /// lookup).
    pub fn knows(&self, model: &str) -> bool {
        self.hits.contains_key(model) || self.capped.contains_key(model)
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
        let t0 = Instant::now();
        let at = |secs: u64| t0 + Duration::from_secs(secs);
        let mut c = ProviderCooldowns::default();
        for t in [0, 100] {
            c.record_429("m", "a/fp8", at(t));
        }
        assert!(!c.is_hot("m", "a/fp8", at(100)));
        c.record_429("m", "a/fp8", at(200));
        assert!(c.is_hot("m", "a/fp8", at(200)));
        assert!(!c.is_hot("other-model", "a/fp8", at(200)), "per model");
        assert!(!c.is_hot("m", "a/fp8", at(301)), "the first hit aged out");
    }

    #[test]
    fn an_input_cap_lasts_its_ttl() {
        let t0 = Instant::now();
        let mut c = ProviderCooldowns::default();
        c.record_input_cap("m", "baseten/fp8", t0);
        assert!(c.is_input_capped("m", "baseten/fp8", t0 + Duration::from_secs(3600)));
        assert!(!c.is_input_capped("m", "baseten/fp8", t0 + Duration::from_millis(3_600_500)));
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
