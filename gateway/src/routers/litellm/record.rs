//! What a LiteLLM-routed attempt records beyond every attempt's outcome: the conversation's
//! pin, and what the answer cost against its provider's budget and the caller's key.

use std::sync::Arc;
use std::time::Instant;

use pointwork_core::{response_cost, Decision, DeploymentIdx, Event, Pin, RequestFacts};

use crate::clock::unix_now;
use crate::keys::VirtualKey;
use crate::routes::Routes;
use crate::shard::Shard;
use crate::usage::Usage;

/// Pins the conversation (session id, caller's key) to the deployment this attempt goes to, on
/// every shard, for `deployment_affinity_ttl_seconds` from now (each request refreshes it).
pub(super) fn pin_conversation(
    shard: &Shard,
    routes: &Arc<Routes>,
    decision: &Decision,
    facts: &RequestFacts,
    now: Instant,
) {
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

/// Counts what the response cost against its provider's budget, on every shard, and against
/// the caller's key (called once the body arrived, before its end goes to the client).
/// Returns the cost, for the database's spend.
pub(super) fn spend(
    shard: &Shard,
    routes: &Arc<Routes>,
    idx: DeploymentIdx,
    now: Instant,
    usage: Usage,
    key: Option<&VirtualKey>,
) -> Option<f64> {
    let snap = &routes.snapshot;
    let deployment = snap.deployment(idx);
    let cost = response_cost(deployment, usage.prompt_tokens, usage.completion_tokens);
    if let Some(key) = key.filter(|k| k.limits.counts_usage()) {
        key.meter.record(&key.limits, usage.total_tokens, cost, unix_now());
    }
    if let (Some(budget), Some(dollars)) = (snap.settings.budget_of(deployment.provider), cost) {
        let (provider, period) = (deployment.provider, budget.time_period);
        shard.record(routes, idx, |state, _, i| {
            state.record_spend(provider, dollars, now, period);
            ((), Some(Event::Spend { idx: i, provider, dollars, at: now, period }))
        });
    }
    cost
}
