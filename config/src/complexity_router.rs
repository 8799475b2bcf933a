//! LiteLLM's complexity auto-router: a `model_list` entry whose `litellm_params.model` is
//! `auto_router/complexity_router` is no deployment. Its `model_name` is a name clients ask for;
//! the router classifies each request into a tier (SIMPLE, MEDIUM, COMPLEX, REASONING) and
//! sends it to one of the model groups `complexity_router_config.tiers` lists for that tier.
//!
//! Read in two steps, like the policy router: the entry on its own ([`read_complexity_params`]),
//! then its model groups against the whole model list ([`resolve_complexity_routers`]).

use std::collections::HashSet;
use std::time::Duration;

use pointwork_core::complexity::{
    ClassifierFallback, ClassifierSettings, LlmClassifier, RouterConfig, Tier, TierSelection, MAX_POOL,
};

use crate::check::{Checker, Fields, KeyPath};
use crate::complexity_settings::{read_classifier_settings, unknown_tier, SETTINGS_KEYS};
use crate::kinds;
use crate::node::Node;
use crate::policy_router::DeclaredRouter;
use crate::references::ModelNames;

/// `litellm_params.model` of a complexity router.
pub(crate) const COMPLEXITY_ROUTER_MODEL: &str = "auto_router/complexity_router";
/// `litellm_params` beside `model`: the config and LiteLLM's deployment-level default model.
const CONFIG_KEY: &str = "complexity_router_config";
const DEFAULT_MODEL_PARAM: &str = "complexity_router_default_model";

/// The keys of `complexity_router_config` Pointwork reads (with [`SETTINGS_KEYS`]).
const ROUTER_KEYS: [&str; 8] = [
    "tiers",
    "default_model",
    "session_affinity",
    "session_affinity_ttl_seconds",
    "classifier_type",
    "classifier_llm_config",
    "classifier_fallback",
    // Pointwork's own.
    "tier_selection",
];

/// `ComplexityRouterConfig` fields of LiteLLM 1.110.2 that Pointwork does not implement: a
/// warning each.
const IGNORED_KEYS: [&str; 52] = [
    "enable_non_reasoning_tier",
    "tier_definitions",
    "fallback_tier",
    "classification_prompt",
    "classification_examples",
    "tier_labels",
    "custom_dimensions",
    "return_raw_model_name",
    "llm_v2_config",
    "local_heuristic",
    "heuristic_v2_artifact",
    "heuristic_v2_success_threshold",
    "capability_classifier_config",
    "opensource_classifier_config",
    "jev_classifier_config",
    "heuristic_first_max_tier",
    "hybrid_boundary_margin",
    "classifier_plugin",
    "classifier_plugin_timeout_ms",
    "classifier_context_window_size",
    "classifier_context_budget_chars",
    "classifier_context_per_turn_chars",
    "classifier_context_include_assistant_turns",
    "adaptive",
    "adaptive_weights",
    "tier_distance_penalty",
    "adaptive_eligible",
    "escalation_keywords",
    "stall_escalation_enabled",
    "stall_escalation_window",
    "stall_escalation_repeat_threshold",
    "plan_mode_min_tier",
    "plan_mode_patterns",
    "max_tokens_from_tier_model",
    "route_housekeeping_to_cheapest_tier",
    "housekeeping_patterns",
    "context_compaction",
    "enable_context_window_escalation",
    "context_window_escalation_buffer",
    "modality_routing",
    "modality_pin_override",
    "semantic_keyword_matching",
    "embedding_model",
    "match_threshold",
    "classification_mode",
    "cache_aware_routing",
    "cache_aware_routing_output_tokens",
    "cache_aware_routing_timeout_ms",
    "deployment_affinity",
    "plugins",
    "reminder_markers",
    "tier_model_configs",
];

/// LiteLLM's `classifier_type`s beyond the two Pointwork has.
const OTHER_CLASSIFIERS: [&str; 7] =
    ["heuristic_v2", "capability", "llm_v2", "custom", "heuristic_first", "hybrid", "oss_classifier"];
const LLM_KEYS: [&str; 2] = ["model", "timeout_ms"];
const LLM_IGNORED_KEYS: [&str; 6] = [
    "vision",
    "reasoning_effort",
    "circuit_breaker_enabled",
    "circuit_breaker_cooldown_seconds",
    "classification_rubric",
    "system_prompt",
];
/// LiteLLM's `DEFAULT_TIER_MODELS`: the tiers when `tiers` is not set.
const DEFAULT_TIER_MODELS: [&str; 4] =
    ["gpt-4o-mini", "gpt-4o", "claude-sonnet-4-20250514", "claude-sonnet-4-20250514"];
const DEFAULT_LLM_TIMEOUT_MS: u64 = 3000;
const DEFAULT_SESSION_TTL: Duration = Duration::from_secs(3600);
const NOT_UNSUPPORTED: &str = "ignored: not supported by Pointwork";

/// A model group the config names, with where.
pub(crate) type GroupRef = (String, KeyPath);

/// A complexity router as its entry declares it, before its groups are checked against the
/// model list.
pub(crate) struct DeclaredComplexityRouter {
    pub(crate) model_name: String,
    /// The entry, for errors about the router as a whole.
    pub(crate) entry: KeyPath,
    pub(crate) config: DeclaredConfig,
}

/// What `litellm_params` say, the model group names still unchecked.
pub(crate) struct DeclaredConfig {
    /// By [`Tier`] order; empty = the tier is not listed.
    tiers: [Vec<GroupRef>; 4],
    /// `tiers` was not set: LiteLLM's defaults, each at the path of `tiers`.
    default_tiers: bool,
    default_model: Option<GroupRef>,
    llm: Option<(GroupRef, Duration)>,
    selection: TierSelection,
    session_affinity: bool,
    session_ttl: Duration,
    classifier: ClassifierSettings,
    fallback: ClassifierFallback,
}

/// The rest of a complexity router's `litellm_params` (its `model` is read):
/// `complexity_router_config` (absent: LiteLLM's defaults) and `complexity_router_default_model`.
/// Other keys mean nothing here and are warned about.
pub(crate) fn read_complexity_params(c: &mut Checker, mut p: Fields) -> Option<DeclaredConfig> {
    let config_path = p.path.key(CONFIG_KEY);
    let param_default = p
        .take(DEFAULT_MODEL_PARAM)
        .filter(|(n, _)| !matches!(n, Node::Null))
        .and_then(|(node, path)| Some((c.read(node, &path, &kinds::NON_EMPTY_STRING)?, path)));
    let declared = match p.take(CONFIG_KEY) {
        None | Some((Node::Null, _)) => {
            let empty = Node::Map(Vec::new());
            let mut fields = c.map(&empty, config_path.clone())?;
            read_config(c, &mut fields, param_default)
        }
        Some((node, path)) => {
            let mut fields = c.map(node, path)?;
            read_config(c, &mut fields, param_default)
        }
    };
    for (_, _, path) in p.untaken() {
        c.warn(path, "ignored: a complexity router is not a deployment");
    }
    declared
}

fn read_config(c: &mut Checker, config: &mut Fields, param_default: Option<GroupRef>) -> Option<DeclaredConfig> {
    let before = c.error_count();
    let (tiers, listed, default_tiers) = read_tiers(c, config);
    // LiteLLM: `complexity_router_default_model` on the deployment wins over the config's.
    let config_default = read_group(c, config, "default_model");
    let default_model = param_default.or(config_default);
    let selection = c.optional(config, "tier_selection", &kinds::STRING).map_or(TierSelection::default(), |name| {
        TierSelection::parse(name.trim()).unwrap_or_else(|| {
            let valid = TierSelection::NAMES.join(", ");
            c.error(config.path.key("tier_selection"), format!("unknown tier_selection {name:?}; valid: {valid}"));
            TierSelection::default()
        })
    });
    let session_affinity = c.optional(config, "session_affinity", &kinds::BOOL).unwrap_or(false);
    let session_ttl = c
        .optional(config, "session_affinity_ttl_seconds", &kinds::POSITIVE_INT)
        .map_or(DEFAULT_SESSION_TTL, Duration::from_secs);
    let uses_llm = read_classifier_type(c, config);
    let llm = read_llm_config(c, config, uses_llm);
    let fallback = read_fallback(c, config, default_model.is_some());
    let classifier = read_classifier_settings(c, config);

    for key in IGNORED_KEYS {
        if let Some((_, path)) = config.take(key) {
            c.warn(path, NOT_UNSUPPORTED);
        }
    }
    let valid: Vec<&str> = ROUTER_KEYS.iter().chain(&SETTINGS_KEYS).copied().collect();
    c.refuse_unknown(config, &valid);

    // Which tiers nothing serves: LiteLLM sends them to default_model, else to MEDIUM's pool.
    // (A tier listed with errors is not reported again.)
    if default_model.is_none() && !listed[Tier::Medium as usize] {
        for tier in Tier::ALL.into_iter().filter(|&t| !listed[t as usize]) {
            c.error(
                config.path.key("tiers"),
                format!("tier {tier} lists no model group, and there is neither a MEDIUM tier nor a default_model to serve it"),
            );
        }
    }
    if c.error_count() > before {
        return None;
    }
    Some(DeclaredConfig {
        tiers,
        default_tiers,
        default_model,
        llm,
        selection,
        session_affinity,
        session_ttl,
        classifier,
        fallback,
    })
}

/// `tiers`: tier name → a model group or a list of them (or LiteLLM's `{model_name: …}` entries);
/// also which tiers are listed (all, when `tiers` is not set or not a map), and whether these are
/// LiteLLM's default tiers.
fn read_tiers(c: &mut Checker, config: &mut Fields) -> ([Vec<GroupRef>; 4], [bool; 4], bool) {
    let mut tiers: [Vec<GroupRef>; 4] = Default::default();
    let Some((node, path)) = config.take("tiers").filter(|(n, _)| !matches!(n, Node::Null)) else {
        let path = config.path.key("tiers");
        for (pool, group) in tiers.iter_mut().zip(DEFAULT_TIER_MODELS) {
            pool.push((group.to_string(), path.clone()));
        }
        return (tiers, [true; 4], true);
    };
    let Some(map) = c.map(node, path) else { return (tiers, [true; 4], false) };
    let mut seen: [Option<KeyPath>; 4] = Default::default();
    for (key, value, tier_path) in map.untaken() {
        let Some(tier) = Tier::parse(key.trim()) else {
            c.error(&tier_path, unknown_tier(key));
            continue;
        };
        if let Some(first) = &seen[tier as usize] {
            c.error(&tier_path, format!("tier {tier} is already listed at {first}"));
            continue;
        }
        seen[tier as usize] = Some(tier_path.clone());
        tiers[tier as usize] = read_pool(c, value, &tier_path);
    }
    let listed = seen.map(|s| s.is_some());
    (tiers, listed, false)
}

/// One tier's groups: a string is a one-group pool; a list may not be empty; duplicates count
/// once; at most [`MAX_POOL`] groups.
fn read_pool(c: &mut Checker, node: &Node, path: &KeyPath) -> Vec<GroupRef> {
    let items: Vec<(&Node, KeyPath)> = match node {
        Node::List(items) => items.iter().enumerate().map(|(i, item)| (item, path.index(i))).collect(),
        Node::Map(_) => vec![(node, path.clone())],
        other => vec![(other, path.clone())],
    };
    if items.is_empty() {
        c.error(path, "an empty list: list at least one model group, or leave the tier out");
        return Vec::new();
    }
    let mut pool: Vec<GroupRef> = Vec::with_capacity(items.len());
    for (item, item_path) in items {
        let group = match item {
            Node::Map(_) => read_tier_entry(c, item, &item_path),
            _ => read_group_name(c, item, &item_path),
        };
        if let Some(group) = group {
            if !pool.iter().any(|(g, _)| *g == group) {
                pool.push((group, item_path));
            }
        }
    }
    if pool.len() > MAX_POOL {
        c.error(path, format!("lists {} model groups; a tier takes at most {MAX_POOL}", pool.len()));
    }
    pool
}

/// LiteLLM's `{model_name: group, litellm_params: {…}}` tier entry: the group is read, the
/// per-tier request parameters are not supported.
fn read_tier_entry(c: &mut Checker, node: &Node, path: &KeyPath) -> Option<String> {
    let mut entry = c.map(node, path.clone())?;
    let group = c.required(&mut entry, "model_name", &kinds::NON_EMPTY_STRING);
    if let Some((_, params)) = entry.take("litellm_params") {
        c.warn(params, "ignored: per-tier request parameters are not supported by Pointwork");
    }
    c.refuse_unknown(&entry, &["model_name", "litellm_params"]);
    group.map(|g| g.trim().to_string())
}

fn read_group_name(c: &mut Checker, node: &Node, path: &KeyPath) -> Option<String> {
    match node {
        Node::Str(_) => c.read(node, path, &kinds::NON_EMPTY_STRING).map(|g| g.trim().to_string()),
        other => {
            c.error(path, format!("expected a model group name or a list of them, got {}", other.describe()));
            None
        }
    }
}

fn read_group(c: &mut Checker, config: &mut Fields, key: &str) -> Option<GroupRef> {
    let (node, path) = config.take(key).filter(|(n, _)| !matches!(n, Node::Null))?;
    let group = c.read(node, &path, &kinds::NON_EMPTY_STRING)?;
    Some((group.trim().to_string(), path))
}

/// `classifier_type`: whether the LLM classifier is on.
fn read_classifier_type(c: &mut Checker, config: &mut Fields) -> bool {
    let Some(name) = c.optional(config, "classifier_type", &kinds::STRING) else { return false };
    let path = config.path.key("classifier_type");
    match name.trim() {
        "heuristic" => false,
        "llm" => true,
        other if OTHER_CLASSIFIERS.contains(&other) => {
            c.error(path, format!("{other:?} is not supported by Pointwork; supported: heuristic, llm"));
            false
        }
        other => {
            c.error(path, format!("unknown classifier_type {other:?}; supported: heuristic, llm"));
            false
        }
    }
}

/// `classifier_llm_config`: required by `classifier_type: llm`, unused otherwise.
fn read_llm_config(c: &mut Checker, config: &mut Fields, uses_llm: bool) -> Option<(GroupRef, Duration)> {
    let path = config.path.key("classifier_llm_config");
    let Some(mut llm) = c.optional_map(config, "classifier_llm_config") else {
        if uses_llm {
            c.error(path, "required when classifier_type is llm (expected a map with `model`)");
        }
        return None;
    };
    let model = read_group(c, &mut llm, "model");
    if model.is_none() && !llm.is_set("model") {
        c.error(llm.path.key("model"), "required key is missing (expected a model group of model_list)");
    }
    let timeout = c.optional(&mut llm, "timeout_ms", &kinds::POSITIVE_INT).unwrap_or(DEFAULT_LLM_TIMEOUT_MS);
    for key in LLM_IGNORED_KEYS {
        if let Some((_, key_path)) = llm.take(key) {
            c.warn(key_path, NOT_UNSUPPORTED);
        }
    }
    c.refuse_unknown(&llm, &LLM_KEYS);
    if !uses_llm {
        c.warn(path, "unused: classifier_type is heuristic");
        return None;
    }
    Some((model?, Duration::from_millis(timeout)))
}

/// `classifier_fallback`: what classifies when the LLM classifier fails.
fn read_fallback(c: &mut Checker, config: &mut Fields, has_default: bool) -> ClassifierFallback {
    let Some(name) = c.optional(config, "classifier_fallback", &kinds::STRING) else {
        return ClassifierFallback::Heuristic;
    };
    let path = config.path.key("classifier_fallback");
    match name.trim() {
        "heuristic" => ClassifierFallback::Heuristic,
        "default_model" if has_default => ClassifierFallback::DefaultModel,
        "default_model" => {
            c.error(path, format!("default_model needs a default model: set {CONFIG_KEY}.default_model (or litellm_params.{DEFAULT_MODEL_PARAM})"));
            ClassifierFallback::DefaultModel
        }
        other => {
            c.error(path, format!("unknown classifier_fallback {other:?}; valid: heuristic, default_model"));
            ClassifierFallback::Heuristic
        }
    }
}

/// Checks each complexity router against the model list: its name is its own, and every group
/// it names is a model group that serves here.
pub(crate) fn resolve_complexity_routers(
    c: &mut Checker,
    declared: &[DeclaredComplexityRouter],
    policy_routers: &[DeclaredRouter],
    names: &ModelNames,
) -> Vec<RouterConfig> {
    if names.deployments.is_empty() {
        return Vec::new(); // the model list's own error says why
    }
    let mut groups: Vec<&str> = Vec::new();
    for d in names.deployments {
        if !groups.contains(&d.model_name.as_str()) {
            groups.push(&d.model_name);
        }
    }
    let routers: HashSet<&str> = declared
        .iter()
        .map(|r| r.model_name.as_str())
        .chain(policy_routers.iter().map(|r| r.model_name.as_str()))
        .collect();
    let check = Check { groups: &groups, routers: &routers, names };
    let mut seen: Vec<(&str, &KeyPath)> = Vec::new();
    let mut out = Vec::with_capacity(declared.len());
    for router in declared {
        let name = router.model_name.as_str();
        check_name(c, router, &seen, policy_routers, &check);
        seen.push((name, &router.entry));
        let d = &router.config;
        let before = c.error_count();
        let note = if d.default_tiers { Some("LiteLLM's default tiers, as `tiers` is not set") } else { None };
        let tiers = d.tiers.clone().map(|pool| {
            pool.into_iter().filter(|(group, path)| check.group(c, group, path, note)).map(|(g, _)| g).collect()
        });
        let default_model =
            d.default_model.as_ref().filter(|(g, p)| check.group(c, g, p, None)).map(|(g, _)| g.clone());
        let llm = d.llm.as_ref().filter(|((g, p), _)| check.group(c, g, p, None));
        if c.error_count() > before {
            continue;
        }
        out.push(RouterConfig {
            name: name.to_string(),
            tiers,
            default_model,
            selection: d.selection,
            session_affinity: d.session_affinity,
            session_ttl: d.session_ttl,
            classifier: d.classifier.clone(),
            llm: llm.map(|((model, _), timeout)| LlmClassifier { model: model.clone(), timeout: *timeout }),
            fallback: d.fallback,
        });
    }
    out
}

/// A router's `model_name` is no model group, alias or other router.
fn check_name(
    c: &mut Checker,
    router: &DeclaredComplexityRouter,
    seen: &[(&str, &KeyPath)],
    policy_routers: &[DeclaredRouter],
    check: &Check,
) {
    let name = router.model_name.as_str();
    let path = router.entry.key("model_name");
    if check.groups.contains(&name) || check.names.left_out.iter().any(|l| l.model_name == name) {
        c.error(&path, format!("{name:?} is also a model group: a complexity router needs a name of its own"));
    } else if check.names.aliases.iter().any(|a| a.alias == name) {
        c.error(
            &path,
            format!("{name:?} is also an alias (router_settings.model_group_alias): a complexity router needs a name of its own"),
        );
    }
    if let Some((_, first)) = seen.iter().find(|(n, _)| *n == name) {
        c.error(&path, format!("{name:?} already names the complexity router at {first}"));
    } else if let Some(p) = policy_routers.iter().find(|p| p.model_name == name) {
        c.error(&path, format!("{name:?} already names the policy router at {}", p.entry));
    }
}

struct Check<'a> {
    groups: &'a [&'a str],
    routers: &'a HashSet<&'a str>,
    names: &'a ModelNames<'a>,
}

impl Check<'_> {
    /// Whether `group` is a model group that serves here; an error at `path` when it is not
    /// (none when its entries failed: their own errors say why).
    fn group(&self, c: &mut Checker, group: &str, path: &KeyPath, note: Option<&str>) -> bool {
        if self.groups.contains(&group) {
            return true;
        }
        let note = note.map_or(String::new(), |n| format!(" ({n})"));
        if self.names.failed.iter().any(|f| f == group) {
            return false;
        }
        let message = if let Some(l) = self.names.left_out.iter().find(|l| l.model_name == group) {
            format!("{group:?} is served only by deployments left out ({}): nothing here can serve it{note}", l.because)
        } else if let Some(a) = self.names.aliases.iter().find(|a| a.alias == group) {
            format!(
                "{group:?} is an alias (router_settings.model_group_alias); name its model group {:?}{note}",
                a.group
            )
        } else if self.routers.contains(group) {
            format!("{group:?} is a router, not a model group: a complexity router routes to model groups{note}")
        } else {
            format!("unknown model group {group:?}{note}; model groups: {}", self.groups.join(", "))
        };
        c.error(path, message);
        false
    }
}
