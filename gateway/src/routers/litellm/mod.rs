//! LiteLLM's router: the pick (core's filter chain and strategy) and its walk — retries on a
//! fresh pick, the group's next `order` tier, then the fallback groups by error class. Two
//! auto-routers narrow it: the complexity router decides the group once, before the first pick
//! (`super::complexity`); the pareto walk narrows a managed OpenRouter group's providers before
//! every pick, and learns from its failures (`super::pareto`).

mod labels;
mod record;

use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};

use pointwork_core::pass_through::pass_through_model;
use pointwork_core::{
    wildcard_upstream_model, Cause, Decision, DeploymentIdx, ErrorClass, PickRequest, RequestFacts, Resolution,
    RouteError, Step, Walk,
};

use super::complexity::{self, RequestRoute};
use super::pareto::{self, Steered};
use super::{attempt_error_reply, delivered, route_error_reply, AfterFailure, Attempt, Cx, ExtraBody, Next, Router};
use crate::request::{Ending, HEADER_ROUTE};

/// An attempt's cause when it retries in a fallback group (its span's `pointwork.attempt.cause`).
const CAUSE_FALLBACK: &str = "fallback";
use crate::shard::Shard;
use crate::upstream::exchange::{AttemptError, Delivered};
use crate::usage::Usage;

/// The access log's cause for a request the pareto walk refused.
const CAUSE_PARETO: &str = "openrouter_pareto";

pub(crate) struct LiteLlm<'a> {
    cx: &'a Cx<'a>,
    /// The complexity router's decision, when one decided the group.
    auto: Option<RequestRoute>,
    /// The name asked for, or the group the complexity router decided: where the walk starts.
    target: &'a str,
    walk: Walk<'a>,
    /// The last failed attempt: its error answers when nothing is left to try.
    last_error: Option<(DeploymentIdx, AttemptError)>,
    /// The first pick that found nothing.
    route_error: Option<RouteError>,
    /// The current attempt's pareto verdict (its failure teaches the walk), and what decided
    /// before its pick, for the route line. Kept here rather than handed out with the
    /// decision: they are copied with it otherwise.
    steered: Option<Steered<'a>>,
    before_pick: Option<String>,
}

impl<'a> LiteLlm<'a> {
    /// The complexity router's decision of the request's group, when the requested name is a
    /// complexity router: to await before [`LiteLlm::new`] (boxed: most requests have none).
    pub(crate) fn auto_route(cx: &'a Cx<'a>) -> Option<Pin<Box<impl Future<Output = RequestRoute> + 'a>>> {
        let (routes, facts) = (cx.routes, &cx.extracted.facts);
        let router = routes.complexity.as_ref()?.router(&facts.model)?;
        let body = cx.request.body;
        Some(Box::pin(complexity::route_request(cx.shard, routes, router, cx.route, body, facts, cx.caller)))
    }

    /// The router for a request; `auto`: the group a complexity router decided.
    pub(crate) fn new(cx: &'a Cx<'a>, auto: Option<RequestRoute>) -> LiteLlm<'a> {
        let snap = &cx.routes.snapshot;
        let settings = &snap.settings;
        let target = auto.as_ref().map_or(&*cx.extracted.facts.model, |a| &*snap.group(a.group).name);
        let walk = Walk::new(target, &settings.fallbacks, &settings.retry_policy, settings.num_retries);
        LiteLlm { cx, auto, target, walk, last_error: None, route_error: None, steered: None, before_pick: None }
    }

    /// Moves the walk on after a failure of class `class` with no attempt made; whether there
    /// is anything left to try.
    fn walk_on(&mut self, class: ErrorClass) -> bool {
        let (shard, routes) = (self.cx.shard, self.cx.routes);
        let walk = &mut self.walk;
        let step =
            shard.with_state(routes, |state| walk.after_failure(&routes.snapshot, state, None, class, Instant::now()));
        if step == Step::Stop {
            return false;
        }
        count_step(shard, &step);
        true
    }

    /// How the request ended, as far as what decided before the pick goes.
    fn ending(&mut self) -> Ending {
        Ending {
            before_pick: self.auto.as_ref().map(|a| a.line.clone()),
            routing_decision: self.auto.as_mut().and_then(|a| a.record.take()),
            ..Ending::refused(0, 0)
        }
    }

    /// Nothing left to try: the last attempt's error, else why the pick found nothing.
    fn nothing_left(&mut self) -> Next<Decision> {
        let snap = &self.cx.routes.snapshot;
        let ending = self.ending();
        if let Some((idx, err)) = self.last_error.take() {
            let attempts = self.walk.failed_attempts();
            let ending = Ending { group: Some(snap.group_of(idx)), deployment: Some(idx), attempts, ..ending };
            return Next::End(attempt_error_reply(snap, idx, attempts, err), ending);
        }
        // Invariant: a pick that found nothing set it before the walk stopped.
        let facts = &self.cx.extracted.facts;
        let e = self.route_error.take().unwrap_or(RouteError::UnknownModel { model: facts.model.clone() });
        let group = match snap.resolve(self.target) {
            Resolution::Group { group, .. } => Some(group),
            _ => None,
        };
        let mut reply = route_error_reply(&e);
        if let Some(line) = &ending.before_pick {
            reply.header(HEADER_ROUTE, line.as_bytes());
        }
        Next::End(reply, Ending { group, ..ending })
    }
}

impl<'a> Router for LiteLlm<'a> {
    /// The pick's decision.
    type Chosen = Decision;

    fn choose(&mut self, mut now: Instant) -> Next<Decision> {
        let (shard, routes, body) = (self.cx.shard, self.cx.routes, self.cx.request.body);
        let snap = &routes.snapshot;
        let facts = &self.cx.extracted.facts;
        loop {
            let steered = match pareto::steer(shard, routes, body, self.walk.target(), self.walk.failed(), now) {
                None => None,
                Some(Ok(s)) => Some(s),
                Some(Err(refusal)) => {
                    let class = if refusal.status() == 400 { ErrorClass::BadRequest } else { ErrorClass::RateLimit };
                    if self.walk_on(class) {
                        now = Instant::now();
                        continue;
                    }
                    let walked = (format!("openrouter-pareto {} -", refusal.reason.as_str()), CAUSE_PARETO);
                    return Next::End(pareto::refusal_reply(&refusal), Ending { route: Some(walked), ..self.ending() });
                }
            };
            // A Responses follow-up goes where its conversation is (most requests: nothing).
            let held = self.cx.responses.map(|turn| turn.excluded(snap)).unwrap_or_default();
            let both;
            let excluded: &[DeploymentIdx] = match (&steered, held.is_empty()) {
                (None, _) => &held,
                (Some(s), true) => &s.excluded,
                (Some(s), false) => {
                    both = [&s.excluded[..], &held[..]].concat();
                    &both
                }
            };
            let walk = &self.walk;
            let req = PickRequest { excluded, ..pick_request(facts, body, walk.target(), walk.order(), walk.failed()) };
            let timed = shard.metrics.borrow_mut().time_this_pick();
            let picked = shard.pick(routes, &req, now);
            if timed {
                shard.metrics.borrow_mut().pick_took(now.elapsed());
            }
            let decision = match picked {
                Ok(d) => d,
                Err(e) => {
                    // Nothing to pick in this target (all cooling down or filtered out, or a
                    // fallback group that does not exist): the walk may go on, by the error's
                    // class. A requested name that does not exist is the caller's mistake: it
                    // stops here.
                    let unknown_request =
                        matches!(e, RouteError::UnknownModel { .. }) && self.walk.target() == self.target;
                    let go_on = !unknown_request && self.walk_on(ErrorClass::of_route_error(&e));
                    self.route_error.get_or_insert(e);
                    if go_on {
                        now = Instant::now();
                        continue;
                    }
                    return self.nothing_left();
                }
            };
            let idx = decision.deployment;
            let deployment = snap.deployment(idx);
            // A wildcard group sends the part of the name its `*` matched, a pass-through
            // deployment the name itself (one encoding per request, only for these routes);
            // every other the precomputed model.
            let model_json = match (deployment.pass_through, decision.wildcard) {
                (true, _) => Some(pass_through_model(deployment, self.walk.target()).to_string()),
                (false, Some(w)) => Some(wildcard_upstream_model(&deployment.upstream_model, self.walk.target(), w)),
                (false, None) => None,
            }
            .map(|model| serde_json::to_vec(&model).unwrap_or_default());
            let before_pick = labels::before_pick(self.auto.as_ref().map(|a| a.line.as_str()), steered.as_ref());
            let attempt = self.walk.failed_attempts() + 1;
            let labels = labels::decision_headers(snap, &decision, attempt, before_pick.as_deref());
            let edit = steered.as_ref().zip(routes.pareto.as_ref()).map(|(s, p)| s.edit(&p.pins[idx.get()]));
            let read_usage = routes.counts_usage()
                || snap.settings.budget_of(deployment.provider).is_some()
                || self.cx.key.is_some_and(|k| k.counts_usage())
                || routes.litellm_metrics;
            let attempt = Attempt {
                deployment: idx,
                started: now,
                labels,
                model_json,
                extra_body: ExtraBody::Added(edit),
                block: None,
                read_usage,
                usage_asked: false,
            };
            (self.steered, self.before_pick) = (steered, before_pick);
            return Next::Attempt(attempt, decision);
        }
    }

    fn cause(&self, decision: &Decision) -> &'static str {
        // A retry in another group than the one asked for is a fallback.
        match decision.cause {
            Cause::Retry if self.walk.target() != self.target => CAUSE_FALLBACK,
            cause => cause.as_str(),
        }
    }

    fn sending(&mut self, decision: &Decision, now: Instant) {
        // Pinned when sent, not when answered: every shard knows the pin before this response
        // reaches the client, so the conversation's next request finds it. A failed attempt's
        // retry pins its own pick.
        record::pin_conversation(self.cx.shard, self.cx.routes, decision, &self.cx.extracted.facts, now);
    }

    fn spent(&self, idx: DeploymentIdx, started: Instant, usage: Option<Usage>) {
        let Some(usage) = usage else { return };
        let cost = record::spend(self.cx.shard, self.cx.routes, idx, started, usage, self.cx.key);
        crate::database::spend::spent(self.cx, idx, started, usage, cost);
    }

    fn delivered(&mut self, decision: Decision, idx: DeploymentIdx, d: &Delivered) -> Ending {
        Ending {
            group: Some(decision.group),
            deployment: Some(idx),
            attempts: self.walk.failed_attempts() + 1,
            decision: Some(decision),
            before_pick: self.before_pick.take(),
            routing_decision: self.auto.as_mut().and_then(|a| a.record.take()),
            ..delivered(d, self.cx.extracted.facts.stream)
        }
    }

    fn after_failure(&mut self, decision: Decision, idx: DeploymentIdx, err: AttemptError) -> AfterFailure {
        let (shard, routes) = (self.cx.shard, self.cx.routes);
        let snap = &routes.snapshot;
        let before_pick = self.before_pick.take();
        if let Some(s) = &self.steered.take() {
            pareto::learn(shard, routes, s, idx, err.status, &err.body);
        }
        let class = ErrorClass::of(err.failure, &String::from_utf8_lossy(&err.body));
        let walk = &mut self.walk;
        let step = shard.with_state(routes, |state| {
            walk.after_failure(snap, state, Some((idx, err.failure)), class, Instant::now())
        });
        if step == Step::Stop {
            let attempts = self.walk.failed_attempts();
            let reply = attempt_error_reply(snap, idx, attempts, err);
            let ending = Ending {
                group: Some(decision.group),
                deployment: Some(idx),
                attempts,
                stream: self.cx.extracted.facts.stream,
                decision: Some(decision),
                before_pick,
                ..self.ending()
            };
            return AfterFailure::End(reply, ending);
        }
        count_step(shard, &step);
        self.last_error = Some((idx, err));
        let retry_after = snap.settings.retry_after;
        AfterFailure::Again(if step == Step::Retry { retry_after } else { Duration::ZERO })
    }
}

/// What the pick reads of a request (the dry run builds it the same way).
/// `model` and `order` are what the fallback walk targets (the requested name at first).
pub fn pick_request<'a>(
    facts: &'a RequestFacts,
    body: &[u8],
    model: &'a str,
    order: Option<u32>,
    failed: &'a [DeploymentIdx],
) -> PickRequest<'a> {
    let input_tokens = estimated_input_tokens(body);
    PickRequest { model, failed, stream: facts.stream, input_tokens, excluded: &[], order, facts }
}

/// Counts a retry, or an order or group fallback, in the metrics.
fn count_step(shard: &Shard, step: &Step) {
    let mut metrics = shard.metrics.borrow_mut();
    match step {
        Step::Retry => metrics.retry(),
        Step::NextOrder(_) | Step::Fallback(_) => metrics.fallback(),
        Step::Stop => {}
    }
}

/// A cheap, conservative estimate of the request's input tokens for usage-based routing: one
/// token per 4 bytes of body (JSON punctuation makes it an overestimate for prose).
fn estimated_input_tokens(body: &[u8]) -> u64 {
    (body.len() as u64).div_ceil(4)
}
