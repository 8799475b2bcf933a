//! What a shard notes for the live view while someone watches, and its quarter-second hand-over
//! to the board with the in-flight counts and latencies only it knows.

use std::sync::Arc;

use pointwork_core::DeploymentIdx;

use super::noted::{Candidate, Noted};
use crate::request::{Ending, RequestInfo};
use crate::routes::Routes;
use crate::shard::Shard;

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
        let others = decision.rejected.iter().map(|r| r.0).filter(|d| !listed.contains(d));
        for d in listed.iter().copied().chain(others) {
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
    shard.ui.push(noted);
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
