//! The complexity auto-router (issue 15, spec 002): a `model_list` entry of
//! `auto_router/complexity_router` is a name clients ask for. Each request's newest ask is
//! classified into a tier (keyword rules, the heuristic, or an LLM), the tier pick chooses one of
//! the tier's model groups, the health gate swaps it for a live peer of the same tier when it
//! cannot serve, and then the ordinary walk (pick, retries, fallbacks) runs inside that group.
//! With `session_affinity`, a conversation stays on its first turn's group (a pin shared by every
//! shard, carried over reloads). The decision is in `x-pointwork-route`, the access log's
//! `routing_decision`, `pointwork_auto_router_decisions_total` and the dry run.

pub(crate) mod ask;
pub(crate) mod dry_run;
mod llm;

use std::sync::Arc;
use std::time::Instant;

use pointwork_core::complexity::{AutoRouter, Cause, ClassifierFallback, Gate, Routed, Signal, Verdict};
use pointwork_core::{affinity_hash, Event, GroupIdx, Pin, RequestFacts, RouteKind, Snapshot};
use serde_json::json;

use crate::keys::Caller;
use crate::routes::Routes;
use crate::shard::Shard;

/// A router's decision for one request, and what its record says beyond [`Routed`].
#[derive(Clone, Debug, PartialEq)]
pub struct Decided {
    pub routed: Routed,
    /// The keyword rule's keyword that decided the tier.
    pub keyword: Option<String>,
    /// Why the LLM classifier gave no tier, when it failed.
    pub classifier_failure: Option<&'static str>,
}

impl Decided {
    pub fn tier_name(&self) -> &'static str {
        self.routed.tier.map_or("none", |t| t.as_str())
    }

    /// The head of `x-pointwork-route` (the pick's sentence follows):
    /// `auto-router SIMPLE heuristic_scorer score=-0.100 signals=short,simple routed=live-tier-model`.
    pub fn describe(&self, snap: &Snapshot) -> String {
        let r = &self.routed;
        let mut out = format!("auto-router {} {}", self.tier_name(), r.cause.as_str());
        if let Some(by) = r.decided_by {
            out.push_str(&format!(" (over {})", by.as_str()));
        }
        if let Some(why) = self.classifier_failure {
            out.push_str(&format!(" classifier_failure={why}"));
        }
        if let Some(score) = r.score {
            out.push_str(&format!(" score={score:.3}"));
        }
        if !r.signals.is_empty() {
            let names: Vec<&str> = r.signals.iter().map(Signal::as_str).collect();
            out.push_str(&format!(" signals={}", names.join(",")));
        }
        out.push_str(&format!(" routed={}", snap.group(r.group).name));
        if let Some(g) = r.displaced {
            out.push_str(&format!(" displaced={}", snap.group(g).name));
        }
        out
    }

    /// The access log's `routing_decision` object (LiteLLM's field names).
    pub fn record(&self, router: &str, snap: &Snapshot) -> serde_json::Value {
        let r = &self.routed;
        let mut signals: Vec<String> = r.signals.iter().map(|s| s.as_str().to_string()).collect();
        if let Some(g) = r.displaced {
            signals.push(format!("health_displaced:{}", snap.group(g).name));
        }
        json!({
            "router_model_name": router,
            "router_type": "complexity",
            "routed_model": snap.group(r.group).name,
            "cause": r.cause.as_str(),
            "decided_by": r.decided_by.map(Cause::as_str),
            "tier": r.tier.map(|t| t.as_str()),
            "score": r.score,
            "signals": signals,
            "matched_keyword": self.keyword,
            "displaced": r.displaced.map(|g| snap.group(g).name.as_str()),
            "classifier_failure_reason": self.classifier_failure,
        })
    }
}

/// Decides the group of a request for `router` (its model): a live session pin, else a
/// classification, then the health gate. Sets the session's pin when the decision is new and
/// pinnable, refreshes it when replayed. `caller` scopes the session ids (a hash of the key's
/// name).
pub(crate) async fn decide(
    shard: &Shard,
    routes: &Arc<Routes>,
    router: &AutoRouter,
    route: RouteKind,
    body: &[u8],
    facts: &RequestFacts,
    caller: u64,
) -> Decided {
    let snap = &routes.snapshot;
    let ask = ask::read(route, body);
    let config = &router.config;
    let key = ask.session.as_deref().filter(|_| config.session_affinity).map(|s| router.pin_key(s.as_bytes(), caller));
    let now = Instant::now();
    if let Some(key) = key {
        let held = shard.with_state(routes, |state| router.replay(snap, state, key, now).zip(state.pin_of(key, now)));
        if let Some((held, pin)) = held {
            // Each replay keeps the session's pin for another TTL (LiteLLM refreshes on read).
            set_pin(shard, routes, key, Pin { until: now + config.session_ttl, ..pin }, now);
            let routed =
                gated(shard, routes, facts, now, |gate, rng, scratch| router.replayed(gate, held, rng, scratch));
            return counted(shard, router, Decided { routed, keyword: None, classifier_failure: None });
        }
    }
    let (verdict, keyword, classifier_failure) = match &config.llm {
        None => heuristic(router, &ask.text, None),
        Some(llm) => match llm::classify(shard, routes, llm, &ask.text).await {
            Ok(tier) => {
                let verdict =
                    Verdict { tier: Some(tier), cause: Cause::LlmClassifier, score: None, signals: Default::default() };
                (verdict, None, None)
            }
            Err(failure) => match config.fallback {
                ClassifierFallback::Heuristic => heuristic(router, &ask.text, Some(failure.reason())),
                ClassifierFallback::DefaultModel => {
                    let verdict = Verdict {
                        tier: None,
                        cause: Cause::DefaultModelFallback,
                        score: None,
                        signals: Default::default(),
                    };
                    (verdict, None, Some(failure.reason()))
                }
            },
        },
    };
    let now = Instant::now();
    let routed =
        gated(shard, routes, facts, now, |gate, rng, scratch| router.place(gate, verdict, key.is_some(), rng, scratch));
    if let (Some(key), Some((marker, tier))) = (key, routed.pin) {
        set_pin(shard, routes, key, Pin { deployment: marker, until: now + config.session_ttl, tier }, now);
    }
    counted(shard, router, Decided { routed, keyword, classifier_failure })
}

/// The heuristic's verdict on `text`; `failure`: the LLM classifier's, when it fell back.
pub(crate) fn heuristic(
    router: &AutoRouter,
    text: &str,
    failure: Option<&'static str>,
) -> (Verdict, Option<String>, Option<&'static str>) {
    let c = router.classifier.classify(text);
    let cause = match (failure, c.keyword, c.signals.contains(Signal::ReasoningOverride)) {
        (Some(_), _, _) => Cause::ClassifierFallback,
        (None, Some(_), _) => Cause::KeywordMatch,
        (None, None, true) => Cause::ReasoningOverride,
        (None, None, false) => Cause::HeuristicScorer,
    };
    let score = c.keyword.is_none().then_some(c.score);
    (Verdict { tier: Some(c.tier), cause, score, signals: c.signals }, c.keyword.map(str::to_string), failure)
}

/// Runs `decide` with the gate over this shard's state, rng and pick scratch.
fn gated(
    shard: &Shard,
    routes: &Arc<Routes>,
    facts: &RequestFacts,
    now: Instant,
    decide: impl FnOnce(&Gate<'_>, &mut pointwork_core::Rng, &mut pointwork_core::PickScratch) -> Routed,
) -> Routed {
    let mut rng = shard.rng.borrow_mut();
    let mut scratch = shard.scratch.borrow_mut();
    shard.with_state(routes, |state| {
        let gate = Gate { snap: &routes.snapshot, state, facts, now };
        decide(&gate, &mut rng, &mut scratch)
    })
}

/// What the request's way keeps of a decision: the group, the route line's head, the access
/// log's record (only when the log is on).
pub(crate) struct RequestRoute {
    pub group: GroupIdx,
    pub line: String,
    pub record: Option<String>,
}

/// [`decide`] for a request of `caller` (pins are scoped by the caller's key name).
pub(crate) async fn route_request(
    shard: &Shard,
    routes: &Arc<Routes>,
    router: &AutoRouter,
    route: RouteKind,
    body: &[u8],
    facts: &RequestFacts,
    caller: &Caller,
) -> RequestRoute {
    let snap = &routes.snapshot;
    let scope = caller.name().map_or(0, |name| affinity_hash(name.as_bytes()));
    let decided = decide(shard, routes, router, route, body, facts, scope).await;
    let wanted = shard.access_log.borrow().is_on() || shard.ui.wants_decision();
    let record = wanted.then(|| decided.record(router.name(), snap).to_string());
    RequestRoute { group: decided.routed.group, line: decided.describe(snap), record }
}

/// Sets a session pin on this shard and tells the others.
fn set_pin(shard: &Shard, routes: &Arc<Routes>, key: u64, pin: Pin, now: Instant) {
    shard.record(routes, pin.deployment, |state, _, i| {
        let pin = Pin { deployment: i, ..pin };
        state.pin(key, pin, now);
        ((), Some(Event::Pin { key, pin, at: now }))
    });
}

fn counted(shard: &Shard, router: &AutoRouter, decided: Decided) -> Decided {
    shard.metrics.borrow_mut().auto_router_decision(router.name(), decided.tier_name(), decided.routed.cause.as_str());
    decided
}
