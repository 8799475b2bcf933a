//! The dry run of a request for a model the OpenRouter best-value walk manages: the walk's
//! decision (or refusal) with its reason word, the telemetry it stands on (winner, challenger
//! and streak, age, staleness), every candidate with what the shards know of it now, the
//! providers the hard filters dropped and why, the frontier, and the walk's order over the
//! providers usable now.

use std::time::Instant;

use pointwork_core::pareto::{ranked_order, ParetoTelemetry, RegionVerdict};
use pointwork_core::{DeploymentIdx, State};
use serde_json::{json, Value};

use crate::routers::pareto::steer::decide;
use crate::routes::Routes;

/// The walk's part of the dry run, and the deployments it narrows away (pinned mode), or
/// `None` when no rule manages `target`.
pub(crate) fn explain(
    routes: &Routes,
    state: &State,
    telemetry: &ParetoTelemetry,
    body: &[u8],
    target: &str,
    now: Instant,
) -> Option<(Value, Vec<DeploymentIdx>)> {
    let decided = decide(routes, state, telemetry, body, target, &[], now)?;
    let (key, rule, decision, excluded) = match decided {
        Ok(s) => {
            let region = s.region.map(RegionVerdict::as_str);
            let decision = json!({"reason": s.reason.as_str(), "slug": s.slug, "region": region, "refused": null});
            (s.key, s.rule, decision, s.excluded)
        }
        Err(r) => {
            let refused = json!({"status": r.status(), "message": r.message()});
            (
                r.key,
                r.rule,
                json!({"reason": r.reason.as_str(), "slug": null, "region": null, "refused": refused}),
                Vec::new(),
            )
        }
    };
    let providers = state.providers();
    let unix = crate::clock::unix_seconds();
    let settings = &routes.pareto.as_ref()?.settings;
    let allow = telemetry.fresh_allow_list(unix, settings.cooldown.allowlist_ttl_s);
    let known = telemetry.model(key, rule.fingerprint());
    let mut out = json!({
        "model": key,
        "mode": if rule.wildcard { "wildcard" } else { "pinned" },
        "fingerprint": format!("{:016x}", rule.fingerprint()),
        "decision": decision,
        "allow_list": allow.map(|a| &a.providers),
        "telemetry": null,
    });
    if let Some(m) = known {
        let sel = &m.verdict.selection;
        let unusable = |slug: &str| providers.is_hot(key, slug, now) || allow.is_some_and(|a| !a.allows(slug));
        let candidates: Vec<Value> = sel
            .candidates
            .iter()
            .map(|c| {
                json!({
                    "slug": c.slug,
                    "input_price_per_m": c.input_price_m,
                    "output_price_per_m": c.output_price_m,
                    "p50_throughput": c.tps,
                    "requests": c.requests,
                    "context_length": c.context,
                    "uptime_last_5m": c.uptime,
                    "hot": providers.is_hot(key, &c.slug, now),
                    "input_capped": providers.is_input_capped(key, &c.slug, now),
                    "disallowed": allow.is_some_and(|a| !a.allows(&c.slug)),
                })
            })
            .collect();
        let dropped: Vec<Value> =
            sel.dropped.iter().map(|(slug, why)| json!({"slug": slug, "reason": why.as_str()})).collect();
        out["telemetry"] = json!({
            "polled_at": m.polled_at,
            "age_s": unix - m.polled_at,
            "stale": m.stale,
            "winner": m.verdict.winner,
            "challenger": m.verdict.challenger,
            "streak": m.verdict.streak,
            "poll_winner": sel.winner,
            "frontier": sel.frontier,
            "safe_set": sel.safe_set,
            "candidates": candidates,
            "dropped": dropped,
            "walk": ranked_order(&sel.points, rule.value_regression_tolerance, &unusable),
        });
    }
    Some((out, excluded))
}
