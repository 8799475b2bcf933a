//! The policy router's part of the routes: the policies, the endpoint catalogue (every
//! deployment with policy attributes), each auto model's pool, and each policy's daily spend
//! meter (shared by every shard, carried over a reload by policy name). Built once per config;
//! `None` in [`crate::routes::Routes`] when no policy is configured, so requests without a
//! policy pay nothing.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use pointwork_core::policy::{Policy, PolicyEndpoint, SharedLatency, SharedOutcomes};
use pointwork_core::{DeploymentIdx, KeyLimits, KeyMeter, Snapshot};

use crate::keys::VirtualKey;

const DAY: Duration = Duration::from_secs(86_400);

pub struct PolicyRoutes {
    pub policies: Vec<Policy>,
    /// `pointwork.default_policy`, by index into `policies`.
    pub default: Option<usize>,
    /// Every deployment with policy attributes: what a request naming a model competes among.
    pub catalogue: Vec<PolicyEndpoint>,
    /// Each auto model's name and pool (the endpoints of its groups).
    pub routers: Vec<(String, Vec<PolicyEndpoint>)>,
    /// Parallel to `policies`: today's spend, shared by every shard.
    pub meters: Vec<Arc<KeyMeter>>,
    /// By deployment index: this minute's answers of each endpoint and its latency average,
    /// shared by every shard (the score's error rate and latency).
    pub outcomes: Vec<SharedOutcomes>,
    pub latency: Vec<SharedLatency>,
}

impl PolicyRoutes {
    /// The policy part of `config` over `snapshot`; `None` without policies. Daily meters of
    /// `previous` policies of the same name carry over.
    pub fn new(
        config: &pointwork_config::Config,
        snapshot: &Snapshot,
        previous: Option<&PolicyRoutes>,
    ) -> Option<PolicyRoutes> {
        if config.policies.is_empty() {
            return None;
        }
        let catalogue: Vec<PolicyEndpoint> = snapshot
            .deployments
            .iter()
            .enumerate()
            .filter_map(|(i, d)| Some(PolicyEndpoint::of(DeploymentIdx(i as u32), d, d.policy.as_deref()?)))
            .collect();
        let routers = config
            .policy_routers
            .iter()
            .map(|r| {
                let pool = catalogue.iter().filter(|e| r.pool.iter().any(|g| *g == *e.model)).cloned().collect();
                (r.model_name.clone(), pool)
            })
            .collect();
        let kept: HashMap<&str, &Arc<KeyMeter>> =
            previous.map(|p| p.policies.iter().map(|p| &*p.id).zip(&p.meters).collect()).unwrap_or_default();
        let meters =
            config.policies.iter().map(|p| kept.get(&*p.id).map_or_else(Arc::default, |m| (*m).clone())).collect();
        let default =
            config.default_policy.as_deref().and_then(|name| config.policies.iter().position(|p| &*p.id == name));
        let outcomes = snapshot.deployments.iter().map(|_| SharedOutcomes::default()).collect();
        let latency = snapshot.deployments.iter().map(|_| SharedLatency::default()).collect();
        Some(PolicyRoutes { policies: config.policies.clone(), default, catalogue, routers, meters, outcomes, latency })
    }

    /// The policy a request runs under: its key's, else the default; `None`: no policy.
    pub fn policy_of(&self, key: Option<&VirtualKey>) -> Option<usize> {
        match key.and_then(|k| k.policy.as_deref()) {
            Some(name) => self.policies.iter().position(|p| &*p.id == name),
            None => self.default,
        }
    }

    /// The endpoints a request for `model` competes among, and whether it is the auto model
    /// (every survivor competes) rather than a named one (pinned).
    pub fn candidates(&self, model: &str) -> (&[PolicyEndpoint], bool) {
        match self.routers.iter().find(|(name, _)| name == model) {
            Some((_, pool)) => (pool, true),
            None => (&self.catalogue, false),
        }
    }

    /// The auto models' names (listed by `GET /v1/models`).
    pub fn router_names(&self) -> impl Iterator<Item = &str> {
        self.routers.iter().map(|(name, _)| name.as_str())
    }
}

/// The daily budget of a policy as a meter's limits.
pub fn daily_limits(policy: &Policy) -> KeyLimits {
    KeyLimits { max_budget: policy.max_usd_per_day, budget_duration: Some(DAY), ..KeyLimits::default() }
}
