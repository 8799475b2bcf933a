//! What a shard keeps for the live view while someone watches: each request's decision (by
//! name, since a reload renumbers deployments) and each deployment's counts, until its
//! housekeeping hands them to the board (`note.rs`).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::sync::Arc;

use pointwork_core::DeploymentIdx;

use crate::routes::Routes;
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

    /// Keeps a noted decision (when [`ShardUi::wants_decision`] said so).
    pub(super) fn push(&self, noted: Noted) {
        self.decisions.borrow_mut().push(noted);
    }

    /// Counts an attempt's start, failure or answer's tokens and what they cost.
    pub(crate) fn count(&self, routes: &Arc<Routes>, idx: DeploymentIdx, what: Counted) {
        let mut tally = self.tally.borrow_mut();
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
}

/// What an attempt adds to its deployment's counts (called only while someone watches).
pub(crate) enum Counted {
    Started,
    Failed,
    Answered(Usage),
}
