//! Tag filtering (`enable_tag_filtering`), on the tag bitsets the snapshot precomputed per
//! group: the request's tags are looked up once each, then the filter works a word (64
//! members) at a time.
//!
//! A request tag is plain (`prod`), an exclusion (`!beta`: drop deployments carrying it) or a
//! requirement (`&eu`: drop deployments lacking it). Exclusions, then requirements, apply to
//! every candidate. Then, with plain tags, the deployments matching them stay (any of them with
//! `tag_filtering_match_any`, the default; else all of them); when none matches, the `default`
//! deployments serve instead; when there are none either, nothing is left. Without plain tags
//! (an untagged request), the `default` deployments serve when there are any, else everyone.

use crate::litellm::candidates::Candidates;
use crate::{RejectReason, Snapshot};

/// The tag every deployment carrying it serves untagged requests (and tagged ones that match
/// nothing).
pub const DEFAULT_TAG: &str = "default";

/// What a request tag asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TagRule<'t> {
    Plain(&'t str),
    Exclude(&'t str),
    Require(&'t str),
}

impl<'t> TagRule<'t> {
    pub(crate) fn parse(tag: &'t str) -> Option<TagRule<'t>> {
        let rule = match tag.as_bytes().first()? {
            b'!' => TagRule::Exclude(&tag[1..]),
            b'&' => TagRule::Require(&tag[1..]),
            _ => TagRule::Plain(tag),
        };
        match rule {
            TagRule::Exclude("") | TagRule::Require("") => None,
            rule => Some(rule),
        }
    }
}

pub(crate) struct TagFilter<'a> {
    pub(crate) snap: &'a Snapshot,
    pub(crate) tags: &'a [String],
    pub(crate) match_any: bool,
}

impl TagFilter<'_> {
    /// `scratch` holds three words per block of the group while the filter runs.
    pub(crate) fn apply(&self, candidates: &mut Candidates<'_>, scratch: &mut Vec<u64>) {
        let layout = *candidates.layout();
        let group = candidates.group().get();
        let labels = &self.snap.sets().tags;
        let blocks = layout.blocks();
        let default = labels.get(group, &layout, DEFAULT_TAG);
        if self.tags.is_empty() {
            if let Some(default) = default {
                keep_if_any(candidates, default, RejectReason::TagNotDefault);
            }
            return;
        }
        scratch.clear();
        scratch.resize(3 * blocks, 0);
        let (excluded, rest) = scratch.split_at_mut(blocks);
        let (missing, matched) = rest.split_at_mut(blocks);
        let mut any_plain = false;
        let bits = |label: &str| labels.get(group, &layout, label);
        for rule in self.tags.iter().filter_map(|t| TagRule::parse(t)) {
            match rule {
                TagRule::Exclude(t) => or_into(excluded, bits(t), false),
                TagRule::Require(t) => or_into(missing, bits(t), true),
                TagRule::Plain(t) => {
                    let b = bits(t);
                    if self.match_any {
                        or_into(matched, b, false);
                    } else if any_plain {
                        and_into(matched, b);
                    } else {
                        matched.fill(0);
                        or_into(matched, b, false);
                    }
                    any_plain = true;
                }
            }
        }
        candidates.mark_blocks(|b| excluded[b]);
        candidates.remove_marked(RejectReason::TagExcluded);
        candidates.mark_blocks(|b| missing[b]);
        candidates.remove_marked(RejectReason::TagRequired);
        if !any_plain {
            if let Some(default) = default {
                keep_if_any(candidates, default, RejectReason::TagNotDefault);
            }
            return;
        }
        if !keep_if_any(candidates, matched, RejectReason::TagMismatch) {
            // Nothing matches: the default deployments serve, or nobody does.
            let keep = default.unwrap_or(&[]);
            candidates.mark_blocks(|b| !keep.get(b).copied().unwrap_or(0));
            candidates.remove_marked(RejectReason::TagMismatch);
        }
    }
}

/// When any live candidate is in `keep`, removes the others for `reason` and returns `true`.
fn keep_if_any(candidates: &mut Candidates<'_>, keep: &[u64], reason: RejectReason) -> bool {
    let any = candidates.live_words().iter().zip(keep).any(|(live, keep)| live & keep != 0);
    if any {
        candidates.mark_blocks(|b| !keep[b]);
        candidates.remove_marked(reason);
    }
    any
}

/// `into |= bits` (or `|= !bits` with `invert`); a label nobody carries has no bits.
fn or_into(into: &mut [u64], bits: Option<&[u64]>, invert: bool) {
    for (i, w) in into.iter_mut().enumerate() {
        let b = bits.map_or(0, |bits| bits[i]);
        *w |= if invert { !b } else { b };
    }
}

fn and_into(into: &mut [u64], bits: Option<&[u64]>) {
    for (i, w) in into.iter_mut().enumerate() {
        *w &= bits.map_or(0, |bits| bits[i]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules() {
        assert_eq!(TagRule::parse("a"), Some(TagRule::Plain("a")));
        assert_eq!(TagRule::parse("!a"), Some(TagRule::Exclude("a")));
        assert_eq!(TagRule::parse("&a"), Some(TagRule::Require("a")));
        assert_eq!(TagRule::parse("!"), None);
        assert_eq!(TagRule::parse(""), None);
    }
}
