//! The capability filters: the route a request came in on, and an image in a request. Both
//! read a bitset precomputed per group ([`crate::member_sets`]) and both fail open.

use crate::litellm::candidates::{Candidates, Filter};
use crate::member_sets::MemberSets;
use crate::{RejectReason, RouteKind, Snapshot};

/// Drops the deployments whose provider cannot serve the request's route (see
/// [`crate::Provider::serves`]), as long as another candidate remains.
pub(crate) struct RouteCapabilityFilter<'a> {
    pub(crate) snap: &'a Snapshot,
    pub(crate) route: RouteKind,
}

impl Filter for RouteCapabilityFilter<'_> {
    fn apply(&self, candidates: &mut Candidates<'_>) {
        let sets = self.snap.sets();
        let without = match self.route {
            // Every provider serves chat and Messages, in its dialect or translated.
            RouteKind::ChatCompletions | RouteKind::Messages | RouteKind::Responses => return,
            RouteKind::Embeddings if !sets.groups[candidates.group().get()].any_no_embeddings => return,
            RouteKind::Embeddings => &sets.no_embeddings,
        };
        let layout = *candidates.layout();
        let words = MemberSets::words(without, &layout);
        let marked = candidates.mark_blocks(|b| words[b]);
        // Fails open (the spec's "as long as another candidate remains"): a provider we think
        // cannot serve the route may still answer; refusing outright helps nobody.
        if marked == candidates.len() {
            return;
        }
        candidates.remove_marked(RejectReason::RouteUnsupported);
    }
}

/// A request that carries an image skips the deployments that do not declare vision support,
/// as long as another candidate remains.
pub(crate) struct VisionFilter<'a> {
    pub(crate) snap: &'a Snapshot,
    pub(crate) has_image: bool,
}

impl Filter for VisionFilter<'_> {
    fn apply(&self, candidates: &mut Candidates<'_>) {
        let sets = self.snap.sets();
        if !self.has_image || !sets.groups[candidates.group().get()].any_no_vision {
            return;
        }
        let layout = *candidates.layout();
        let words = MemberSets::words(&sets.no_vision, &layout);
        let marked = candidates.mark_blocks(|b| words[b]);
        // Fails open: "no vision declared" is often just "not declared"; a deployment that
        // turns the image down answers with an error the attempt plan can handle.
        if marked == candidates.len() {
            return;
        }
        candidates.remove_marked(RejectReason::NoVision);
    }
}

/// Drops the deployments an admin blocked (`model_info.blocked`). Not fail-open: a blocked
/// deployment must not serve.
pub(crate) struct BlockedFilter<'a> {
    pub(crate) snap: &'a Snapshot,
}

impl Filter for BlockedFilter<'_> {
    fn apply(&self, candidates: &mut Candidates<'_>) {
        let sets = self.snap.sets();
        if !sets.groups[candidates.group().get()].any_blocked {
            return;
        }
        let layout = *candidates.layout();
        let words = MemberSets::words(&sets.blocked, &layout);
        candidates.mark_blocks(|b| words[b]);
        candidates.remove_marked(RejectReason::Blocked);
    }
}
