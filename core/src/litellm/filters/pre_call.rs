//! The pre-call checks (`enable_pre_call_checks`): the context window, the allowed region,
//! and the parameters a deployment declares it does not take. None fails open: when they
//! leave nothing, the error names the check (see [`crate::Emptied`]).

use crate::litellm::candidates::{Candidates, Filter};
use crate::{RejectReason, RequestFacts, Snapshot};

/// Drops the deployments whose context window the estimated prompt (+ `max_tokens` where the
/// window is a total) exceeds. A deployment with no known window stays.
pub(crate) struct ContextWindowFilter<'a> {
    pub(crate) snap: &'a Snapshot,
    pub(crate) facts: &'a RequestFacts,
}

impl Filter for ContextWindowFilter<'_> {
    fn apply(&self, candidates: &mut Candidates<'_>) {
        let sets = self.snap.sets();
        if !sets.groups[candidates.group().get()].any_window {
            return;
        }
        let (prompt, max_tokens) = (self.facts.estimated_prompt_tokens, self.facts.max_tokens);
        let members = candidates.members();
        candidates.mark_where(|pos| sets.windows[members[pos].get()].is_some_and(|w| !w.fits(prompt, max_tokens)));
        candidates.remove_marked(RejectReason::ContextWindow);
    }
}

/// Drops the deployments outside the request's `allowed_model_region` (and those without a
/// `region_name`: a request restricted to a region cannot go somewhere unknown).
pub(crate) struct RegionFilter<'a> {
    pub(crate) snap: &'a Snapshot,
    pub(crate) facts: &'a RequestFacts,
}

impl Filter for RegionFilter<'_> {
    fn apply(&self, candidates: &mut Candidates<'_>) {
        let Some(region) = self.facts.allowed_model_region.as_deref() else {
            return;
        };
        let layout = *candidates.layout();
        let inside = self.snap.sets().regions.get(candidates.group().get(), &layout, region);
        candidates.mark_blocks(|b| !inside.map_or(0, |words| words[b]));
        candidates.remove_marked(RejectReason::Region);
    }
}

/// Drops the deployments that declare they do not take a requested parameter.
pub(crate) struct UnsupportedParamsFilter<'a> {
    pub(crate) snap: &'a Snapshot,
    pub(crate) facts: &'a RequestFacts,
}

impl Filter for UnsupportedParamsFilter<'_> {
    fn apply(&self, candidates: &mut Candidates<'_>) {
        let sets = self.snap.sets();
        let params = self.facts.params;
        if params.is_empty() || !sets.groups[candidates.group().get()].any_unsupported {
            return;
        }
        let members = candidates.members();
        candidates.mark_where(|pos| sets.unsupported[members[pos].get()].intersects(params));
        candidates.remove_marked(RejectReason::UnsupportedParams);
    }
}
