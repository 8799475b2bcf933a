//! `router_settings` and the router-related keys of `litellm_settings`, read as LiteLLM reads
//! them: `router_settings` wins when both set the same thing.

use std::time::Duration;

use pointwork_core::{
    AffinityKinds, AffinitySettings, AllowedFailsPolicy, ModelGroupAlias, Provider, ProviderBudget, RouterSettings,
    RoutingStrategy,
};

use crate::check::{Checker, Fields, KeyPath, IGNORED};
use crate::cluster_read::{RedisPlaces, ServerKeys};
use crate::fallbacks::FallbackKeys;
use crate::kinds::{self, Kind};
use crate::litellm_providers::is_litellm_provider;
use crate::node::Node;
use crate::pareto::LITELLM_SETTINGS_KEYS;
use crate::references::References;

/// LiteLLM's first usage-based strategy: read as v2, with a warning (see [`parse_strategy`]).
const USAGE_V1: &str = "usage-based-routing";

/// `router_settings.routing_strategy_args` keys that Pointwork reads; the others warn.
const LOWEST_LATENCY_BUFFER: &str = "lowest_latency_buffer";

/// The router knobs both sections can set; `None` = not set there.
#[derive(Default)]
struct RouterKnobs {
    num_retries: Option<u32>,
    allowed_fails: Option<u32>,
    cooldown_time: Option<Duration>,
    timeout: Option<Duration>,
    disable_cooldowns: Option<bool>,
}

impl RouterKnobs {
    fn apply_to(self, settings: &mut RouterSettings) {
        if let Some(v) = self.num_retries {
            settings.num_retries = v;
        }
        if let Some(v) = self.allowed_fails {
            settings.allowed_fails = Some(v);
        }
        if let Some(v) = self.cooldown_time {
            settings.cooldown_time = v;
        }
        if let Some(v) = self.timeout {
            settings.timeout = v;
        }
        if let Some(v) = self.disable_cooldowns {
            settings.disable_cooldowns = v;
        }
    }
}

/// The sections that configure the router, each with its path; absent ones are `None`.
pub(crate) struct RouterSources<'n> {
    pub(crate) router_settings: Option<(&'n Node, KeyPath)>,
    pub(crate) litellm_settings: Option<(&'n Node, KeyPath)>,
}

/// The router settings, every name they refer to (with its key path) for the check against the
/// model list, and the keys that name a Redis server (read once the `pointwork:` section says
/// whether Redis is on).
pub(crate) fn read_router<'n>(
    c: &mut Checker,
    sources: RouterSources<'n>,
) -> (RouterSettings, References, RedisPlaces<'n>) {
    let mut redis = RedisPlaces::default();
    let mut settings = RouterSettings::default();
    let mut litellm_fallbacks = FallbackKeys::default();
    let mut router_fallbacks = FallbackKeys::default();
    let mut alias_targets = Vec::new();
    if let Some(mut fields) = sources.litellm_settings.and_then(|(n, p)| section(c, n, p)) {
        litellm_fallbacks = FallbackKeys::read(c, &mut fields);
        let knobs = RouterKnobs {
            num_retries: c.optional(&mut fields, "num_retries", &kinds::NON_NEGATIVE_U32),
            allowed_fails: c.optional(&mut fields, "allowed_fails", &kinds::NON_NEGATIVE_U32),
            cooldown_time: c.optional(&mut fields, "cooldown_time", &kinds::NON_NEGATIVE_SECONDS),
            timeout: c.optional(&mut fields, "request_timeout", &kinds::POSITIVE_SECONDS),
            disable_cooldowns: c.optional(&mut fields, "disable_cooldowns", &kinds::BOOL),
        };
        knobs.apply_to(&mut settings);
        // `callbacks` and the best-value walk's keys are read by `pareto.rs`, the exporters' by
        // `export.rs`, `mcp_aliases` by `mcp_read.rs`, the response cache's by `cache_read.rs`.
        for key in LITELLM_SETTINGS_KEYS
            .iter()
            .chain(&crate::export::LITELLM_SETTINGS_KEYS)
            .chain(&crate::mcp_read::LITELLM_SETTINGS_KEYS)
            .chain(&crate::cache_read::LITELLM_SETTINGS_KEYS)
        {
            fields.take(key);
        }
        c.warn_ignored(&fields);
    }
    if let Some(mut fields) = sources.router_settings.and_then(|(n, p)| section(c, n, p)) {
        router_fallbacks = FallbackKeys::read(c, &mut fields);
        redis.router = ServerKeys::take_router(&mut fields);
        read_affinity(c, &mut fields, &mut settings.affinity, &mut alias_targets);
        if let Some(wait) = c.optional(&mut fields, "retry_after", &kinds::NON_NEGATIVE_SECONDS) {
            settings.retry_after = wait;
        }
        if let Some(budgets) = c.optional_map(&mut fields, "provider_budget_config") {
            settings.provider_budgets = read_budgets(c, budgets);
        }
        if let Some((node, path)) = fields.take("model_group_alias") {
            settings.model_group_alias = read_aliases(c, node, path, &mut alias_targets);
        }
        if let Some(strategy) = c.optional(&mut fields, "routing_strategy", &kinds::STRING) {
            let path = fields.path.key("routing_strategy");
            match parse_strategy(&strategy) {
                Ok((s, warning)) => {
                    settings.routing_strategy = s;
                    if let Some(warning) = warning {
                        c.warn(path, warning);
                    }
                }
                Err(message) => c.error(path, message),
            }
        }
        if let Some(mut args) = c.optional_map(&mut fields, "routing_strategy_args") {
            if let Some(buffer) = c.optional(&mut args, LOWEST_LATENCY_BUFFER, &kinds::NON_NEGATIVE_NUMBER) {
                settings.lowest_latency_buffer = buffer;
            }
            c.warn_ignored(&args);
        }
        if let Some(v) = c.optional(&mut fields, "enable_health_check_routing", &kinds::BOOL) {
            settings.enable_health_check_routing = v;
        }
        if let Some(v) = c.optional(&mut fields, "health_check_staleness_threshold", &kinds::NON_NEGATIVE_SECONDS) {
            settings.health_check_staleness_threshold = v;
        }
        let knobs = RouterKnobs {
            num_retries: c.optional(&mut fields, "num_retries", &kinds::NON_NEGATIVE_U32),
            allowed_fails: c.optional(&mut fields, "allowed_fails", &kinds::NON_NEGATIVE_U32),
            cooldown_time: c.optional(&mut fields, "cooldown_time", &kinds::NON_NEGATIVE_SECONDS),
            timeout: c.optional(&mut fields, "timeout", &kinds::POSITIVE_SECONDS),
            disable_cooldowns: c.optional(&mut fields, "disable_cooldowns", &kinds::BOOL),
        };
        knobs.apply_to(&mut settings);
        set_option(c, &mut fields, "stream_timeout", &kinds::POSITIVE_SECONDS, &mut settings.stream_timeout);
        if let Some(v) = c.optional(&mut fields, "enable_pre_call_checks", &kinds::BOOL) {
            settings.enable_pre_call_checks = v;
        }
        if let Some(v) = c.optional(&mut fields, "enable_tag_filtering", &kinds::BOOL) {
            settings.enable_tag_filtering = v;
        }
        if let Some(v) = c.optional(&mut fields, "tag_filtering_match_any", &kinds::BOOL) {
            settings.tag_filtering_match_any = v;
        }
        if let Some(mut policy_fields) = c.optional_map(&mut fields, "allowed_fails_policy") {
            let mut policy = AllowedFailsPolicy::default();
            for key in AllowedFailsPolicy::KEYS {
                if let Some(n) = c.optional(&mut policy_fields, key, &kinds::NON_NEGATIVE_U32) {
                    policy.set(key, n);
                }
            }
            // Strict: a misspelt error class would silently tolerate nothing.
            c.refuse_unknown(&policy_fields, &AllowedFailsPolicy::KEYS);
            settings.allowed_fails_policy = Some(policy);
        }
        c.warn_ignored(&fields);
    }
    let mut fallbacks = router_fallbacks.over(litellm_fallbacks);
    let references = References { routable: std::mem::take(&mut fallbacks.references), groups: alias_targets };
    (settings.fallbacks, settings.retry_policy) = fallbacks.into_settings();
    (settings, references, redis)
}

/// `provider_budget_config: {openai: {budget_limit: 100, time_period: 1d}, …}`.
fn read_budgets(c: &mut Checker, budgets: Fields) -> Vec<ProviderBudget> {
    let mut out = Vec::new();
    for (name, node, path) in budgets.untaken() {
        let Some(provider) = Provider::from_prefix(name) else {
            if is_litellm_provider(name) {
                c.warn(&path, format!("Pointwork does not serve provider {name} yet: this budget limits nothing"));
            } else {
                let known: Vec<&str> = Provider::named().iter().map(|p| p.prefix()).collect();
                c.error(&path, format!("unknown provider {name:?}; providers: {}", known.join(", ")));
            }
            continue;
        };
        let Some(mut entry) = c.map(node, path) else { continue };
        let limit = c.required(&mut entry, "budget_limit", &kinds::NON_NEGATIVE_NUMBER);
        let period = c.required(&mut entry, "time_period", &TIME_PERIOD);
        c.refuse_unknown(&entry, &["budget_limit", "time_period"]);
        if let (Some(budget_limit), Some(time_period)) = (limit, period) {
            out.push(ProviderBudget { provider, budget_limit, time_period });
        }
    }
    out
}

/// LiteLLM's budget periods: `30s`, `15m`, `1h`, `1d`, `30d` (a bare number is seconds).
pub(crate) const TIME_PERIOD: Kind<Duration> = Kind {
    expected: r#"a period like "1d", "1h", "15m" or "30s""#,
    parse: |n| {
        let text = match n {
            Node::Int(i) if *i > 0 => return Some(Duration::from_secs(*i as u64)),
            Node::Str(s) => s.trim(),
            _ => return None,
        };
        let split = text.find(|ch: char| !ch.is_ascii_digit()).unwrap_or(text.len());
        let (number, unit) = text.split_at(split);
        let number: u64 = number.parse().ok().filter(|&n| n > 0)?;
        let seconds = match unit {
            "" | "s" => 1,
            "m" => 60,
            "h" => 3600,
            "d" => 86_400,
            _ => return None,
        };
        Some(Duration::from_secs(number.checked_mul(seconds)?))
    },
    secret: false,
};

/// The affinity checks LiteLLM names in `optional_pre_call_checks` and
/// `model_group_affinity_config`.
const AFFINITY_CHECKS: [&str; 2] = ["session_affinity", "deployment_affinity"];

/// `optional_pre_call_checks`, `model_group_affinity_config: {group: [checks]}`,
/// `deployment_affinity_ttl_seconds`. Other pre-call checks LiteLLM knows are warned about.
/// The groups `model_group_affinity_config` names go to `groups` with their key paths.
fn read_affinity(
    c: &mut Checker,
    fields: &mut Fields,
    affinity: &mut AffinitySettings,
    groups: &mut Vec<(KeyPath, String)>,
) {
    let kinds_of = |c: &mut Checker, node: &Node, path: &KeyPath, strict: bool| {
        let mut kinds = AffinityKinds::default();
        for (i, check) in c.read(node, path, &kinds::STRING_LIST).unwrap_or_default().iter().enumerate() {
            match check.as_str() {
                "session_affinity" => kinds.session = true,
                "deployment_affinity" => kinds.deployment = true,
                other if strict => c.error(
                    path.index(i),
                    format!("unknown affinity check {other:?}; valid: {}", AFFINITY_CHECKS.join(", ")),
                ),
                _ => c.warn(path.index(i), IGNORED),
            }
        }
        kinds
    };
    if let Some((node, path)) = fields.take("optional_pre_call_checks") {
        affinity.all_groups = kinds_of(c, node, &path, false);
    }
    if let Some(per_group) = c.optional_map(fields, "model_group_affinity_config") {
        for (group, node, path) in per_group.untaken() {
            let kinds = kinds_of(c, node, &path, true);
            groups.push((path, group.to_string()));
            affinity.per_group.push((group.to_string(), kinds));
        }
    }
    if let Some(ttl) = c.optional(fields, "deployment_affinity_ttl_seconds", &kinds::POSITIVE_SECONDS) {
        affinity.ttl = ttl;
    }
}

/// `model_group_alias: {alias: group}` or `{alias: {model: group, hidden: true}}`; each target
/// goes to `targets` with its key path, for the check against the model list.
fn read_aliases(
    c: &mut Checker,
    node: &Node,
    path: KeyPath,
    targets: &mut Vec<(KeyPath, String)>,
) -> Vec<ModelGroupAlias> {
    if matches!(node, Node::Null) {
        return Vec::new();
    }
    let Some(fields) = c.map(node, path) else {
        return Vec::new();
    };
    let mut aliases = Vec::new();
    for (alias, value, alias_path) in fields.untaken() {
        let (group, hidden, group_path) = match value {
            Node::Map(_) => {
                let Some(mut entry) = c.map(value, alias_path.clone()) else { continue };
                let group = c.required(&mut entry, "model", &kinds::NON_EMPTY_STRING);
                let hidden = c.optional(&mut entry, "hidden", &kinds::BOOL).unwrap_or(false);
                c.refuse_unknown(&entry, &["model", "hidden"]);
                (group, hidden, alias_path.key("model"))
            }
            _ => (c.read(value, &alias_path, &kinds::NON_EMPTY_STRING), false, alias_path.clone()),
        };
        if let Some(group) = group {
            targets.push((group_path, group.clone()));
            aliases.push(ModelGroupAlias { alias: alias.to_string(), group, hidden });
        }
    }
    aliases
}

/// A LiteLLM section may be empty (`router_settings:` with nothing under it).
fn section<'n>(c: &mut Checker, node: &'n Node, path: KeyPath) -> Option<Fields<'n>> {
    match node {
        Node::Null => None,
        _ => c.map(node, path),
    }
}

fn set_option<T>(c: &mut Checker, f: &mut Fields, key: &str, kind: &Kind<T>, target: &mut Option<T>) {
    if let Some(v) = c.optional(f, key, kind) {
        *target = Some(v);
    }
}

/// LiteLLM's strategies run as the weighted shuffle, and why.
const SHUFFLED: [(&str, &str); 2] = [
    ("lar1", "Pointwork does not read LAR-1 confidence metadata"),
    ("provider-budget-routing", "provider_budget_config applies under every strategy"),
];

/// A strategy by LiteLLM's name, and a warning when the name is read as another strategy.
/// LiteLLM's v1 usage-based routing is read as v2: both pick the lowest tokens used this minute
/// among the deployments under their limits; v1 is LiteLLM's older, racier implementation of
/// the same idea, and a config written for it should keep working.
fn parse_strategy(name: &str) -> Result<(RoutingStrategy, Option<String>), String> {
    let name = name.trim();
    if let Some(s) = RoutingStrategy::from_name(name) {
        return Ok((s, None));
    }
    // LiteLLM's strategies Pointwork does not run, read as the weighted shuffle: `lar1` picks
    // by the agent confidence a request's `metadata.lar1` states (and shuffles without it);
    // `provider-budget-routing` is LiteLLM's older switch for `provider_budget_config`, which
    // here applies under every strategy.
    if let Some(why) = SHUFFLED.iter().find_map(|(n, why)| (*n == name).then_some(why)) {
        let shuffle = RoutingStrategy::SimpleShuffle.as_str();
        return Ok((RoutingStrategy::SimpleShuffle, Some(format!("{name:?} is run as {shuffle:?}: {why}"))));
    }
    if name == USAGE_V1 {
        let v2 = RoutingStrategy::UsageBasedV2.as_str();
        return Ok((
            RoutingStrategy::UsageBasedV2,
            Some(format!("{name:?} is read as {v2:?}; write {v2:?} to say so")),
        ));
    }
    let valid: Vec<&str> =
        RoutingStrategy::ALL.iter().map(|s| s.as_str()).chain([USAGE_V1]).chain(SHUFFLED.map(|(n, _)| n)).collect();
    Err(format!("unknown routing strategy {name:?}; valid: {}", valid.join(", ")))
}

/// How the summary names a strategy.
pub(crate) fn strategy_name(strategy: RoutingStrategy) -> &'static str {
    strategy.as_str()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strategies() {
        for s in RoutingStrategy::ALL {
            assert_eq!(parse_strategy(s.as_str()), Ok((s, None)));
            assert_eq!(strategy_name(s), s.as_str());
        }
        assert_eq!(parse_strategy(" least-busy "), Ok((RoutingStrategy::LeastBusy, None)));
        assert_eq!(
            parse_strategy("usage-based-routing"),
            Ok((
                RoutingStrategy::UsageBasedV2,
                Some(r#""usage-based-routing" is read as "usage-based-routing-v2"; write "usage-based-routing-v2" to say so"#.into())
            ))
        );
        assert_eq!(
            parse_strategy("fastest").unwrap_err(),
            r#"unknown routing strategy "fastest"; valid: simple-shuffle, least-busy, latency-based-routing, usage-based-routing-v2, cost-based-routing, usage-based-routing, lar1, provider-budget-routing"#
        );
        assert_eq!(
            parse_strategy("lar1"),
            Ok((
                RoutingStrategy::SimpleShuffle,
                Some(r#""lar1" is run as "simple-shuffle": Pointwork does not read LAR-1 confidence metadata"#.into())
            ))
        );
        assert_eq!(parse_strategy("provider-budget-routing").unwrap().0, RoutingStrategy::SimpleShuffle);
    }
}
