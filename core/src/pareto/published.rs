//! What the telemetry poller publishes for the shards (apart from the config, at its own
//! pace): per managed model and rule fingerprint, the promoted verdict and each candidate's
//! region verdict; the account's allow-list; the poll counters the metrics show.

use crate::pareto::{base_slug, RegionVerdict, Verdict};

/// One managed model under one rule.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModelTelemetry {
    /// The rule key (`z-ai/glm-5.2`).
    pub key: String,
    /// The rule's [`crate::pareto::ParetoRule::fingerprint`].
    pub fingerprint: u64,
    pub verdict: Verdict,
    /// The region verdict of every slug the telemetry reported, sorted by slug; empty when
    /// the rule excludes no region.
    pub regions: Vec<(String, RegionVerdict)>,
    /// Unix seconds of the poll that produced the verdict.
    pub polled_at: f64,
    /// The last poll failed: the verdict is the last one known.
    pub stale: bool,
}

impl ModelTelemetry {
    pub fn region(&self, slug: &str) -> Option<RegionVerdict> {
        let at = self.regions.binary_search_by(|(s, _)| s.as_str().cmp(slug)).ok()?;
        Some(self.regions[at].1)
    }
}

/// The account's allowed providers (organisations), learned from a 404 body.
#[derive(Clone, Debug, PartialEq)]
pub struct AllowList {
    pub providers: Vec<String>,
    /// Unix seconds.
    pub discovered_at: f64,
}

impl AllowList {
    /// Whether the list is still to be believed at `now` (unix seconds).
    pub fn is_fresh(&self, now: f64, ttl_s: f64) -> bool {
        now - self.discovered_at < ttl_s
    }

    /// Whether the organisation of `slug` is allowed.
    pub fn allows(&self, slug: &str) -> bool {
        let base = base_slug(slug);
        self.providers.iter().any(|p| p == base)
    }
}

/// Everything the poller has learned.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParetoTelemetry {
    /// Sorted by (key, fingerprint).
    pub models: Vec<ModelTelemetry>,
    pub allow_list: Option<AllowList>,
    /// Polls done, and those that failed (one per model and round).
    pub polls: u64,
    pub poll_failures: u64,
}

impl ParetoTelemetry {
    pub fn model(&self, key: &str, fingerprint: u64) -> Option<&ModelTelemetry> {
        let at = self.models.binary_search_by(|m| (m.key.as_str(), m.fingerprint).cmp(&(key, fingerprint))).ok()?;
        Some(&self.models[at])
    }

    /// The allow-list when it is fresh at `now` (unix seconds).
    pub fn fresh_allow_list(&self, now: f64, ttl_s: f64) -> Option<&AllowList> {
        self.allow_list.as_ref().filter(|a| a.is_fresh(now, ttl_s))
    }
}
