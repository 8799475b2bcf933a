//! A shard's own counts, keyed by deployment and group index of the routes they were counted
//! under; turned into a name-keyed [`Report`] when handed over (or when a reload renumbers).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use pointwork_core::{DeploymentIdx, Failure, GroupIdx};

use super::litellm::LiteLlmShard;
use super::{Hist, Report};
use crate::routes::Routes;

/// One pick in this many is timed for `pointwork_pick_duration_seconds`.
pub const PICK_SAMPLE: u64 = 16;

/// Stands for "no deployment" / "no group" (a request refused before or by the pick).
const NONE: u32 = u32::MAX;

/// Dense per-index slots: a request costs an index and a short scan, no hashing.
#[derive(Default)]
pub struct ShardMetrics {
    /// The routes the indices below refer to.
    routes: Option<Arc<Routes>>,
    /// Per deployment index: (status, count) for each status seen.
    requests: Vec<Vec<(u16, u64)>>,
    /// Requests no deployment answered (refused, unknown model, nothing left), by group.
    unrouted: HashMap<(u32, u16), u64>,
    /// Per group index.
    upstream_latency: Vec<Option<Hist>>,
    first_token: Vec<Option<Hist>>,
    cooldowns_started: HashMap<u32, u64>,
    picks: u64,
    /// LiteLLM's metrics, once the routes turn them on.
    litellm: Option<Box<LiteLlmShard>>,
    /// Counts already converted to names (from before a reload), or not index-keyed.
    named: Report,
}

impl ShardMetrics {
    /// Makes `routes` the one indices refer to, converting what was counted under other routes.
    fn under(&mut self, routes: &Arc<Routes>) {
        if self.routes.as_ref().is_some_and(|r| Arc::ptr_eq(r, routes)) {
            return;
        }
        self.convert();
        self.routes = Some(routes.clone());
    }

    pub fn request(
        &mut self,
        routes: &Arc<Routes>,
        group: Option<GroupIdx>,
        deployment: Option<DeploymentIdx>,
        status: u16,
    ) {
        self.under(routes);
        let Some(d) = deployment else {
            *self.unrouted.entry((group.map_or(NONE, |g| g.0), status)).or_default() += 1;
            return;
        };
        let statuses = slot(&mut self.requests, d.get());
        match statuses.iter_mut().find(|(s, _)| *s == status) {
            Some((_, n)) => *n += 1,
            None => statuses.push((status, 1)),
        }
    }

    /// A request under policy `policy` ended with `outcome`.
    pub fn policy_request(&mut self, policy: &str, outcome: &str) {
        *self.named.policy_requests.entry((policy.to_string(), outcome.to_string())).or_default() += 1;
    }

    /// The pareto walk decided for model `key` by `reason`.
    pub fn pareto_decision(&mut self, key: &str, reason: pointwork_core::pareto::Reason) {
        *self.named.pareto_decisions.entry((key.to_string(), reason.as_str())).or_default() += 1;
    }

    /// A complexity router decided (`tier`: its name, or `none`).
    pub fn auto_router_decision(&mut self, router: &str, tier: &'static str, cause: &'static str) {
        *self.named.auto_router_decisions.entry((router.to_string(), tier, cause)).or_default() += 1;
    }

    pub fn upstream_latency(&mut self, routes: &Arc<Routes>, group: GroupIdx, took: Duration) {
        self.under(routes);
        slot(&mut self.upstream_latency, group.get()).get_or_insert_with(Hist::new).record(micros(took));
    }

    pub fn first_token(&mut self, routes: &Arc<Routes>, group: GroupIdx, took: Duration) {
        self.under(routes);
        slot(&mut self.first_token, group.get()).get_or_insert_with(Hist::new).record(micros(took));
    }

    pub fn cooldown_started(&mut self, routes: &Arc<Routes>, deployment: DeploymentIdx, cause: Failure) {
        self.under(routes);
        *self.cooldowns_started.entry(deployment.0).or_default() += 1;
        if routes.litellm_metrics {
            self.litellm(routes).cooldown(deployment, cause);
        }
    }

    /// LiteLLM's counts, under `routes`.
    pub(crate) fn litellm(&mut self, routes: &Arc<Routes>) -> &mut LiteLlmShard {
        self.under(routes);
        self.litellm.get_or_insert_with(Default::default)
    }

    /// Whether to time this pick: one in [`PICK_SAMPLE`] is, which keeps the clock reads off
    /// most requests and still fills the histogram at any real request rate.
    pub fn time_this_pick(&mut self) -> bool {
        self.picks = self.picks.wrapping_add(1);
        self.picks % PICK_SAMPLE == 1
    }

    pub fn pick_took(&mut self, took: Duration) {
        self.named.pick.get_or_insert_with(Hist::new).record(took.as_nanos().min(u128::from(u64::MAX)) as u64);
    }

    pub fn retry(&mut self) {
        self.named.retries += 1;
    }

    pub fn fallback(&mut self) {
        self.named.fallbacks += 1;
    }

    /// Everything counted since the last call.
    pub fn take_report(&mut self) -> Report {
        self.convert();
        std::mem::take(&mut self.named)
    }

    fn convert(&mut self) {
        let Some(routes) = self.routes.as_ref() else {
            return;
        };
        let snap = &routes.snapshot;
        let group_name = |g: u32| snap.groups.get(g as usize).map_or_else(|| "none".to_string(), |g| g.name.clone());
        let deployment_id =
            |d: u32| snap.deployments.get(d as usize).map_or_else(|| "none".to_string(), |d| d.id.clone());
        for (d, statuses) in self.requests.iter_mut().enumerate() {
            let d = d as u32;
            for (status, n) in statuses.drain(..) {
                let group =
                    if (d as usize) < snap.deployments.len() { snap.group_of(DeploymentIdx(d)).0 } else { NONE };
                *self.named.requests.entry((group_name(group), deployment_id(d), status)).or_default() += n;
            }
        }
        for ((g, status), n) in self.unrouted.drain() {
            *self.named.requests.entry((group_name(g), "none".to_string(), status)).or_default() += n;
        }
        for (g, h) in self.upstream_latency.iter_mut().enumerate() {
            if let Some(h) = h.take() {
                self.named.upstream_latency.entry(group_name(g as u32)).or_default().add(&h);
            }
        }
        for (g, h) in self.first_token.iter_mut().enumerate() {
            if let Some(h) = h.take() {
                self.named.first_token.entry(group_name(g as u32)).or_default().add(&h);
            }
        }
        for (d, n) in self.cooldowns_started.drain() {
            *self.named.cooldowns_started.entry(deployment_id(d)).or_default() += n;
        }
        if let Some(litellm) = &mut self.litellm {
            litellm.convert(routes, &mut self.named.litellm);
        }
    }
}

/// The slot at `i`, growing the table to reach it.
fn slot<T: Default>(table: &mut Vec<T>, i: usize) -> &mut T {
    if table.len() <= i {
        table.resize_with(i + 1, T::default);
    }
    &mut table[i]
}

fn micros(d: Duration) -> u64 {
    d.as_micros().min(u128::from(u64::MAX)) as u64
}
