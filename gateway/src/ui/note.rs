//! What a shard notes for the live view while someone watches: each request's decision (by
//! name, since a reload renumbers deployments) and each deployment's counts. Its housekeeping
//! hands both to the board every quarter second, with the in-flight counts and latencies only
//! this shard knows.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::sync::Arc;

use pointwork_core::DeploymentIdx;

use crate::request::{Ending, RequestInfo};
use crate::routes::Routes;
use crate::shard::Shard;
use crate::usage::Usage;

/// Decisions a shard notes between two hand-overs: the first of each quarter second (256 a
/// second per shard; the board keeps the last 200). Past it a request is only counted, so a
/// busy shard pays for no decision the page would not show.
const NOTED_MAX: usize = 64;

/// This shard's notes for the live view.
#[derive(Default)]
pub struct ShardUi {
    on: Cell<bool>,
    decisions: RefCell<Vec<Noted>>,
    tally: RefCell<Tally>,
}

/// Counts by deployment index of one routes generation (a slot per deployment, no hashing on
/// the way of an attempt), and by id once another generation came or for the hand-over.
#[derive(Default)]
struct Tally {
    routes: Option<Arc<Routes>>,
    by_index: Vec<Counts>,
    by_id: HashMap<String, Counts>,
}

impl Tally {
    /// The slot of deployment `idx` of `routes`.
    fn slot(&mut self, routes: &Arc<Routes>, idx: DeploymentIdx) -> &mut Counts {
        if !self.routes.as_ref().is_some_and(|r| Arc::ptr_eq(r, routes)) {
            self.settle();
            self.routes = Some(routes.clone());
            self.by_index = vec![Counts::default(); routes.snapshot.deployments.len()];
        }
        &mut self.by_index[idx.get()]
    }

    /// Moves the counts by index to the counts by id.
    fn settle(&mut self) {
        let Some(routes) = &self.routes else { return };
        for (d, c) in routes.snapshot.deployments.iter().zip(&mut self.by_index) {
            if *c != Counts::default() {
                self.by_id.entry(d.id.clone()).or_default().add(&std::mem::take(c));
            }
        }
    }
}

/// One deployment's attempts, failed attempts, tokens and spend.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Counts {
    pub requests: u64,
    pub errors: u64,
    pub tokens: u64,
    pub spend_usd: f64,
    /// Whether any answer's usage was read (else tokens and spend are unknown, not zero).
    pub usage_read: bool,
}

impl Counts {
    pub(super) fn add(&mut self, other: &Counts) {
        self.requests += other.requests;
        self.errors += other.errors;
        self.tokens += other.tokens;
        self.spend_usd += other.spend_usd;
        self.usage_read |= other.usage_read;
    }
}

/// One request's routing, as the page shows it.
#[derive(Clone, Debug, Default)]
pub struct Noted {
    /// Given by the board at hand-over (0 until then).
    pub seq: u64,
    pub unix_ms: u64,
    pub shard: usize,
    pub path: String,
    pub model: String,
    /// The caller's name, never its key.
    pub key: Option<String>,
    pub policy: Option<String>,
    pub group: Option<String>,
    pub winner: Option<String>,
    pub status: u16,
    pub attempts: u32,
    pub stream: bool,
    pub cache_hit: bool,
    pub upstream_ms: Option<f64>,
    pub total_ms: f64,
    pub cause: Option<&'static str>,
    /// The `x-pointwork-route` line.
    pub route_reason: Option<String>,
    pub before_pick: Option<String>,
    pub routing_decision: Option<String>,
    pub candidates: Vec<Candidate>,
    pub failed_over: Vec<String>,
}

/// A deployment the request could have gone to.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    pub id: String,
    pub provider: &'static str,
    pub upstream_model: String,
    pub api_base: String,
    /// `winner`, `survivor` or `removed`.
    pub status: &'static str,
    pub removed_by: Option<&'static str>,
}

impl ShardUi {
    /// Whether someone watches: only then is anything noted.
    pub fn is_on(&self) -> bool {
        self.on.get()
    }

    /// Starts or stops noting; returns whether it was on.
    pub(super) fn set_on(&self, on: bool) -> bool {
        self.on.replace(on)
    }

    /// Whether someone watches and another decision would be noted before the next hand-over.
    pub fn wants_decision(&self) -> bool {
        self.on.get() && self.decisions.borrow().len() < NOTED_MAX
    }

    /// What was noted since the last call.
    pub(super) fn take(&self) -> (Vec<Noted>, HashMap<String, Counts>) {
        let mut tally = self.tally.borrow_mut();
        tally.settle();
        // Holds no routes past a hand-over (a reload's old routes are dropped).
        tally.routes = None;
        (std::mem::take(&mut *self.decisions.borrow_mut()), std::mem::take(&mut tally.by_id))
    }
}

/// Notes how a request ended (called only when [`ShardUi::wants_decision`]).
pub(crate) fn note_ending(
    shard: &Shard,
    routes: &Arc<Routes>,
    info: &RequestInfo<'_>,
    e: &Ending,
    route: Option<&str>,
) {
    let snap = &routes.snapshot;
    let id = |d: DeploymentIdx| snap.deployment(d).id.clone();
    let candidate = |d: DeploymentIdx, status, removed_by| {
        let dep = snap.deployment(d);
        Candidate {
            id: dep.id.clone(),
            provider: dep.provider.prefix(),
            upstream_model: dep.upstream_model.clone(),
            api_base: dep.api_base.clone(),
            status,
            removed_by,
        }
    };
    let mut candidates = Vec::new();
    if let Some(decision) = &e.decision {
        let members = &snap.group(decision.group).members;
        // The group's members when the request named the group; else (a deployment id, a
        // wildcard) the winner and those removed.
        let whole_group = decision.candidates as usize == members.len();
        let listed: Vec<DeploymentIdx> = if whole_group { members.clone() } else { vec![decision.deployment] };
        for d in listed.into_iter().chain(decision.rejected.iter().map(|r| r.0)) {
            if candidates.iter().any(|c: &Candidate| c.id == snap.deployment(d).id) {
                continue;
            }
            let removed = decision.rejected.iter().find(|r| r.0 == d).map(|r| r.1.as_str());
            let status = match removed {
                Some(_) => "removed",
                None if d == decision.deployment => "winner",
                None => "survivor",
            };
            candidates.push(candidate(d, status, removed));
        }
    } else {
        candidates.extend(e.failed_over.iter().map(|&d| candidate(d, "removed", Some("failed"))));
        candidates.extend(e.deployment.map(|d| candidate(d, "winner", None)));
    }
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1000.0;
    let noted = Noted {
        seq: 0,
        unix_ms: crate::clock::unix_millis(),
        shard: shard.id,
        path: info.path.split_once('?').map_or(info.path, |(p, _)| p).to_owned(),
        model: info.model.to_owned(),
        key: info.caller.name().map(str::to_owned),
        policy: info.policy.map(str::to_owned),
        group: e.group.map(|g| snap.group(g).name.clone()),
        winner: e.deployment.map(id),
        status: e.status,
        attempts: e.attempts,
        stream: e.stream,
        cache_hit: e.cache_hit,
        upstream_ms: e.upstream.map(ms),
        total_ms: ms(info.started.elapsed()),
        cause: e.decision.as_ref().map(|d| d.cause.as_str()).or(e.route.as_ref().map(|r| r.1)),
        route_reason: route.map(str::to_owned),
        before_pick: e.before_pick.clone(),
        routing_decision: e.routing_decision.clone(),
        candidates,
        failed_over: e.failed_over.iter().map(|&d| id(d)).collect(),
    };
    shard.ui.decisions.borrow_mut().push(noted);
}

/// What an attempt adds to its deployment's counts (called only while someone watches).
pub(crate) enum Counted {
    Started,
    Failed,
    Answered(Usage),
}

/// Counts an attempt's start, failure or answer's tokens and what they cost.
pub(crate) fn note_attempt(shard: &Shard, routes: &Arc<Routes>, idx: DeploymentIdx, what: Counted) {
    let mut tally = shard.ui.tally.borrow_mut();
    let c = tally.slot(routes, idx);
    match what {
        Counted::Started => c.requests += 1,
        Counted::Failed => c.errors += 1,
        Counted::Answered(usage) => {
            let d = routes.snapshot.deployment(idx);
            let cost = pointwork_core::budget::response_cost(d, usage.prompt_tokens, usage.completion_tokens);
            c.tokens += usage.total_tokens;
            c.spend_usd += cost.unwrap_or(0.0);
            c.usage_read = true;
        }
    }
}

/// The shard's quarter-second chore: looks whether anyone watches, and while so (and once
/// after) hands its notes and what only it knows to the board.
pub(crate) fn hand_over(shard: &Shard) {
    let hub = &shard.hub;
    let now_ms = super::board::since_start_ms(hub.started);
    let watched = hub.ui.is_watched(now_ms);
    let was = shard.ui.set_on(watched);
    if !watched && !was {
        return;
    }
    let (noted, counts) = shard.ui.take();
    let view = if watched { Some(shard_view(shard)) } else { None };
    hub.ui.hand_over(shard.id, noted, counts, view, now_ms);
}

/// In-flight counts and latencies by deployment id: only this shard knows its own.
fn shard_view(shard: &Shard) -> super::board::ShardView {
    let routing = shard.routing.borrow();
    let snap = &routing.routes.snapshot;
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1000.0;
    let mut view = super::board::ShardView::default();
    for (i, d) in snap.deployments.iter().enumerate() {
        let idx = DeploymentIdx(i as u32);
        let in_flight = routing.state.in_flight(idx);
        let latency = routing.state.latency(idx);
        let total = latency.and_then(|l| l.total()).map(ms);
        let first = latency.and_then(|l| l.time_to_first_token()).map(ms);
        if in_flight > 0 || total.is_some() || first.is_some() {
            view.insert(d.id.clone(), super::board::Seen { in_flight, latency_ms: total, ttft_ms: first });
        }
    }
    view
}
