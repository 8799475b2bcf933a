//! The names settings refer to, checked against the model list once it is read: a fallback
//! names anything a request may name (a group, an alias, a deployment id, a name a wildcard
//! group serves); an alias target or an affinity setting names a model group.
//!
//! A name served only by entries that were left out (a provider Pointwork does not serve yet,
//! another environment) is a warning, and the rule is dropped; a name the model list never
//! defines is an error. An entry that failed to compile explains references to its group
//! itself: they are not reported again.

use std::collections::HashSet;

use pointwork_core::{Deployment, ModelGroupAlias, Resolution, RouterSettings, Snapshot};

use crate::check::{Checker, KeyPath};
use crate::LeftOut;

/// What the router settings refer to, each with its key path.
#[derive(Default)]
pub(crate) struct References {
    /// Fallback groups and targets.
    pub(crate) routable: Vec<(KeyPath, String)>,
    /// Alias targets and the groups of `model_group_affinity_config`.
    pub(crate) groups: Vec<(KeyPath, String)>,
}

/// What the model list defines, and what of it is not here.
pub(crate) struct ModelNames<'a> {
    pub(crate) deployments: &'a [Deployment],
    pub(crate) aliases: &'a [ModelGroupAlias],
    pub(crate) left_out: &'a [LeftOut],
    /// The `model_name`s of entries that failed to compile.
    pub(crate) failed: &'a [String],
}

/// Reports every reference that names nothing; returns the names served only by entries that
/// were left out, for the caller to drop from the rules.
/// With `models_may_be_stored` (`store_model_in_db`), a name the file does not define may be
/// a stored model's: a warning, and the rule stays (a request resolves it when it runs).
pub(crate) fn check_references(
    c: &mut Checker,
    refs: &References,
    names: &ModelNames,
    models_may_be_stored: bool,
) -> HashSet<String> {
    let mut dropped = HashSet::new();
    if names.deployments.is_empty() {
        return dropped; // the model list's own error says why
    }
    let groups: HashSet<&str> = names.deployments.iter().map(|d| d.model_name.as_str()).collect();
    // The routes as requests resolve them; a model list that does not build (duplicate ids)
    // has its own errors.
    let settings = RouterSettings { model_group_alias: names.aliases.to_vec(), ..RouterSettings::default() };
    let snapshot = Snapshot::build(names.deployments.to_vec(), settings).ok();
    let routes =
        |name: &str| groups.contains(name) || snapshot.as_ref().is_none_or(|s| s.resolve(name) != Resolution::Unknown);
    let all = refs.routable.iter().map(|r| (r, true)).chain(refs.groups.iter().map(|r| (r, false)));
    for ((path, name), routable) in all {
        let found = if routable { routes(name) } else { groups.contains(name.as_str()) };
        if found || names.failed.contains(name) {
            continue;
        }
        if let Some(left_out) = names.left_out.iter().find(|l| &l.model_name == name) {
            c.warn(
                path,
                format!("{name:?} is served only by deployments left out ({}): this rule is skipped", left_out.because),
            );
            dropped.insert(name.clone());
            continue;
        }
        if models_may_be_stored {
            let message = format!(
                "{name:?} is not in the config file's model list: it must be a model stored in the database \
                 (store_model_in_db), else this rule does nothing"
            );
            c.warn(path, message);
            continue;
        }
        let mut known: Vec<&str> = groups.iter().copied().collect();
        known.sort_unstable();
        let what = if routable { "model group, alias or deployment id" } else { "model group" };
        c.error(path, format!("unknown {what} {name:?}; model groups: {}", known.join(", ")));
    }
    dropped
}
