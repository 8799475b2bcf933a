//! The dry run of a request that runs under a policy: the same decision the real request gets
//! (`proxy_policy.rs`) — the `llmeu` object read as it reads it, the admission, core's
//! `policy::decide` over the same endpoints with what the state knows of them — explained:
//! every endpoint considered with the filter step and literal reason that removed it or its
//! score term by term, the chosen one, the tie-break, the failover order and the route reason;
//! or the refusal with the status the real request would get.

use pointwork_core::policy::{
    admit, decide, first_reason, AdmitRefusal, Live, PolicyDecision, PolicyEndpoint, PolicyReason, PolicyRefusal,
    PolicyRequest, ScoreTerms, Scored,
};
use pointwork_core::{RouteKind, State};
use serde_json::{json, Map, Value};

use crate::clock::unix_now;
use crate::facts::Extracted;
use crate::routers::policy::llmeu::LlmeuAsk;
use crate::routers::policy::{live, refusal_status};
use crate::routers::DryRunError;
use crate::routes::policy::{daily_limits, PolicyRoutes};
use crate::routes::Routes;

/// The policy a dry run runs under: the one named (`--policy`, `?policy=`), else
/// `pointwork.default_policy`; `None` when none applies. A name the config does not know is an
/// error naming the valid ones.
pub(crate) fn applying<'r>(
    routes: &'r Routes,
    name: Option<&str>,
) -> Result<Option<(&'r PolicyRoutes, usize)>, DryRunError> {
    let policies = routes.policy.as_ref();
    let Some(name) = name else {
        return Ok(policies.and_then(|all| Some((all, all.default?))));
    };
    let found = policies.and_then(|all| Some((all, all.policies.iter().position(|p| &*p.id == name)?)));
    found.map(Some).ok_or_else(|| {
        let valid: Vec<&str> = policies.map(|all| all.policies.iter().map(|p| &*p.id).collect()).unwrap_or_default();
        let message = match valid.is_empty() {
            true => format!("unknown policy {name:?}: the config has no policies (pointwork.policies)"),
            false => format!("unknown policy {name:?}; valid: {}", valid.join(", ")),
        };
        DryRunError { status: 400, message }
    })
}

/// The dry run of `body` under policy `p` of `policies`, against `state` now (as the real
/// request would be routed: the shared outcomes and daily spend are read at the current time).
pub(crate) fn explain(
    policies: &PolicyRoutes,
    p: usize,
    state: &State,
    route: RouteKind,
    extracted: &Extracted,
    body: &[u8],
) -> Result<Value, DryRunError> {
    let policy = &policies.policies[p];
    let facts = &extracted.facts;
    let (endpoints, auto) = policies.candidates(&facts.model);
    let needed = facts.estimated_prompt_tokens + facts.max_tokens.unwrap_or(0);
    // The body's `llmeu` object only: the dry run sees no `x-llmeu-*` headers.
    let ask = match &extracted.llmeu {
        Some(span) => LlmeuAsk::from_body(&body[span.clone()]),
        None => Ok(LlmeuAsk::default()),
    };
    let asked = ask.and_then(|ask| {
        let req = ask.policy_request((!auto).then_some(&*facts.model), facts.has_image, needed)?;
        Ok((ask, req))
    });
    let (ask, req) = asked.map_err(|message| DryRunError { status: 400, message })?;
    let mut out = Map::new();
    out.insert("model".into(), json!(facts.model));
    out.insert("endpoint".into(), json!(route.path()));
    out.insert("stream".into(), json!(facts.stream));
    out.insert("policy".into(), json!(&*policy.id));
    out.insert("residency".into(), json!(req.residency_name(policy)));
    out.insert("auto".into(), json!(auto));
    let spent = policies.meters[p].usage(&daily_limits(policy), unix_now()).spend;
    if let Err(refusal) = admit(policy, &ask.admission(spent)) {
        // Refused before any endpoint is considered.
        out.insert("candidates".into(), json!([]));
        undecided(&mut out, admission_error(&refusal));
        return Ok(Value::Object(out));
    }
    let now = unix_now();
    let live = |i: usize| live(state, policies, &endpoints[i], now);
    let decided = decide(endpoints, policy, &req, &live);
    let considered = considered(endpoints, &req);
    match &decided {
        Ok(d) => {
            let rows = considered.map(|i| candidate(&endpoints[i], &live(i), Verdict::of(d, i)));
            out.insert("candidates".into(), rows.collect());
            out.insert("chosen".into(), json!(&*endpoints[d.chosen()].id));
            out.insert("tie_break".into(), json!(d.tie_break.as_str()));
            let order: Vec<&str> = d.failover_order().map(|i| &*endpoints[i].id).collect();
            out.insert("failover_order".into(), json!(order));
            out.insert("route_reason".into(), json!(d.route_reason(endpoints, policy, &req)));
            out.insert("error".into(), Value::Null);
        }
        Err(refusal) => {
            // Nothing survived, or the named model was refused before the filter: each
            // endpoint's first failing step, as the filter reads it.
            let rows = considered.map(|i| {
                let now = live(i);
                let e = &endpoints[i];
                let reason = first_reason(e, now.status.unwrap_or(&e.status), policy, &req);
                candidate(e, &now, reason.map_or(Verdict::Unfiltered, Verdict::Removed))
            });
            out.insert("candidates".into(), rows.collect());
            undecided(&mut out, refusal_error(refusal));
        }
    }
    Ok(Value::Object(out))
}

/// The endpoints a request competes among: the auto model's pool, or a named model's rows.
fn considered<'e>(endpoints: &'e [PolicyEndpoint], req: &'e PolicyRequest) -> impl Iterator<Item = usize> + 'e {
    let named = req.model.as_deref();
    (0..endpoints.len()).filter(move |&i| named.is_none_or(|m| &*endpoints[i].model == m))
}

fn undecided(out: &mut Map<String, Value>, error: Value) {
    for field in ["chosen", "tie_break", "route_reason"] {
        out.insert(field.into(), Value::Null);
    }
    out.insert("failover_order".into(), json!([]));
    out.insert("error".into(), error);
}

/// What became of one endpoint.
enum Verdict<'d, 'a> {
    Removed(PolicyReason<'a>),
    /// Survived the filter: its place in the scored order (0: chosen) and its score.
    Ranked(usize, &'d Scored),
    /// Passed every step, yet the decision was refused (cannot happen today).
    Unfiltered,
}

impl<'d, 'a> Verdict<'d, 'a> {
    fn of(d: &'d PolicyDecision<'a>, i: usize) -> Verdict<'d, 'a> {
        if let Some((_, reason)) = d.rejected.iter().find(|(r, _)| *r == i) {
            return Verdict::Removed(*reason);
        }
        match d.ranked.iter().position(|s| s.endpoint == i) {
            Some(rank) => Verdict::Ranked(rank, &d.ranked[rank]),
            None => Verdict::Unfiltered,
        }
    }
}

/// One endpoint: who and where it is, then what removed it or how it scored.
fn candidate(e: &PolicyEndpoint, now: &Live, verdict: Verdict) -> Value {
    let (status, removed, scored) = match verdict {
        Verdict::Removed(reason) => ("removed", Some(reason), None),
        Verdict::Ranked(0, s) => ("chosen", None, Some(s)),
        Verdict::Ranked(_, s) => ("survivor", None, Some(s)),
        Verdict::Unfiltered => ("survivor", None, None),
    };
    json!({
        "id": &*e.id,
        "model": &*e.model,
        "provider": &*e.provider,
        "region": &*e.region,
        "sovereignty_class": e.class.as_str(),
        "partner": e.partner,
        "endpoint_status": now.status.unwrap_or(&e.status),
        "status": status,
        "removed_by": removed.map(|r| r.to_string()),
        "step": removed.map(|r| r.step()),
        "score": scored.map(|s| s.score),
        "terms": scored.map(|s| terms(&s.terms)),
        "usd_per_1m": scored.map(|s| s.usd_per_1m),
        "latency_ms": scored.map(|s| s.latency_ms),
    })
}

/// The score's terms as weighted: `score` = the first four − the last three.
fn terms(t: &ScoreTerms) -> Value {
    json!({
        "task_fit": t.task_fit,
        "language_fit": t.language_fit,
        "docs_completeness": t.docs_completeness,
        "sovereignty_bonus": t.sovereignty_bonus,
        "price": t.price,
        "latency": t.latency,
        "error_rate": t.error_rate,
    })
}

fn admission_error(refusal: &AdmitRefusal) -> Value {
    json!({"status": 400, "code": refusal.code(), "message": refusal.to_string()})
}

/// The refusal and the status the real request gets.
fn refusal_error(refusal: &PolicyRefusal) -> Value {
    json!({"status": refusal_status(refusal), "code": refusal.code(), "message": refusal.to_string()})
}
