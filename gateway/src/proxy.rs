//! The proxy lifecycle of one API request: extract facts, pick, forward, record the outcome,
//! retry on a fresh pick while nothing has reached the client, and log.

use std::sync::Arc;
use std::time::{Instant, SystemTime};

use pointwork_core::{
    affinity_hash, response_cost, wildcard_upstream_model, AffinitySettings, Decision, DeploymentIdx, ErrorClass,
    Event, Failure, GroupIdx, LatencySample, PickRequest, Pin, RequestFacts, Resolution, RouteError, RouteKind,
    RoutingStrategy, Step, Walk,
};

use crate::access_log::Entry;
use crate::complexity;
use crate::errors::openai_error;
use crate::facts;
use crate::keys::{unix_now, Caller, VirtualKey};
use crate::pareto;
use crate::proxy_reply::{before_pick, decision_headers, route_error_reply};
pub(crate) use crate::proxy_reply::{error_reply, upstream_request, UpstreamHead};
use crate::proxy_translate;
use crate::respond::{self, Reply};
use crate::routes::Routes;
use crate::server::client_conn::ClientConn;
use crate::server::endpoints::Request;
use crate::shard::Shard;
use crate::upstream::exchange::{self, AttemptError, ClientSide, Delivered, Exchange, Outcome};
use crate::usage::Usage;

/// Response headers naming the routing decision, defined once.
pub const HEADER_DEPLOYMENT: &str = "x-pointwork-deployment";
pub const HEADER_MODEL_GROUP: &str = "x-pointwork-model-group";
pub const HEADER_ATTEMPTS: &str = "x-pointwork-attempts";
/// The decision's one-line reason (`simple-shuffle picked d1 of 2 candidates (1 in cooldown)`).
pub const HEADER_ROUTE: &str = "x-pointwork-route";

/// The access log's cause for a request the pareto walk refused.
const CAUSE_PARETO: &str = "openrouter_pareto";

/// How the request ended, for metrics and the access log.
pub(crate) struct Ending {
    pub(crate) group: Option<GroupIdx>,
    pub(crate) deployment: Option<DeploymentIdx>,
    pub(crate) status: u16,
    pub(crate) attempts: u32,
    pub(crate) stream: bool,
    pub(crate) upstream: Option<std::time::Duration>,
    pub(crate) bytes_out: u64,
    pub(crate) decision: Option<Decision>,
    /// The route and its cause when no pick decided it (the policy router's sentence).
    pub(crate) route: Option<(String, &'static str)>,
    /// Deployments whose attempts failed before this one (the policy router's failover).
    pub(crate) failed_over: Vec<DeploymentIdx>,
    /// What decided before the pick, for the route line: the complexity router's decision
    /// (`auto-router SIMPLE heuristic_scorer … routed=g`), the pareto walk's
    /// (`openrouter-pareto winner novita/fp8`).
    pub(crate) before_pick: Option<String>,
    /// The complexity router's record (the access log's `routing_decision`), as JSON.
    pub(crate) routing_decision: Option<String>,
}

impl Ending {
    pub(crate) fn refused(status: u16, bytes_out: usize) -> Ending {
        Ending {
            group: None,
            deployment: None,
            status,
            attempts: 0,
            stream: false,
            upstream: None,
            bytes_out: bytes_out as u64,
            decision: None,
            route: None,
            failed_over: Vec::new(),
            before_pick: None,
            routing_decision: None,
        }
    }
}

/// What every log line of this request shares.
#[derive(Clone, Copy)]
pub(crate) struct RequestInfo<'a> {
    pub(crate) path: &'a str,
    pub(crate) model: &'a str,
    /// The caller's key by name (`master`, a virtual or admin key's name).
    pub(crate) key: Option<&'a str>,
    pub(crate) bytes_in: usize,
    pub(crate) started: Instant,
    /// The policy the request runs under, if any.
    pub(crate) policy: Option<&'a str>,
    /// The API surface called (its errors take that API's shape).
    pub(crate) route: RouteKind,
}

/// Serves one API request. Returns whether the client connection can carry another request.
pub async fn serve(
    shard: &Shard,
    route: RouteKind,
    path: &str,
    request: &Request<'_>,
    caller: &Caller,
    client: &mut ClientConn,
    keep_alive: bool,
) -> bool {
    let body = request.body;
    let started = Instant::now();
    let routes = shard.sync();
    let routes: &Arc<Routes> = &routes;
    let extracted = match facts::extract_to(route, body, routes.facts_needed) {
        Ok(e) => e,
        Err(e) => {
            let reply = Reply::json(400, openai_error(400, &e.to_string(), e.param()));
            let info =
                RequestInfo { path, model: "", key: caller.name(), bytes_in: body.len(), started, policy: None, route };
            finish(shard, routes, &info, Ending::refused(400, reply.body.len()));
            return respond::send(client, respond::for_route(route, reply), keep_alive).await;
        }
    };
    let mut extracted = extracted;
    let key = caller.virtual_key();
    if let Some(key) = key {
        if let Err(reply) = admit(key, &routes.snapshot, &extracted.facts.model) {
            let info = RequestInfo {
                path,
                model: &extracted.facts.model,
                key: caller.name(),
                bytes_in: body.len(),
                started,
                policy: None,
                route,
            };
            finish(shard, routes, &info, Ending::refused(reply.status, reply.body.len()));
            return respond::send(client, respond::for_route(route, reply), keep_alive).await;
        }
        extracted.facts.tags.extend(key.tags.iter().cloned());
    }
    if keeps_api_key_affinity(&routes.snapshot.settings.affinity) {
        // Deployment affinity keys on a hash of the caller's credentials, never on the key.
        extracted.facts.affinity.api_key = request.authorization.map(affinity_hash);
    }
    if let Some(tags) = request.tags {
        extracted.facts.tags.extend(header_tags(tags));
    }
    let facts = &extracted.facts;
    let info = RequestInfo {
        path,
        model: &facts.model,
        key: caller.name(),
        bytes_in: body.len(),
        started,
        policy: None,
        route,
    };
    if let Some((policies, p)) = routes.policy.as_ref().and_then(|ps| Some((ps, ps.policy_of(key)?))) {
        // Boxed, as the rare branches in `exchange` are (see `take_or_connect`).
        let served = crate::proxy_policy::serve(
            shard, routes, policies, p, route, request, &extracted, key, &info, client, keep_alive,
        );
        return Box::pin(served).await;
    }
    let snap = &routes.snapshot;
    let settings = &snap.settings;
    // A complexity router decides the group first; the walk then runs inside it.
    let auto = match routes.complexity.as_ref().and_then(|c| c.router(&facts.model)) {
        Some(router) => {
            Some(Box::pin(complexity::route_request(shard, routes, router, route, body, facts, caller)).await)
        }
        None => None,
    };
    let target = auto.as_ref().map_or(&*facts.model, |a| &*snap.group(a.group).name);
    let routing_decision = auto.as_ref().and_then(|a| a.record.clone());
    let mut walk = Walk::new(target, &settings.fallbacks, &settings.retry_policy, settings.num_retries);
    let mut last_error: Option<(DeploymentIdx, AttemptError)> = None;
    let mut route_error: Option<RouteError> = None;
    // The first pick happens now (facts extraction took a microsecond or less): one clock read.
    let mut now = started;
    loop {
        let steered = match pareto::steer(shard, routes, body, walk.target(), walk.failed(), now) {
            None => None,
            Some(Ok(s)) => Some(s),
            Some(Err(refusal)) => {
                let class = if refusal.status() == 400 { ErrorClass::BadRequest } else { ErrorClass::RateLimit };
                let step =
                    shard.with_state(routes, |state| walk.after_failure(snap, state, None, class, Instant::now()));
                if step != Step::Stop {
                    count_step(shard, &step);
                    now = Instant::now();
                    continue;
                }
                let reply = pareto::refusal_reply(&refusal);
                let walked = (format!("openrouter-pareto {} -", refusal.reason.as_str()), CAUSE_PARETO);
                let ending = Ending {
                    route: Some(walked),
                    before_pick: auto.as_ref().map(|a| a.line.clone()),
                    routing_decision,
                    ..Ending::refused(reply.status, reply.body.len())
                };
                finish(shard, routes, &info, ending);
                return respond::send(client, respond::for_route(route, reply), keep_alive).await;
            }
        };
        let excluded = steered.as_ref().map_or(&[][..], |s| &s.excluded[..]);
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
                // fallback group that does not exist): the walk may go on, by the error's class.
                // A requested name that does not exist is the caller's mistake: it stops here.
                let unknown_request = matches!(e, RouteError::UnknownModel { .. }) && walk.target() == target;
                let step = if unknown_request {
                    Step::Stop
                } else {
                    let class = ErrorClass::of_route_error(&e);
                    shard.with_state(routes, |state| walk.after_failure(snap, state, None, class, Instant::now()))
                };
                route_error.get_or_insert(e);
                if step != Step::Stop {
                    count_step(shard, &step);
                    now = Instant::now();
                    continue;
                }
                let (reply, ending) = match (last_error.take(), route_error) {
                    (Some((idx, err)), _) => {
                        let attempts = walk.failed_attempts();
                        let ending = Ending {
                            group: Some(snap.group_of(idx)),
                            deployment: Some(idx),
                            attempts,
                            before_pick: auto.as_ref().map(|a| a.line.clone()),
                            routing_decision,
                            ..Ending::refused(err.status, 0)
                        };
                        (error_reply(snap, idx, attempts, err), ending)
                    }
                    (None, e) => {
                        // Invariant: set just above.
                        let e = e.unwrap_or(RouteError::UnknownModel { model: facts.model.clone() });
                        let group = match snap.resolve(target) {
                            Resolution::Group { group, .. } => Some(group),
                            _ => None,
                        };
                        let before_pick = auto.as_ref().map(|a| a.line.clone());
                        let ending = Ending { group, before_pick, routing_decision, ..Ending::refused(e.status(), 0) };
                        let mut reply = route_error_reply(&e);
                        if let Some(line) = &ending.before_pick {
                            reply.header(HEADER_ROUTE, line.as_bytes());
                        }
                        (reply, ending)
                    }
                };
                finish(shard, routes, &info, Ending { bytes_out: reply.body.len() as u64, ..ending });
                return respond::send(client, respond::for_route(route, reply), keep_alive).await;
            }
        };
        let idx = decision.deployment;
        let attempt = walk.failed_attempts() + 1;
        let upstream = &routes.upstreams[idx.get()];
        // A wildcard group sends the part of the name its `*` matched (one encoding per request,
        // only for wildcard routes); every other the precomputed model.
        let wildcard_model = decision.wildcard.map(|w| {
            let model = wildcard_upstream_model(&snap.deployment(idx).upstream_model, walk.target(), w);
            serde_json::to_vec(&model).unwrap_or_default()
        });
        let model_json = wildcard_model.as_deref().unwrap_or(&upstream.model_json);
        let deployment = snap.deployment(idx);
        let head = UpstreamHead::new(deployment.dialect(), upstream.head(route, facts.stream), request);
        let translating = deployment.translates(route);
        let request = match &steered {
            _ if translating || deployment.rewrites_body() => {
                match proxy_translate::request(route, deployment, head, body, &extracted, model_json) {
                    Ok(request) => request,
                    Err(reply) => {
                        finish(shard, routes, &info, Ending::refused(reply.status, reply.body.len()));
                        return respond::send(client, respond::for_route(route, reply), keep_alive).await;
                    }
                }
            }
            None if snap.deployment(idx).extra_body.is_empty() => {
                upstream_request(head, body, &extracted, model_json, &shard.buffers)
            }
            _ => pareto::body::with_extra_body(routes, steered.as_ref(), idx, head, body, &extracted, model_json),
        };
        let before_pick = before_pick(auto.as_ref().map(|a| a.line.as_str()), steered.as_ref());
        let labels = decision_headers(snap, &decision, attempt, before_pick.as_deref());
        let exchange = Exchange {
            target: &upstream.target,
            provider: snap.deployment(idx).provider.prefix(),
            request,
            stream: facts.stream,
            read_usage: counts_usage(routes)
                || snap.settings.budget_of(snap.deployment(idx).provider).is_some()
                || key.is_some_and(|k| k.limits.counts_usage()),
            timeout: if facts.stream { upstream.stream_timeout } else { upstream.timeout },
            auth: upstream.auth.as_ref().map(|a| (a, deployment.id.as_str())),
            started: now,
        };
        let on_body_end = |usage: Option<Usage>| record_spend(shard, routes, idx, now, usage, key);
        let side = ClientSide {
            stream: client,
            extra_headers: &labels,
            keep_alive,
            on_body_end: &on_body_end,
            body_block: None,
            translate: translating.then(|| {
                proxy_translate::answer(route, deployment.dialect(), &deployment.upstream_model, &facts.model, body)
            }),
            dialect: route.dialect(),
        };
        attempt_started(shard, routes, idx, now);
        // Pinned when sent, not when answered: every shard knows the pin before this response
        // reaches the client, so the conversation's next request finds it. A failed attempt's
        // retry pins its own pick.
        pin_conversation(shard, routes, &decision, facts, now);
        match exchange::run(shard, exchange, side).await {
            Outcome::Delivered(d) => {
                record_delivered(shard, routes, idx, facts.stream, now, &d);
                let ending = Ending {
                    group: Some(decision.group),
                    deployment: Some(idx),
                    status: d.status,
                    attempts: attempt,
                    stream: facts.stream,
                    upstream: Some(d.took),
                    bytes_out: d.bytes_out,
                    decision: Some(decision),
                    route: None,
                    failed_over: Vec::new(),
                    before_pick,
                    routing_decision,
                };
                finish(shard, routes, &info, ending);
                return keep_alive && !d.client_failed && d.client_reusable;
            }
            Outcome::Failed(err) => {
                shard.record(routes, idx, |state, _, i| (state.request_ended(i), None));
                record_failure(shard, routes, idx, err.failure);
                if let Some(s) = &steered {
                    pareto::learn(shard, routes, s, idx, err.status, &err.body);
                }
                let class = ErrorClass::of(err.failure, &String::from_utf8_lossy(&err.body));
                let step = shard.with_state(routes, |state| {
                    walk.after_failure(snap, state, Some((idx, err.failure)), class, Instant::now())
                });
                if step == Step::Stop {
                    let reply = error_reply(snap, idx, walk.failed_attempts(), err);
                    let ending = Ending {
                        group: Some(decision.group),
                        deployment: Some(idx),
                        status: reply.status,
                        attempts: walk.failed_attempts(),
                        stream: facts.stream,
                        upstream: None,
                        bytes_out: reply.body.len() as u64,
                        decision: Some(decision),
                        route: None,
                        failed_over: Vec::new(),
                        before_pick,
                        routing_decision,
                    };
                    finish(shard, routes, &info, ending);
                    return respond::send(client, respond::for_route(route, reply), keep_alive).await;
                }
                count_step(shard, &step);
                last_error = Some((idx, err));
                if step == Step::Retry && !settings.retry_after.is_zero() {
                    monoio::time::sleep(settings.retry_after).await;
                }
                now = Instant::now();
            }
        }
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

fn counts_usage(routes: &Routes) -> bool {
    routes.snapshot.settings.routing_strategy == RoutingStrategy::UsageBasedV2
}

/// In-flight count up; under usage-based routing, the request counts against this minute's
/// rpm on every shard.
pub(crate) fn attempt_started(shard: &Shard, routes: &Arc<Routes>, idx: DeploymentIdx, now: Instant) {
    let usage = counts_usage(routes);
    shard.record(routes, idx, |state, _, i| {
        state.request_started(i);
        if !usage {
            return ((), None);
        }
        state.record_usage(i, now, 1, 0);
        ((), Some(Event::Usage { idx: i, at: now, requests: 1, tokens: 0 }))
    });
}

/// `attempt_start` + the attempt's time is when it ended: no clock read needed.
pub(crate) fn record_delivered(
    shard: &Shard,
    routes: &Arc<Routes>,
    idx: DeploymentIdx,
    stream: bool,
    attempt_start: Instant,
    d: &Delivered,
) {
    let now = attempt_start + d.took;
    let sample = LatencySample {
        stream,
        total: d.took,
        first_token: d.first_body,
        output_tokens: d.usage.map(|u| u.completion_tokens),
    };
    let tokens = d.usage.filter(|_| counts_usage(routes)).map(|u| u.total_tokens);
    let succeeded = d.body_failure.is_none();
    // One visit to the state for everything an answered attempt teaches.
    shard.record(routes, idx, |state, _, i| {
        state.request_ended(i);
        state.record_latency(i, sample);
        if succeeded {
            state.record_success(i, now);
        }
        let Some(tokens) = tokens else {
            return ((), None);
        };
        state.record_usage(i, now, 0, tokens);
        ((), Some(Event::Usage { idx: i, at: now, requests: 0, tokens }))
    });
    let group = routes.snapshot.group_of(idx);
    let mut metrics = shard.metrics.borrow_mut();
    metrics.upstream_latency(routes, group, d.took);
    if let (true, Some(first)) = (stream, d.first_body) {
        metrics.first_token(routes, group, first);
    }
    drop(metrics);
    if let Some(f) = d.body_failure {
        record_failure(shard, routes, idx, f);
    }
}

/// A virtual key's rpm / tpm / budget and model list admit the request, or the answer to send.
fn admit(key: &VirtualKey, snap: &pointwork_core::Snapshot, model: &str) -> Result<(), Reply> {
    if !key.may_use(model, snap) {
        return Err(key.model_refused(model));
    }
    key.meter.admit(&key.limits, unix_now()).map_err(|refusal| key.refused(&refusal))
}

/// Counts what the response cost against its provider's budget, on every shard, and against
/// the caller's key (called once the body arrived, before its end goes to the client).
fn record_spend(
    shard: &Shard,
    routes: &Arc<Routes>,
    idx: DeploymentIdx,
    now: Instant,
    usage: Option<Usage>,
    key: Option<&VirtualKey>,
) {
    let snap = &routes.snapshot;
    let deployment = snap.deployment(idx);
    let Some(usage) = usage else { return };
    let cost = response_cost(deployment, usage.prompt_tokens, usage.completion_tokens);
    if let Some(key) = key.filter(|k| k.limits.counts_usage()) {
        key.meter.record(&key.limits, usage.total_tokens, cost, unix_now());
    }
    let Some(budget) = snap.settings.budget_of(deployment.provider) else { return };
    let Some(dollars) = cost else { return };
    let (provider, period) = (deployment.provider, budget.time_period);
    shard.record(routes, idx, |state, _, i| {
        state.record_spend(provider, dollars, now, period);
        ((), Some(Event::Spend { idx: i, provider, dollars, at: now, period }))
    });
}

pub(crate) fn record_failure(shard: &Shard, routes: &Arc<Routes>, idx: DeploymentIdx, failure: Failure) {
    let now = Instant::now();
    let started = shard.record(routes, idx, |state, snap, i| {
        let started = state.record_failure(snap, i, failure, now);
        (started, started.map(Event::Cooldown))
    });
    if let Some(Some(c)) = started {
        shard.metrics.borrow_mut().cooldown_started(routes, idx);
        let d = routes.snapshot.deployment(idx);
        let secs = c.until.saturating_duration_since(now).as_secs_f64();
        eprintln!(
            "pointwork: shard {}: deployment {} ({}) cooling down for {secs:.1}s after {}",
            shard.id,
            d.id,
            d.model_name,
            failure.as_str()
        );
    }
}

/// `x-litellm-tags: paid, !beta` → `paid`, `!beta` (empty items and invalid UTF-8 skipped).
fn header_tags(value: &[u8]) -> impl Iterator<Item = String> + '_ {
    value
        .split(|&b| b == b',')
        .filter_map(|t| std::str::from_utf8(t.trim_ascii()).ok())
        .filter(|t| !t.is_empty())
        .map(str::to_string)
}

fn keeps_api_key_affinity(a: &AffinitySettings) -> bool {
    a.all_groups.deployment || a.per_group.iter().any(|(_, k)| k.deployment)
}

/// Pins the conversation (session id, caller's key) to the deployment this attempt goes to, on
/// every shard, for `deployment_affinity_ttl_seconds` from now (each request refreshes it).
fn pin_conversation(shard: &Shard, routes: &Arc<Routes>, decision: &Decision, facts: &RequestFacts, now: Instant) {
    let keys = routes.snapshot.pin_keys(decision.group, facts.affinity);
    let until = now + routes.snapshot.settings.affinity.ttl;
    for key in keys.into_iter().flatten() {
        shard.record(routes, decision.deployment, |state, _, i| {
            let pin = Pin::new(i, until);
            state.pin(key, pin, now);
            ((), Some(Event::Pin { key, pin, at: now }))
        });
    }
}

/// Counts the request and writes its access log line.
pub(crate) fn finish(shard: &Shard, routes: &Arc<Routes>, info: &RequestInfo<'_>, e: Ending) {
    shard.metrics.borrow_mut().request(routes, e.group, e.deployment, e.status);
    let mut log = shard.access_log.borrow_mut();
    if !log.is_on() {
        return;
    }
    let snap = &routes.snapshot;
    let reason = e.decision.as_ref().map(|d| d.route_reason(snap)).or_else(|| e.route.as_ref().map(|r| r.0.clone()));
    let reason = match (e.before_pick, reason) {
        (Some(walk), Some(pick)) => Some(format!("{walk}; {pick}")),
        (walk, pick) => pick.or(walk),
    };
    let failed_over: Vec<&str> = e.failed_over.iter().map(|&d| snap.deployment(d).id.as_str()).collect();
    log.write(&Entry {
        time: SystemTime::now(),
        shard: shard.id,
        path: info.path,
        model: info.model,
        key: info.key,
        model_group: e.group.map(|g| snap.group(g).name.as_str()),
        deployment: e.deployment.map(|d| snap.deployment(d).id.as_str()),
        attempts: e.attempts,
        status: e.status,
        stream: e.stream,
        upstream: e.upstream,
        total: info.started.elapsed(),
        bytes_in: info.bytes_in as u64,
        bytes_out: e.bytes_out,
        policy: info.policy,
        failed_over: &failed_over,
        cause: e.decision.as_ref().map(|d| d.cause.as_str()).or(e.route.as_ref().map(|r| r.1)),
        route: reason.as_deref(),
        routing_decision: e.routing_decision.as_deref(),
    });
}
