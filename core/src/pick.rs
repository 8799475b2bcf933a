//! The pick: resolve the requested name to candidates, run the filter chain, let the strategy
//! choose among the survivors (see `shared/spec/000_*`).

use std::time::{Duration, Instant};

use crate::filter::{CandidateScratch, Candidates, CooldownFilter, Filter, RetrySkipFilter};
use crate::{strategy, Cause, Decision, DeploymentIdx, GroupIdx, Rng, RouteError, Snapshot, State};

/// What one attempt asks of the pick.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PickRequest<'a> {
    /// The requested name: a model group, else a deployment id.
    pub model: &'a str,
    /// Deployments that already failed for this request ([`crate::AttemptPlan::failed`]).
    pub failed: &'a [DeploymentIdx],
}

/// Room for the candidate bitsets and the strategy's block sums, kept by the caller (one per
/// shard) so that a pick allocates nothing once the scratch has grown to the largest group
/// (a few bits per member), except the decision's list of rejected candidates when there is one.
#[derive(Clone, Debug, Default)]
pub struct PickScratch {
    candidates: CandidateScratch,
    block_sums: Vec<u64>,
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
    if let Some(group) = snap.group_by_name(req.model) {
        return pick_in_group(snap, state, req, group, now, rng, scratch);
    }
    if let Some(deployment) = snap.deployment_by_id(req.model) {
        // A deployment id names the one deployment to use: it serves even while cooling down,
        // and there is nothing for the filters or the strategy to choose.
        return Ok(Decision {
            deployment,
            group: snap.group_of(deployment),
            cause: Cause::DeploymentId,
            candidates: 1,
            rejected: Vec::new(),
        });
    }
    Err(RouteError::UnknownModel { model: req.model.to_string() })
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
    let chain: [&dyn Filter; 2] = [&CooldownFilter { state, now }, &RetrySkipFilter { snap, failed: req.failed }];
    for filter in chain {
        filter.apply(&mut candidates);
    }
    let chosen = strategy::choose(snap.settings.routing_strategy, snap, &candidates, rng, &mut scratch.block_sums);
    let Some(deployment) = chosen else {
        return Err(no_deployments(snap, state, req.model, group, now));
    };
    Ok(Decision {
        deployment,
        group,
        cause: if req.failed.is_empty() { Cause::Fresh } else { Cause::Retry },
        candidates: u32::try_from(candidates.members().len()).unwrap_or(u32::MAX),
        rejected: candidates.rejected(),
    })
}

/// The error for a group the filters emptied: which members cool down, and when the first
/// of them is back.
fn no_deployments(snap: &Snapshot, state: &State, model: &str, group: GroupIdx, now: Instant) -> RouteError {
    let mut cooldown_ids = Vec::new();
    let mut soonest: Option<Duration> = None;
    for &idx in &snap.group(group).members {
        if let Some(remaining) = state.cooldown_remaining(idx, now) {
            cooldown_ids.push(snap.deployment(idx).id.clone());
            soonest = Some(soonest.map_or(remaining, |s| s.min(remaining)));
        }
    }
    RouteError::NoDeployments {
        model: model.to_string(),
        cooldown_ids,
        retry_after_secs: soonest.map_or(0, whole_seconds_rounded_up),
        pre_call_checks: snap.settings.enable_pre_call_checks,
    }
}

/// At least 1: a live cooldown has time left, and "Try again in 0 seconds" would be wrong.
fn whole_seconds_rounded_up(d: Duration) -> u64 {
    let secs = d.as_secs() + u64::from(d.subsec_nanos() > 0);
    secs.max(1)
}

#[cfg(test)]
#[path = "pick_tests.rs"]
mod tests;
