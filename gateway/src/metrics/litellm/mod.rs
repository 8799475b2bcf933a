//! LiteLLM's Prometheus metrics, beside Pointwork's own, when the config names LiteLLM's
//! `prometheus` callback (or `pointwork.telemetry.litellm_metrics: true`): the names, labels,
//! buckets and help texts of LiteLLM 1.110's integration, so that dashboards built on a LiteLLM
//! proxy keep working (docs/operations.md, "Observability").
//!
//! Counted like the rest of the metrics: each shard into its own [`LiteLlmShard`] (no lock),
//! under indices — the caller's slot, the deployment's and group's index — handed over as a
//! [`LiteLlmReport`] under label values, merged by the control thread. Gauges (deployment state,
//! budgets) are read when `/metrics` is scraped (`render`).
//!
//! Without the setting nothing here runs: each hook (the record phase's) is one test of
//! `Routes::litellm_metrics` at its call site, and the counting is out of line.

mod counts;
mod gauges;
mod labels;
mod render;

pub use counts::LiteLlmReport;
/// Appends LiteLLM's metrics to `/metrics` (nothing unless the routes turn them on): the
/// counts the shards reported, then the gauges read now.
pub(crate) fn render(
    out: &mut String,
    totals: &std::sync::Mutex<crate::metrics::Totals>,
    routes: &Routes,
    state: &pointwork_core::State,
) {
    if !routes.litellm_metrics {
        return;
    }
    let now = Instant::now();
    let Ok(totals) = totals.lock() else { return };
    let empty = LiteLlmReport::default();
    let report = totals.counts.litellm.as_deref().unwrap_or(&empty);
    render::requests(out, report);
    render::attempts(out, report);
    gauges::render(out, routes, state, report, now);
}

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use pointwork_core::{response_cost, DeploymentIdx, Failure, Resolution};

use counts::{AttemptCounts, LastOutcome, RequestCounts, RequestSeries, Route, DEFAULT_BUCKETS, LATENCY_BUCKETS};
use labels::{Where, Who, OTHER_MODEL};

use crate::keys::{Caller, VirtualKey};
use crate::request::{Ending, RequestInfo};
use crate::routes::Routes;
use crate::upstream::exchange::Delivered;

/// Stands for "no deployment" / "no group" in the shard's indices.
const NONE: u32 = u32::MAX;

/// The shard's tables hash with foldhash: SipHash costs a few hundred instructions a lookup.
type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

impl LiteLlmShard {
    /// An attempt's answer was relayed (at `started` + its time). The call sites test
    /// `Routes::litellm_metrics` first: without it, nothing here runs.
    #[cold]
    #[inline(never)]
    pub(crate) fn answered(
        &mut self,
        routes: &Routes,
        caller: &Caller,
        idx: DeploymentIdx,
        started: Instant,
        d: &Delivered,
    ) {
        let counts = self;
        let failure = d.body_failure.or((d.status >= 400).then_some(Failure::Status(d.status)));
        counts.last_outcomes.insert(idx.0, LastOutcome { at: started + d.took, failed: failure.is_some() });
        let slot = counts.callers.slot(caller);
        let attempt = counts.attempts.entry((slot, idx.0)).or_default();
        if let Some(f) = failure {
            attempt.failed(f, 1);
            return;
        }
        attempt.successes += 1;
        attempt.api_latency.observe(d.took.as_secs_f64(), &LATENCY_BUCKETS);
        if let Some(first) = d.first_body {
            attempt.first_token.observe(first.as_secs_f64(), &LATENCY_BUCKETS);
        }
        let Some(usage) = d.usage else { return };
        attempt.input_tokens += usage.prompt_tokens;
        attempt.output_tokens += usage.completion_tokens;
        attempt.total_tokens += usage.total_tokens;
        let deployment = routes.snapshot.deployment(idx);
        if let Some(cost) = response_cost(deployment, usage.prompt_tokens, usage.completion_tokens) {
            attempt.spend += cost;
        }
        if usage.completion_tokens > 0 {
            let latency = d.first_body.unwrap_or(d.took).as_secs_f64();
            attempt.per_output_token.observe(latency / usage.completion_tokens as f64, &DEFAULT_BUCKETS);
        }
    }

    /// An attempt failed before anything reached the client.
    #[cold]
    #[inline(never)]
    pub(crate) fn failed(&mut self, caller: &Caller, idx: DeploymentIdx, f: Failure) {
        self.last_outcomes.insert(idx.0, LastOutcome { at: Instant::now(), failed: true });
        let slot = self.callers.slot(caller);
        self.attempts.entry((slot, idx.0)).or_default().failed(f, 1);
    }

    /// The request ended as `e` says.
    #[cold]
    #[inline(never)]
    pub(crate) fn ended(&mut self, routes: &Routes, info: &RequestInfo<'_>, e: &Ending) {
        let snap = &routes.snapshot;
        let requested = match e.group {
            // Most requests name the group that served them: no lookup.
            Some(g) if snap.group(g).name == info.model => g.0,
            _ => match snap.resolve(info.model) {
                Resolution::Group { group, .. } => group.0,
                Resolution::Deployment(d) => snap.group_of(d).0,
                // A router's name (complexity, policy): the group that served it.
                Resolution::Unknown => e.group.map_or(NONE, |g| g.0),
            },
        };
        let total = info.started.elapsed();
        let slot = RequestSlot {
            caller: self.callers.slot(info.caller),
            requested,
            deployment: e.deployment.map_or(NONE, |d| d.0),
            route: Route::of(info.route, info.path),
            status: e.status,
        };
        let request = self.requests.entry(slot).or_default();
        request.requests += 1;
        if e.status < 400 && e.deployment.is_some() {
            request.succeeded(total, e.upstream.unwrap_or(Duration::ZERO));
        }
    }
}

/// One series of requests, by indices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct RequestSlot {
    caller: u32,
    requested: u32,
    deployment: u32,
    route: Route,
    status: u16,
}

/// A shard's LiteLLM counts since its last report, under indices of the routes the shard's
/// metrics count under (`ShardMetrics`).
#[derive(Default)]
pub(crate) struct LiteLlmShard {
    callers: Callers,
    /// By (caller slot, deployment index).
    attempts: FastMap<(u32, u32), AttemptCounts>,
    requests: FastMap<RequestSlot, RequestCounts>,
    /// By (deployment index, the failure that started it).
    cooldowns: FastMap<(u32, Failure), u64>,
    last_outcomes: FastMap<u32, LastOutcome>,
}

impl LiteLlmShard {
    /// A cooldown of deployment `idx` started after `failure`.
    pub(crate) fn cooldown(&mut self, idx: DeploymentIdx, failure: Failure) {
        *self.cooldowns.entry((idx.0, failure)).or_default() += 1;
    }

    fn is_empty(&self) -> bool {
        self.attempts.is_empty()
            && self.requests.is_empty()
            && self.cooldowns.is_empty()
            && self.last_outcomes.is_empty()
    }

    /// Moves the counts into `report` under label values (`routes`: what the indices refer to).
    pub(crate) fn convert(&mut self, routes: &Routes, report: &mut Option<Box<LiteLlmReport>>) {
        let callers = std::mem::take(&mut self.callers);
        if self.is_empty() {
            return;
        }
        let report = report.get_or_insert_with(Default::default);
        let mut places = Places::new(routes);
        for (slot, counts) in self.requests.drain() {
            let series = RequestSeries {
                who: callers.who[slot.caller as usize].clone(),
                requested: match routes.snapshot.groups.get(slot.requested as usize) {
                    Some(group) => group.name.as_str().into(),
                    None => OTHER_MODEL.into(),
                },
                served: places.of(slot.deployment),
                route: slot.route,
                status: slot.status,
            };
            report.requests.entry(series).or_default().add(&counts);
        }
        for ((caller, d), counts) in self.attempts.drain() {
            if let Some(place) = places.of(d) {
                let who = callers.who[caller as usize].clone();
                report.attempts.entry((who, place)).or_default().add(&counts);
            }
        }
        for ((d, failure), n) in self.cooldowns.drain() {
            if let Some(place) = places.of(d) {
                *report.cooldowns.entry((place, failure)).or_default() += n;
            }
        }
        for (d, outcome) in self.last_outcomes.drain() {
            if let Some(place) = places.of(d) {
                let id = place.model_id.clone();
                report.last_outcomes.entry(id).and_modify(|o| o.merge(outcome)).or_insert(outcome);
            }
        }
        for key in callers.keys.into_iter().flatten().filter(|k| k.db.is_some()) {
            report.database_keys.insert(key.digest, key);
        }
    }
}

/// Each deployment's labels, made once per hand-over.
struct Places<'r> {
    routes: &'r Routes,
    made: Vec<Option<Arc<Where>>>,
}

impl<'r> Places<'r> {
    fn new(routes: &'r Routes) -> Places<'r> {
        Places { routes, made: vec![None; routes.snapshot.deployments.len()] }
    }

    /// `None` for [`NONE`] (or an index the routes do not have).
    fn of(&mut self, d: u32) -> Option<Arc<Where>> {
        let routes = self.routes;
        let slot = self.made.get_mut(d as usize)?;
        Some(slot.get_or_insert_with(|| Arc::new(Where::of(routes, DeploymentIdx(d)))).clone())
    }
}

/// The callers a shard counted for since its last report, each with a slot: its labels are
/// made the first time it is seen, not per request.
#[derive(Default)]
struct Callers {
    who: Vec<Arc<Who>>,
    /// The virtual key behind each slot, held so that its address keeps naming it.
    keys: Vec<Option<Arc<VirtualKey>>>,
    by_key: FastMap<usize, u32>,
    anyone: Option<u32>,
    master: Option<u32>,
}

impl Callers {
    fn slot(&mut self, caller: &Caller) -> u32 {
        match caller {
            Caller::Anyone => match self.anyone {
                Some(slot) => slot,
                None => *self.anyone.insert(push(&mut self.who, &mut self.keys, Who::default(), None)),
            },
            // An admin key calls no API route; it would be booked as the master key.
            Caller::Master | Caller::Admin(_) => match self.master {
                Some(slot) => slot,
                None => *self.master.insert(push(&mut self.who, &mut self.keys, Who::master(), None)),
            },
            Caller::Virtual(key) => {
                let address = Arc::as_ptr(key) as usize;
                if let Some(&slot) = self.by_key.get(&address) {
                    return slot;
                }
                let slot = push(&mut self.who, &mut self.keys, Who::of_key(key), Some(key.clone()));
                self.by_key.insert(address, slot);
                slot
            }
        }
    }
}

fn push(who: &mut Vec<Arc<Who>>, keys: &mut Vec<Option<Arc<VirtualKey>>>, w: Who, key: Option<Arc<VirtualKey>>) -> u32 {
    who.push(Arc::new(w));
    keys.push(key);
    (who.len() - 1) as u32
}
