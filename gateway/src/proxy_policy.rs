//! A request that runs under a policy (its key's, or `pointwork.default_policy`): the policy
//! router decides (core `policy::decide`), the request goes to the winner, and on a 5xx, a 408
//! or 429, a timeout or an unreachable endpoint to the next in the decision's scored order — at
//! most three attempts, never outside the filtered set (LiteLLM's fallbacks and order tiers do
//! not apply). Every answer says why in the `x-llmeu-*` headers.

use std::sync::Arc;
use std::time::Instant;

use pointwork_core::policy::{admit, decide, AdmitRefusal, Live, PolicyEndpoint, PolicyRefusal, SharedLatency};
use pointwork_core::{response_cost, DeploymentIdx, Failure, RouteKind, State};
use serde_json::json;

use crate::facts::Extracted;
use crate::http::write;
use crate::keys::{unix_now, VirtualKey};
use crate::llmeu::LlmeuAsk;
use crate::policy_routes::{daily_limits, PolicyRoutes};
use crate::proxy::{
    attempt_started, error_reply, finish, record_delivered, record_failure, upstream_request, Ending, RequestInfo,
    UpstreamHead, HEADER_ATTEMPTS, HEADER_DEPLOYMENT, HEADER_MODEL_GROUP, HEADER_ROUTE,
};
use crate::proxy_translate;
use crate::respond::{self, Reply};
use crate::routes::Routes;
use crate::server::client_conn::ClientConn;
use crate::server::endpoints::Request;
use crate::shard::Shard;
use crate::upstream::body_block::BodyBlock;
use crate::upstream::exchange::{self, ClientSide, Exchange, Outcome};
use crate::usage::Usage;

/// The `llmeu` block's headers.
pub const HEADER_MODEL_USED: &str = "x-llmeu-model-used";
pub const HEADER_INFERENCE_REGION: &str = "x-llmeu-inference-region";
pub const HEADER_SOVEREIGNTY_CLASS: &str = "x-llmeu-sovereignty-class";
pub const HEADER_POLICY_ID: &str = "x-llmeu-policy-id";
pub const HEADER_ROUTE_REASON: &str = "x-llmeu-route-reason";

/// The member of a response that reports the choice.
const LLMEU_BLOCK: &str = "llmeu";

/// The metrics' outcomes of a request under a policy, beside the refusals' codes.
const OUTCOME_ROUTED: &str = "routed";
const OUTCOME_UPSTREAM_ERROR: &str = "upstream_error";
const INVALID_LLMEU: &str = "invalid_llmeu";

/// The access log's cause for a policy-routed request, and for one that failed over.
const CAUSE_POLICY: &str = "policy";
const CAUSE_FAILED_OVER: &str = "failed_over";

/// What the decision leaves the attempts: the endpoints to try, in order, and the sentence.
struct Routed {
    order: Vec<usize>,
    reason: String,
}

/// Serves a request under policy `p` of `policies` (`routes.policy`).
#[allow(clippy::too_many_arguments)]
pub(crate) async fn serve(
    shard: &Shard,
    routes: &Arc<Routes>,
    policies: &PolicyRoutes,
    p: usize,
    route: RouteKind,
    request: &Request<'_>,
    extracted: &Extracted,
    key: Option<&VirtualKey>,
    info: &RequestInfo<'_>,
    client: &mut ClientConn,
    keep_alive: bool,
) -> bool {
    let policy = &policies.policies[p];
    let info = &RequestInfo { policy: Some(&policy.id), ..*info };
    let facts = &extracted.facts;
    let (endpoints, auto) = policies.candidates(&facts.model);
    let needed = facts.estimated_prompt_tokens + facts.max_tokens.unwrap_or(0);
    let asked = overrides(extracted, request)
        .and_then(|ask| Ok((ask.policy_request((!auto).then_some(&*facts.model), facts.has_image, needed)?, ask)));
    let (req, ask) = match asked {
        Ok(asked) => asked,
        Err(message) => {
            return refuse(shard, routes, info, client, keep_alive, (bad_request(&message), INVALID_LLMEU)).await;
        }
    };
    let now = unix_now();
    let spent_today = policies.meters[p].usage(&daily_limits(policy), now).spend;
    if let Err(refusal) = admit(policy, &ask.admission(spent_today)) {
        let reply = (admission_reply(&refusal), refusal.code());
        return refuse(shard, routes, info, client, keep_alive, reply).await;
    }
    let routed = shard.with_state(routes, |state| {
        let live = |i: usize| live(state, policies, &endpoints[i], now);
        decide(endpoints, policy, &req, &live)
            .map(|d| Routed { order: d.failover_order().collect(), reason: d.route_reason(endpoints, policy, &req) })
    });
    let Routed { order, reason } = match routed {
        Ok(routed) => routed,
        Err(refusal) => {
            let residency = req.residency_name(policy).to_string();
            let reply = (refusal_reply(&refusal, &policy.id, &residency), refusal.code());
            return refuse(shard, routes, info, client, keep_alive, reply).await;
        }
    };
    let snap = &routes.snapshot;
    let mut attempts = 0;
    let mut failed_over = Vec::new();
    for (n, &i) in order.iter().enumerate() {
        let e = &endpoints[i];
        let idx = e.deployment;
        attempts += 1;
        let upstream = &routes.upstreams[idx.get()];
        let provider = snap.deployment(idx).provider;
        let deployment = snap.deployment(idx);
        let head = UpstreamHead::new(deployment.dialect(), upstream.head(route, facts.stream), request);
        // The other dialect: translated both ways (the answer's `llmeu` block is left to the
        // `x-llmeu-*` headers then).
        let translating = snap.deployment(idx).translates(route);
        let sent = match translating || deployment.rewrites_body() {
            true => {
                match proxy_translate::request(route, deployment, head, request.body, extracted, &upstream.model_json) {
                    Ok(r) => r,
                    Err(reply) => {
                        return refuse(shard, routes, info, client, keep_alive, (reply, "untranslatable")).await
                    }
                }
            }
            false => upstream_request(head, request.body, extracted, &upstream.model_json, &shard.buffers),
        };
        let labels = headers(routes, e, &policy.id, &reason, attempts);
        let block = llmeu_block(e, &policy.id, &reason);
        let exchange = Exchange {
            target: &upstream.target,
            provider: provider.prefix(),
            request: sent,
            stream: facts.stream,
            read_usage: true,
            timeout: if facts.stream { upstream.stream_timeout } else { upstream.timeout },
            auth: upstream.auth.as_ref().map(|a| (a, deployment.id.as_str())),
            started: Instant::now(),
        };
        let now = exchange.started;
        let on_body_end = |usage: Option<Usage>| record_spend(routes, policies, p, idx, usage, key);
        let side = ClientSide {
            stream: client,
            extra_headers: &labels,
            keep_alive,
            on_body_end: &on_body_end,
            body_block: (!translating).then_some(BodyBlock { name: LLMEU_BLOCK, json: &block }),
            translate: translating.then(|| {
                proxy_translate::answer(
                    route,
                    deployment.dialect(),
                    &deployment.upstream_model,
                    &facts.model,
                    request.body,
                )
            }),
            dialect: route.dialect(),
        };
        attempt_started(shard, routes, idx, now);
        let cause = if attempts > 1 { CAUSE_FAILED_OVER } else { CAUSE_POLICY };
        match exchange::run(shard, exchange, side).await {
            Outcome::Delivered(d) => {
                record_delivered(shard, routes, idx, facts.stream, now, &d);
                policies.outcomes[idx.get()].record(d.body_failure.is_none(), unix_now());
                // A stream's responsiveness is its time to the first token.
                let took = if facts.stream { d.first_body.unwrap_or(d.took) } else { d.took };
                policies.latency[idx.get()].record(took.as_secs_f64() * 1000.0);
                let ending = Ending {
                    group: Some(snap.group_of(idx)),
                    deployment: Some(idx),
                    status: d.status,
                    attempts,
                    stream: facts.stream,
                    upstream: Some(d.took),
                    bytes_out: d.bytes_out,
                    decision: None,
                    route: Some((reason, cause)),
                    failed_over,
                    before_pick: None,
                    routing_decision: None,
                };
                finish(shard, routes, info, ending);
                shard.metrics.borrow_mut().policy_request(&policy.id, OUTCOME_ROUTED);
                return keep_alive && !d.client_failed && d.client_reusable;
            }
            Outcome::Failed(err) => {
                shard.record(routes, idx, |state, _, i| (state.request_ended(i), None));
                record_failure(shard, routes, idx, err.failure);
                policies.outcomes[idx.get()].record(false, unix_now());
                if fails_over(err.failure) && n + 1 < order.len() {
                    shard.metrics.borrow_mut().retry();
                    failed_over.push(idx);
                    continue;
                }
                let mut reply = error_reply(snap, idx, attempts, err);
                add_llmeu_headers(&mut reply, e, &policy.id, &reason);
                let ending = Ending {
                    group: Some(snap.group_of(idx)),
                    deployment: Some(idx),
                    attempts,
                    stream: facts.stream,
                    route: Some((reason, cause)),
                    failed_over,
                    ..Ending::refused(reply.status, reply.body.len())
                };
                finish(shard, routes, info, ending);
                shard.metrics.borrow_mut().policy_request(&policy.id, OUTCOME_UPSTREAM_ERROR);
                return respond::send(client, respond::for_route(route, reply), keep_alive).await;
            }
        }
    }
    unreachable!("a decision has at least one endpoint, and the last attempt answers")
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

/// The decision's headers: the gateway's own and the `llmeu` block's.
fn headers(routes: &Routes, e: &PolicyEndpoint, policy: &str, reason: &str, attempt: u32) -> Vec<u8> {
    let d = routes.snapshot.deployment(e.deployment);
    let mut out = Vec::with_capacity(512);
    write::header(&mut out, HEADER_DEPLOYMENT, d.id.as_bytes());
    write::header(&mut out, HEADER_MODEL_GROUP, d.model_name.as_bytes());
    write::header_decimal(&mut out, HEADER_ATTEMPTS, u64::from(attempt));
    write::header(&mut out, HEADER_ROUTE, reason.as_bytes());
    for (name, value) in llmeu_headers(e, policy, reason) {
        write::header(&mut out, name, value.as_bytes());
    }
    out
}

fn llmeu_headers<'a>(e: &'a PolicyEndpoint, policy: &'a str, reason: &'a str) -> [(&'static str, &'a str); 5] {
    [
        (HEADER_MODEL_USED, &e.model),
        (HEADER_INFERENCE_REGION, &e.region),
        (HEADER_SOVEREIGNTY_CLASS, e.class.as_str()),
        (HEADER_POLICY_ID, policy),
        (HEADER_ROUTE_REASON, reason),
    ]
}

/// The `llmeu` block a response carries: what served it, where, under which policy, and why.
fn llmeu_block(e: &PolicyEndpoint, policy: &str, reason: &str) -> Vec<u8> {
    let block = json!({
        "model_used": &*e.model,
        "inference_region": &*e.region,
        "sovereignty_class": e.class.as_str(),
        "policy_id": policy,
        "route_reason": reason,
    });
    block.to_string().into_bytes()
}

fn add_llmeu_headers(reply: &mut Reply, e: &PolicyEndpoint, policy: &str, reason: &str) {
    for (name, value) in llmeu_headers(e, policy, reason) {
        reply.header(name, value.as_bytes());
    }
}

/// Counts the response's cost against the policy's daily budget (and the key's, as any).
fn record_spend(
    routes: &Routes,
    policies: &PolicyRoutes,
    p: usize,
    idx: DeploymentIdx,
    usage: Option<Usage>,
    key: Option<&VirtualKey>,
) {
    let Some(usage) = usage else { return };
    let cost = response_cost(routes.snapshot.deployment(idx), usage.prompt_tokens, usage.completion_tokens);
    let now = unix_now();
    let policy = &policies.policies[p];
    if policy.max_usd_per_day.is_some() {
        policies.meters[p].record(&daily_limits(policy), usage.total_tokens, cost, now);
    }
    if let Some(key) = key.filter(|k| k.limits.counts_usage()) {
        key.meter.record(&key.limits, usage.total_tokens, cost, now);
    }
}

/// Answers a refusal (with the code the metrics count it under).
async fn refuse(
    shard: &Shard,
    routes: &Arc<Routes>,
    info: &RequestInfo<'_>,
    client: &mut ClientConn,
    keep_alive: bool,
    (reply, code): (Reply, &str),
) -> bool {
    finish(shard, routes, info, Ending::refused(reply.status, reply.body.len()));
    if let Some(policy) = info.policy {
        shard.metrics.borrow_mut().policy_request(policy, code);
    }
    respond::send(client, respond::for_route(info.route, reply), keep_alive).await
}

/// An error in the OpenAI shape whose `code` names what happened (`no_endpoint_for_policy`, …),
/// with an `llmeu` block when there is something to say in it.
fn policy_error(kind: &str, code: &str, message: &str, llmeu: Option<serde_json::Value>) -> Vec<u8> {
    let mut body = json!({"error": {"message": message, "type": kind, "param": null, "code": code}});
    if let Some(block) = llmeu {
        body["llmeu"] = block;
    }
    body.to_string().into_bytes()
}

fn bad_request(message: &str) -> Reply {
    Reply::json(400, policy_error("invalid_request_error", INVALID_LLMEU, message, None))
}

fn admission_reply(refusal: &AdmitRefusal) -> Reply {
    let status = 400;
    let kind = match refusal {
        AdmitRefusal::BudgetExceeded { .. } => "budget_exceeded",
        _ => "invalid_request_error",
    };
    Reply::json(status, policy_error(kind, refusal.code(), &refusal.to_string(), None))
}

/// The refusals' statuses: 409 for what the policy rules out (`no_endpoint_for_policy`,
/// `hosted_unavailable`), 404 for a model that does not exist, 403 for one the policy denies,
/// 400 for one that cannot answer a chat.
pub(crate) fn refusal_status(refusal: &PolicyRefusal) -> u16 {
    match refusal {
        PolicyRefusal::NoEndpoint { .. } | PolicyRefusal::HostedUnavailable(_) => 409,
        PolicyRefusal::ModelNotFound(_) => 404,
        PolicyRefusal::ModelDenied(_) => 403,
        PolicyRefusal::NotATextModel(_) => 400,
    }
}

fn refusal_reply(refusal: &PolicyRefusal, policy: &str, residency: &str) -> Reply {
    let status = refusal_status(refusal);
    let kind = match refusal {
        PolicyRefusal::ModelNotFound(_) => "not_found_error",
        PolicyRefusal::ModelDenied(_) => "permission_error",
        _ => "invalid_request_error",
    };
    let block = json!({"model_requested": refusal.model(), "policy_id": policy, "residency_requested": residency});
    let mut reply = Reply::json(status, policy_error(kind, refusal.code(), &refusal.to_string(), Some(block)));
    reply.header(HEADER_POLICY_ID, policy.as_bytes());
    reply
}
