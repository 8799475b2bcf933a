//! The complexity router's part of the dry run: the ask's classification (keyword rule or
//! heuristic; an LLM classifier is not called by a dry run, the heuristic it would fall back to
//! is shown), the tier's pool with whether each group can serve this request, and the group the
//! tier pick and the health gate leave, which the rest of the dry run then explains. Session
//! pins are neither read nor set.

use std::time::Instant;

use pointwork_core::complexity::{Gate, Signal};
use pointwork_core::{PickScratch, RequestFacts, Rng, RouteKind, State};
use serde_json::{json, Value};

use crate::routers::complexity::{ask, heuristic};
use crate::routes::Routes;

/// The router's explanation and the group it leaves, when `facts.model` names a router.
pub(crate) fn explain(
    routes: &Routes,
    state: &State,
    route: RouteKind,
    body: &[u8],
    facts: &RequestFacts,
    now: Instant,
    seed: u64,
) -> Option<(Value, String)> {
    let router = routes.complexity.as_ref()?.router(&facts.model)?;
    let snap = &routes.snapshot;
    let ask = ask::read(route, body);
    let (verdict, keyword, _) = heuristic(router, &ask.text, None);
    let gate = Gate { snap, state, facts, now };
    let mut scratch = PickScratch::new();
    let routed = router.place(&gate, verdict, false, &mut Rng::new(seed), &mut scratch);
    let pool: Vec<Value> = verdict
        .tier
        .map(|t| router.pool(t))
        .unwrap_or_default()
        .iter()
        .map(|&g| json!({"group": snap.group(g).name, "can_serve": gate.can_serve(g, &mut scratch)}))
        .collect();
    let group = snap.group(routed.group).name.clone();
    let signals: Vec<&str> = routed.signals.iter().map(Signal::as_str).collect();
    let explained = json!({
        "router": router.name(),
        "classifier": if router.config.llm.is_some() { "llm (not called in a dry run: the heuristic shown)" } else { "heuristic" },
        "tier": routed.tier.map(|t| t.as_str()),
        "cause": routed.cause.as_str(),
        "decided_by": routed.decided_by.map(|c| c.as_str()),
        "score": routed.score,
        "signals": signals,
        "matched_keyword": keyword,
        "tier_selection": router.config.selection.as_str(),
        "pool": pool,
        "routed_model": group,
        "displaced": routed.displaced.map(|g| snap.group(g).name.as_str()),
    });
    Some((explained, group))
}
