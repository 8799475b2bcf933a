//! The pareto walk's part of the routes (`crate::routers::pareto` walks it): its settings,
//! which groups a rule manages, each deployment's provider pin, and the walk's line logs.

use std::sync::Arc;

use pointwork_config::Config;
use pointwork_core::pareto::ParetoSettings;
use pointwork_core::Snapshot;
use serde_json::Value;

use crate::line_log::LineLog;

/// What the walk knows of one deployment: the provider slugs it pins and its configured
/// `extra_body.provider` block.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Pin {
    /// `extra_body.provider.only` (every entry), else `model_info.id` minus `or-`; empty when
    /// neither identifies a provider (or `only` is malformed).
    pub slugs: Vec<Box<str>>,
    /// `extra_body.provider` as JSON.
    pub provider: Option<Box<str>>,
}

/// The walk's part of the routes: its settings, each deployment's pin, the logs.
pub struct ParetoRoutes {
    pub settings: Arc<ParetoSettings>,
    /// By deployment index.
    pub pins: Vec<Pin>,
    /// Group names and aliases whose group a rule manages, sorted: with the rule lookup of the
    /// requested name itself, an unmanaged request is turned away without resolving its name.
    managed_names: Vec<Box<str>>,
    pub routing_log: LineLog,
    pub error_log: LineLog,
}

impl ParetoRoutes {
    /// The walk's routes when the config turns it on.
    pub fn new(config: &Config, snap: &Snapshot) -> Option<ParetoRoutes> {
        let settings = config.pareto.as_ref()?;
        let pins = snap
            .deployments
            .iter()
            .map(|d| {
                let id = config.deployments.iter().zip(&config.deployment_info).find(|(c, _)| c.id == d.id);
                let explicit_id = id.filter(|(_, info)| !info.derived_id).map(|(c, _)| c.id.as_str());
                pin_of(&d.extra_body, explicit_id)
            })
            .collect();
        let managed_group = |group: &str| settings.rule(group).is_some();
        let groups = snap.groups.iter().map(|g| g.name.as_str()).filter(|g| managed_group(g));
        let aliases =
            snap.settings.model_group_alias.iter().filter(|a| managed_group(&a.group)).map(|a| a.alias.as_str());
        let mut managed_names: Vec<Box<str>> = groups.chain(aliases).map(Box::from).collect();
        managed_names.sort();
        Some(ParetoRoutes {
            settings: Arc::new(settings.clone()),
            pins,
            managed_names,
            routing_log: LineLog::new(settings.routing_log.clone()),
            error_log: LineLog::new(settings.error_log.clone()),
        })
    }
}

impl ParetoRoutes {
    /// Whether a rule may manage a request for `name` (its own rule, or a managed group's name
    /// or alias).
    pub(crate) fn may_manage(&self, name: &str) -> bool {
        self.settings.rule(name).is_some() || self.managed_names.binary_search_by(|n| (**n).cmp(name)).is_ok()
    }
}

/// A deployment's pin: its `extra_body.provider.only`, else its `model_info.id` minus `or-`.
fn pin_of(extra_body: &[(Box<str>, Box<str>)], explicit_id: Option<&str>) -> Pin {
    let provider = extra_body.iter().find(|(name, _)| &**name == "provider").map(|(_, v)| v.clone());
    let block: Option<Value> = provider.as_deref().and_then(|p| serde_json::from_str(p).ok());
    let slugs = match block.as_ref().and_then(|b| b.get("only")) {
        Some(Value::Array(only)) => {
            let slugs: Vec<Box<str>> =
                only.iter().filter_map(Value::as_str).filter(|s| !s.is_empty()).map(Box::from).collect();
            // One entry that is not a slug makes the whole list unidentifiable.
            if slugs.len() == only.len() {
                slugs
            } else {
                Vec::new()
            }
        }
        Some(Value::Null) | None => explicit_id
            .map(|id| id.strip_prefix("or-").unwrap_or(id))
            .filter(|s| !s.is_empty())
            .map(Box::from)
            .into_iter()
            .collect(),
        Some(_) => Vec::new(),
    };
    Pin { slugs, provider }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(value: &str) -> Vec<(Box<str>, Box<str>)> {
        vec![("provider".into(), value.into())]
    }

    #[test]
    fn a_deployment_is_pinned_by_its_provider_only_else_by_its_id() {
        let both = pin_of(&member(r#"{"only":["baseten/fp8","novita/fp8"],"zdr":true}"#), Some("or-x/fp8"));
        assert_eq!(both.slugs, [Box::from("baseten/fp8"), Box::from("novita/fp8")]);
        assert_eq!(pin_of(&[], Some("or-novita/fp8")).slugs, [Box::from("novita/fp8")]);
        assert_eq!(pin_of(&[], Some("novita/fp8")).slugs, [Box::from("novita/fp8")]);
        assert!(pin_of(&[], None).slugs.is_empty());
        // A malformed list is not overridden by a friendlier id.
        assert!(pin_of(&member(r#"{"only":["a/fp8", 3]}"#), Some("or-b/fp8")).slugs.is_empty());
        assert!(pin_of(&member(r#"{"only":"a/fp8"}"#), Some("or-b/fp8")).slugs.is_empty());
        assert_eq!(pin_of(&member(r#"{"sort":"price"}"#), Some("or-b/fp8")).slugs, [Box::from("b/fp8")]);
    }
}
