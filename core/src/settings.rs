//! The router settings the pick and the attempt loop read (`router_settings` and the
//! router keys of `litellm_settings`), with LiteLLM's defaults.

use std::time::Duration;

use crate::affinity::AffinitySettings;
use crate::budget::ProviderBudget;
use crate::failure::Failure;
use crate::fallback::{Fallbacks, RetryPolicy};
use crate::provider::Provider;
use crate::resolve::ModelGroupAlias;

/// `router_settings.routing_strategy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum RoutingStrategy {
    /// Weighted random by `weight`, else `rpm`, else `tpm`.
    #[default]
    SimpleShuffle,
    /// Fewest requests in flight on this shard.
    LeastBusy,
    /// Lowest latency EWMA (time to first token for streams), within `lowest_latency_buffer`.
    LatencyBased,
    /// Lowest tokens used this minute, among the deployments under their rpm/tpm limits.
    UsageBasedV2,
    /// Cheapest input + output price per token.
    CostBased,
}

impl RoutingStrategy {
    pub const ALL: [RoutingStrategy; 5] = [
        RoutingStrategy::SimpleShuffle,
        RoutingStrategy::LeastBusy,
        RoutingStrategy::LatencyBased,
        RoutingStrategy::UsageBasedV2,
        RoutingStrategy::CostBased,
    ];

    /// The name LiteLLM's config uses (`simple-shuffle`, `latency-based-routing`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            RoutingStrategy::SimpleShuffle => "simple-shuffle",
            RoutingStrategy::LeastBusy => "least-busy",
            RoutingStrategy::LatencyBased => "latency-based-routing",
            RoutingStrategy::UsageBasedV2 => "usage-based-routing-v2",
            RoutingStrategy::CostBased => "cost-based-routing",
        }
    }

    pub fn from_name(name: &str) -> Option<RoutingStrategy> {
        RoutingStrategy::ALL.into_iter().find(|s| s.as_str() == name)
    }
}

/// The router settings the pick and the attempt loop read, with LiteLLM's defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct RouterSettings {
    pub routing_strategy: RoutingStrategy,
    /// Retries after the first attempt (LiteLLM's default: 2).
    pub num_retries: u32,
    /// Failures tolerated before a cooldown. `None` = not set: LiteLLM's failure-rate logic.
    pub allowed_fails: Option<u32>,
    /// How long a deployment cools down (LiteLLM's default: 5 s).
    pub cooldown_time: Duration,
    /// Whole-request timeout for non-streaming calls (LiteLLM's default: 6000 s).
    pub timeout: Duration,
    /// Timeout for streaming calls; `None` = `timeout`.
    pub stream_timeout: Option<Duration>,
    pub disable_cooldowns: bool,
    /// `enable_pre_call_checks`; reported in the "no deployments" error.
    pub enable_pre_call_checks: bool,
    /// `routing_strategy_args.lowest_latency_buffer`: latency-based routing chooses at random
    /// among the deployments within `lowest * (1 + buffer)` (LiteLLM's default: 0). Finite, ≥ 0.
    pub lowest_latency_buffer: f64,
    /// `enable_health_check_routing`: skip deployments whose last health check failed.
    pub enable_health_check_routing: bool,
    /// `health_check_staleness_threshold`: a health result older than this is ignored.
    pub health_check_staleness_threshold: Duration,
    /// `enable_tag_filtering`: requests' tags select deployments by `litellm_params.tags`.
    pub enable_tag_filtering: bool,
    /// `tag_filtering_match_any`: a tagged request matches a deployment carrying any of its
    /// plain tags (default); `false`: all of them.
    pub tag_filtering_match_any: bool,
    /// `allowed_fails_policy`: failures tolerated per error class before a cooldown. With
    /// health-check routing, having one also makes the cooldown filter fail open.
    pub allowed_fails_policy: Option<AllowedFailsPolicy>,
    /// `fallbacks`, `context_window_fallbacks`, `content_policy_fallbacks`, `default_fallbacks`,
    /// `max_fallbacks`: where the fallback walk goes after a group failed.
    pub fallbacks: Fallbacks,
    /// `retry_policy`: retries per error class instead of `num_retries`.
    pub retry_policy: RetryPolicy,
    /// `model_group_alias`: more names for groups.
    pub model_group_alias: Vec<ModelGroupAlias>,
    /// Session and deployment affinity: which groups keep conversations pinned, for how long.
    pub affinity: AffinitySettings,
    /// `provider_budget_config`: dollars each provider may spend per period.
    pub provider_budgets: Vec<ProviderBudget>,
    /// `retry_after`: how long to wait before a retry (LiteLLM's default: 0).
    pub retry_after: Duration,
    /// The provider of each bare model name, for pass-through deployments (empty without
    /// them).
    pub model_providers: std::sync::Arc<crate::pass_through::ModelProviders>,
}

/// `router_settings.allowed_fails_policy`: how many failures of each error class a deployment
/// may have before it cools down; a class not set falls back to `allowed_fails`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AllowedFailsPolicy {
    pub bad_request: Option<u32>,
    pub authentication: Option<u32>,
    pub timeout: Option<u32>,
    pub rate_limit: Option<u32>,
    pub content_policy_violation: Option<u32>,
    pub internal_server_error: Option<u32>,
}

impl AllowedFailsPolicy {
    /// LiteLLM's keys, in the order of [`AllowedFailsPolicy::get`]'s index.
    pub const KEYS: [&'static str; 6] = [
        "BadRequestErrorAllowedFails",
        "AuthenticationErrorAllowedFails",
        "TimeoutErrorAllowedFails",
        "RateLimitErrorAllowedFails",
        "ContentPolicyViolationErrorAllowedFails",
        "InternalServerErrorAllowedFails",
    ];

    fn field(&mut self, key: &str) -> Option<&mut Option<u32>> {
        Some(match key {
            "BadRequestErrorAllowedFails" => &mut self.bad_request,
            "AuthenticationErrorAllowedFails" => &mut self.authentication,
            "TimeoutErrorAllowedFails" => &mut self.timeout,
            "RateLimitErrorAllowedFails" => &mut self.rate_limit,
            "ContentPolicyViolationErrorAllowedFails" => &mut self.content_policy_violation,
            "InternalServerErrorAllowedFails" => &mut self.internal_server_error,
            _ => return None,
        })
    }

    /// Sets the count for LiteLLM's key; `false` when the key is not one of [`Self::KEYS`].
    pub fn set(&mut self, key: &str, count: u32) -> bool {
        match self.field(key) {
            Some(f) => {
                *f = Some(count);
                true
            }
            None => false,
        }
    }

    /// The failures tolerated before a cooldown for `failure`'s error class, if the policy sets
    /// it (LiteLLM's `get_allowed_fails_from_policy`). A content-policy refusal is a 400 here,
    /// which never starts a cooldown.
    pub fn for_failure(&self, failure: Failure) -> Option<u32> {
        match failure {
            Failure::Status(401 | 403) => self.authentication,
            Failure::Status(408) | Failure::Timeout => self.timeout,
            Failure::Status(429) => self.rate_limit,
            Failure::Status(400..=499) => self.bad_request,
            Failure::Status(_) | Failure::Connect | Failure::Protocol => self.internal_server_error,
        }
    }

    /// The count for LiteLLM's key, if set.
    pub fn get(&self, key: &str) -> Option<u32> {
        let mut copy = *self;
        copy.field(key).and_then(|f| *f)
    }
}

impl RouterSettings {
    /// The budget of `provider`, if it has one.
    pub fn budget_of(&self, provider: Provider) -> Option<&ProviderBudget> {
        self.provider_budgets.iter().find(|b| b.provider == provider)
    }
}

impl Default for RouterSettings {
    fn default() -> Self {
        RouterSettings {
            routing_strategy: RoutingStrategy::SimpleShuffle,
            num_retries: 2,
            allowed_fails: None,
            cooldown_time: Duration::from_secs(5),
            timeout: Duration::from_secs(6000),
            stream_timeout: None,
            disable_cooldowns: false,
            enable_pre_call_checks: false,
            lowest_latency_buffer: 0.0,
            enable_health_check_routing: false,
            health_check_staleness_threshold: Duration::from_secs(60),
            enable_tag_filtering: false,
            tag_filtering_match_any: true,
            allowed_fails_policy: None,
            fallbacks: Fallbacks::default(),
            retry_policy: RetryPolicy::default(),
            model_group_alias: Vec::new(),
            affinity: AffinitySettings::default(),
            provider_budgets: Vec::new(),
            retry_after: Duration::ZERO,
            model_providers: Default::default(),
        }
    }
}
