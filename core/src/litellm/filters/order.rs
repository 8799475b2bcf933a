//! Order tiers: `litellm_params.order` is in-group priority. The snapshot precomputes each
//! group's tiers as bitsets, lowest order first ([`crate::member_sets`]).

use crate::litellm::candidates::{Candidates, Filter};
use crate::member_sets::MemberSets;
use crate::{RejectReason, Snapshot};

/// Keeps the survivors of the lowest order among them, or of the order an order fallback
/// targets. While any survivor sets an order (always, when one is targeted), one without an
/// order is dropped first, for [`RejectReason::NoOrder`].
pub(crate) struct OrderFilter<'a> {
    pub(crate) snap: &'a Snapshot,
    /// The order an order fallback targets; `None` = the lowest among the survivors.
    pub(crate) target: Option<u32>,
}

impl Filter for OrderFilter<'_> {
    fn apply(&self, candidates: &mut Candidates<'_>) {
        let sets = self.snap.sets();
        let layout = *candidates.layout();
        let tiers = &sets.tiers[sets.groups[candidates.group().get()].tiers.clone()];
        if tiers.is_empty() && self.target.is_none() {
            return;
        }
        let live = candidates.live_words();
        let tier = match self.target {
            Some(order) => tiers.iter().find(|t| t.order == order),
            None => tiers
                .iter()
                .find(|t| sets.tier_members(**t, &layout).iter().zip(live).any(|(members, live)| members & live != 0)),
        };
        if tier.is_none() && self.target.is_none() {
            // No survivor sets an order: nothing to choose between.
            return;
        }
        let ordered = MemberSets::words(&sets.ordered, &layout);
        candidates.mark_blocks(|b| !ordered[b]);
        candidates.remove_marked(RejectReason::NoOrder);
        match tier {
            Some(&tier) => {
                let keep = sets.tier_members(tier, &layout);
                candidates.mark_blocks(|b| !keep[b]);
            }
            // The targeted order has no member: nothing serves at that order.
            None => {
                candidates.mark_blocks(|_| u64::MAX);
            }
        }
        candidates.remove_marked(RejectReason::OrderTier);
    }
}
