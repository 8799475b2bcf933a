//! The pass-through filter: in a group of pass-through deployments (`model: "*"`), only the
//! deployment of the requested name's provider serves it ([`crate::pass_through`]). Not
//! fail-open: another provider's deployment cannot serve the name.

use crate::litellm::candidates::{Candidates, Filter};
use crate::{RejectReason, Snapshot};

pub(crate) struct PassThroughFilter<'a> {
    pub(crate) snap: &'a Snapshot,
    /// The name the request asked for.
    pub(crate) requested: &'a str,
}

impl Filter for PassThroughFilter<'_> {
    fn apply(&self, candidates: &mut Candidates<'_>) {
        if !self.snap.sets().groups[candidates.group().get()].any_pass_through {
            return;
        }
        let provider = self.snap.settings.model_providers.provider_of(self.requested);
        let members = candidates.members();
        candidates.mark_where(|pos| {
            let d = self.snap.deployment(members[pos]);
            d.pass_through && Some(d.provider) != provider
        });
        candidates.remove_marked(RejectReason::OtherProvider);
    }
}
