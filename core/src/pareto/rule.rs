//! A per-model rule of the best-value provider walk, with its documented defaults, and the
//! fingerprint of what in it changes eligibility or the winner (a learned selection is reused
//! only under the same fingerprint).

/// What a cold start (no telemetry yet) does under a region policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub enum UnverifiedRegionPolicy {
    /// Route nowhere until telemetry warms up.
    #[default]
    NoRoute,
    /// Send without `provider.only`: OpenRouter picks, maybe in an excluded region.
    Unpinned,
    /// Route only to `cold_start_fallback` slugs, taken as operator-vetted.
    TrustFallback,
}

impl UnverifiedRegionPolicy {
    pub const ALL: [UnverifiedRegionPolicy; 3] =
        [UnverifiedRegionPolicy::NoRoute, UnverifiedRegionPolicy::Unpinned, UnverifiedRegionPolicy::TrustFallback];

    pub fn as_str(self) -> &'static str {
        match self {
            UnverifiedRegionPolicy::NoRoute => "no_route",
            UnverifiedRegionPolicy::Unpinned => "unpinned",
            UnverifiedRegionPolicy::TrustFallback => "trust_fallback",
        }
    }

    pub fn from_name(name: &str) -> Option<UnverifiedRegionPolicy> {
        UnverifiedRegionPolicy::ALL.into_iter().find(|p| p.as_str() == name)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct ParetoRule {
    /// Allowed quantizations.
    pub precision: Vec<String>,
    /// Minimum advertised context length.
    pub min_context: u64,
    /// Minimum recent sample size before a provider is scored.
    pub min_stats_requests: u64,
    /// Consecutive polls a new value-winner must win before it is promoted.
    pub promotion_polls: u32,
    /// Slack that lets a pricier, faster provider win over the cheaper one.
    pub value_regression_tolerance: f64,
    /// Inject the winner per request on one deployment, rather than narrow among pinned ones.
    pub wildcard: bool,
    pub log_errors: bool,
    pub log_decisions: bool,
    /// Region codes, trimmed, upper-cased, de-duplicated.
    pub exclude_regions: Vec<String>,
    pub allow_unknown_region: bool,
    pub unverified_region_policy: UnverifiedRegionPolicy,
    pub cold_start_fallback: Vec<String>,
    pub strict_provider: bool,
    /// Ceiling on the input price per million tokens.
    pub max_price: Option<f64>,
}

impl Default for ParetoRule {
    fn default() -> Self {
        ParetoRule {
            precision: vec!["fp8".into()],
            min_context: 1_000_000,
            min_stats_requests: 100,
            promotion_polls: 1,
            value_regression_tolerance: 0.0,
            wildcard: false,
            log_errors: false,
            log_decisions: false,
            exclude_regions: Vec::new(),
            allow_unknown_region: false,
            unverified_region_policy: UnverifiedRegionPolicy::NoRoute,
            cold_start_fallback: Vec::new(),
            strict_provider: false,
            max_price: None,
        }
    }
}

/// The model the built-in rule is for, used only when no rules are configured.
pub const DEFAULT_RULE_MODEL: &str = "z-ai/glm-5.2";

impl ParetoRule {
    /// The built-in rule (for [`DEFAULT_RULE_MODEL`], only when no rules are configured).
    pub fn built_in() -> ParetoRule {
        ParetoRule { promotion_polls: 2, cold_start_fallback: vec!["novita/fp8".into()], ..ParetoRule::default() }
    }

    /// A digest of every field that changes eligibility or the winner (not the log flags,
    /// `wildcard`, `strict_provider` or the fallback list, which change neither).
    pub fn fingerprint(&self) -> u64 {
        // FNV-1a: stable across releases and platforms, unlike `DefaultHasher`.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut eat = |bytes: &[u8]| {
            for b in bytes {
                h ^= u64::from(*b);
                h = h.wrapping_mul(0x0100_0000_01b3);
            }
            h ^= 0xff;
            h = h.wrapping_mul(0x0100_0000_01b3);
        };
        for p in &self.precision {
            eat(p.as_bytes());
        }
        eat(b"|");
        eat(&self.min_context.to_le_bytes());
        eat(&self.min_stats_requests.to_le_bytes());
        eat(&self.value_regression_tolerance.to_bits().to_le_bytes());
        eat(&self.promotion_polls.to_le_bytes());
        for r in &self.exclude_regions {
            eat(r.as_bytes());
        }
        eat(b"|");
        eat(&[u8::from(self.allow_unknown_region)]);
        eat(self.unverified_region_policy.as_str().as_bytes());
        eat(&self.max_price.map_or(u64::MAX, f64::to_bits).to_le_bytes());
        h
    }
}

/// The rule key of a requested model group: a leading `openrouter/` and a trailing `[...]`
/// context tag stripped (`openrouter/z-ai/glm-5.2[1m]` → `z-ai/glm-5.2`).
pub fn rule_key(model: &str) -> &str {
    let model = model.strip_prefix("openrouter/").unwrap_or(model);
    match model.strip_suffix(']').and_then(|m| m.rfind('[').map(|at| &m[..at])) {
        Some(bare) => bare,
        None => model,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_groups_normalise_to_the_rule_key() {
        assert_eq!(rule_key("openrouter/z-ai/glm-5.2[1m]"), "z-ai/glm-5.2");
        assert_eq!(rule_key("z-ai/glm-5.2"), "z-ai/glm-5.2");
        assert_eq!(rule_key("openrouter/z-ai/glm-5.2"), "z-ai/glm-5.2");
        assert_eq!(rule_key("z-ai/glm-5.2[1m]"), "z-ai/glm-5.2");
    }

    #[test]
    fn the_fingerprint_follows_what_changes_the_winner_only() {
        let base = ParetoRule::default();
        let logged = ParetoRule { log_decisions: true, log_errors: true, wildcard: true, ..base.clone() };
        assert_eq!(base.fingerprint(), logged.fingerprint());
        for changed in [
            ParetoRule { min_context: 1, ..base.clone() },
            ParetoRule { precision: vec!["bf16".into()], ..base.clone() },
            ParetoRule { exclude_regions: vec!["SG".into()], ..base.clone() },
            ParetoRule { max_price: Some(1.0), ..base.clone() },
            ParetoRule { promotion_polls: 2, ..base.clone() },
            ParetoRule { unverified_region_policy: UnverifiedRegionPolicy::Unpinned, ..base.clone() },
        ] {
            assert_ne!(base.fingerprint(), changed.fingerprint(), "{changed:?}");
        }
        assert_eq!(ParetoRule::built_in().promotion_polls, 2);
    }
}
