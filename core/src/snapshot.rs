//! The immutable routing snapshot: deployments in a dense vector, model groups as index lists,
//! and the router settings. Built once per config change, shared by every shard.

use std::collections::HashMap;
use std::fmt;
use std::time::Duration;

use crate::{Deployment, DeploymentIdx};

/// A model group's position in [`Snapshot::groups`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GroupIdx(pub u32);

impl GroupIdx {
    pub fn get(self) -> usize {
        self.0 as usize
    }
}

/// The deployments that share one public `model_name`, in config order.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    pub name: String,
    pub members: Vec<DeploymentIdx>,
}

/// `router_settings.routing_strategy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum RoutingStrategy {
    #[default]
    SimpleShuffle,
}

impl RoutingStrategy {
    /// The name LiteLLM's config uses (`simple-shuffle`).
    pub fn as_str(self) -> &'static str {
        match self {
            RoutingStrategy::SimpleShuffle => "simple-shuffle",
        }
    }
}

/// The router settings the pick and the attempt loop read, with LiteLLM's defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct RouterSettings {
    pub routing_strategy: RoutingStrategy,
    /// Retries after the first attempt (LiteLLM's default: 2).
    pub num_retries: u32,
    /// Failures tolerated before a cooldown. `None` = not set: LiteLLM's failure-rate logic.
    pub allowed_fails: Option<u32>,
    /// How long a deployment cools down (LiteLLM's default: 5 s).
    pub cooldown_time: Duration,
    /// Whole-request timeout for non-streaming calls (LiteLLM's default: 6000 s).
    pub timeout: Duration,
    /// Timeout for streaming calls; `None` = `timeout`.
    pub stream_timeout: Option<Duration>,
    pub disable_cooldowns: bool,
    /// `enable_pre_call_checks`; reported in the "no deployments" error.
    pub enable_pre_call_checks: bool,
}

impl Default for RouterSettings {
    fn default() -> Self {
        RouterSettings {
            routing_strategy: RoutingStrategy::SimpleShuffle,
            num_retries: 2,
            allowed_fails: None,
            cooldown_time: Duration::from_secs(5),
            timeout: Duration::from_secs(6000),
            stream_timeout: None,
            disable_cooldowns: false,
            enable_pre_call_checks: false,
        }
    }
}

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

/// Everything the pick needs, precomputed. Immutable once built.
#[derive(Clone, Debug)]
pub struct Snapshot {
    pub deployments: Vec<Deployment>,
    pub groups: Vec<Group>,
    pub settings: RouterSettings,
    group_by_name: HashMap<String, GroupIdx>,
    deployment_by_id: HashMap<String, DeploymentIdx>,
    /// The group of each deployment, by deployment index.
    group_of: Vec<GroupIdx>,
}

impl Snapshot {
    /// Groups the deployments by `model_name` (groups in order of first appearance) and resolves
    /// each deployment's shuffle weight from its group: `weight` if any member sets one, else
    /// `rpm`, else `tpm`, else 1 for everyone (a member without the chosen field weighs 0).
    pub fn build(mut deployments: Vec<Deployment>, settings: RouterSettings) -> Result<Snapshot, SnapshotError> {
        let mut deployment_by_id = HashMap::with_capacity(deployments.len());
        for (i, d) in deployments.iter().enumerate() {
            if let Some(prev) = deployment_by_id.insert(d.id.clone(), DeploymentIdx(i as u32)) {
                return Err(SnapshotError::DuplicateId { id: d.id.clone(), first: prev.get(), second: i });
            }
        }
        let mut groups: Vec<Group> = Vec::new();
        let mut group_by_name: HashMap<String, GroupIdx> = HashMap::new();
        let mut group_of = Vec::with_capacity(deployments.len());
        for (i, d) in deployments.iter().enumerate() {
            let g = *group_by_name.entry(d.model_name.clone()).or_insert_with(|| {
                groups.push(Group { name: d.model_name.clone(), members: Vec::new() });
                GroupIdx(groups.len() as u32 - 1)
            });
            groups[g.0 as usize].members.push(DeploymentIdx(i as u32));
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
        Ok(Snapshot { deployments, groups, settings, group_by_name, deployment_by_id, group_of })
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

    /// The public model names, in config order (what `GET /v1/models` lists).
    pub fn public_model_names(&self) -> impl Iterator<Item = &str> {
        self.groups.iter().map(|g| g.name.as_str())
    }
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
    fn uniform_weights_without_any_field() {
        let snap = Snapshot::build(vec![dep("a", "x"), dep("b", "x")], RouterSettings::default()).unwrap();
        assert!(snap.deployments.iter().all(|d| d.shuffle_weight == 1));
    }
}
