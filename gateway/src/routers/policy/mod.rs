//! The residency policy router (spec 003): a request that runs under a policy (its key's, or
//! `pointwork.default_policy`) is decided by core's `policy::decide` — endpoints filtered by
//! the policy's rules, the survivors scored — and goes to the winner; on a 5xx, a 408 or 429, a
//! timeout or an unreachable endpoint to the next in the decision's scored order, never outside
//! the filtered set (LiteLLM's fallbacks and order tiers do not apply). Every answer says why
//! in the `x-llmeu-*` headers and its `llmeu` block.

mod answers;
pub(crate) mod dry_run;
pub mod llmeu;

use std::time::{Duration, Instant};

use pointwork_core::policy::{admit, decide, Live, PolicyEndpoint, SharedLatency};
use pointwork_core::{response_cost, DeploymentIdx, Failure, State};

use super::{attempt_error_reply, delivered, AfterFailure, Attempt, Cx, ExtraBody, Next, Router};
use crate::clock::unix_now;
use crate::facts::Extracted;
use crate::keys::VirtualKey;
use crate::request::{Ending, Request};
use crate::respond::Reply;
use crate::routes::policy::{daily_limits, PolicyRoutes};
use crate::routes::Routes;
use crate::upstream::exchange::{AttemptError, Delivered};
use crate::usage::Usage;
pub(crate) use answers::refusal_status;
use answers::{
    add_llmeu_headers, admission_reply, bad_request, headers, llmeu_block, refusal_reply, INVALID_LLMEU, LLMEU_BLOCK,
};
use llmeu::LlmeuAsk;

/// The metrics' outcomes of a request under a policy, beside the refusals' codes.
const OUTCOME_ROUTED: &str = "routed";
const OUTCOME_UPSTREAM_ERROR: &str = "upstream_error";
const OUTCOME_UNTRANSLATABLE: &str = "untranslatable";

/// The access log's cause for a policy-routed request, and for one that failed over.
const CAUSE_POLICY: &str = "policy";
const CAUSE_FAILED_OVER: &str = "failed_over";

/// The policy router's part in one request.
pub(crate) struct Policy<'a> {
    cx: &'a Cx<'a>,
    policies: &'a PolicyRoutes,
    /// The policy's index in `policies`.
    p: usize,
    /// The decision, once made: the endpoints to try in order, and the sentence.
    decided: Option<Decided>,
    attempts: u32,
    /// Deployments whose attempts failed, in order.
    failed_over: Vec<DeploymentIdx>,
}

struct Decided {
    order: Vec<usize>,
    reason: String,
}

impl<'a> Policy<'a> {
    /// The router for a request under a policy, if one applies.
    pub(crate) fn applying(cx: &'a Cx<'a>) -> Option<Policy<'a>> {
        let policies = cx.routes.policy.as_ref()?;
        let p = policies.policy_of(cx.key)?;
        Some(Policy { cx, policies, p, decided: None, attempts: 0, failed_over: Vec::new() })
    }

    /// The policy's name.
    pub(crate) fn id(&self) -> &'a str {
        &self.policies.policies[self.p].id
    }

    fn endpoints(&self) -> &'a [PolicyEndpoint] {
        self.policies.candidates(&self.cx.extracted.facts.model).0
    }

    /// The decision for the request, or the refusal with the code the metrics count it under.
    fn decide(&self) -> Result<Decided, (Reply, &'static str)> {
        let (policies, p, facts) = (self.policies, self.p, &self.cx.extracted.facts);
        let policy = &policies.policies[p];
        let (endpoints, auto) = policies.candidates(&facts.model);
        let needed = facts.estimated_prompt_tokens + facts.max_tokens.unwrap_or(0);
        let asked = overrides(self.cx.extracted, self.cx.request)
            .and_then(|ask| Ok((ask.policy_request((!auto).then_some(&*facts.model), facts.has_image, needed)?, ask)));
        let (req, ask) = asked.map_err(|message| (bad_request(&message), INVALID_LLMEU))?;
        let now = unix_now();
        let spent_today = policies.meters[p].usage(&daily_limits(policy), now).spend;
        admit(policy, &ask.admission(spent_today)).map_err(|refusal| (admission_reply(&refusal), refusal.code()))?;
        let (shard, routes) = (self.cx.shard, self.cx.routes);
        let decided = shard.with_state(routes, |state| {
            let live = |i: usize| live(state, policies, &endpoints[i], now);
            decide(endpoints, policy, &req, &live).map(|d| Decided {
                order: d.failover_order().collect(),
                reason: d.route_reason(endpoints, policy, &req),
            })
        });
        decided.map_err(|refusal| {
            let residency = req.residency_name(policy).to_string();
            (refusal_reply(&refusal, &policy.id, &residency), refusal.code())
        })
    }

    fn count(&self, outcome: &str) {
        self.cx.shard.metrics.borrow_mut().policy_request(self.id(), outcome);
    }

    /// The route line and its cause, for the access log.
    fn route(&mut self) -> Option<(String, &'static str)> {
        let cause = if self.attempts > 1 { CAUSE_FAILED_OVER } else { CAUSE_POLICY };
        self.decided.as_mut().map(|d| (std::mem::take(&mut d.reason), cause))
    }
}

impl<'a> Router for Policy<'a> {
    /// The endpoint's index.
    type Chosen = usize;

    fn choose(&mut self, _now: Instant) -> Next<usize> {
        // The first attempt decides; the next ones walk the decision's failover order.
        let decided = match self.decided.take() {
            Some(decided) => decided,
            None => match self.decide() {
                Ok(decided) => decided,
                Err((reply, code)) => {
                    self.count(code);
                    return Next::End(reply, Ending::refused(0, 0));
                }
            },
        };
        // Invariant: a decision has at least one endpoint, and `after_failure` ends the request
        // at the last one.
        let i = decided.order[self.failed_over.len()];
        let e = &self.endpoints()[i];
        self.attempts += 1;
        let policy = self.id();
        let attempt = Attempt {
            deployment: e.deployment,
            started: Instant::now(),
            labels: headers(self.cx.routes, e, policy, &decided.reason, self.attempts),
            model_json: None,
            extra_body: ExtraBody::Left,
            block: Some((LLMEU_BLOCK, llmeu_block(e, policy, &decided.reason))),
            read_usage: true,
            usage_asked: false,
        };
        self.decided = Some(decided);
        Next::Attempt(attempt, i)
    }

    fn cause(&self, _i: &usize) -> &'static str {
        if self.attempts > 1 {
            CAUSE_FAILED_OVER
        } else {
            CAUSE_POLICY
        }
    }

    fn spent(&self, idx: DeploymentIdx, started: Instant, usage: Option<Usage>) {
        let Some(usage) = usage else { return };
        let cost = spend(self.cx.routes, self.policies, self.p, idx, usage, self.cx.key);
        crate::database::spend::spent(self.cx, idx, started, usage, cost);
    }

    fn delivered(&mut self, _i: usize, idx: DeploymentIdx, d: &Delivered) -> Ending {
        let policies = self.policies;
        policies.outcomes[idx.get()].record(d.body_failure.is_none(), unix_now());
        // A stream's responsiveness is its time to the first token.
        let took = if self.cx.extracted.facts.stream { d.first_body.unwrap_or(d.took) } else { d.took };
        policies.latency[idx.get()].record(took.as_secs_f64() * 1000.0);
        self.count(OUTCOME_ROUTED);
        Ending {
            group: Some(self.cx.routes.snapshot.group_of(idx)),
            deployment: Some(idx),
            attempts: self.attempts,
            route: self.route(),
            failed_over: std::mem::take(&mut self.failed_over),
            ..delivered(d, self.cx.extracted.facts.stream)
        }
    }

    fn after_failure(&mut self, i: usize, idx: DeploymentIdx, err: AttemptError) -> AfterFailure {
        self.policies.outcomes[idx.get()].record(false, unix_now());
        let left = self.decided.as_ref().map_or(0, |d| d.order.len() - self.failed_over.len() - 1);
        if fails_over(err.failure) && left > 0 {
            self.cx.shard.metrics.borrow_mut().retry();
            self.failed_over.push(idx);
            return AfterFailure::Again(Duration::ZERO);
        }
        let snap = &self.cx.routes.snapshot;
        let mut reply = attempt_error_reply(snap, idx, self.attempts, err);
        let (e, policy) = (&self.endpoints()[i], self.id());
        let reason = self.decided.as_ref().map_or("", |d| &d.reason);
        add_llmeu_headers(&mut reply, e, policy, reason);
        self.count(OUTCOME_UPSTREAM_ERROR);
        let ending = Ending {
            group: Some(snap.group_of(idx)),
            deployment: Some(idx),
            attempts: self.attempts,
            stream: self.cx.extracted.facts.stream,
            route: self.route(),
            failed_over: std::mem::take(&mut self.failed_over),
            ..Ending::refused(0, 0)
        };
        AfterFailure::End(reply, ending)
    }

    fn unforwardable(&mut self, _reply: &Reply) {
        self.count(OUTCOME_UNTRANSLATABLE);
    }
}

/// The request's overrides: the body's `llmeu` object, then the `x-llmeu-*` headers.
fn overrides(extracted: &Extracted, request: &Request<'_>) -> Result<LlmeuAsk, String> {
    let mut ask = match &extracted.llmeu {
        Some(span) => LlmeuAsk::from_body(&request.body[span.clone()])?,
        None => LlmeuAsk::default(),
    };
    for (name, value) in request.llmeu {
        let name = String::from_utf8_lossy(name);
        let value = std::str::from_utf8(value).map_err(|_| format!("invalid '{name}' header: not UTF-8"))?;
        ask.add_header(&name, value)?;
    }
    Ok(ask)
}

/// What the shards know of an endpoint at `now` (Unix seconds): the status an operator set
/// (shared by events), the latency average and error rate every shard counts into (the dry run
/// reads them the same way).
pub(crate) fn live<'s>(state: &'s State, policies: &PolicyRoutes, e: &PolicyEndpoint, now: u64) -> Live<'s> {
    let i = e.deployment.get();
    let latency_ms = policies.latency.get(i).and_then(SharedLatency::ms);
    let error_rate = policies.outcomes.get(i).map_or(0.0, |o| o.error_rate(now));
    Live { status: state.endpoint_status(e.deployment), latency_ms, error_rate }
}

/// A 5xx, a request timeout or rate limit, a timeout or an unreachable endpoint goes to the
/// next endpoint; any other 4xx is final.
fn fails_over(failure: Failure) -> bool {
    match failure {
        Failure::Status(408 | 429) => true,
        Failure::Status(status) => status >= 500,
        Failure::Connect | Failure::Timeout | Failure::Protocol => true,
    }
}

/// Counts the response's cost against the policy's daily budget (and the key's, as any);
/// returns the cost, for the database's spend.
fn spend(
    routes: &Routes,
    policies: &PolicyRoutes,
    p: usize,
    idx: DeploymentIdx,
    usage: Usage,
    key: Option<&VirtualKey>,
) -> Option<f64> {
    let cost = response_cost(routes.snapshot.deployment(idx), usage.prompt_tokens, usage.completion_tokens);
    let now = unix_now();
    let policy = &policies.policies[p];
    if policy.max_usd_per_day.is_some() {
        policies.meters[p].record(&daily_limits(policy), usage.total_tokens, cost, now);
    }
    if let Some(key) = key.filter(|k| k.limits.counts_usage()) {
        key.meter.record(&key.limits, usage.total_tokens, cost, now);
    }
    cost
}
