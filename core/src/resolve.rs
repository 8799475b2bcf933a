//! Resolution: the requested name → the candidates, as LiteLLM resolves it.
//!
//! 1. `model_group_alias`: an alias names a group (a hidden alias is not listed by
//!    `GET /v1/models`).
//! 2. A model group's name.
//! 3. A deployment id (served even while cooling down; see [`crate::pick`]).
//! 4. A wildcard group (`model_name: openai/*`, or `*`): the most specific pattern that matches
//!    (the most literal characters). The part of the name the `*` matched replaces the `*` of
//!    the deployments' upstream model, so `openai/*` → `openai/*` sends `gpt-4o` for
//!    `openai/gpt-4o`, and `*` → `openai/*` sends whatever was asked.

use crate::deployment::DeploymentIdx;
use crate::group::{Group, GroupIdx};
use crate::names::NameMap;

/// `router_settings.model_group_alias`: `alias: group` or `alias: {model: group, hidden: true}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelGroupAlias {
    pub alias: String,
    pub group: String,
    pub hidden: bool,
}

/// What a requested name resolves to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resolution {
    /// A group; `wildcard` is the byte range of the name a pattern's `*` matched.
    Group {
        group: GroupIdx,
        wildcard: Option<(u32, u32)>,
    },
    Deployment(DeploymentIdx),
    Unknown,
}

/// A wildcard group's name split at its one `*`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Pattern {
    prefix: String,
    suffix: String,
    group: GroupIdx,
}

impl Pattern {
    /// The range `*` matches in `name`, if the pattern matches it.
    fn matches(&self, name: &str) -> Option<(u32, u32)> {
        let rest = name.strip_prefix(self.prefix.as_str())?;
        let middle = rest.strip_suffix(self.suffix.as_str())?;
        let start = self.prefix.len();
        Some((start as u32, (start + middle.len()) as u32))
    }
}

/// The alias table and the wildcard patterns, built with the snapshot.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Resolver {
    aliases: NameMap<GroupIdx>,
    /// Visible aliases, in config order, for `GET /v1/models`.
    listed_aliases: Vec<String>,
    /// Most specific first.
    patterns: Vec<Pattern>,
}

impl Resolver {
    /// Aliases naming a group that does not exist are skipped (the config refuses them).
    pub(crate) fn build(groups: &[Group], group_by_name: &NameMap<GroupIdx>, aliases: &[ModelGroupAlias]) -> Resolver {
        let mut resolver = Resolver::default();
        for a in aliases {
            if let Some(&g) = group_by_name.get(&a.group) {
                resolver.aliases.insert(a.alias.clone(), g);
                if !a.hidden {
                    resolver.listed_aliases.push(a.alias.clone());
                }
            }
        }
        for (i, g) in groups.iter().enumerate() {
            if let Some((prefix, suffix)) = g.name.split_once('*') {
                if !suffix.contains('*') {
                    let group = GroupIdx(i as u32);
                    resolver.patterns.push(Pattern { prefix: prefix.into(), suffix: suffix.into(), group });
                }
            }
        }
        resolver.patterns.sort_by_key(|p| std::cmp::Reverse(p.prefix.len() + p.suffix.len()));
        resolver
    }

    pub(crate) fn alias(&self, name: &str) -> Option<GroupIdx> {
        self.aliases.get(name).copied()
    }

    pub(crate) fn pattern(&self, name: &str) -> Option<(GroupIdx, (u32, u32))> {
        self.patterns.iter().find_map(|p| p.matches(name).map(|range| (p.group, range)))
    }

    pub(crate) fn listed_aliases(&self) -> impl Iterator<Item = &str> {
        self.listed_aliases.iter().map(String::as_str)
    }
}

/// The upstream model for a wildcard match: the deployment's upstream model with its `*`
/// replaced by what the pattern's `*` matched (or as it is, without a `*`).
pub fn wildcard_upstream_model(upstream_model: &str, requested: &str, wildcard: (u32, u32)) -> String {
    let matched = requested.get(wildcard.0 as usize..wildcard.1 as usize).unwrap_or_default();
    upstream_model.replacen('*', matched, 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Deployment, Provider, RouterSettings, Snapshot};

    fn snap(groups: &[(&str, &str)], aliases: &[(&str, &str, bool)]) -> Snapshot {
        let deployments = groups
            .iter()
            .enumerate()
            .map(|(i, (group, model))| {
                Deployment::new(&format!("d{i}"), group, Provider::OpenAi, model, "http://127.0.0.1:1/v1")
            })
            .collect();
        let model_group_alias = aliases
            .iter()
            .map(|(a, g, hidden)| ModelGroupAlias { alias: a.to_string(), group: g.to_string(), hidden: *hidden })
            .collect();
        Snapshot::build(deployments, RouterSettings { model_group_alias, ..RouterSettings::default() }).unwrap()
    }

    fn group_named(s: &Snapshot, r: Resolution) -> (String, Option<String>) {
        match r {
            Resolution::Group { group, wildcard } => {
                (s.group(group).name.clone(), wildcard.map(|(a, b)| format!("{a}..{b}")))
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn aliases_then_names_then_ids_then_the_most_specific_pattern() {
        let s = snap(
            &[("gpt", "gpt-4o"), ("openai/*", "*"), ("*", "openai/*"), ("openai/o*-mini", "o*-mini")],
            &[("fast", "gpt", false), ("secret", "gpt", true), ("gpt", "openai/*", false)],
        );
        assert_eq!(group_named(&s, s.resolve("fast")).0, "gpt");
        // An alias wins over a group of the same name, as in LiteLLM.
        assert_eq!(group_named(&s, s.resolve("gpt")).0, "openai/*");
        assert_eq!(s.resolve("d0"), Resolution::Deployment(DeploymentIdx(0)));
        assert_eq!(group_named(&s, s.resolve("openai/gpt-4o")), ("openai/*".into(), Some("7..13".into())));
        assert_eq!(group_named(&s, s.resolve("openai/o3-mini")), ("openai/o*-mini".into(), Some("8..9".into())));
        assert_eq!(group_named(&s, s.resolve("claude-3")), ("*".into(), Some("0..8".into())));
        // Listed once each: the visible alias `fast`, not the hidden one, not `gpt` twice.
        assert_eq!(s.public_model_names().collect::<Vec<_>>(), ["gpt", "openai/*", "*", "openai/o*-mini", "fast"]);
    }

    #[test]
    fn the_wildcard_part_fills_the_upstream_model() {
        assert_eq!(wildcard_upstream_model("*", "openai/gpt-4o", (7, 13)), "gpt-4o");
        assert_eq!(wildcard_upstream_model("openai/*", "claude-3", (0, 8)), "openai/claude-3");
        assert_eq!(wildcard_upstream_model("fixed", "anything", (0, 8)), "fixed");
    }

    #[test]
    fn without_patterns_or_aliases_an_unknown_name_is_unknown() {
        let s = snap(&[("gpt", "gpt-4o")], &[("x", "missing", false)]);
        assert_eq!(s.resolve("x"), Resolution::Unknown);
        assert_eq!(s.resolve("other"), Resolution::Unknown);
    }
}
