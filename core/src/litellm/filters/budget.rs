//! The provider budget filter: a provider that spent its `budget_limit` this period leaves the
//! chain until the period ends ([`crate::budget`]).

use std::time::Instant;

use crate::litellm::candidates::{Candidates, Filter};
use crate::{Provider, RejectReason, Snapshot, State};

/// Drops the deployments whose provider spent its budget this period. Never fails open: an
/// exhausted budget is a hard limit.
pub(crate) struct ProviderBudgetFilter<'a> {
    pub(crate) snap: &'a Snapshot,
    pub(crate) state: &'a State,
    pub(crate) now: Instant,
}

impl Filter for ProviderBudgetFilter<'_> {
    fn apply(&self, candidates: &mut Candidates<'_>) {
        let budgets = &self.snap.settings.provider_budgets;
        let over = |p: Provider| {
            budgets.iter().any(|b| b.provider == p && self.state.provider_spend(p, self.now) >= b.budget_limit)
        };
        if !Provider::ALL.into_iter().any(over) {
            return;
        }
        let members = candidates.members();
        if candidates.mark_where(|p| over(self.snap.deployment(members[p]).provider)) > 0 {
            candidates.remove_marked(RejectReason::ProviderBudget);
        }
    }
}
