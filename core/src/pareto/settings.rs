//! Everything the configuration says about the best-value walk: the rules by model, the
//! shared cooldown and allow-list tuning, the telemetry source, and where the decision and
//! error logs go. Parsed and validated by `pointwork-config`; read by the poller and the shards.

use std::path::PathBuf;
use std::time::Duration;

use crate::pareto::{CooldownSettings, ParetoRule};

/// The telemetry poller's source and pace (`litellm_settings.openrouter_pareto_telemetry`).
#[derive(Clone, Debug, PartialEq)]
pub struct TelemetrySettings {
    /// Where OpenRouter's APIs are: `{base_url}/api/v1/models/{author}/{slug}/endpoints` and
    /// `{base_url}/api/frontend/v1/stats/endpoint?permaslug=…`.
    pub base_url: String,
    /// `false` turns certificate verification off (development, self-signed proxies).
    pub ssl_verify: bool,
    /// A PEM bundle trusted instead of the built-in roots (takes precedence over `ssl_verify`).
    pub ssl_ca_cert: Option<PathBuf>,
    /// How often each managed model is polled.
    pub poll_interval: Duration,
    /// The whole of one fetch (connect, request, answer).
    pub timeout: Duration,
    /// Where the cache file (verdicts per fingerprint, the allow-list) is kept; `None`: no cache.
    pub cache_dir: Option<PathBuf>,
    /// Cache entries older than this are pruned, and not read at start.
    pub cache_retention: Duration,
}

impl TelemetrySettings {
    pub const DEFAULT_BASE_URL: &'static str = "https://openrouter.ai";
    pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(300);
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(15);
    pub const DEFAULT_CACHE_RETENTION: Duration = Duration::from_secs(7 * 86_400);
}

impl Default for TelemetrySettings {
    fn default() -> Self {
        TelemetrySettings {
            base_url: Self::DEFAULT_BASE_URL.to_string(),
            ssl_verify: true,
            ssl_ca_cert: None,
            poll_interval: Self::DEFAULT_POLL_INTERVAL,
            timeout: Self::DEFAULT_TIMEOUT,
            cache_dir: None,
            cache_retention: Self::DEFAULT_CACHE_RETENTION,
        }
    }
}

/// The walk's whole configuration; present only when `litellm_settings.callbacks` names the
/// plugin's callback.
#[derive(Clone, Debug, PartialEq)]
pub struct ParetoSettings {
    /// The rules by rule key (bare OpenRouter id, e.g. `z-ai/glm-5.2`), sorted by key. With no
    /// rules configured: the built-in rule for [`crate::pareto::DEFAULT_RULE_MODEL`] alone.
    pub rules: Vec<(String, ParetoRule)>,
    /// `openrouter_pareto_cooldown` and `openrouter_pareto_allowlist`.
    pub cooldown: CooldownSettings,
    pub telemetry: TelemetrySettings,
    /// `OPENROUTER_PARETO_ROUTING_LOG`: one line per decision of a rule with `log_decisions`.
    pub routing_log: PathBuf,
    /// `OPENROUTER_PARETO_ERROR_LOG`: routed errors of a rule with `log_errors`.
    pub error_log: PathBuf,
}

impl ParetoSettings {
    /// The rule of a requested model group (normalised with [`crate::pareto::rule_key`]).
    pub fn rule(&self, model: &str) -> Option<(&str, &ParetoRule)> {
        let key = crate::pareto::rule_key(model);
        let at = self.rules.binary_search_by(|(k, _)| k.as_str().cmp(key)).ok()?;
        let (k, rule) = &self.rules[at];
        Some((k.as_str(), rule))
    }
}
