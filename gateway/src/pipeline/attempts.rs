//! The one attempt loop: the router chooses (phase 4), the request is written in the
//! deployment's dialect (5), the answer relayed (6) and the outcome recorded (7); after a failed
//! attempt the router says whether and where to try again, while nothing has reached the client.

use std::time::{Duration, Instant};

use pointwork_core::RouteKind;

use super::{answer, forward, record, translate};
use crate::export::draft::passed_on;
use crate::request::{write_overhead, Ending, RequestInfo};
use crate::routers::Cx;
use crate::routers::{AfterFailure, Attempt, Next, Router};
use crate::tcp_or_tls::ClientConn;
use crate::upstream::body_block::BodyBlock;
use crate::upstream::exchange::{self, ClientSide, Exchange, Outcome};
use crate::usage::Reading;

/// Runs the request's attempts as `router` chooses them. Returns whether the client connection
/// can carry another request.
pub(super) async fn run<R: Router>(
    router: &mut R,
    cx: &Cx<'_>,
    info: &RequestInfo<'_>,
    client: &mut ClientConn,
    keep_alive: bool,
) -> bool {
    let (shard, routes, facts) = (cx.shard, cx.routes, &cx.extracted.facts);
    let snap = &routes.snapshot;
    // The first choice is made now (facts extraction took a microsecond or less): one clock read.
    let mut now = info.started;
    // The failed attempts' time, which is not the gateway's own.
    let mut upstream = Duration::ZERO;
    loop {
        let (mut attempt, chosen) = match router.choose(now) {
            Next::Attempt(attempt, chosen) => (attempt, chosen),
            Next::End(reply, ending) => {
                return answer(shard, routes, info, client, keep_alive, reply, ending, upstream).await;
            }
        };
        let (idx, started) = (attempt.deployment, attempt.started);
        if !info.cache_headers.is_empty() {
            attempt.labels.extend_from_slice(info.cache_headers);
        }
        let deployment = snap.deployment(idx);
        let translating = translate::needed(cx, deployment);
        // A traced answer's usage is read (a stream is asked for it), and while the live view
        // watches.
        attempt.read_usage |= info.trace.is_some() || shard.ui.is_on();
        let built = {
            // The upstream continues the request's trace (or the caller's, when none is exported).
            let traced = info.trace.is_some() || cx.request.trace.parent.is_some();
            let trace_lines = if traced { trace_lines(cx, info, Some(started)) } else { None };
            forward::attempt_request(cx, &mut attempt, translating, trace_lines.as_deref())
        };
        let request = match built {
            Ok(request) => request,
            Err(reply) => {
                router.unforwardable(&reply);
                return answer(shard, routes, info, client, keep_alive, reply, Ending::refused(0, 0), upstream).await;
            }
        };
        // The gateway's own time: from the request's start to its attempt going out, but the
        // earlier attempts' upstream time.
        write_overhead(&mut attempt.labels, info.started.elapsed().saturating_sub(upstream));
        record::attempt_started(shard, routes, idx, started);
        router.sending(&chosen, started);
        let mut outcome = match forward::authorize(cx, idx, request) {
            Err(err) => Outcome::Failed(err),
            Ok(request) => {
                let on_body_end = |usage| router.spent(idx, started, usage);
                let (exchange, side) = exchange(
                    cx,
                    &attempt,
                    request,
                    translating,
                    client,
                    keep_alive,
                    &on_body_end,
                    info.trace.is_some(),
                );
                exchange::run(&shard.upstream, exchange, side).await
            }
        };
        if cx.route == RouteKind::Responses && !translating {
            // Boxed: only a native Responses attempt may go again, translated.
            match Box::pin(again_if_learned(cx, info, &*router, &mut attempt, outcome, client, keep_alive)).await {
                Ok(again) => outcome = again,
                Err(reply) => {
                    record::attempt_unsent(shard, routes, idx);
                    router.unforwardable(&reply);
                    return answer(shard, routes, info, client, keep_alive, reply, Ending::refused(0, 0), upstream)
                        .await;
                }
            }
        }
        match outcome {
            Outcome::Delivered(d) => {
                record::delivered(shard, routes, idx, facts.stream, started, &d);
                if routes.litellm_metrics {
                    shard.metrics.borrow_mut().litellm(routes).answered(routes, info.caller, idx, started, &d);
                }
                if let Some(trace) = info.trace {
                    trace.attempt_ended(routes.attempt_place(idx), router.cause(&chosen), Ok(&d));
                }
                if let Some(miss) = cx.cache {
                    miss.store(shard, &d);
                }
                let ending = router.delivered(chosen, idx, &d);
                record::finish(shard, routes, info, ending);
                return keep_alive && !d.client_failed && d.client_reusable;
            }
            Outcome::Failed(err) => {
                record::attempt_failed(shard, routes, idx, err.failure);
                if routes.litellm_metrics {
                    shard.metrics.borrow_mut().litellm(routes).failed(info.caller, idx, err.failure);
                }
                upstream += started.elapsed();
                if let Some(trace) = info.trace {
                    trace.attempt_ended(routes.attempt_place(idx), router.cause(&chosen), Err(&err));
                }
                match router.after_failure(chosen, idx, err) {
                    AfterFailure::End(reply, ending) => {
                        return answer(shard, routes, info, client, keep_alive, reply, ending, upstream).await;
                    }
                    AfterFailure::Again(pause) => {
                        if !pause.is_zero() {
                            monoio::time::sleep(pause).await;
                        }
                        now = Instant::now();
                    }
                }
            }
        }
    }
}

/// A native Responses attempt's `outcome`, or — when it says the server has no `/responses`
/// (learned from then on) — the outcome of the same attempt sent again translated; `Err`: the
/// request cannot be translated.
async fn again_if_learned<R: Router>(
    cx: &Cx<'_>,
    info: &RequestInfo<'_>,
    router: &R,
    attempt: &mut Attempt,
    outcome: Outcome,
    client: &mut ClientConn,
    keep_alive: bool,
) -> Result<Outcome, crate::respond::Reply> {
    let deployment = cx.routes.snapshot.deployment(attempt.deployment);
    match &outcome {
        Outcome::Failed(err) if cx.shard.hub.responses.learn_from(deployment, err) => {
            let request = forward::attempt_request(cx, attempt, true, trace_lines(cx, info, None).as_deref())?;
            let (idx, started) = (attempt.deployment, attempt.started);
            let request = match forward::authorize(cx, idx, request) {
                Ok(request) => request,
                Err(err) => return Ok(Outcome::Failed(err)),
            };
            let on_body_end = |usage| router.spent(idx, started, usage);
            let exporting = info.trace.is_some();
            let (exchange, side) = exchange(cx, attempt, request, true, client, keep_alive, &on_body_end, exporting);
            Ok(exchange::run(&cx.shard.upstream, exchange, side).await)
        }
        _ => Ok(outcome),
    }
}

/// The exchange of `request`, the attempt's (its credential added), and the client side its
/// answer goes to: translated back (`translating`), with the router's labels, its body block and
/// its spend callback `on_body_end`; the answer's facts read for the exporters (`exporting`).
/// Inlined: its result is two large structs, which a call would copy.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn exchange<'a>(
    cx: &'a Cx<'_>,
    attempt: &'a Attempt,
    request: Vec<u8>,
    translating: bool,
    client: &'a mut ClientConn,
    keep_alive: bool,
    on_body_end: &'a dyn Fn(Option<crate::usage::Usage>),
    exporting: bool,
) -> (Exchange<'a>, ClientSide<'a>) {
    let (idx, started) = (attempt.deployment, attempt.started);
    let (routes, facts) = (cx.routes, &cx.extracted.facts);
    let upstream = &routes.upstreams[idx.get()];
    let deployment = routes.snapshot.deployment(idx);
    let exchange = Exchange {
        target: &upstream.target,
        provider: deployment.provider.prefix(),
        request,
        stream: facts.stream,
        reading: Reading::of(
            attempt.read_usage,
            exporting.then(|| cx.shard.export.as_ref().is_some_and(|e| e.content())),
        ),
        timeout: if facts.stream { upstream.stream_timeout } else { upstream.timeout },
        started,
    };
    let side = ClientSide {
        stream: client,
        extra_headers: &attempt.labels,
        keep_alive,
        on_body_end,
        body_block: match &attempt.block {
            Some((name, json)) if !translating => Some(BodyBlock { name, json }),
            _ => None,
        },
        translate: translate::answer(cx, deployment, translating),
        dialect: cx.route.dialect(),
        cut_usage_event: attempt.usage_asked,
        tee: cx.cache.and_then(|m| m.tee()),
    };
    (exchange, side)
}

/// The Trace Context lines an attempt's upstream gets: its own span's, when the request is
/// traced (a new span when it starts at `new_span`, else the current one's), or the caller's as
/// sent.
fn trace_lines(cx: &Cx<'_>, info: &RequestInfo<'_>, new_span: Option<Instant>) -> Option<Vec<u8>> {
    match info.trace {
        Some(trace) => Some(trace.attempt_lines(new_span, &mut cx.shard.trace_ids.borrow_mut())),
        None => cx.request.trace.parent.and_then(|_| passed_on(&cx.request.trace)),
    }
}
