//! What the filters read about a group's members, precomputed when the snapshot is built so
//! that a filter works a word (64 members) at a time and never compares strings per candidate:
//! bitsets of the blocked members, of those without vision or without the embeddings route,
//! the order tiers, and the tag and region sets (one bitset per label and group).
//!
//! Bitsets are laid out like the block weights (see [`crate::snapshot`]): word
//! `layout.first_block + b` holds block `b` of a group's members.

use std::ops::Range;

use crate::deployment::{ContextWindow, Deployment};
use crate::facts::{RequestParams, RouteKind};
use crate::group::{Group, GroupLayout, BLOCK};
use crate::names::NameMap;

/// Per group flags: a filter whose group has nothing to remove costs a branch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct GroupSets {
    pub(crate) any_blocked: bool,
    /// Whether a member is a pass-through deployment (`model: "*"`).
    pub(crate) any_pass_through: bool,
    pub(crate) all_blocked: bool,
    pub(crate) any_no_vision: bool,
    pub(crate) any_no_embeddings: bool,
    pub(crate) any_window: bool,
    pub(crate) any_unsupported: bool,
    /// The group's order tiers in [`MemberSets::tiers`], lowest order first; empty when no
    /// member sets an `order`.
    pub(crate) tiers: Range<usize>,
    /// The largest known context window of the group's members (for the error message).
    pub(crate) largest_window: Option<u64>,
}

/// One order tier: its `order` and where its members' bitset starts in `tier_words`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Tier {
    pub(crate) order: u32,
    pub(crate) words: usize,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct MemberSets {
    pub(crate) groups: Vec<GroupSets>,
    /// By block: `model_info.blocked` members.
    pub(crate) blocked: Vec<u64>,
    /// By block: members that do not declare vision support.
    pub(crate) no_vision: Vec<u64>,
    /// By block: members whose provider does not serve `/embeddings`.
    pub(crate) no_embeddings: Vec<u64>,
    /// By block: members that set an `order`.
    pub(crate) ordered: Vec<u64>,
    pub(crate) tiers: Vec<Tier>,
    /// Each tier's members, one group's blocks per tier.
    pub(crate) tier_words: Vec<u64>,
    /// `litellm_params.tags`, as written.
    pub(crate) tags: Labels,
    /// Region codes derived from `litellm_params.region_name` (see [`region_labels`]).
    pub(crate) regions: Labels,
    /// By deployment index.
    pub(crate) windows: Vec<Option<ContextWindow>>,
    /// By deployment index.
    pub(crate) unsupported: Vec<RequestParams>,
}

/// For each group, a bitset of its members per label (a tag, a region code).
#[derive(Clone, Debug, Default)]
pub(crate) struct Labels {
    /// By group: label → the first word of its bitset in `words`.
    by_group: Vec<NameMap<usize>>,
    words: Vec<u64>,
}

impl Labels {
    fn build<'d, L: IntoIterator<Item = String>>(
        deployments: &'d [Deployment],
        groups: &[Group],
        layouts: &[GroupLayout],
        labels_of: impl Fn(&'d Deployment) -> L,
    ) -> Labels {
        let mut labels = Labels::default();
        for (group, layout) in groups.iter().zip(layouts) {
            let mut map: NameMap<usize> = NameMap::default();
            for (pos, m) in group.members.iter().enumerate() {
                for label in labels_of(&deployments[m.get()]) {
                    let words = &mut labels.words;
                    let at = *map.entry(label).or_insert_with(|| {
                        words.resize(words.len() + layout.blocks(), 0);
                        words.len() - layout.blocks()
                    });
                    labels.words[at + pos / BLOCK] |= 1 << (pos % BLOCK);
                }
            }
            labels.by_group.push(map);
        }
        labels
    }

    /// The group's members carrying `label`, one word per block; `None` when none does.
    pub(crate) fn get(&self, group: usize, layout: &GroupLayout, label: &str) -> Option<&[u64]> {
        let at = *self.by_group.get(group)?.get(label)?;
        Some(&self.words[at..at + layout.blocks()])
    }
}

/// The region codes a `region_name` answers to, lowercase: the name itself, the part before
/// its first `-` (`eu-west-1` → `eu`, `us-east-1` → `us`), `eu` for European cloud regions
/// (`europe-west4`, Azure `westeurope`, `swedencentral`, `francecentral`, `germanywestcentral`,
/// …), and `us` for Azure's `eastus`, `westus2`, … (no dash, ending in `us` and digits).
pub fn region_labels(region_name: &str) -> Vec<String> {
    const EU_WORDS: [&str; 11] = [
        "europe",
        "sweden",
        "france",
        "germany",
        "switzerland",
        "norway",
        "poland",
        "italy",
        "spain",
        "netherlands",
        "ireland",
    ];
    let name = region_name.trim().to_ascii_lowercase();
    if name.is_empty() {
        return Vec::new();
    }
    let mut labels = vec![name.clone()];
    let mut add = |l: &str| {
        if !labels.iter().any(|x| x == l) {
            labels.push(l.to_string());
        }
    };
    if let Some((head, _)) = name.split_once('-') {
        add(head);
    }
    if EU_WORDS.iter().any(|w| name.contains(w)) {
        add("eu");
    }
    if !name.contains('-') && name.trim_end_matches(|c: char| c.is_ascii_digit()).ends_with("us") {
        add("us");
    }
    labels
}

impl MemberSets {
    pub(crate) fn build(deployments: &[Deployment], groups: &[Group], layouts: &[GroupLayout]) -> MemberSets {
        let blocks = layouts.last().map_or(0, |l| l.first_block + l.blocks());
        let mut sets = MemberSets {
            blocked: vec![0; blocks],
            no_vision: vec![0; blocks],
            no_embeddings: vec![0; blocks],
            ordered: vec![0; blocks],
            windows: deployments.iter().map(Deployment::context_window).collect(),
            unsupported: deployments.iter().map(|d| d.unsupported_params).collect(),
            ..MemberSets::default()
        };
        for (group, layout) in groups.iter().zip(layouts) {
            let mut flags = GroupSets::default();
            let mut orders: Vec<u32> = Vec::new();
            for (pos, m) in group.members.iter().enumerate() {
                let d = &deployments[m.get()];
                let (word, bit) = (layout.first_block + pos / BLOCK, 1u64 << (pos % BLOCK));
                let set = |v: &mut Vec<u64>, on: bool| {
                    if on {
                        v[word] |= bit;
                    }
                    on
                };
                flags.any_blocked |= set(&mut sets.blocked, d.blocked);
                flags.any_no_vision |= set(&mut sets.no_vision, d.supports_vision != Some(true));
                flags.any_no_embeddings |= set(&mut sets.no_embeddings, !d.provider.serves(RouteKind::Embeddings));
                set(&mut sets.ordered, d.order.is_some());
                if let Some(o) = d.order {
                    orders.push(o);
                }
                if let Some(w) = d.context_window() {
                    flags.any_window = true;
                    flags.largest_window = Some(flags.largest_window.map_or(w.limit, |l| l.max(w.limit)));
                }
                flags.any_unsupported |= !d.unsupported_params.is_empty();
                flags.any_pass_through |= d.pass_through;
            }
            flags.all_blocked = !group.members.is_empty() && group.members.iter().all(|m| deployments[m.get()].blocked);
            orders.sort_unstable();
            orders.dedup();
            let first_tier = sets.tiers.len();
            for order in orders {
                let words = sets.tier_words.len();
                sets.tier_words.resize(words + layout.blocks(), 0);
                for (pos, m) in group.members.iter().enumerate() {
                    if deployments[m.get()].order == Some(order) {
                        sets.tier_words[words + pos / BLOCK] |= 1 << (pos % BLOCK);
                    }
                }
                sets.tiers.push(Tier { order, words });
            }
            flags.tiers = first_tier..sets.tiers.len();
            sets.groups.push(flags);
        }
        sets.tags = Labels::build(deployments, groups, layouts, |d| d.tags.iter().cloned());
        sets.regions = Labels::build(deployments, groups, layouts, |d| {
            d.region_name.as_deref().map(region_labels).unwrap_or_default()
        });
        sets
    }

    /// A group's words of a by-block bitset.
    pub(crate) fn words<'a>(v: &'a [u64], layout: &GroupLayout) -> &'a [u64] {
        &v[layout.first_block..layout.first_block + layout.blocks()]
    }

    /// A tier's members, one word per block of its group.
    pub(crate) fn tier_members(&self, tier: Tier, layout: &GroupLayout) -> &[u64] {
        &self.tier_words[tier.words..tier.words + layout.blocks()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn region_codes() {
        assert_eq!(region_labels("eu-west-1"), ["eu-west-1", "eu"]);
        assert_eq!(region_labels("US-East-1"), ["us-east-1", "us"]);
        assert_eq!(region_labels("europe-west4"), ["europe-west4", "europe", "eu"]);
        assert_eq!(region_labels("westeurope"), ["westeurope", "eu"]);
        assert_eq!(region_labels("swedencentral"), ["swedencentral", "eu"]);
        assert_eq!(region_labels("eastus2"), ["eastus2", "us"]);
        assert_eq!(region_labels("australiaeast"), ["australiaeast"]);
        assert_eq!(region_labels("eu"), ["eu"]);
        assert!(region_labels(" ").is_empty());
    }
}
