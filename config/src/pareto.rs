//! The OpenRouter best-value walk (LiteLLM's plugin `litellm-plugin-openrouter-pareto`), read as
//! the plugin reads it: on when `litellm_settings.callbacks` names the plugin's callback, with
//! its rules and tuning from `litellm_settings.openrouter_pareto_*` or, when a key is not set,
//! from the JSON environment variable of the same name in capitals. Other callbacks are the
//! exporters' (`export.rs`).
//!
//! Where the logs and the telemetry cache go by default (the state directory):
//! `$XDG_STATE_HOME/pointwork/openrouter-pareto`, else `$HOME/.local/state/pointwork/
//! openrouter-pareto`, else `/tmp/pointwork-openrouter-pareto`.

use std::borrow::Cow;
use std::path::PathBuf;

use pointwork_core::pareto::{CooldownSettings, ParetoRule, ParetoSettings, TelemetrySettings, DEFAULT_RULE_MODEL};
use pointwork_core::Deployment;

use crate::check::{Checker, Fields, KeyPath};
use crate::node::Node;
use crate::pareto_groups::check_groups;
use crate::pareto_rule::{read_rules, ReadRule};
use crate::pareto_tuning::{read_allowlist, read_cooldown, read_telemetry};
use crate::DeploymentInfo;

/// The dotted path LiteLLM registers the plugin by: its module-level callback instance.
pub(crate) const CALLBACK: &str = "litellm_plugin_openrouter_pareto.plugin.openrouter_pareto_callback";
/// The same instance, re-exported by the package.
const CALLBACK_REEXPORT: &str = "litellm_plugin_openrouter_pareto.openrouter_pareto_callback";
const PLUGIN_PACKAGE: &str = "litellm_plugin_openrouter_pareto";
const CALLBACK_CLASS: &str = "OpenRouterParetoCallback";

pub(crate) const CALLBACKS: &str = "callbacks";
const RULES: (&str, &str) = ("openrouter_pareto_rules", "OPENROUTER_PARETO_RULES");
const COOLDOWN: (&str, &str) = ("openrouter_pareto_cooldown", "OPENROUTER_PARETO_COOLDOWN");
const ALLOWLIST: (&str, &str) = ("openrouter_pareto_allowlist", "OPENROUTER_PARETO_ALLOWLIST");
const TELEMETRY: (&str, &str) = ("openrouter_pareto_telemetry", "OPENROUTER_PARETO_TELEMETRY");
const SECTIONS: [(&str, &str); 4] = [RULES, COOLDOWN, ALLOWLIST, TELEMETRY];
pub(crate) const ROUTING_LOG_ENV: &str = "OPENROUTER_PARETO_ROUTING_LOG";
pub(crate) const ERROR_LOG_ENV: &str = "OPENROUTER_PARETO_ERROR_LOG";

/// The `litellm_settings` keys read here (the router's reader leaves them alone).
pub(crate) const LITELLM_SETTINGS_KEYS: [&str; 5] = [CALLBACKS, RULES.0, COOLDOWN.0, ALLOWLIST.0, TELEMETRY.0];

/// The walk's settings when `litellm_settings` (the section and its path) names the plugin's
/// callback, checked against the deployments.
pub(crate) fn read_pareto(
    c: &mut Checker,
    section: Option<(&Node, KeyPath)>,
    deployments: &[Deployment],
    info: &[DeploymentInfo],
) -> Option<ParetoSettings> {
    let mut fields = match section {
        Some((node @ Node::Map(_), path)) => c.map(node, path)?,
        _ => return None, // absent, empty, or not a map (the router's reader says so)
    };
    let Some(callback_path) = read_callbacks(c, &mut fields) else {
        for (key, _) in SECTIONS {
            if let Some((_, path)) = fields.take(key) {
                c.warn(path, format!("ignored: litellm_settings.callbacks does not name {CALLBACK}"));
            }
        }
        return None;
    };
    let (rules, built_in) = match source(c, &mut fields, RULES) {
        Some((node, path)) => (read_rules(c, &node, path), false),
        None => {
            let rule =
                ReadRule { key: DEFAULT_RULE_MODEL.to_string(), rule: ParetoRule::built_in(), path: callback_path };
            (vec![rule], true)
        }
    };
    let mut cooldown = CooldownSettings::default();
    if let Some((node, path)) = source(c, &mut fields, COOLDOWN) {
        read_cooldown(c, &node, path, &mut cooldown);
    }
    if let Some((node, path)) = source(c, &mut fields, ALLOWLIST) {
        read_allowlist(c, &node, path, &mut cooldown);
    }
    let state = state_dir(c);
    let mut telemetry = TelemetrySettings { cache_dir: Some(state.clone()), ..TelemetrySettings::default() };
    if let Some((node, path)) = source(c, &mut fields, TELEMETRY) {
        read_telemetry(c, &node, path, &mut telemetry);
    }
    check_groups(c, &rules, built_in, deployments, info);
    let log =
        |c: &mut Checker, var: &str, file: &str| non_empty_env(c, var).map_or_else(|| state.join(file), PathBuf::from);
    let routing_log = log(c, ROUTING_LOG_ENV, "routing.log");
    let error_log = log(c, ERROR_LOG_ENV, "errors.log");
    Some(ParetoSettings {
        rules: rules.into_iter().map(|r| (r.key, r.rule)).collect(),
        cooldown,
        telemetry,
        routing_log,
        error_log,
    })
}

/// What a `callbacks` entry names.
#[derive(Debug, PartialEq, Eq)]
enum Named {
    /// The plugin's callback instance.
    Plugin,
    /// Something of the plugin's package that is not the instance: why, and what to write.
    WrongPluginName(&'static str),
    /// Another callback (LiteLLM's own, or another package's).
    Other,
}

fn classify(name: &str) -> Named {
    let name = name.trim();
    if name == CALLBACK || name == CALLBACK_REEXPORT {
        return Named::Plugin;
    }
    if name.rsplit('.').next() == Some(CALLBACK_CLASS) && name.starts_with(PLUGIN_PACKAGE) {
        return Named::WrongPluginName("names the callback's class; LiteLLM needs the instance");
    }
    match name.strip_prefix(PLUGIN_PACKAGE) {
        Some("" | ".plugin") => {
            Named::WrongPluginName("names the plugin's module; LiteLLM needs the callback instance")
        }
        Some(rest) if rest.starts_with('.') => Named::WrongPluginName("names nothing the plugin defines"),
        _ => Named::Other,
    }
}

/// `callbacks` (a list of names, or one name): the path of the entry naming the plugin's
/// callback, if one does.
fn read_callbacks(c: &mut Checker, fields: &mut Fields) -> Option<KeyPath> {
    let (node, path) = fields.take(CALLBACKS)?;
    let node = c.resolved(node, &path)?;
    let entries: Vec<(&Node, KeyPath)> = match &*node {
        Node::Null => return None,
        Node::List(items) => items.iter().enumerate().map(|(i, item)| (item, path.index(i))).collect(),
        other => vec![(other, path.clone())],
    };
    let mut plugin: Option<KeyPath> = None;
    for (entry, entry_path) in entries {
        // Other callbacks (and names that are not strings) are the exporters' (`export.rs`).
        let Node::Str(name) = entry else { continue };
        match (classify(name), &plugin) {
            (Named::Plugin, None) => plugin = Some(entry_path),
            (Named::Plugin, Some(first)) => {
                c.warn(entry_path, format!("named twice (first at {first}): one walk runs"))
            }
            (Named::WrongPluginName(why), _) => c.error(entry_path, format!("{name:?} {why}: write {CALLBACK}")),
            (Named::Other, _) => {}
        }
    }
    plugin
}

/// A setting's source: the config key when it is set (not `null`), else its environment
/// variable's JSON when that is set and not empty (the plugin's precedence). Errors in the
/// variable name it: `OPENROUTER_PARETO_RULES (env)."z-ai/glm-5.2".min_context`.
fn source<'n>(c: &mut Checker, fields: &mut Fields<'n>, (key, var): (&str, &str)) -> Option<(Cow<'n, Node>, KeyPath)> {
    let from_env = non_empty_env(c, var);
    match fields.take(key) {
        Some((node, path)) if !matches!(node, Node::Null) => {
            if from_env.is_some() {
                c.warn(&path, format!("{var} is set too and is not read: this key wins"));
            }
            return Some((Cow::Borrowed(node), path));
        }
        _ => {}
    }
    let text = from_env?;
    let path = KeyPath::root(None).key(&format!("{var} (env)"));
    match serde_json::from_str::<Node>(&text) {
        Ok(Node::Null) => None,
        Ok(node) => Some((Cow::Owned(node), path)),
        Err(e) => {
            c.error(&path, format!("not valid JSON: {e}"));
            None
        }
    }
}

/// A variable that is set to something (an empty value counts as unset, as in the plugin).
fn non_empty_env(c: &Checker, var: &str) -> Option<String> {
    c.env.lookup(var).filter(|v| !v.is_empty())
}

/// The walk's state directory (see the module docs). A relative `XDG_STATE_HOME` is ignored,
/// as the XDG spec says.
fn state_dir(c: &Checker) -> PathBuf {
    const SUB: &str = "pointwork/openrouter-pareto";
    if let Some(xdg) = non_empty_env(c, "XDG_STATE_HOME").map(PathBuf::from).filter(|p| p.is_absolute()) {
        return xdg.join(SUB);
    }
    match non_empty_env(c, "HOME") {
        Some(home) => PathBuf::from(home).join(".local/state").join(SUB),
        None => PathBuf::from("/tmp/pointwork-openrouter-pareto"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::Env;

    #[test]
    fn callback_names() {
        assert_eq!(classify(CALLBACK), Named::Plugin);
        assert_eq!(classify(" litellm_plugin_openrouter_pareto.openrouter_pareto_callback "), Named::Plugin);
        for class in [
            "litellm_plugin_openrouter_pareto.plugin.OpenRouterParetoCallback",
            "litellm_plugin_openrouter_pareto.OpenRouterParetoCallback",
        ] {
            assert_eq!(
                classify(class),
                Named::WrongPluginName("names the callback's class; LiteLLM needs the instance")
            );
        }
        for module in ["litellm_plugin_openrouter_pareto", "litellm_plugin_openrouter_pareto.plugin"] {
            assert!(matches!(classify(module), Named::WrongPluginName(why) if why.contains("module")), "{module}");
        }
        assert!(matches!(classify("litellm_plugin_openrouter_pareto.plugin.callback"), Named::WrongPluginName(_)));
        for other in ["langfuse", "prometheus", "my_hooks.proxy_handler_instance", "litellm_plugin_openrouter_paretox"]
        {
            assert_eq!(classify(other), Named::Other, "{other}");
        }
    }

    #[test]
    fn the_state_directory_follows_xdg_then_home_then_tmp() {
        let dir = |vars: &'static [(&'static str, &'static str)]| {
            let lookup = move |name: &str| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string());
            state_dir(&Checker::new(Env::new(&lookup)))
        };
        assert_eq!(dir(&[("XDG_STATE_HOME", "/s"), ("HOME", "/h")]), PathBuf::from("/s/pointwork/openrouter-pareto"));
        assert_eq!(
            dir(&[("XDG_STATE_HOME", "rel"), ("HOME", "/h")]),
            PathBuf::from("/h/.local/state/pointwork/openrouter-pareto")
        );
        assert_eq!(dir(&[("HOME", "")]), PathBuf::from("/tmp/pointwork-openrouter-pareto"));
    }
}
