//! The auto model: a `model_list` entry whose `litellm_params.model` is `pointwork/policy_router`
//! is no deployment. Its `model_name` (e.g. `llmeu-auto`) is a name clients ask for, and the
//! policy router picks among the deployments of a pool of model groups
//! (`litellm_params.policy_router_config.pool`; by default every group with a deployment that
//! has policy attributes).

use std::collections::HashSet;

use crate::check::{Checker, Fields, KeyPath};
use crate::kinds;
use crate::node::Node;
use crate::references::ModelNames;
use crate::PolicyRouterEntry;

/// `litellm_params.model` of an auto model.
pub(crate) const POLICY_ROUTER_MODEL: &str = "pointwork/policy_router";
/// The prefix of models Pointwork itself provides.
pub(crate) const POINTWORK_PREFIX: &str = "pointwork/";
const CONFIG_KEYS: [&str; 1] = ["pool"];

/// An auto model as its entry declares it, before its pool is checked against the model list.
pub(crate) struct DeclaredRouter {
    pub(crate) model_name: String,
    /// The entry, for errors about the router as a whole.
    pub(crate) entry: KeyPath,
    /// `policy_router_config.pool`, each group with its key path; `None` = the default pool.
    pub(crate) pool: Option<Vec<(String, KeyPath)>>,
}

/// The rest of an auto model's `litellm_params` (its `model` is read): the pool. Other keys
/// (`api_base`, `api_key`, …) mean nothing here and are warned about.
pub(crate) fn read_router_params(c: &mut Checker, mut p: Fields) -> Option<Vec<(String, KeyPath)>> {
    let mut pool = None;
    if let Some(mut config) = c.optional_map(&mut p, "policy_router_config") {
        pool = read_pool(c, &mut config);
        c.refuse_unknown(&config, &CONFIG_KEYS);
    }
    for (_, _, path) in p.untaken() {
        c.warn(path, "ignored: a policy router is not a deployment");
    }
    pool
}

fn read_pool(c: &mut Checker, config: &mut Fields) -> Option<Vec<(String, KeyPath)>> {
    let (node, path) = config.take("pool")?;
    if matches!(node, Node::Null) {
        return None;
    }
    let items = c.list(node, &path)?;
    let mut pool = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let item_path = path.index(i);
        if let Some(group) = c.read(item, &item_path, &kinds::NON_EMPTY_STRING) {
            pool.push((group, item_path));
        }
    }
    Some(pool)
}

/// Checks each auto model against the model list and fills in the default pool.
pub(crate) fn resolve_policy_routers(
    c: &mut Checker,
    declared: &[DeclaredRouter],
    names: &ModelNames,
) -> Vec<PolicyRouterEntry> {
    if names.deployments.is_empty() {
        return Vec::new(); // the model list's own error says why
    }
    // Model groups in order of first appearance, and whether any of their deployments has
    // policy attributes.
    let mut groups: Vec<(&str, bool)> = Vec::new();
    for d in names.deployments {
        match groups.iter_mut().find(|(name, _)| *name == d.model_name) {
            Some((_, any)) => *any |= d.policy.is_some(),
            None => groups.push((&d.model_name, d.policy.is_some())),
        }
    }
    let mut seen: Vec<(&str, &KeyPath)> = Vec::new();
    let mut out = Vec::with_capacity(declared.len());
    for router in declared {
        let name = router.model_name.as_str();
        let name_path = router.entry.key("model_name");
        if groups.iter().any(|(g, _)| *g == name) || names.left_out.iter().any(|l| l.model_name == name) {
            c.error(&name_path, format!("{name:?} is also a model group: a policy router needs a name of its own"));
        } else if names.aliases.iter().any(|a| a.alias == name) {
            c.error(
                &name_path,
                format!("{name:?} is also an alias (router_settings.model_group_alias): a policy router needs a name of its own"),
            );
        }
        match seen.iter().find(|(n, _)| *n == name) {
            Some((_, first)) => c.error(&name_path, format!("{name:?} already names the policy router at {first}")),
            None => seen.push((name, &router.entry)),
        }
        let pool = match &router.pool {
            None => groups.iter().filter(|(_, any)| *any).map(|(g, _)| g.to_string()).collect(),
            Some(listed) => listed_pool(c, listed, &groups, names),
        };
        if !pool.iter().any(|g| groups.iter().any(|(name, any)| name == g && *any)) {
            c.error(
                &router.entry,
                "nothing to route to: no deployment in this policy router's pool has policy attributes (model_info.sovereignty_class, region, …)",
            );
        }
        out.push(PolicyRouterEntry { model_name: name.to_string(), pool });
    }
    out
}

/// The groups a pool lists that exist here, each once; errors and warnings for the others.
fn listed_pool(
    c: &mut Checker,
    listed: &[(String, KeyPath)],
    groups: &[(&str, bool)],
    names: &ModelNames,
) -> Vec<String> {
    let mut pool: Vec<String> = Vec::with_capacity(listed.len());
    let mut listed_once = HashSet::new();
    for (group, path) in listed {
        if !listed_once.insert(group.as_str()) {
            continue;
        }
        match groups.iter().find(|(name, _)| name == group) {
            Some((_, true)) => pool.push(group.clone()),
            Some((_, false)) => {
                c.warn(
                    path,
                    format!("no deployment of {group:?} has policy attributes (model_info.sovereignty_class, region, …): the policy router never routes to it"),
                );
                pool.push(group.clone());
            }
            None if names.failed.contains(group) => {} // its entry's errors say why
            None => match names.left_out.iter().find(|l| &l.model_name == group) {
                Some(l) => c.warn(
                    path,
                    format!("{group:?} is served only by deployments left out ({}): not in the pool", l.because),
                ),
                None => {
                    let known: Vec<&str> = groups.iter().map(|(g, _)| *g).collect();
                    c.error(path, format!("unknown model group {group:?}; model groups: {}", known.join(", ")));
                }
            },
        }
    }
    pool
}
