//! The usage limits of usage-based routing (v2): each deployment's `tpm` and `rpm` against
//! what it served this minute ([`crate::usage`]).

use std::time::Instant;

use crate::litellm::candidates::{Candidates, Filter};
use crate::{RejectReason, Snapshot, State, Usage};

/// Under usage-based routing (v2): drops the deployments this request would take past their
/// `tpm` (tokens used this minute + the request's estimated input tokens > tpm), then those it
/// would take past their `rpm` (requests this minute + 1 > rpm). LiteLLM checks tpm first, so a
/// deployment over both is reported for its tpm. Does not fail open: a deployment past its limit
/// would be refused upstream anyway, and "no deployments" says when the minute ends.
pub(crate) struct UsageLimitFilter<'a> {
    pub(crate) snap: &'a Snapshot,
    pub(crate) state: &'a State,
    pub(crate) now: Instant,
    pub(crate) input_tokens: u64,
}

impl Filter for UsageLimitFilter<'_> {
    fn apply(&self, candidates: &mut Candidates<'_>) {
        let minute = self.state.minutes.minute(self.now);
        let usage = &self.state.usage;
        let dense = self.snap.dense();
        let members = candidates.members();
        let used = |pos: usize| usage.get(members[pos].get()).map_or(Usage::default(), |u| u.in_minute(minute));
        candidates.mark_where(|pos| {
            let idx = members[pos].get();
            used(pos).tokens.saturating_add(self.input_tokens) > dense.tpm_limits[idx]
        });
        candidates.remove_marked(RejectReason::TpmLimit);
        candidates.mark_where(|pos| {
            let idx = members[pos].get();
            used(pos).requests.saturating_add(1) > dense.rpm_limits[idx]
        });
        candidates.remove_marked(RejectReason::RpmLimit);
    }
}
