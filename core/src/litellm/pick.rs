//! The pick: resolve the requested name to candidates, run the filter chain, let the strategy
//! choose among the survivors (see `docs/routing.md`: the filter chain, the strategies).

use std::time::{Duration, Instant};

use crate::litellm::candidates::{CandidateScratch, Candidates, Filter};
use crate::litellm::filters::{
    AffinityFilter, BlockedFilter, ContextWindowFilter, CooldownFilter, ExcludedFilter, HealthFilter, OrderFilter,
    PassThroughFilter, ProviderBudgetFilter, RegionFilter, RetrySkipFilter, RouteCapabilityFilter, TagFilter,
    UnsupportedParamsFilter, UsageLimitFilter, VisionFilter,
};
use crate::litellm::strategy;
use crate::resolve::Resolution;
use crate::{
    Basis, Cause, Decision, DeploymentIdx, Emptied, GroupIdx, RejectReason, RequestFacts, Rng, RouteError,
    RoutingStrategy, Snapshot, State,
};

/// What one attempt asks of the pick.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PickRequest<'a> {
    /// The requested name: a model group, else a deployment id. (A fallback asks for another
    /// group than `facts.model`.)
    pub model: &'a str,
    /// Deployments that already failed for this request ([`crate::Walk::failed`]).
    pub failed: &'a [DeploymentIdx],
    /// Deployments this attempt must never use (weighted failover); not fail-open.
    pub excluded: &'a [DeploymentIdx],
    /// The order an order fallback targets; `None` = the lowest order among the survivors.
    pub order: Option<u32>,
    /// Whether the response streams: latency-based routing then compares times to first token.
    pub stream: bool,
    /// The gateway's estimate of the request's input tokens: usage-based routing checks it
    /// against each deployment's `tpm`.
    pub input_tokens: u64,
    /// What the filters read from the request: route, prompt estimate, params, tags, image.
    pub facts: &'a RequestFacts,
}

impl<'a> PickRequest<'a> {
    /// A first attempt at `model` for a request with these facts: nothing failed or excluded,
    /// no order targeted; `stream` and `input_tokens` from the facts.
    pub fn new(model: &'a str, facts: &'a RequestFacts) -> PickRequest<'a> {
        PickRequest {
            model,
            failed: &[],
            excluded: &[],
            order: None,
            stream: facts.stream,
            input_tokens: facts.estimated_prompt_tokens,
            facts,
        }
    }
}

/// Room for the candidate bitsets and the strategy's block sums, kept by the caller (one per
/// shard) so that a pick allocates nothing once the scratch has grown to the largest group
/// (a few bits per member), except the decision's list of rejected candidates when there is one.
#[derive(Clone, Debug, Default)]
pub struct PickScratch {
    candidates: CandidateScratch,
    block_sums: Vec<u64>,
    tag_words: Vec<u64>,
}

impl PickScratch {
    pub fn new() -> PickScratch {
        PickScratch::default()
    }
}

/// [`pick_with_scratch`] with a fresh scratch: one allocation per pick. Tests and the dry-run
/// endpoint use it; the hot path keeps a [`PickScratch`].
pub fn pick(
    snap: &Snapshot,
    state: &State,
    req: &PickRequest<'_>,
    now: Instant,
    rng: &mut Rng,
) -> Result<Decision, RouteError> {
    pick_with_scratch(snap, state, req, now, rng, &mut PickScratch::new())
}

/// Picks the deployment for one attempt. Same snapshot, state, request, `now` and rng state give
/// the same decision.
pub fn pick_with_scratch(
    snap: &Snapshot,
    state: &State,
    req: &PickRequest<'_>,
    now: Instant,
    rng: &mut Rng,
    scratch: &mut PickScratch,
) -> Result<Decision, RouteError> {
    match snap.resolve(req.model) {
        Resolution::Group { group, wildcard } => {
            let mut decision = pick_in_group(snap, state, req, group, now, rng, scratch)?;
            decision.wildcard = wildcard;
            Ok(decision)
        }
        // A deployment id names the one deployment to use: it serves even while cooling down,
        // and there is nothing for the filters or the strategy to choose.
        Resolution::Deployment(deployment) => Ok(Decision {
            deployment,
            group: snap.group_of(deployment),
            cause: Cause::DeploymentId,
            candidates: 1,
            rejected: Vec::new(),
            basis: Basis::None,
            wildcard: None,
        }),
        Resolution::Unknown => Err(RouteError::UnknownModel { model: req.model.to_string() }),
    }
}

fn pick_in_group(
    snap: &Snapshot,
    state: &State,
    req: &PickRequest<'_>,
    group: GroupIdx,
    now: Instant,
    rng: &mut Rng,
    scratch: &mut PickScratch,
) -> Result<Decision, RouteError> {
    let mut candidates = Candidates::new(snap, group, &mut scratch.candidates);
    let settings = &snap.settings;
    let facts = req.facts;
    // The chain, in its contract's order (`docs/routing.md`, the filter chain). Each filter returns at once
    // when its feature is off or the request asks nothing of it.
    PassThroughFilter { snap, requested: req.model }.apply(&mut candidates);
    RouteCapabilityFilter { snap, route: facts.route }.apply(&mut candidates);
    // Health before cooldowns: a deployment known to be down is reported as unhealthy rather
    // than as cooling down.
    if settings.enable_health_check_routing {
        HealthFilter { state, now, staleness: settings.health_check_staleness_threshold }.apply(&mut candidates);
    }
    let fail_open = settings.enable_health_check_routing && settings.allowed_fails_policy.is_some();
    CooldownFilter { state, now, fail_open }.apply(&mut candidates);
    BlockedFilter { snap }.apply(&mut candidates);
    // Callback filters: the provider budget limiter, then affinity (a conversation stays on its
    // pinned deployment).
    if !settings.provider_budgets.is_empty() {
        ProviderBudgetFilter { snap, state, now }.apply(&mut candidates);
    }
    let pins = snap.pin_keys(group, facts.affinity);
    if pins.iter().any(Option::is_some) {
        AffinityFilter { state, now, keys: pins }.apply(&mut candidates);
    }
    if settings.enable_pre_call_checks {
        ContextWindowFilter { snap, facts }.apply(&mut candidates);
        RegionFilter { snap, facts }.apply(&mut candidates);
        UnsupportedParamsFilter { snap, facts }.apply(&mut candidates);
    }
    if settings.enable_tag_filtering {
        let tags = TagFilter { snap, tags: &facts.tags, match_any: settings.tag_filtering_match_any };
        tags.apply(&mut candidates, &mut scratch.tag_words);
    }
    VisionFilter { snap, has_image: facts.has_image }.apply(&mut candidates);
    OrderFilter { snap, target: req.order }.apply(&mut candidates);
    ExcludedFilter { snap, excluded: req.excluded }.apply(&mut candidates);
    RetrySkipFilter { snap, failed: req.failed }.apply(&mut candidates);
    if settings.routing_strategy == RoutingStrategy::UsageBasedV2 {
        UsageLimitFilter { snap, state, now, input_tokens: req.input_tokens }.apply(&mut candidates);
    }
    let chosen = strategy::choose(snap, state, req.stream, now, &candidates, rng, &mut scratch.block_sums);
    let Some((deployment, basis)) = chosen else {
        return Err(no_deployments(snap, state, req, &candidates, now));
    };
    Ok(Decision {
        deployment,
        group,
        cause: if req.failed.is_empty() { Cause::Fresh } else { Cause::Retry },
        candidates: u32::try_from(candidates.members().len()).unwrap_or(u32::MAX),
        rejected: candidates.rejected(),
        basis,
        wildcard: None,
    })
}

/// The error for a group the filters emptied: which members cool down, which are at their
/// usage limit this minute, and when the first of them is back. Cold: kept out of the pick's
/// hot code.
#[cold]
#[inline(never)]
fn no_deployments(
    snap: &Snapshot,
    state: &State,
    req: &PickRequest<'_>,
    candidates: &Candidates<'_>,
    now: Instant,
) -> RouteError {
    let mut cooldown_ids = Vec::new();
    let mut soonest: Option<Duration> = None;
    for &idx in candidates.members() {
        if let Some(remaining) = state.cooldown_remaining(idx, now) {
            cooldown_ids.push(snap.deployment(idx).id.clone());
            soonest = Some(soonest.map_or(remaining, |s| s.min(remaining)));
        }
    }
    let over_limit: Vec<(String, RejectReason)> = candidates
        .rejected()
        .into_iter()
        .filter(|(_, r)| r.is_usage_limit())
        .map(|(idx, r)| (snap.deployment(idx).id.clone(), r))
        .collect();
    if !over_limit.is_empty() {
        let next_minute = state.minutes.until_next_minute(now);
        soonest = Some(soonest.map_or(next_minute, |s| s.min(next_minute)));
    }
    RouteError::NoDeployments {
        model: req.model.to_string(),
        cooldown_ids,
        retry_after_secs: soonest.map_or(0, whole_seconds_rounded_up),
        pre_call_checks: snap.settings.enable_pre_call_checks,
        over_limit,
        emptied_by: emptied_by(snap, req, candidates),
    }
}

/// What to say about the filter that removed the last candidates; cooldowns and usage limits
/// say it in the error's own lists.
fn emptied_by(snap: &Snapshot, req: &PickRequest<'_>, candidates: &Candidates<'_>) -> Option<Emptied> {
    let facts = req.facts;
    let sets = &snap.sets().groups[candidates.group().get()];
    let reason = candidates.last_reason()?;
    Some(match reason {
        RejectReason::Blocked if sets.all_blocked => Emptied::AllBlocked,
        RejectReason::ContextWindow => Emptied::ContextWindow {
            estimated_tokens: facts.estimated_prompt_tokens,
            max_tokens: facts.max_tokens,
            largest_window: sets.largest_window,
        },
        RejectReason::Region => {
            Emptied::Region { allowed_model_region: facts.allowed_model_region.clone().unwrap_or_default() }
        }
        RejectReason::UnsupportedParams => {
            // The requested parameters some removed candidate declared it does not take.
            let mut declined = crate::RequestParams::NONE;
            for (idx, r) in candidates.rejected() {
                if r == RejectReason::UnsupportedParams {
                    declined = crate::RequestParams(declined.0 | snap.deployment(idx).unsupported_params.0);
                }
            }
            Emptied::UnsupportedParams {
                params: facts.params.and(declined).iter().map(|p| p.request_field()).collect(),
            }
        }
        r if r.is_tag() => Emptied::Tags { tags: facts.tags.clone() },
        RejectReason::OtherProvider => {
            Emptied::PassThrough { provider: snap.settings.model_providers.provider_of(req.model) }
        }
        RejectReason::CoolingDown | RejectReason::TpmLimit | RejectReason::RpmLimit => return None,
        r => Emptied::Filter(r),
    })
}

/// At least 1: a live cooldown has time left, and "Try again in 0 seconds" would be wrong.
fn whole_seconds_rounded_up(d: Duration) -> u64 {
    let secs = d.as_secs() + u64::from(d.subsec_nanos() > 0);
    secs.max(1)
}

#[cfg(test)]
#[path = "pick_tests.rs"]
mod tests;
