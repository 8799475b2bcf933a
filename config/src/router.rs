//! `router_settings` and the router-related keys of `litellm_settings`, read as LiteLLM reads
//! them: `router_settings` wins when both set the same thing.

use std::time::Duration;

use switchyard_core::{RouterSettings, RoutingStrategy};

use crate::check::{Checker, Fields, KeyPath};
use crate::kinds::{self, Kind};
use crate::node::Node;

/// LiteLLM's routing strategies that Switchyard does not implement yet.
const PLANNED_STRATEGIES: [&str; 5] =
    ["least-busy", "usage-based-routing", "usage-based-routing-v2", "latency-based-routing", "cost-based-routing"];
const IMPLEMENTED_STRATEGIES: [(&str, RoutingStrategy); 1] = [("simple-shuffle", RoutingStrategy::SimpleShuffle)];

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

pub(crate) fn read_router(c: &mut Checker, sources: RouterSources) -> RouterSettings {
    let mut settings = RouterSettings::default();
    if let Some(mut fields) = sources.litellm_settings.and_then(|(n, p)| section(c, n, p)) {
        let knobs = RouterKnobs {
            num_retries: c.optional(&mut fields, "num_retries", &kinds::NON_NEGATIVE_U32),
            allowed_fails: c.optional(&mut fields, "allowed_fails", &kinds::NON_NEGATIVE_U32),
            cooldown_time: c.optional(&mut fields, "cooldown_time", &kinds::NON_NEGATIVE_SECONDS),
            timeout: c.optional(&mut fields, "request_timeout", &kinds::POSITIVE_SECONDS),
            disable_cooldowns: c.optional(&mut fields, "disable_cooldowns", &kinds::BOOL),
        };
        knobs.apply_to(&mut settings);
        c.warn_ignored(&fields);
    }
    if let Some(mut fields) = sources.router_settings.and_then(|(n, p)| section(c, n, p)) {
        if let Some(strategy) = c.optional(&mut fields, "routing_strategy", &kinds::STRING) {
            match parse_strategy(&strategy) {
                Ok(s) => settings.routing_strategy = s,
                Err(message) => c.error(fields.path.key("routing_strategy"), message),
            }
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
        c.warn_ignored(&fields);
    }
    settings
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

fn parse_strategy(name: &str) -> Result<RoutingStrategy, String> {
    let name = name.trim();
    if let Some((_, s)) = IMPLEMENTED_STRATEGIES.iter().find(|(n, _)| *n == name) {
        return Ok(*s);
    }
    let implemented: Vec<&str> = IMPLEMENTED_STRATEGIES.iter().map(|(n, _)| *n).collect();
    if PLANNED_STRATEGIES.contains(&name) {
        return Err(format!("routing strategy {name:?} is not implemented yet; supported: {}", implemented.join(", ")));
    }
    let valid: Vec<&str> = implemented.iter().chain(&PLANNED_STRATEGIES).copied().collect();
    Err(format!("unknown routing strategy {name:?}; valid: {}", valid.join(", ")))
}

/// How the summary names a strategy.
pub(crate) fn strategy_name(strategy: RoutingStrategy) -> &'static str {
    IMPLEMENTED_STRATEGIES.iter().find(|(_, s)| *s == strategy).map_or("?", |(n, _)| n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strategies() {
        assert_eq!(parse_strategy("simple-shuffle"), Ok(RoutingStrategy::SimpleShuffle));
        assert_eq!(
            parse_strategy("least-busy").unwrap_err(),
            r#"routing strategy "least-busy" is not implemented yet; supported: simple-shuffle"#
        );
        assert_eq!(
            parse_strategy("fastest").unwrap_err(),
            r#"unknown routing strategy "fastest"; valid: simple-shuffle, least-busy, usage-based-routing, usage-based-routing-v2, latency-based-routing, cost-based-routing"#
        );
        assert_eq!(strategy_name(RoutingStrategy::SimpleShuffle), "simple-shuffle");
    }
}
