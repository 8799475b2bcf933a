//! The record phase: what an attempt teaches this shard's state (and, by events, every other
//! shard's), the metrics, and the request's access-log line.

use std::sync::Arc;
use std::time::{Instant, SystemTime};

use pointwork_core::{DeploymentIdx, Event, Failure, LatencySample};

use crate::access_log::Entry;
use crate::export::trace_context::hex;
use crate::request::{Ending, RequestInfo};
use crate::routes::Routes;
use crate::shard::Shard;
use crate::upstream::exchange::Delivered;

/// In-flight count up; under usage-based routing, the request counts against this minute's
/// rpm on every shard.
pub(super) fn attempt_started(shard: &Shard, routes: &Arc<Routes>, idx: DeploymentIdx, now: Instant) {
    if shard.ui.is_on() {
        shard.ui.count(routes, idx, crate::ui::Counted::Started);
    }
    let usage = routes.counts_usage();
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
pub(super) fn delivered(
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
    let tokens = d.usage.filter(|_| routes.counts_usage()).map(|u| u.total_tokens);
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
    if let (true, Some(usage)) = (shard.ui.is_on(), d.usage) {
        shard.ui.count(routes, idx, crate::ui::Counted::Answered(usage));
    }
    if let Some(f) = d.body_failure {
        failure(shard, routes, idx, f);
    }
}

/// An attempt that failed before anything reached the client: no longer in flight, and its
/// failure counted toward a cooldown.
pub(super) fn attempt_failed(shard: &Shard, routes: &Arc<Routes>, idx: DeploymentIdx, f: Failure) {
    attempt_unsent(shard, routes, idx);
    failure(shard, routes, idx, f);
}

/// An attempt that ended with nothing to learn of the deployment (its request, sent again
/// translated, could not be translated): no longer in flight.
pub(super) fn attempt_unsent(shard: &Shard, routes: &Arc<Routes>, idx: DeploymentIdx) {
    shard.record(routes, idx, |state, _, i| (state.request_ended(i), None));
}

fn failure(shard: &Shard, routes: &Arc<Routes>, idx: DeploymentIdx, failure: Failure) {
    if shard.ui.is_on() {
        shard.ui.count(routes, idx, crate::ui::Counted::Failed);
    }
    let now = Instant::now();
    let started = shard.record(routes, idx, |state, snap, i| {
        let started = state.record_failure(snap, i, failure, now);
        (started, started.map(Event::Cooldown))
    });
    if let Some(Some(c)) = started {
        shard.metrics.borrow_mut().cooldown_started(routes, idx, failure);
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

/// Counts the request, writes its access log line and hands its record to the exporters.
pub(super) fn finish(shard: &Shard, routes: &Arc<Routes>, info: &RequestInfo<'_>, e: Ending) {
    shard.metrics.borrow_mut().request(routes, e.group, e.deployment, e.status);
    if routes.litellm_metrics {
        shard.metrics.borrow_mut().litellm(routes).ended(routes, info, &e);
    }
    let noted = shard.ui.wants_decision();
    let mut log = shard.access_log.borrow_mut();
    let logged = log.is_on() || info.trace.is_some();
    if !logged && !noted {
        return;
    }
    let snap = &routes.snapshot;
    let reason = route_line(routes, &e);
    if noted {
        crate::ui::note_ending(shard, routes, info, &e, reason.as_deref());
    }
    if !logged {
        return;
    }
    let trace_id = info.trace.map(|t| hex(&t.trace_id));
    let failed_over: Vec<&str> = e.failed_over.iter().map(|&d| snap.deployment(d).id.as_str()).collect();
    let entry = Entry {
        time: SystemTime::now(),
        shard: shard.id,
        path: info.path,
        model: info.model,
        key: info.caller.name(),
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
        trace_id: trace_id.as_deref(),
        cache_hit: e.cache_hit,
    };
    if let (Some(trace), Some(export)) = (info.trace, &shard.export) {
        export.send(trace.finish(&entry, info.route));
    }
    log.write(&entry);
}

/// The route line (`x-pointwork-route`'s): what decided before the pick, then the pick's reason.
fn route_line(routes: &Routes, e: &Ending) -> Option<String> {
    let snap = &routes.snapshot;
    let reason = e.decision.as_ref().map(|d| d.route_reason(snap)).or_else(|| e.route.as_ref().map(|r| r.0.clone()));
    match (e.before_pick.as_deref(), reason) {
        (Some(walk), Some(pick)) => Some(format!("{walk}; {pick}")),
        (walk, pick) => pick.or(walk.map(str::to_owned)),
    }
}
