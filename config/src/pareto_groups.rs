//! The walk's rules against the model list, as the plugin meets them at request time: a rule
//! manages the model groups whose name normalises to its key (`openrouter/z-ai/glm-5.2[1m]` →
//! `z-ai/glm-5.2`). What the plugin would only find out per request is said at load: a rule no
//! group serves, a wildcard rule over a group of several deployments, and a pinned deployment
//! whose `extra_body.provider.only` names no provider.

use pointwork_core::pareto::rule_key;
use pointwork_core::{Deployment, Resolution, RouterSettings, Snapshot};

use crate::check::Checker;
use crate::extra_body::EXTRA_BODY;
use crate::pareto_rule::ReadRule;
use crate::DeploymentInfo;

/// Warnings for rules without a group and wildcard rules over pools; errors for pinned
/// deployments of managed groups whose `provider.only` is not a list of provider slugs.
/// `built_in`: `rules` is the built-in rule alone (no rules configured).
pub(crate) fn check_groups(
    c: &mut Checker,
    rules: &[ReadRule],
    built_in: bool,
    deployments: &[Deployment],
    info: &[DeploymentInfo],
) {
    // Built once, only when a rule has no group of its name: wildcard groups may serve it.
    let mut patterns: Option<Option<Snapshot>> = None;
    for r in rules {
        let mut groups: Vec<(&str, Vec<usize>)> = Vec::new();
        for (i, d) in deployments.iter().enumerate().filter(|(_, d)| rule_key(&d.model_name) == r.key) {
            match groups.iter_mut().find(|(name, _)| *name == d.model_name) {
                Some((_, members)) => members.push(i),
                None => groups.push((&d.model_name, vec![i])),
            }
        }
        if groups.is_empty() {
            let snapshot =
                patterns.get_or_insert_with(|| Snapshot::build(deployments.to_vec(), RouterSettings::default()).ok());
            if !served_by_pattern(snapshot.as_ref(), &r.key) {
                let what = if built_in {
                    format!(
                        "no openrouter_pareto_rules, so the built-in rule for {:?} applies; no model group {:?} (after normalisation) serves it: the walk manages nothing",
                        r.key, r.key
                    )
                } else {
                    format!("no model group {:?} (after normalisation) serves this rule", r.key)
                };
                c.warn(&r.path, what);
            }
            continue;
        }
        for (group, members) in &groups {
            if r.rule.wildcard && members.len() > 1 {
                c.warn(
                    r.path.key("wildcard"),
                    format!(
                        "model group {group:?} has {} deployments: wildcard mode injects the winner into whichever one is picked; it wants one deployment per model",
                        members.len()
                    ),
                );
            }
            if r.rule.wildcard {
                continue;
            }
            for &i in members {
                if let Some(message) = bad_provider_only(&deployments[i]) {
                    let path = info[i].source.key_path(&format!("litellm_params.{EXTRA_BODY}.provider.only"));
                    c.error(path, format!("{message}; the walk's rule {} pins providers by it", r.path));
                }
            }
        }
    }
}

/// Whether a wildcard group serves the rule's model by its bare or its `openrouter/` name.
fn served_by_pattern(snapshot: Option<&Snapshot>, key: &str) -> bool {
    let Some(snapshot) = snapshot else {
        return true; // the model list has its own errors; do not add guesses
    };
    [key.to_string(), format!("openrouter/{key}")]
        .iter()
        .any(|name| matches!(snapshot.resolve(name), Resolution::Group { wildcard: Some(_), .. }))
}

/// Why a deployment's `extra_body.provider.only` names no provider, if it is set and does not:
/// the plugin reads anything but a non-empty list of non-empty slugs as "unknown provider".
fn bad_provider_only(d: &Deployment) -> Option<String> {
    let (_, provider) = d.extra_body.iter().find(|(name, _)| &**name == "provider")?;
    // The text was written from a parsed value by `extra_body`: it parses.
    let provider: serde_json::Value = serde_json::from_str(provider).ok()?;
    let only = provider.get("only").filter(|only| !only.is_null())?;
    let is_slug = |v: &serde_json::Value| v.as_str().is_some_and(|s| !s.is_empty());
    let named = only.as_array().is_some_and(|list| !list.is_empty() && list.iter().all(is_slug));
    (!named).then(|| format!("expected a non-empty list of provider slugs, got {only}"))
}
