//! Metrics: each shard counts into its own [`ShardMetrics`] (no lock, no atomic), hands the
//! counts over as a [`Report`] a few times a second, and the control thread merges the reports
//! into the hub's [`Totals`], which `GET /metrics` renders in Prometheus' text format.

mod histogram;
pub(crate) mod litellm;
pub(crate) mod render;
mod shard;

pub use histogram::Hist;
pub(crate) use render::escape;
pub use render::render;
pub use shard::ShardMetrics;

use std::collections::HashMap;

/// Labels of one request count: model group, deployment id, status.
pub type RequestKey = (String, String, u16);

/// Counts handed from a shard to the control thread, labelled by name (a reload may renumber
/// deployments between two reports).
#[derive(Debug, Default)]
pub struct Report {
    pub requests: HashMap<RequestKey, u64>,
    /// Upstream time of answered attempts, by model group (µs).
    pub upstream_latency: HashMap<String, Hist>,
    /// Time to the first body bytes of streamed responses, by model group (µs).
    pub first_token: HashMap<String, Hist>,
    /// The pick's own time (ns).
    pub pick: Option<Hist>,
    pub retries: u64,
    pub fallbacks: u64,
    pub cooldowns_started: HashMap<String, u64>,
    /// Requests routed under a policy, by policy id and outcome (`routed`, `upstream_error`,
    /// or the refusal's code).
    pub policy_requests: HashMap<(String, String), u64>,
    /// The pareto walk's decisions, by rule key and reason (`winner`, `safe_set`, …).
    pub pareto_decisions: HashMap<(String, &'static str), u64>,
    /// The complexity routers' decisions, by router, tier (`none` for the default model) and
    /// cause (`heuristic_scorer`, `health_failover`, …).
    pub auto_router_decisions: HashMap<(String, &'static str, &'static str), u64>,
    /// LiteLLM's metrics (only with `callbacks: ["prometheus"]`).
    pub litellm: Option<Box<litellm::LiteLlmReport>>,
}

impl Report {
    pub fn is_empty(&self) -> bool {
        self.requests.is_empty()
            && self.upstream_latency.is_empty()
            && self.first_token.is_empty()
            && self.pick.is_none()
            && self.retries == 0
            && self.fallbacks == 0
            && self.cooldowns_started.is_empty()
            && self.policy_requests.is_empty()
            && self.pareto_decisions.is_empty()
            && self.auto_router_decisions.is_empty()
            && self.litellm.is_none()
    }

    /// Adds `other`'s counts to these.
    pub fn merge(&mut self, other: Report) {
        for (k, v) in other.requests {
            *self.requests.entry(k).or_default() += v;
        }
        merge_hists(&mut self.upstream_latency, other.upstream_latency);
        merge_hists(&mut self.first_token, other.first_token);
        if let Some(p) = other.pick {
            match &mut self.pick {
                Some(mine) => mine.add(&p),
                None => self.pick = Some(p),
            }
        }
        self.retries += other.retries;
        self.fallbacks += other.fallbacks;
        for (k, v) in other.cooldowns_started {
            *self.cooldowns_started.entry(k).or_default() += v;
        }
        for (k, v) in other.policy_requests {
            *self.policy_requests.entry(k).or_default() += v;
        }
        for (k, v) in other.pareto_decisions {
            *self.pareto_decisions.entry(k).or_default() += v;
        }
        for (k, v) in other.auto_router_decisions {
            *self.auto_router_decisions.entry(k).or_default() += v;
        }
        if let Some(theirs) = other.litellm {
            match &mut self.litellm {
                Some(mine) => mine.merge(*theirs),
                None => self.litellm = Some(theirs),
            }
        }
    }
}

fn merge_hists(into: &mut HashMap<String, Hist>, from: HashMap<String, Hist>) {
    for (k, h) in from {
        match into.get_mut(&k) {
            Some(mine) => mine.add(&h),
            None => {
                into.insert(k, h);
            }
        }
    }
}

/// Everything merged so far, plus the control thread's own counts.
#[derive(Debug, Default)]
pub struct Totals {
    pub counts: Report,
    pub reloads_ok: u64,
    pub reloads_failed: u64,
}

/// Gauges read at scrape time.
#[derive(Clone, Copy, Debug, Default)]
pub struct Gauges {
    pub open_connections: i64,
    pub cooling_down: usize,
    pub draining: bool,
}
