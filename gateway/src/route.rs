//! The dry run: the decision the gateway would take for a request, without calling a provider —
//! every candidate with the filter and reason that removed it and the strategy's inputs, the
//! survivors, the winner and why, and what a failure would try next. `pointwork route` runs it
//! on a config file and an optional state file; `POST /v1/route` on the live routes and the
//! serving shard's state. A request that runs under a policy is explained the policy router's
//! way (`route/policy.rs`).

use std::time::{Duration, Instant};

use pointwork_core::pareto::ParetoTelemetry;
use pointwork_core::{
    pick, Basis, Decision, DeploymentIdx, ErrorClass, Failure, LatencyMeasure, LatencySample, PickRequest,
    RejectReason, Resolution, Rng, RouteError, RouteKind, Snapshot, State,
};
use serde_json::{json, Map, Value};

use crate::clock::unix_now;
use crate::facts;
use crate::routers::complexity::dry_run as complexity;
use crate::routers::litellm::pick_request;
use crate::routers::pareto::dry_run as pareto;
use crate::routers::policy::dry_run as policy;
pub use crate::routers::DryRunError;
use crate::routes::Routes;

/// The dry run of `body` sent to `route`, against `state` at `now`; `seed` seeds the strategy's
/// randomness (the same seed, state and request give the same decision). Under `policy` (a
/// policy's name), else the default policy when the config has one, the policy router's
/// decision is explained instead (no seed: it is not random). `telemetry`: what the OpenRouter
/// walk's poller published (the walk's part of the dry run reads it).
#[allow(clippy::too_many_arguments)]
pub fn explain(
    routes: &Routes,
    state: &State,
    route: RouteKind,
    body: &[u8],
    now: Instant,
    seed: u64,
    policy: Option<&str>,
    telemetry: &ParetoTelemetry,
) -> Result<Value, DryRunError> {
    let applying = policy::applying(routes, policy)?;
    let extracted = facts::extract(route, body).map_err(|e| DryRunError { status: 400, message: e.to_string() })?;
    if let Some((policies, p)) = applying {
        return policy::explain(policies, p, state, route, &extracted, body);
    }
    let facts = &extracted.facts;
    let snap = &routes.snapshot;
    // A complexity router decides the group; the rest explains the pick inside it.
    let auto = complexity::explain(routes, state, route, body, facts, now, seed);
    let target = auto.as_ref().map_or(&*facts.model, |(_, group)| group.as_str());
    let walked = pareto::explain(routes, state, telemetry, body, target, now);
    let excluded = walked.as_ref().map_or(&[][..], |(_, excluded)| &excluded[..]);
    let req = PickRequest { excluded, ..pick_request(facts, body, target, None, &[]) };
    let picked = pick(snap, state, &req, now, &mut Rng::new(seed));
    let members: Vec<DeploymentIdx> = match snap.resolve(target) {
        Resolution::Group { group, .. } => snap.group(group).members.clone(),
        Resolution::Deployment(idx) => vec![idx],
        Resolution::Unknown => Vec::new(),
    };
    let decision = picked.as_ref().ok();
    let candidates: Vec<Value> = members.iter().map(|&idx| candidate(snap, state, decision, idx, now)).collect();
    let survivors: Vec<&str> = members
        .iter()
        .filter(|&&idx| decision.is_some_and(|d| !d.rejected.iter().any(|(r, _)| *r == idx)))
        .map(|&idx| snap.deployment(idx).id.as_str())
        .collect();
    let mut out = Map::new();
    out.insert("model".into(), json!(facts.model));
    out.insert("endpoint".into(), json!(route.path()));
    out.insert("stream".into(), json!(facts.stream));
    out.insert("strategy".into(), json!(snap.settings.routing_strategy.as_str()));
    out.insert("seed".into(), json!(seed));
    out.insert("candidates".into(), Value::Array(candidates));
    out.insert("survivors".into(), json!(survivors));
    if let Some((explained, _)) = auto {
        out.insert("auto_router".into(), explained);
    }
    if let Some((walk, _)) = walked {
        out.insert("pareto".into(), walk);
    }
    match &picked {
        Ok(d) => {
            let winner = &snap.deployment(d.deployment).id;
            // Whether the winner speaks the client's dialect or is reached through a translation.
            // (A Responses request: by the config; a server learned to have no `/responses` is
            // the live gateway's to know.)
            let deployment = snap.deployment(d.deployment);
            let translated = match route {
                RouteKind::Responses => !deployment.native_responses(),
                route => deployment.translates(route),
            };
            let wire = if translated { "translated" } else { "native" };
            let basis = basis(&d.basis);
            out.insert("winner".into(), json!({"id": winner, "cause": d.cause.as_str(), "basis": basis, "wire": wire}));
            out.insert("route".into(), json!(d.route_reason(snap)));
            let retry_pool: Vec<&str> = survivors.iter().copied().filter(|id| id != winner).collect();
            out.insert("on_failure".into(), on_failure(snap, d, &retry_pool));
            out.insert("error".into(), Value::Null);
        }
        Err(e) => {
            out.insert("winner".into(), Value::Null);
            out.insert("error".into(), route_error(e));
        }
    }
    Ok(Value::Object(out))
}

/// What the fallback walk would do if the winner failed: retry among the other survivors, move
/// to the group's next `order` tier, or fall back to other groups (by error class).
fn on_failure(snap: &Snapshot, d: &Decision, retry_pool: &[&str]) -> Value {
    let settings = &snap.settings;
    let group = &snap.group(d.group).name;
    let order = snap.deployment(d.deployment).order;
    let next_order = order.and_then(|o| {
        snap.group(d.group).members.iter().filter_map(|&m| snap.deployment(m).order).filter(|&m| m > o).min()
    });
    let fallbacks = |class| settings.fallbacks.for_failure(group, class).to_vec();
    json!({
        "retries": settings.num_retries,
        "retry_candidates": retry_pool,
        "next_order": next_order,
        "fallbacks": {
            "generic": fallbacks(ErrorClass::InternalServer),
            "context_window": fallbacks(ErrorClass::ContextWindow),
            "content_policy": fallbacks(ErrorClass::ContentPolicy),
        },
        "max_fallbacks": settings.fallbacks.max_fallbacks,
    })
}

fn route_error(e: &RouteError) -> Value {
    json!({"status": e.status(), "message": e.to_string()})
}

/// One candidate: who it is, what removed it (if anything), and what the strategy reads of it.
fn candidate(snap: &Snapshot, state: &State, decision: Option<&Decision>, idx: DeploymentIdx, now: Instant) -> Value {
    let d = snap.deployment(idx);
    let removed = match decision {
        Some(dec) => dec.rejected.iter().find(|(r, _)| *r == idx).map(|(_, reason)| *reason),
        // The pick failed: every member was removed; a cooldown is the reason the state shows.
        None => state.is_cooling_down(idx, now).then_some(RejectReason::CoolingDown),
    };
    let status = match (decision, removed) {
        (_, Some(_)) => "removed",
        (Some(dec), None) if dec.deployment == idx => "winner",
        (Some(_), None) => "survivor",
        (None, None) => "removed",
    };
    let latency = state.latency(idx);
    let usage = state.usage(idx, now);
    json!({
        "id": d.id,
        "provider": d.provider.prefix(),
        "upstream_model": d.upstream_model,
        "api_base": d.api_base,
        "status": status,
        "removed_by": removed.map(|r| r.as_str()),
        "inputs": {
            "weight": d.shuffle_weight,
            "order": d.order,
            "cooldown_seconds": state.cooldown_remaining(idx, now).map(|r| r.as_secs_f64()),
            "cooldown_cause": state.cooldown(idx, now).map(|c| c.cause.as_str()),
            "healthy": state.health(idx).map(|h| h.healthy),
            "health_age_seconds": state.health(idx).map(|h| now.saturating_duration_since(h.checked_at).as_secs_f64()),
            "in_flight": state.in_flight(idx),
            "latency_ms": latency.and_then(|l| l.total()).map(millis),
            "time_to_first_token_ms": latency.and_then(|l| l.time_to_first_token()).map(millis),
            "usage_this_minute": {"requests": usage.requests, "tokens": usage.tokens},
            "rpm": d.rpm,
            "tpm": d.tpm,
            "price_per_token": d.price_per_token(),
        },
    })
}

fn basis(b: &Basis) -> Value {
    match *b {
        Basis::None => json!({"kind": "none"}),
        Basis::Weight(w) => json!({"kind": "weight", "weight": w}),
        Basis::InFlight(n) => json!({"kind": "in_flight", "in_flight": n}),
        Basis::Latency { latency, measure } => json!({
            "kind": "latency",
            "measure": match measure {
                LatencyMeasure::Total => "total",
                LatencyMeasure::TimeToFirstToken => "time_to_first_token",
                LatencyMeasure::Untried => "untried",
            },
            "latency_ms": millis(latency),
        }),
        Basis::Usage { tokens, requests } => json!({"kind": "usage", "tokens": tokens, "requests": requests}),
        Basis::Price(p) => json!({"kind": "price", "price_per_token": p}),
    }
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Builds the state a dry run reads from a JSON document (`pointwork route --state FILE`):
///
/// ```json
/// {"cooldowns": {"ID": {"seconds": 12, "cause": "status_500"}},
///  "health": {"ID": {"healthy": false, "age_seconds": 3}},
///  "in_flight": {"ID": 2},
///  "latency_ms": {"ID": {"total": 120, "time_to_first_token": 40}},
///  "usage": {"ID": {"requests": 10, "tokens": 4000}},
///  "outcomes": {"ID": {"successes": 8, "failures": 2}},
///  "endpoint_status": {"ID": "maintenance"}}
/// ```
///
/// Every section is optional; a bare number stands for `seconds`, `total` or `requests`.
/// `outcomes` (this minute's, the policy score's error rate) and `endpoint_status` (an
/// operator's, as `POST /admin/endpoints/{id}/status` sets it) are what the policy router reads.
/// Errors name the key path (`state.cooldowns.ID: …`). `outcomes` go to the counters every
/// shard shares (`routes`' policy router's), not into the state.
pub fn state_from_json(routes: &Routes, doc: &Value, now: Instant) -> Result<State, String> {
    let snap = &routes.snapshot;
    let mut state = State::new(snap);
    state.set_minute_origin(now);
    let Some(top) = doc.as_object() else {
        return Err("state: expected a JSON object".to_string());
    };
    for (section, entries) in top {
        let Some(entries) = entries.as_object() else {
            return Err(format!("state.{section}: expected an object of deployment ids"));
        };
        for (id, value) in entries {
            let path = format!("state.{section}.{id}");
            let idx = snap.deployment_by_id(id).ok_or(format!("{path}: no deployment with this id"))?;
            match section.as_str() {
                "cooldowns" => {
                    let seconds = number(value, "seconds", &path)?;
                    let cause = match value.get("cause").and_then(Value::as_str) {
                        None => Failure::Status(500),
                        Some(text) => parse_failure(text).ok_or(format!(
                            "{path}.cause: expected status_NNN, connect, timeout or protocol, got {text:?}"
                        ))?,
                    };
                    let until = now + Duration::from_secs_f64(seconds);
                    state.apply_cooldown(pointwork_core::CooldownStarted { idx, until, cause });
                }
                "health" => {
                    let healthy = value
                        .get("healthy")
                        .and_then(Value::as_bool)
                        .ok_or(format!("{path}.healthy: expected true or false"))?;
                    let age = value.get("age_seconds").map(|_| number(value, "age_seconds", &path)).transpose()?;
                    let checked_at = now.checked_sub(Duration::from_secs_f64(age.unwrap_or(0.0))).unwrap_or(now);
                    state.record_health(idx, healthy, checked_at);
                }
                "in_flight" => {
                    for _ in 0..(number(value, "requests", &path)? as u64) {
                        state.request_started(idx);
                    }
                }
                "latency_ms" => {
                    let total = number(value, "total", &path)?;
                    let first = value
                        .get("time_to_first_token")
                        .map(|_| number(value, "time_to_first_token", &path))
                        .transpose()?;
                    let ms = |m: f64| Duration::from_secs_f64(m / 1000.0);
                    // The policy router's latency average, which every shard shares.
                    if let Some(shared) = routes.policy.as_ref().and_then(|p| p.latency.get(idx.get())) {
                        shared.record(total);
                    }
                    state.record_latency(
                        idx,
                        LatencySample { stream: false, total: ms(total), first_token: None, output_tokens: None },
                    );
                    if let Some(first) = first {
                        state.record_latency(
                            idx,
                            LatencySample {
                                stream: true,
                                total: ms(first),
                                first_token: Some(ms(first)),
                                output_tokens: None,
                            },
                        );
                    }
                }
                "usage" => {
                    let requests = number(value, "requests", &path)? as u64;
                    let tokens =
                        value.get("tokens").map(|_| number(value, "tokens", &path)).transpose()?.unwrap_or(0.0);
                    state.record_usage(idx, now, requests, tokens as u64);
                }
                "outcomes" => {
                    let count = |key: &str| match value.get(key) {
                        None => Ok(0),
                        Some(_) => number(value, key, &path).map(|n| n as u64),
                    };
                    if !value.is_object() {
                        return Err(format!("{path}: expected {{\"successes\": N, \"failures\": N}}"));
                    }
                    let shared = routes.policy.as_ref().and_then(|p| p.outcomes.get(idx.get()));
                    let shared = shared.ok_or(format!("{path}: only the policy router reads outcomes (no policies)"))?;
                    let at = unix_now();
                    for _ in 0..count("successes")? {
                        shared.record(true, at);
                    }
                    for _ in 0..count("failures")? {
                        shared.record(false, at);
                    }
                }
                "endpoint_status" => {
                    let status = value.as_str().filter(|s| !s.is_empty()).ok_or(format!(
                        "{path}: expected a status word (up, degraded, down, maintenance, …)"
                    ))?;
                    state.set_endpoint_status(idx, status.into());
                }
                other => {
                    return Err(format!(
                        "state.{other}: unknown section; valid: cooldowns, health, in_flight, latency_ms, usage, outcomes, endpoint_status"
                    ))
                }
            }
        }
    }
    Ok(state)
}

/// `value` itself when it is a number, else its field `key`; a non-negative finite number.
fn number(value: &Value, key: &str, path: &str) -> Result<f64, String> {
    let (n, at) = match value {
        Value::Number(_) => (value.as_f64(), path.to_string()),
        _ => (value.get(key).and_then(Value::as_f64), format!("{path}.{key}")),
    };
    n.filter(|n| n.is_finite() && *n >= 0.0).ok_or(format!("{at}: expected a number ≥ 0"))
}

fn parse_failure(text: &str) -> Option<Failure> {
    match text {
        "connect" => Some(Failure::Connect),
        "timeout" => Some(Failure::Timeout),
        "protocol" => Some(Failure::Protocol),
        _ => text.strip_prefix("status_")?.parse().ok().filter(|s| (400..=599).contains(s)).map(Failure::Status),
    }
}

/// The route kind a dry-run body is for: embeddings when it has `input` and no `messages`.
pub fn route_kind_of(body: &Value) -> RouteKind {
    if body.get("input").is_some() && body.get("messages").is_none() {
        RouteKind::Embeddings
    } else {
        RouteKind::ChatCompletions
    }
}
