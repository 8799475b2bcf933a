//! The fallback walk of one request: after each failed attempt, retry in the same group, move to
//! the group's next `order` tier (an order fallback), fall back to another model group, or stop.
//!
//! LiteLLM's shape: a group gets `1 + retries` attempts (retries per error class from the
//! retry policy, else `num_retries`); then its fallbacks are tried in order, each with its own
//! retries and, depth first, its own fallbacks, up to `max_fallbacks` hops. "No deployments
//! available" counts as a rate limit. Two additions: a group already tried for this request is
//! not tried again (a cycle `a → b → a` would only repeat failures), and `order` tiers: the
//! deployments of `order: 2` serve only once every deployment of `order: 1` failed for the
//! request or the tier's retries ran out, whether or not those failures started cooldowns.
//!
//! A retry or fallback only happens while nothing reached the client; the gateway does not
//! consult the walk once response bytes went out.

use std::borrow::Cow;
use std::time::Instant;

use crate::fallback::{ErrorClass, Fallbacks, RetryPolicy};
use crate::{DeploymentIdx, Failure, Resolution, Snapshot, State};

/// What to do after a failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Pick again in the same group and tier (skipping the deployments that failed).
    Retry,
    /// Pick again in the same group, among the deployments of this `order`.
    NextOrder(u32),
    /// Pick in this model group (a fallback), from its lowest tier.
    Fallback(String),
    /// Give up: answer with the last failure.
    Stop,
}

pub struct Walk<'r> {
    rules: &'r Fallbacks,
    policy: &'r RetryPolicy,
    num_retries: u32,
    /// The requested name.
    requested: &'r str,
    /// The model name the next pick resolves (borrowed until a fallback: a request that is
    /// served at once allocates nothing here), and the tier it targets (`None`: the lowest).
    target: Cow<'r, str>,
    order: Option<u32>,
    /// Fallback hops from the requested name to `target`.
    depth: u32,
    retries_used: u32,
    /// Deployments that failed for this request, in order of first failure.
    failed: Vec<DeploymentIdx>,
    /// Fallback groups still to try, the next one last, with their depth.
    pending: Vec<(String, u32)>,
    /// Fallback groups already tried (the requested name is tried too).
    tried: Vec<String>,
    attempts: u32,
    fallbacks: u32,
}

impl<'r> Walk<'r> {
    pub fn new(model: &'r str, rules: &'r Fallbacks, policy: &'r RetryPolicy, num_retries: u32) -> Walk<'r> {
        Walk {
            rules,
            policy,
            num_retries,
            requested: model,
            target: Cow::Borrowed(model),
            order: None,
            depth: 0,
            retries_used: 0,
            failed: Vec::new(),
            pending: Vec::new(),
            tried: Vec::new(),
            attempts: 0,
            fallbacks: 0,
        }
    }

    /// The name the next pick resolves.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// The `order` tier the next pick targets; `None` = the lowest.
    pub fn order(&self) -> Option<u32> {
        self.order
    }

    pub fn failed(&self) -> &[DeploymentIdx] {
        &self.failed
    }

    /// Attempts that reached a deployment and failed.
    pub fn failed_attempts(&self) -> u32 {
        self.attempts
    }

    /// Order and group fallbacks taken.
    pub fn fallbacks_taken(&self) -> u32 {
        self.fallbacks
    }

    /// After a failure in the current target: `failed` is the deployment and how it failed, or
    /// `None` when the pick found nothing to try ("no deployments available", a rate limit).
    pub fn after_failure(
        &mut self,
        snap: &Snapshot,
        state: &State,
        failed: Option<(DeploymentIdx, Failure)>,
        class: ErrorClass,
        now: Instant,
    ) -> Step {
        // The tier that failed is the failed deployment's own: its failure may just have put it
        // (and its whole tier) in cooldown, and the tier read from cooldowns would then be the
        // next one. Only when nothing was picked does the walk's target say which tier it was.
        let order = failed.and_then(|(idx, _)| snap.deployment(idx).order).or(self.order);
        let tiers = Tiers::of(snap, state, &self.target, order, now);
        let retryable = match failed {
            Some((idx, failure)) => {
                self.attempts = self.attempts.saturating_add(1);
                if !self.failed.contains(&idx) {
                    self.failed.push(idx);
                }
                let another = tiers.untried_in_current(&self.failed) > 0;
                failure.is_retryable() || (failure == Failure::Status(401) && another)
            }
            // Nothing to pick from: retrying the same pick cannot help, a lower tier or a
            // fallback may.
            None => false,
        };
        let budget = self.policy.retries_for(class, self.num_retries);
        let stays_in_tier = tiers.untried_in_current(&self.failed) > 0 || tiers.next.is_none();
        if retryable && self.retries_used < budget && stays_in_tier {
            self.retries_used += 1;
            return Step::Retry;
        }
        if let Some(next) = tiers.next.filter(|_| retryable || failed.is_none()) {
            self.order = Some(next);
            self.retries_used = 0;
            self.fallbacks += 1;
            return Step::NextOrder(next);
        }
        self.fall_back(class)
    }

    fn fall_back(&mut self, class: ErrorClass) -> Step {
        if self.depth < self.rules.max_fallbacks {
            let next_depth = self.depth + 1;
            for group in self.rules.for_failure(&self.target, class).iter().rev() {
                self.pending.push((group.clone(), next_depth));
            }
        }
        while let Some((group, depth)) = self.pending.pop() {
            if group == self.requested || self.tried.contains(&group) {
                continue;
            }
            self.tried.push(group.clone());
            self.target = Cow::Owned(group.clone());
            self.depth = depth;
            self.order = None;
            self.retries_used = 0;
            self.fallbacks += 1;
            return Step::Fallback(group);
        }
        Step::Stop
    }
}

/// The `order` tiers of a group as the walk sees them.
struct Tiers {
    /// The members of the tier the last pick targeted.
    current: Vec<DeploymentIdx>,
    /// The next higher `order` among the group's members, if any.
    next: Option<u32>,
}

impl Tiers {
    /// `order`: the tier the last pick targeted, when known.
    fn of(snap: &Snapshot, state: &State, target: &str, order: Option<u32>, now: Instant) -> Tiers {
        let Resolution::Group { group, .. } = snap.resolve(target) else {
            return Tiers { current: Vec::new(), next: None };
        };
        let members = &snap.group(group).members;
        // The tier a pick without a target lands in: the lowest order among the members that
        // are not cooling down (or among all, when all are).
        let lowest = |live_only: bool| {
            members
                .iter()
                .filter(|&&idx| !live_only || !state.is_cooling_down(idx, now))
                .filter_map(|&idx| snap.deployment(idx).order)
                .min()
        };
        let current_order = order.or_else(|| lowest(true)).or_else(|| lowest(false));
        let Some(current_order) = current_order else {
            // No orders: one tier, the whole group.
            return Tiers { current: members.clone(), next: None };
        };
        let current =
            members.iter().copied().filter(|&idx| snap.deployment(idx).order == Some(current_order)).collect();
        let next = members.iter().filter_map(|&idx| snap.deployment(idx).order).filter(|&o| o > current_order).min();
        Tiers { current, next }
    }

    /// Members of the current tier that have not failed for this request.
    fn untried_in_current(&self, failed: &[DeploymentIdx]) -> usize {
        self.current.iter().filter(|idx| !failed.contains(idx)).count()
    }
}

#[cfg(test)]
#[path = "walk_tests.rs"]
mod tests;
