//! The policy decision: filter, score, rank — or refuse, saying why.

use std::cmp::Ordering;
use std::fmt;

use crate::policy::{
    first_reason, score, EndpointKind, Live, Modality, Policy, PolicyEndpoint, PolicyReason, PolicyRequest, Scored,
};

/// Attempts a policy-routed request gets in all: the chosen endpoint, then the next in the
/// scored order, never outside the filtered set.
pub const MAX_ATTEMPTS: usize = 3;

/// What decided between the winner and the runner-up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TieBreak {
    /// One survivor: nothing to decide.
    Alone,
    Score,
    /// Equal scores; the lower price.
    Price,
    /// Equal scores and prices; the lower latency.
    Latency,
    /// Equal in everything; the stable id.
    Id,
}

impl TieBreak {
    pub fn as_str(self) -> &'static str {
        match self {
            TieBreak::Alone => "alone",
            TieBreak::Score => "score",
            TieBreak::Price => "price",
            TieBreak::Latency => "latency",
            TieBreak::Id => "id",
        }
    }
}

/// A request routed under a policy.
#[derive(Clone, Debug, PartialEq)]
pub struct PolicyDecision<'a> {
    /// The survivors, best first.
    pub ranked: Vec<Scored>,
    /// Every endpoint the filter removed (index into the endpoints), with its first reason.
    pub rejected: Vec<(usize, PolicyReason<'a>)>,
    pub tie_break: TieBreak,
}

impl PolicyDecision<'_> {
    /// The index of the endpoint that serves.
    pub fn chosen(&self) -> usize {
        self.ranked[0].endpoint
    }

    /// The endpoints to try, in order: the chosen one, then its scored alternatives.
    pub fn failover_order(&self) -> impl Iterator<Item = usize> + '_ {
        self.ranked.iter().take(MAX_ATTEMPTS).map(|s| s.endpoint)
    }

    /// The one sentence that says why, e.g. `auto routing for task "coding" + residency
    /// eu-hosted + qwen3-coder-30b @ de-ber (EU-owned, EU-operated); 4 endpoint(s) excluded;
    /// partner endpoints not allowed.`
    pub fn route_reason(&self, endpoints: &[PolicyEndpoint], policy: &Policy, req: &PolicyRequest) -> String {
        let e = &endpoints[self.chosen()];
        let how = if req.model.is_some() { "pinned" } else { "auto" };
        let partners = if req.partners_allowed(policy) { "allowed" } else { "not allowed" };
        format!(
            "{how} routing for task \"{}\" + residency {} + {} @ {} ({}); {} endpoint(s) excluded; partner endpoints {partners}.",
            req.task.as_deref().unwrap_or(DEFAULT_TASK),
            req.residency_name(policy),
            e.model,
            e.region,
            e.class.description(),
            self.rejected.len()
        )
    }
}

/// The task a request that names none is routed for.
pub const DEFAULT_TASK: &str = "general";

/// Why a request cannot be routed under its policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PolicyRefusal {
    /// The filter left nothing (409 `no_endpoint_for_policy`).
    NoEndpoint { residency: Box<str>, model: Option<Box<str>> },
    /// A named model that does not exist.
    ModelNotFound(Box<str>),
    /// A named model with catalogue rows only.
    HostedUnavailable(Box<str>),
    /// A named model the policy excludes, or whose providers it excludes.
    ModelDenied(Box<str>),
    /// A named model that cannot generate text.
    NotATextModel(Box<str>),
}

impl PolicyRefusal {
    /// The error code clients see.
    pub fn code(&self) -> &'static str {
        match self {
            PolicyRefusal::NoEndpoint { .. } => "no_endpoint_for_policy",
            PolicyRefusal::ModelNotFound(_) => "model_not_found",
            PolicyRefusal::HostedUnavailable(_) => "hosted_unavailable",
            PolicyRefusal::ModelDenied(_) => "model_denied",
            PolicyRefusal::NotATextModel(_) => "not_a_text_model",
        }
    }

    /// The model the request named, if it named one.
    pub fn model(&self) -> Option<&str> {
        match self {
            PolicyRefusal::NoEndpoint { model, .. } => model.as_deref(),
            PolicyRefusal::ModelNotFound(m)
            | PolicyRefusal::HostedUnavailable(m)
            | PolicyRefusal::ModelDenied(m)
            | PolicyRefusal::NotATextModel(m) => Some(m),
        }
    }
}

impl fmt::Display for PolicyRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PolicyRefusal::NoEndpoint { residency, model: None } => {
                write!(f, "No endpoint satisfies residency {residency}. Residency is never relaxed silently.")
            }
            PolicyRefusal::NoEndpoint { residency, model: Some(model) } => write!(
                f,
                "No endpoint satisfies residency {residency} for model {model}. Residency is never relaxed silently."
            ),
            PolicyRefusal::ModelNotFound(m) => write!(f, "Model {m} does not exist."),
            PolicyRefusal::HostedUnavailable(m) => {
                write!(f, "Model {m} is in the catalogue only: no endpoint hosts it.")
            }
            PolicyRefusal::ModelDenied(m) => {
                write!(f, "Model {m} is excluded by the policy (the model or its provider).")
            }
            PolicyRefusal::NotATextModel(m) => write!(f, "Model {m} cannot generate text."),
        }
    }
}

/// Routes `req` under `policy` over `endpoints`; `live` says what the shards know of each.
pub fn decide<'a, 'l: 'a>(
    endpoints: &'a [PolicyEndpoint],
    policy: &Policy,
    req: &PolicyRequest,
    live: &dyn Fn(usize) -> Live<'l>,
) -> Result<PolicyDecision<'a>, PolicyRefusal> {
    let named = req.model.as_deref();
    let candidates = || (0..endpoints.len()).filter(move |&i| named.is_none_or(|m| &*endpoints[i].model == m));
    if let Some(model) = named {
        refuse_named_model(endpoints, policy, model, candidates())?;
    }
    let mut survivors = Vec::with_capacity(endpoints.len());
    let mut rejected = Vec::new();
    for i in candidates() {
        let now = live(i);
        let e = &endpoints[i];
        match first_reason(e, now.status.unwrap_or(&e.status), policy, req) {
            Some(reason) => rejected.push((i, reason)),
            None => survivors.push((i, now)),
        }
    }
    if survivors.is_empty() {
        let residency = req.residency_name(policy).into();
        return Err(PolicyRefusal::NoEndpoint { residency, model: named.map(Into::into) });
    }
    let mut ranked = score(endpoints, &survivors, req);
    ranked.sort_by(|a, b| rank(endpoints, a, b));
    let tie_break = match &ranked[..] {
        [_] => TieBreak::Alone,
        [a, b, ..] => tie_break(endpoints, a, b),
        [] => unreachable!("survivors is not empty"),
    };
    Ok(PolicyDecision { ranked, rejected, tie_break })
}

/// A named model is pinned: when none of its endpoints could ever serve, say which way.
fn refuse_named_model(
    endpoints: &[PolicyEndpoint],
    policy: &Policy,
    model: &str,
    candidates: impl Iterator<Item = usize> + Clone,
) -> Result<(), PolicyRefusal> {
    let mut rows = candidates.map(|i| &endpoints[i]).peekable();
    if rows.peek().is_none() {
        return Err(PolicyRefusal::ModelNotFound(model.into()));
    }
    let rows: Vec<&PolicyEndpoint> = rows.collect();
    if rows.iter().all(|e| e.kind == EndpointKind::CatalogueOnly) {
        return Err(PolicyRefusal::HostedUnavailable(model.into()));
    }
    let excluded = |e: &&PolicyEndpoint| {
        policy.model_denied(&e.model)
            || policy.model_not_allowed(&e.model)
            || policy.provider_denied(&e.provider)
            || policy.provider_not_allowed(&e.provider)
    };
    if rows.iter().all(excluded) {
        return Err(PolicyRefusal::ModelDenied(model.into()));
    }
    if rows.iter().all(|e| !e.modalities.contains(Modality::Text)) {
        return Err(PolicyRefusal::NotATextModel(model.into()));
    }
    Ok(())
}

/// Best first: the higher score, then the lower price, the lower latency, the smaller id.
fn rank(endpoints: &[PolicyEndpoint], a: &Scored, b: &Scored) -> Ordering {
    b.score
        .total_cmp(&a.score)
        .then(a.usd_per_1m.total_cmp(&b.usd_per_1m))
        .then(a.latency_ms.total_cmp(&b.latency_ms))
        .then_with(|| endpoints[a.endpoint].id.cmp(&endpoints[b.endpoint].id))
}

fn tie_break(endpoints: &[PolicyEndpoint], a: &Scored, b: &Scored) -> TieBreak {
    if a.score != b.score {
        TieBreak::Score
    } else if a.usd_per_1m != b.usd_per_1m {
        TieBreak::Price
    } else if a.latency_ms != b.latency_ms {
        TieBreak::Latency
    } else {
        debug_assert!(endpoints[a.endpoint].id <= endpoints[b.endpoint].id);
        TieBreak::Id
    }
}
