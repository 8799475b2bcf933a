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

/// Recent 429s and input caps, by model then slug (looked up without allocating; a model
/// nothing was recorded for costs one lookup).
#[derive(Clone, Debug, PartialEq)]
pub struct ProviderCooldowns {
    settings: CooldownSettings,
    /// `settings`' window and TTL as durations.
    window: Duration,
    ttl: Duration,
    models: HashMap<Box<str>, ModelMarks, Fnv>,
}

/// What one model's requests taught about its providers.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModelMarks {
    providers: HashMap<Box<str>, Marks, Fnv>,
}

#[derive(Clone, Debug, Default, PartialEq)]
struct Marks {
    /// 429s within the window, oldest first.
    hits: Vec<Instant>,
    capped_at: Option<Instant>,
}

/// FNV-1a: the keys are short slugs and model ids chosen by the operator's config and the
/// telemetry, where SipHash's protection costs more than the lookups it protects.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Fnv;

impl std::hash::BuildHasher for Fnv {
    type Hasher = FnvHasher;

    fn build_hasher(&self) -> FnvHasher {
        FnvHasher(0xcbf2_9ce4_8422_2325)
    }
}

pub struct FnvHasher(u64);

impl std::hash::Hasher for FnvHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
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
        let mut c =
            ProviderCooldowns { settings, window: Duration::ZERO, ttl: Duration::ZERO, models: HashMap::default() };
        c.set_settings(settings);
        c
    }

    pub fn settings(&self) -> &CooldownSettings {
        &self.settings
    }

    /// The window, threshold and TTL (the shard sets them from the config).
    pub fn set_settings(&mut self, settings: CooldownSettings) {
        self.settings = settings;
        self.window = secs(settings.rate_limit_window_s);
        self.ttl = secs(settings.input_cap_ttl_s);
    }

    fn marks(&mut self, model: &str, slug: &str) -> &mut Marks {
        if !self.models.contains_key(model) {
            self.models.insert(model.into(), ModelMarks::default());
        }
        // Invariant: inserted just above.
        let providers = &mut self.models.get_mut(model).expect("model entry").providers;
        if !providers.contains_key(slug) {
            providers.insert(slug.into(), Marks::default());
        }
        providers.get_mut(slug).expect("slug entry")
    }

    /// A 429 from `slug` for `model` at `at`; hits older than the window are forgotten.
    pub fn record_429(&mut self, model: &str, slug: &str, at: Instant) {
        let window = self.window;
        let hits = &mut self.marks(model, slug).hits;
        hits.retain(|&t| at.saturating_duration_since(t) <= window);
        hits.push(at);
    }

    pub fn record_input_cap(&mut self, model: &str, slug: &str, at: Instant) {
        self.marks(model, slug).capped_at = Some(at);
    }

    /// What is known of `model`'s providers now (`None`: nothing was recorded, all are free).
    pub fn model(&self, model: &str) -> Option<ModelView<'_>> {
        self.models.get(model).map(|marks| ModelView { marks, cooldowns: self })
    }

    pub fn is_hot(&self, model: &str, slug: &str, now: Instant) -> bool {
        self.model(model).is_some_and(|m| m.is_hot(slug, now))
    }

    pub fn is_input_capped(&self, model: &str, slug: &str, now: Instant) -> bool {
        self.model(model).is_some_and(|m| m.is_input_capped(slug, now))
    }

    /// How many providers of `model` are hot at `now`.
    pub fn hot_count(&self, model: &str, now: Instant) -> usize {
        self.model(model).map_or(0, |m| m.marks.providers.keys().filter(|s| m.is_hot(s, now)).count())
    }
}

/// One model's marks, looked up once per request.
#[derive(Clone, Copy)]
pub struct ModelView<'c> {
    marks: &'c ModelMarks,
    cooldowns: &'c ProviderCooldowns,
}

impl ModelView<'_> {
    /// Whether `slug` is 429-hot and whether it is input-capped at `now` (one lookup).
    pub fn marks(&self, slug: &str, now: Instant) -> (bool, bool) {
        let Some(m) = self.marks.providers.get(slug) else { return (false, false) };
        let c = self.cooldowns;
        let recent = m.hits.iter().filter(|&&t| now.saturating_duration_since(t) <= c.window).count();
        let hot = recent >= c.settings.rate_limit_threshold as usize;
        let capped = m.capped_at.is_some_and(|at| now.saturating_duration_since(at) <= c.ttl);
        (hot, capped)
    }

    pub fn is_hot(&self, slug: &str, now: Instant) -> bool {
        self.marks(slug, now).0
    }

    pub fn is_input_capped(&self, slug: &str, now: Instant) -> bool {
        self.marks(slug, now).1
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
