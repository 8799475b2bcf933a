//! The immutable routing snapshot: deployments in a dense vector, model groups as index lists,
//! and the router settings. Built once per config change, shared by every shard.
//!
//! Next to them, the snapshot lays out what the pick streams through for every candidate, group
//! after group in member order: each member's *slot* (its group's first slot plus its position
//! in the group), the members' shuffle weights by slot, and the weight of every *block* of 64
//! members. The pick reads 8 bytes per candidate from these instead of one `Deployment` each;
//! the per-shard [`crate::State`] keeps its cooldown ends in the same slot order.

use std::fmt;

use crate::affinity::{affinity_hash, pin_key, AffinityKeys, AffinityKinds};
use crate::deployment::{Deployment, DeploymentIdx};
pub use crate::group::{Group, GroupIdx};
use crate::group::{GroupLayout, BLOCK};
use crate::member_sets::MemberSets;
use crate::names::NameMap;
use crate::resolve::{Resolution, Resolver};
pub use crate::settings::{AllowedFailsPolicy, RouterSettings, RoutingStrategy};

/// Why a set of deployments cannot form a snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SnapshotError {
    /// Two deployments share one id; the indices are positions in the input.
    DuplicateId { id: String, first: usize, second: usize },
}

impl fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SnapshotError::DuplicateId { id, first, second } => write!(
                f,
                "model_list[{second}].model_info.id: duplicate deployment id {id:?} (first used by model_list[{first}])"
            ),
        }
    }
}

impl std::error::Error for SnapshotError {}

/// A deployment's slot, its group's block it falls in (numbered like the block weights), and
/// its bit in that block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Place {
    pub(crate) slot: usize,
    pub(crate) block: usize,
    pub(crate) bit: u32,
}

/// Everything the pick needs, precomputed. Immutable once built: the dense data below is derived
/// from `deployments` and `groups` by [`Snapshot::build`], so change those only through a new build.
#[derive(Clone, Debug)]
pub struct Snapshot {
    pub deployments: Vec<Deployment>,
    pub groups: Vec<Group>,
    pub settings: RouterSettings,
    group_by_name: NameMap<GroupIdx>,
    resolver: Resolver,
    /// Per group: the affinities it keeps and its name's hash (pins are keyed by it).
    group_affinity: Vec<(AffinityKinds, u64)>,
    deployment_by_id: NameMap<DeploymentIdx>,
    /// The group of each deployment, by deployment index.
    group_of: Vec<GroupIdx>,
    /// Each deployment's position in its group's `members`, by deployment index.
    position: Vec<u32>,
    /// By group.
    layouts: Vec<GroupLayout>,
    /// Each member's `shuffle_weight`, by slot.
    slot_weights: Vec<u64>,
    /// The summed weights of each block of 64 members (saturating), by block.
    block_weights: Vec<u64>,
    /// What the stateful strategies read per candidate, by deployment index (see [`Dense`]).
    dense: Dense,
    /// What the filters read, precomputed per group (see [`MemberSets`]).
    sets: MemberSets,
}

/// Per-deployment values the stateful strategies and filters compare, by deployment index, so
/// that they read a few bytes per candidate instead of a whole [`Deployment`].
#[derive(Clone, Debug, Default)]
pub(crate) struct Dense {
    /// [`Deployment::price_per_token`]; `f64::INFINITY` when unknown, so it sorts last.
    pub(crate) prices: Vec<f64>,
    /// `rpm` and `tpm` limits; `u64::MAX` when not set.
    pub(crate) rpm_limits: Vec<u64>,
    pub(crate) tpm_limits: Vec<u64>,
}

impl Dense {
    fn new(deployments: &[Deployment]) -> Dense {
        Dense {
            prices: deployments.iter().map(|d| d.price_per_token().unwrap_or(f64::INFINITY)).collect(),
            rpm_limits: deployments.iter().map(|d| d.rpm.unwrap_or(u64::MAX)).collect(),
            tpm_limits: deployments.iter().map(|d| d.tpm.unwrap_or(u64::MAX)).collect(),
        }
    }
}

impl Snapshot {
    /// Groups the deployments by `model_name` (groups in order of first appearance) and resolves
    /// each deployment's shuffle weight from its group: `weight` if any member sets one, else
    /// `rpm`, else `tpm`, else 1 for everyone (a member without the chosen field weighs 0).
    pub fn build(mut deployments: Vec<Deployment>, settings: RouterSettings) -> Result<Snapshot, SnapshotError> {
        let mut deployment_by_id = NameMap::with_capacity_and_hasher(deployments.len(), Default::default());
        for (i, d) in deployments.iter().enumerate() {
            if let Some(prev) = deployment_by_id.insert(d.id.clone(), DeploymentIdx(i as u32)) {
                return Err(SnapshotError::DuplicateId { id: d.id.clone(), first: prev.get(), second: i });
            }
        }
        let mut groups: Vec<Group> = Vec::new();
        let mut group_by_name: NameMap<GroupIdx> = NameMap::default();
        let mut group_of = Vec::with_capacity(deployments.len());
        let mut position = Vec::with_capacity(deployments.len());
        for (i, d) in deployments.iter().enumerate() {
            let g = *group_by_name.entry(d.model_name.clone()).or_insert_with(|| {
                groups.push(Group { name: d.model_name.clone(), members: Vec::new() });
                GroupIdx(groups.len() as u32 - 1)
            });
            let members = &mut groups[g.0 as usize].members;
            position.push(members.len() as u32);
            members.push(DeploymentIdx(i as u32));
            group_of.push(g);
        }
        for g in &groups {
            let basis: fn(&Deployment) -> Option<u64> =
                if g.members.iter().any(|m| deployments[m.get()].weight.is_some()) {
                    |d| d.weight
                } else if g.members.iter().any(|m| deployments[m.get()].rpm.is_some()) {
                    |d| d.rpm
                } else if g.members.iter().any(|m| deployments[m.get()].tpm.is_some()) {
                    |d| d.tpm
                } else {
                    |_| Some(1)
                };
            for m in &g.members {
                let d = &mut deployments[m.get()];
                d.shuffle_weight = basis(d).unwrap_or(0);
            }
        }
        let mut layouts = Vec::with_capacity(groups.len());
        let mut slot_weights = Vec::with_capacity(deployments.len());
        let mut block_weights = Vec::new();
        for g in &groups {
            let weights = g.members.iter().map(|m| deployments[m.get()].shuffle_weight);
            layouts.push(GroupLayout {
                first_slot: slot_weights.len(),
                first_block: block_weights.len(),
                len: g.members.len(),
                weights_fit: weights.clone().try_fold(0u64, u64::checked_add).is_some(),
            });
            let first = slot_weights.len();
            slot_weights.extend(weights);
            block_weights.extend(
                slot_weights[first..].chunks(BLOCK).map(|b| b.iter().fold(0, |a: u64, &w| a.saturating_add(w))),
            );
        }
        let dense = Dense::new(&deployments);
        let sets = MemberSets::build(&deployments, &groups, &layouts);
        let resolver = Resolver::build(&groups, &group_by_name, &settings.model_group_alias);
        let group_affinity =
            groups.iter().map(|g| (settings.affinity.kinds_for(&g.name), affinity_hash(g.name.as_bytes()))).collect();
        Ok(Snapshot {
            sets,
            dense,
            deployments,
            groups,
            settings,
            group_by_name,
            resolver,
            group_affinity,
            deployment_by_id,
            group_of,
            position,
            layouts,
            slot_weights,
            block_weights,
        })
    }

    pub(crate) fn dense(&self) -> &Dense {
        &self.dense
    }

    pub(crate) fn sets(&self) -> &MemberSets {
        &self.sets
    }

    pub(crate) fn layout(&self, group: GroupIdx) -> GroupLayout {
        self.layouts[group.get()]
    }

    /// The group's members' weights by position, and its blocks' weights.
    pub(crate) fn weights(&self, layout: &GroupLayout) -> (&[u64], &[u64]) {
        (
            &self.slot_weights[layout.first_slot..layout.first_slot + layout.len],
            &self.block_weights[layout.first_block..layout.first_block + layout.blocks()],
        )
    }

    /// Where the deployment's dense data lives (see the module documentation); `None` for an
    /// index outside the snapshot.
    pub(crate) fn place_of(&self, idx: DeploymentIdx) -> Option<Place> {
        let layout = &self.layouts[self.group_of.get(idx.get())?.get()];
        let position = self.position[idx.get()] as usize;
        Some(Place {
            slot: layout.first_slot + position,
            block: layout.first_block + position / BLOCK,
            bit: (position % BLOCK) as u32,
        })
    }

    /// The deployment's position in `group`'s members; `None` when it is not a member (or not
    /// a deployment of this snapshot).
    pub(crate) fn position_in(&self, idx: DeploymentIdx, group: GroupIdx) -> Option<usize> {
        (*self.group_of.get(idx.get())? == group).then(|| self.position[idx.get()] as usize)
    }

    /// How many slots the snapshot lays out (one per deployment), and how many blocks.
    pub(crate) fn slots_and_blocks(&self) -> (usize, usize) {
        (self.slot_weights.len(), self.block_weights.len())
    }

    pub fn deployment(&self, idx: DeploymentIdx) -> &Deployment {
        &self.deployments[idx.get()]
    }

    pub fn group(&self, idx: GroupIdx) -> &Group {
        &self.groups[idx.0 as usize]
    }

    /// The group a deployment belongs to. Like [`Snapshot::deployment`], `idx` must come from
    /// this snapshot.
    pub fn group_of(&self, idx: DeploymentIdx) -> GroupIdx {
        self.group_of[idx.get()]
    }

    pub fn group_by_name(&self, name: &str) -> Option<GroupIdx> {
        self.group_by_name.get(name).copied()
    }

    pub fn deployment_by_id(&self, id: &str) -> Option<DeploymentIdx> {
        self.deployment_by_id.get(id).copied()
    }

    /// The pin keys a request with `keys` uses in `group`, session first; `None` where the group
    /// keeps no such affinity or the request has no such key.
    pub fn pin_keys(&self, group: GroupIdx, keys: AffinityKeys) -> [Option<u64>; 2] {
        let (kinds, group_hash) = self.group_affinity[group.get()];
        [
            keys.session.filter(|_| kinds.session).map(|k| pin_key(k, false, group_hash)),
            keys.api_key.filter(|_| kinds.deployment).map(|k| pin_key(k, true, group_hash)),
        ]
    }

    /// What a requested name resolves to (see [`crate::resolve`]).
    pub fn resolve(&self, name: &str) -> Resolution {
        if let Some(group) = self.resolver.alias(name).or_else(|| self.group_by_name(name)) {
            return Resolution::Group { group, wildcard: None };
        }
        if let Some(idx) = self.deployment_by_id(name) {
            return Resolution::Deployment(idx);
        }
        match self.resolver.pattern(name) {
            Some((group, range)) => Resolution::Group { group, wildcard: Some(range) },
            None => Resolution::Unknown,
        }
    }

    /// The public model names (what `GET /v1/models` lists): the groups in config order, then
    /// the visible aliases that are not also group names.
    pub fn public_model_names(&self) -> impl Iterator<Item = &str> {
        let aliases = self.resolver.listed_aliases().filter(|a| self.group_by_name(a).is_none());
        self.groups.iter().map(|g| g.name.as_str()).chain(aliases)
    }
}

/// The index in `new` of the deployment `idx` names in `old`, by id; `None` when `idx` is not a
/// deployment of `old` or its id is gone from `new`. State and events learnt under one
/// snapshot follow their deployment across a reload with it.
pub fn translate(old: &Snapshot, new: &Snapshot, idx: DeploymentIdx) -> Option<DeploymentIdx> {
    new.deployment_by_id(&old.deployments.get(idx.get())?.id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Provider;

    fn dep(id: &str, group: &str) -> Deployment {
        Deployment::new(id, group, Provider::OpenAi, "gpt-4o-mini", "http://127.0.0.1:1/v1/")
    }

    #[test]
    fn groups_follow_config_order_and_trim_api_base() {
        let snap =
            Snapshot::build(vec![dep("a", "x"), dep("b", "y"), dep("c", "x")], RouterSettings::default()).unwrap();
        assert_eq!(snap.public_model_names().collect::<Vec<_>>(), ["x", "y"]);
        let x = snap.group(snap.group_by_name("x").unwrap());
        assert_eq!(x.members, [DeploymentIdx(0), DeploymentIdx(2)]);
        assert_eq!(snap.deployment(DeploymentIdx(0)).api_base, "http://127.0.0.1:1/v1");
        assert_eq!(snap.deployment_by_id("c"), Some(DeploymentIdx(2)));
        assert_eq!(snap.group_of(DeploymentIdx(1)), GroupIdx(1));
        assert_eq!(snap.group_of(DeploymentIdx(2)), GroupIdx(0));
    }

    #[test]
    fn duplicate_ids_are_refused_with_both_positions() {
        let err = Snapshot::build(vec![dep("a", "x"), dep("a", "y")], RouterSettings::default()).unwrap_err();
        assert_eq!(err, SnapshotError::DuplicateId { id: "a".into(), first: 0, second: 1 });
    }

    #[test]
    fn shuffle_weight_prefers_weight_then_rpm_then_tpm() {
        let mut a = dep("a", "x");
        let mut b = dep("b", "x");
        a.rpm = Some(10);
        b.weight = Some(3);
        b.rpm = Some(90);
        let mut c = dep("c", "y");
        c.tpm = Some(7);
        let d = dep("d", "y");
        let snap = Snapshot::build(vec![a, b, c, d], RouterSettings::default()).unwrap();
        let w: Vec<u64> = snap.deployments.iter().map(|d| d.shuffle_weight).collect();
        assert_eq!(w, [0, 3, 7, 0]);
    }

    #[test]
    fn the_dense_layout_follows_groups_and_member_order() {
        // Groups interleaved in config order; `x` spans two blocks.
        let mut deployments = Vec::new();
        for i in 0..70 {
            let mut d = dep(&format!("x{i}"), "x");
            d.weight = Some(i);
            deployments.push(d);
            if i % 30 == 0 {
                deployments.push(dep(&format!("y{i}"), "y"));
            }
        }
        let snap = Snapshot::build(deployments, RouterSettings::default()).unwrap();
        let (x, y) = (GroupIdx(0), GroupIdx(1));
        let (lx, ly) = (snap.layout(x), snap.layout(y));
        assert_eq!((lx.first_slot, lx.first_block, lx.len, lx.blocks()), (0, 0, 70, 2));
        assert_eq!((ly.first_slot, ly.first_block, ly.len, ly.blocks()), (70, 2, 3, 1));
        let (weights, blocks) = snap.weights(&lx);
        assert_eq!(weights, (0..70).collect::<Vec<u64>>());
        assert_eq!(blocks, [(0..64).sum::<u64>(), (64..70).sum()]);
        assert_eq!(snap.weights(&ly), (&[1, 1, 1][..], &[3][..]));
        for (g, group) in snap.groups.iter().enumerate() {
            for (pos, &m) in group.members.iter().enumerate() {
                let g = GroupIdx(g as u32);
                assert_eq!(snap.position_in(m, g), Some(pos));
                let l = snap.layout(g);
                let place = Place { slot: l.first_slot + pos, block: l.first_block + pos / 64, bit: (pos % 64) as u32 };
                assert_eq!(snap.place_of(m), Some(place));
            }
        }
        assert_eq!(snap.position_in(snap.groups[1].members[0], x), None);
        assert_eq!(snap.position_in(DeploymentIdx(999), x), None);
        assert_eq!(snap.place_of(DeploymentIdx(999)), None);
        assert_eq!(snap.slots_and_blocks(), (73, 3));
    }

    #[test]
    fn weights_that_can_overflow_are_flagged() {
        let mut a = dep("a", "x");
        let mut b = dep("b", "x");
        a.weight = Some(u64::MAX);
        b.weight = Some(1);
        let snap = Snapshot::build(vec![a, b, dep("c", "y")], RouterSettings::default()).unwrap();
        assert!(!snap.layout(GroupIdx(0)).weights_fit);
        assert_eq!(snap.weights(&snap.layout(GroupIdx(0))).1, [u64::MAX]);
        assert!(snap.layout(GroupIdx(1)).weights_fit);
    }

    #[test]
    fn uniform_weights_without_any_field() {
        let snap = Snapshot::build(vec![dep("a", "x"), dep("b", "x")], RouterSettings::default()).unwrap();
        assert!(snap.deployments.iter().all(|d| d.shuffle_weight == 1));
    }
}
