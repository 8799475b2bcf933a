//! The proxy lifecycle of one API request: extract facts, pick, forward, record the outcome,
//! and retry on a fresh pick while nothing has reached the client.

use std::time::Instant;

use monoio::net::TcpStream;
use switchyard_core::{
    pick_with_scratch, AttemptPlan, Decision, DeploymentIdx, Next, PickRequest, RouteError, RouteKind,
};

use crate::errors::openai_error;
use crate::facts::{self, append_with_model, rewritten_len};
use crate::http::write;
use crate::respond::{self, Reply};
use crate::shard::Shard;
use crate::upstream::exchange::{self, AttemptError, ClientSide, Exchange, Outcome};

/// Response headers naming the routing decision, defined once.
pub const HEADER_DEPLOYMENT: &str = "x-switchyard-deployment";
pub const HEADER_MODEL_GROUP: &str = "x-switchyard-model-group";
pub const HEADER_ATTEMPTS: &str = "x-switchyard-attempts";

/// Serves one API request. Returns whether the client connection can carry another request.
pub async fn serve(shard: &Shard, route: RouteKind, body: &[u8], client: &mut TcpStream, keep_alive: bool) -> bool {
    let extracted = match facts::extract(route, body) {
        Ok(e) => e,
        Err(e) => {
            let reply = Reply::json(400, openai_error(400, &e.to_string(), e.param()));
            return respond::send(client, reply, keep_alive).await;
        }
    };
    let routes = shard.routes.load_full();
    let snap = &routes.snapshot;
    let facts = &extracted.facts;
    let mut plan = AttemptPlan::new(&snap.settings);
    let mut last_error: Option<(DeploymentIdx, AttemptError)> = None;
    loop {
        let now = Instant::now();
        let picked = {
            let state = shard.state.borrow();
            let req = PickRequest { model: &facts.model, failed: plan.failed() };
            pick_with_scratch(snap, &state, &req, now, &mut shard.rng.borrow_mut(), &mut shard.scratch.borrow_mut())
        };
        let decision = match picked {
            Ok(d) => d,
            Err(e) => {
                let reply = match last_error.take() {
                    Some((idx, err)) => error_reply(snap, idx, plan.failed_attempts(), err),
                    None => route_error_reply(&e),
                };
                return respond::send(client, reply, keep_alive).await;
            }
        };
        let attempt = plan.failed_attempts() + 1;
        let upstream = &routes.upstreams[decision.deployment.get()];
        let request = upstream_request(upstream.head_for(route), body, &extracted.model_span, &upstream.model_json);
        let labels = decision_headers(snap, &decision, attempt);
        let exchange = Exchange {
            target: &upstream.target,
            provider: snap.deployment(decision.deployment).provider.prefix(),
            request,
            stream: facts.stream,
            timeout: if facts.stream { upstream.stream_timeout } else { upstream.timeout },
        };
        let side = ClientSide { stream: client, extra_headers: &labels, keep_alive };
        match exchange::run(shard, exchange, side).await {
            Outcome::Delivered(d) => {
                let now = Instant::now();
                match d.body_failure {
                    None => shard.state.borrow_mut().record_success(decision.deployment, now),
                    Some(f) => record_failure(shard, snap, decision.deployment, f),
                }
                return keep_alive && !d.client_failed && d.client_reusable;
            }
            Outcome::Failed(err) => {
                let idx = decision.deployment;
                record_failure(shard, snap, idx, err.failure);
                let others =
                    plan.other_candidate_remains(snap, &shard.state.borrow(), decision.group, idx, Instant::now());
                let next = plan.after_failure(idx, err.failure, others);
                if next == Next::Stop {
                    let reply = error_reply(snap, idx, plan.failed_attempts(), err);
                    return respond::send(client, reply, keep_alive).await;
                }
                last_error = Some((idx, err));
            }
        }
    }
}

fn record_failure(
    shard: &Shard,
    snap: &switchyard_core::Snapshot,
    idx: DeploymentIdx,
    failure: switchyard_core::Failure,
) {
    let started = shard.state.borrow_mut().record_failure(snap, idx, failure, Instant::now());
    if let Some(c) = started {
        let d = snap.deployment(idx);
        let secs = c.until.saturating_duration_since(Instant::now()).as_secs_f64();
        eprintln!(
            "switchyard: shard {}: deployment {} ({}) cooling down for {secs:.1}s after {}",
            shard.id,
            d.id,
            d.model_name,
            failure.as_str()
        );
    }
}

/// The upstream request: precomputed head, content-length, and the body with `model` spliced.
fn upstream_request(head: &[u8], body: &[u8], span: &std::ops::Range<usize>, model_json: &[u8]) -> Vec<u8> {
    let len = rewritten_len(body, span, model_json);
    let mut out = Vec::with_capacity(head.len() + 32 + len);
    out.extend_from_slice(head);
    write::header_decimal(&mut out, "content-length", len as u64);
    write::end_head(&mut out);
    append_with_model(&mut out, body, span, model_json);
    out
}

fn decision_headers(snap: &switchyard_core::Snapshot, decision: &Decision, attempt: u32) -> Vec<u8> {
    let d = snap.deployment(decision.deployment);
    let mut out = Vec::with_capacity(128);
    write::header(&mut out, HEADER_DEPLOYMENT, d.id.as_bytes());
    write::header(&mut out, HEADER_MODEL_GROUP, snap.group(decision.group).name.as_bytes());
    write::header_decimal(&mut out, HEADER_ATTEMPTS, u64::from(attempt));
    out
}

fn error_reply(snap: &switchyard_core::Snapshot, idx: DeploymentIdx, attempts: u32, err: AttemptError) -> Reply {
    let d = snap.deployment(idx);
    let mut reply = Reply::json(err.status, err.body);
    reply.header(HEADER_DEPLOYMENT, d.id.as_bytes());
    reply.header(HEADER_MODEL_GROUP, d.model_name.as_bytes());
    reply.header_decimal(HEADER_ATTEMPTS, u64::from(attempts));
    if let Some(ra) = err.retry_after {
        reply.header("retry-after", ra.as_bytes());
    }
    reply
}

fn route_error_reply(e: &RouteError) -> Reply {
    let status = e.status();
    let param = matches!(e, RouteError::UnknownModel { .. }).then_some("model");
    let mut reply = Reply::json(status, openai_error(status, &e.to_string(), param));
    if let Some(secs) = e.retry_after_secs() {
        reply.header_decimal("retry-after", secs);
    }
    reply
}
