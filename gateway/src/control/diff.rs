//! What a reload changes: model groups and deployments added, removed, and changed (same id,
//! different settings — an explicit `model_info.id`, or only the key rotated).

use std::collections::{HashMap, HashSet};

use pointwork_core::Snapshot;
use serde::Serialize;

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Changes {
    pub groups_added: Vec<String>,
    pub groups_removed: Vec<String>,
    pub deployments_added: Vec<String>,
    pub deployments_removed: Vec<String>,
    pub deployments_changed: Vec<String>,
}

impl Changes {
    pub fn between(old: &Snapshot, new: &Snapshot) -> Changes {
        let old_groups: HashSet<&str> = old.groups.iter().map(|g| g.name.as_str()).collect();
        let new_groups: HashSet<&str> = new.groups.iter().map(|g| g.name.as_str()).collect();
        let old_deps: HashMap<&str, _> = old.deployments.iter().map(|d| (d.id.as_str(), d)).collect();
        let new_deps: HashMap<&str, _> = new.deployments.iter().map(|d| (d.id.as_str(), d)).collect();
        let mut changes = Changes {
            groups_added: names(new_groups.difference(&old_groups)),
            groups_removed: names(old_groups.difference(&new_groups)),
            deployments_added: names(new_deps.keys().filter(|id| !old_deps.contains_key(*id))),
            deployments_removed: names(old_deps.keys().filter(|id| !new_deps.contains_key(*id))),
            deployments_changed: names(
                new_deps.iter().filter(|(id, d)| old_deps.get(*id).is_some_and(|o| o != *d)).map(|(id, _)| id),
            ),
        };
        changes.deployments_changed.sort();
        changes
    }

    pub fn is_empty(&self) -> bool {
        *self == Changes::default()
    }

    /// `groups +[a] −[b]; deployments +[x] −[y] ~[z]`, or `no routing changes`.
    pub fn describe(&self) -> String {
        if self.is_empty() {
            return "no routing changes".to_string();
        }
        let mut parts = Vec::new();
        let list = |sign: &str, items: &[String]| (!items.is_empty()).then(|| format!("{sign}[{}]", items.join(", ")));
        let groups: Vec<String> =
            [list("+", &self.groups_added), list("−", &self.groups_removed)].into_iter().flatten().collect();
        if !groups.is_empty() {
            parts.push(format!("groups {}", groups.join(" ")));
        }
        let deployments: Vec<String> = [
            list("+", &self.deployments_added),
            list("−", &self.deployments_removed),
            list("~", &self.deployments_changed),
        ]
        .into_iter()
        .flatten()
        .collect();
        if !deployments.is_empty() {
            parts.push(format!("deployments {}", deployments.join(" ")));
        }
        parts.join("; ")
    }
}

fn names<'a>(items: impl Iterator<Item = &'a &'a str>) -> Vec<String> {
    let mut v: Vec<String> = items.map(|s| s.to_string()).collect();
    v.sort();
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use pointwork_core::{Deployment, Provider, RouterSettings};

    fn dep(id: &str, group: &str, model: &str) -> Deployment {
        Deployment::new(id, group, Provider::OpenAi, model, "http://127.0.0.1:1/v1")
    }

    #[test]
    fn added_removed_and_changed() {
        let old = Snapshot::build(
            vec![dep("a", "g1", "m"), dep("b", "g1", "m"), dep("c", "g2", "m")],
            RouterSettings::default(),
        )
        .unwrap();
        let new = Snapshot::build(
            vec![dep("a", "g1", "m"), dep("c", "g3", "m2"), dep("d", "g3", "m")],
            RouterSettings::default(),
        )
        .unwrap();
        let c = Changes::between(&old, &new);
        assert_eq!(c.groups_added, ["g3"]);
        assert_eq!(c.groups_removed, ["g2"]);
        assert_eq!(c.deployments_added, ["d"]);
        assert_eq!(c.deployments_removed, ["b"]);
        assert_eq!(c.deployments_changed, ["c"]);
        assert_eq!(c.describe(), "groups +[g3] −[g2]; deployments +[d] −[b] ~[c]");
        assert_eq!(Changes::between(&old, &old).describe(), "no routing changes");
    }
}
