//! `GET /ui/api/live[?since=SEQ]`: everything the page shows, as one JSON object — the
//! deployments' states and counts, the decisions after `since`, the routers, and the services
//! around the gateway. Every call keeps the shards noting for [`super::WATCH_FOR`].

use std::time::Instant;

use pointwork_core::State;
use serde_json::{json, Value};

use super::board::{since_start_ms, Reading};
use super::noted::{Counts, Noted};
use crate::keys::Caller;
use crate::respond::Reply;
use crate::routes::Routes;
use crate::shard::Shard;

pub(super) fn serve(shard: &Shard, caller: &Caller, query: &str) -> Reply {
    let hub = &shard.hub;
    let now_ms = since_start_ms(hub.started);
    let watching = hub.ui.watch(now_ms);
    let since = query.split('&').find_map(|p| p.strip_prefix("since=")).and_then(|s| s.parse().ok()).unwrap_or(0);
    let reading = hub.ui.read(since, now_ms);
    let routes = shard.sync();
    let now = Instant::now();
    let (groups, routers) = shard.with_state(&routes, |state| {
        (groups(shard, &routes, state, &reading, now), routers(shard, &routes, state, now))
    });
    let body = json!({
        "now_ms": crate::clock::unix_millis(),
        "version": env!("CARGO_PKG_VERSION"),
        "instance": hub.cluster.get().and_then(|c| c.live()).map(|c| c["instance"].clone()),
        "shard": shard.id,
        "caller": caller.name().unwrap_or("anyone"),
        "watching": watching,
        "routing_strategy": routes.snapshot.settings.routing_strategy.as_str(),
        "groups": groups,
        "decisions": reading.decisions.iter().map(decision_json).collect::<Vec<_>>(),
        "last_seq": reading.last_seq,
        "routers": routers,
        "cluster": hub.cluster.get().and_then(|c| c.live()),
        "database": hub.database.get().map(|db| json!({"connected": db.status.is_connected()})),
        "exporters": hub.export.get().map(|e| e.live()).unwrap_or_default(),
        "cache": routes.cache.as_ref().map(|c| json!({"type": match c.settings.store {
            pointwork_config::CacheStore::Local => "local",
            pointwork_config::CacheStore::Redis => "redis",
        }})),
    });
    Reply::json(200, serde_json::to_vec(&body).unwrap_or_default())
}

/// Every group and its deployments: state, counts and what the shards measured.
fn groups(shard: &Shard, routes: &Routes, state: &State, reading: &Reading, now: Instant) -> Vec<Value> {
    let snap = &routes.snapshot;
    let blocks = &shard.hub.blocked_by_admin;
    snap.groups
        .iter()
        .map(|g| {
            let deployments: Vec<Value> = g
                .members
                .iter()
                .map(|&idx| {
                    let d = snap.deployment(idx);
                    let cooldown = state.cooldown(idx, now).map(|c| {
                        json!({"cause": c.cause.as_str(), "seconds_left": c.until.saturating_duration_since(now).as_secs_f64()})
                    });
                    let health = state.health(idx);
                    let blocked_by = match blocks.get(&d.id) {
                        Some(true) => Some("admin"),
                        _ if d.blocked => Some("config"),
                        _ => None,
                    };
                    let word = if d.blocked {
                        "blocked"
                    } else if cooldown.is_some() {
                        "cooling_down"
                    } else if health.is_some_and(|h| !h.healthy) {
                        "unhealthy"
                    } else {
                        "healthy"
                    };
                    let seen = reading.seen.get(&d.id).copied().unwrap_or_default();
                    json!({
                        "id": d.id,
                        "provider": d.provider.prefix(),
                        "upstream_model": d.upstream_model,
                        "api_base": d.api_base,
                        "state": word,
                        "cooldown": cooldown,
                        "blocked": d.blocked,
                        "blocked_by": blocked_by,
                        "health": health.map(|h| json!({"healthy": h.healthy, "age_s": now.saturating_duration_since(h.checked_at).as_secs_f64()})),
                        "in_flight": seen.in_flight.max(state.in_flight(idx)),
                        "latency_ms": seen.latency_ms,
                        "ttft_ms": seen.ttft_ms,
                        "per_minute": per_minute(reading.per_minute.get(&d.id)),
                    })
                })
                .collect();
            json!({"name": g.name, "deployments": deployments})
        })
        .collect()
}

fn per_minute(counts: Option<&Counts>) -> Value {
    let c = counts.copied().unwrap_or_default();
    let (tokens, spend) = if c.usage_read { (Some(c.tokens), Some(c.spend_usd)) } else { (None, None) };
    json!({"requests": c.requests, "errors": c.errors, "tokens": tokens, "spend_usd": spend})
}

/// One noted decision, as the list shows it.
pub(super) fn decision_json(n: &Noted) -> Value {
    let candidates: Vec<Value> = n
        .candidates
        .iter()
        .map(|c| json!({"id": c.id, "provider": c.provider, "status": c.status, "removed_by": c.removed_by}))
        .collect();
    json!({
        "seq": n.seq,
        "unix_ms": n.unix_ms,
        "shard": n.shard,
        "path": n.path,
        "model": n.model,
        "group": n.group,
        "winner": n.winner,
        "status": n.status,
        "attempts": n.attempts,
        "stream": n.stream,
        "cache_hit": n.cache_hit,
        "upstream_ms": n.upstream_ms,
        "total_ms": n.total_ms,
        "cause": n.cause,
        "route_reason": n.route_reason,
        "policy": n.policy,
        "key": n.key,
        "candidates": candidates,
        "failed_over": n.failed_over,
    })
}

/// The pareto walk per rule (as its dry run explains it now), and the complexity and policy
/// routers' counts since start.
fn routers(shard: &Shard, routes: &Routes, state: &State, now: Instant) -> Value {
    let mut pareto = Vec::new();
    if let Some(p) = &routes.pareto {
        let telemetry = crate::routers::pareto::published(&shard.hub);
        for (key, _) in &p.settings.rules {
            // The walk explains a request for the first group its rule manages.
            let Some(group) =
                routes.snapshot.groups.iter().find(|g| p.settings.rule(&g.name).is_some_and(|(k, _)| k == key))
            else {
                continue;
            };
            let body = json!({"model": group.name, "messages": [{"role": "user", "content": "?"}]}).to_string();
            if let Some((explain, _)) =
                crate::routers::pareto::dry_run::explain(routes, state, &telemetry, body.as_bytes(), &group.name, now)
            {
                pareto.push(json!({"rule": key, "group": group.name, "explain": explain}));
            }
        }
    }
    let totals = shard.hub.totals.lock().unwrap_or_else(|e| e.into_inner());
    let counts = &totals.counts;
    let mut complexity: Vec<Value> = counts
        .auto_router_decisions
        .iter()
        .map(|((router, tier, cause), n)| json!({"router": router, "tier": tier, "cause": cause, "count": n}))
        .collect();
    let mut policy: Vec<Value> = counts
        .policy_requests
        .iter()
        .map(|((policy, outcome), n)| json!({"policy": policy, "outcome": outcome, "count": n}))
        .collect();
    drop(totals);
    let by_names = |v: &Value| v.as_object().map(|o| o.values().map(|x| x.to_string()).collect::<Vec<_>>());
    complexity.sort_by_key(by_names);
    policy.sort_by_key(by_names);
    json!({"pareto": pareto, "complexity": complexity, "policy": policy})
}
