//! The stable strings the pick reports: why a candidate was removed and why a pick happened.
//! They appear in headers, access logs, the dry-run endpoint and docs; each is defined here once.

/// Why a filter removed a candidate. The variants are declared in filter-chain order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RejectReason {
    /// A pass-through deployment (`model: "*"`) of another provider than the requested
    /// name's.
    OtherProvider,
    /// The deployment's provider does not serve the request's route (e.g. embeddings on groq).
    RouteUnsupported,
    /// The deployment's last health check failed, recently (`enable_health_check_routing`).
    Unhealthy,
    /// The deployment cools down after failures.
    CoolingDown,
    /// `model_info.blocked: true`: an admin paused the deployment.
    Blocked,
    /// The deployment's provider spent its `provider_budget_config` budget this period.
    ProviderBudget,
    /// Session or deployment affinity: the conversation is pinned to another candidate.
    AffinityPinned,
    /// Pre-call check: the estimated prompt (+ `max_tokens` where the window is a total)
    /// exceeds the deployment's context window.
    ContextWindow,
    /// Pre-call check: the deployment is outside the request's `allowed_model_region`.
    Region,
    /// Pre-call check: the deployment declares it does not take a requested parameter.
    UnsupportedParams,
    /// Tag filtering: the deployment carries a tag the request excludes (`!tag`).
    TagExcluded,
    /// Tag filtering: the deployment lacks a tag the request requires (`&tag`).
    TagRequired,
    /// Tag filtering: a tagged request, and the deployment matches none of its tags (and is not
    /// a `default` deployment serving in their place).
    TagMismatch,
    /// Tag filtering: an untagged request goes to the `default` deployments, and this is not one.
    TagNotDefault,
    /// The request carries an image; the deployment declares no vision support.
    NoVision,
    /// Order tiers: other survivors set an `order`, this deployment sets none.
    NoOrder,
    /// Order tiers: the deployment's `order` is not the lowest among the survivors (or not the
    /// order an order fallback targets).
    OrderTier,
    /// The attempt excludes this deployment outright.
    Excluded,
    /// The deployment already failed for this request.
    RetrySkipped,
    /// Usage-based routing: this request's tokens would take the deployment past its `tpm`
    /// this minute.
    TpmLimit,
    /// Usage-based routing: one more request would take the deployment past its `rpm` this
    /// minute.
    RpmLimit,
}

impl RejectReason {
    /// Every reason, in filter-chain order.
    pub const ALL: [RejectReason; 21] = [
        RejectReason::OtherProvider,
        RejectReason::RouteUnsupported,
        RejectReason::Unhealthy,
        RejectReason::CoolingDown,
        RejectReason::Blocked,
        RejectReason::ProviderBudget,
        RejectReason::AffinityPinned,
        RejectReason::ContextWindow,
        RejectReason::Region,
        RejectReason::UnsupportedParams,
        RejectReason::TagExcluded,
        RejectReason::TagRequired,
        RejectReason::TagMismatch,
        RejectReason::TagNotDefault,
        RejectReason::NoVision,
        RejectReason::NoOrder,
        RejectReason::OrderTier,
        RejectReason::Excluded,
        RejectReason::RetrySkipped,
        RejectReason::TpmLimit,
        RejectReason::RpmLimit,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            RejectReason::OtherProvider => "other_provider",
            RejectReason::RouteUnsupported => "route_unsupported",
            RejectReason::Unhealthy => "unhealthy",
            RejectReason::CoolingDown => "cooldown",
            RejectReason::Blocked => "blocked",
            RejectReason::ProviderBudget => "provider_budget",
            RejectReason::AffinityPinned => "affinity_pinned",
            RejectReason::ContextWindow => "context_window",
            RejectReason::Region => "region",
            RejectReason::UnsupportedParams => "unsupported_params",
            RejectReason::TagExcluded => "tag_excluded",
            RejectReason::TagRequired => "tag_required",
            RejectReason::TagMismatch => "tag_mismatch",
            RejectReason::TagNotDefault => "tag_not_default",
            RejectReason::NoVision => "no_vision",
            RejectReason::NoOrder => "no_order",
            RejectReason::OrderTier => "order_tier",
            RejectReason::Excluded => "excluded",
            RejectReason::RetrySkipped => "retry_skipped",
            RejectReason::TpmLimit => "tpm_limit",
            RejectReason::RpmLimit => "rpm_limit",
        }
    }

    /// How a route reason counts candidates removed for this reason ("2 in cooldown").
    pub fn phrase(self) -> &'static str {
        match self {
            RejectReason::OtherProvider => "for another provider",
            RejectReason::RouteUnsupported => "without the route",
            RejectReason::Unhealthy => "unhealthy",
            RejectReason::CoolingDown => "in cooldown",
            RejectReason::Blocked => "blocked",
            RejectReason::ProviderBudget => "over their provider's budget",
            RejectReason::AffinityPinned => "not the conversation's pinned deployment",
            RejectReason::ContextWindow => "too small for the prompt",
            RejectReason::Region => "outside the region",
            RejectReason::UnsupportedParams => "without a requested parameter",
            RejectReason::TagExcluded => "with an excluded tag",
            RejectReason::TagRequired => "without a required tag",
            RejectReason::TagMismatch => "not matching the tags",
            RejectReason::TagNotDefault => "not default",
            RejectReason::NoVision => "without vision",
            RejectReason::NoOrder => "without an order",
            RejectReason::OrderTier => "at a later order",
            RejectReason::Excluded => "excluded",
            RejectReason::RetrySkipped => "retry-skipped",
            RejectReason::TpmLimit => "at tpm limit",
            RejectReason::RpmLimit => "at rpm limit",
        }
    }

    /// Whether the reason is a usage limit that lifts when the minute ends.
    pub fn is_usage_limit(self) -> bool {
        matches!(self, RejectReason::TpmLimit | RejectReason::RpmLimit)
    }

    /// Whether the reason is one of the pre-call checks (`enable_pre_call_checks`).
    pub fn is_pre_call_check(self) -> bool {
        matches!(self, RejectReason::ContextWindow | RejectReason::Region | RejectReason::UnsupportedParams)
    }

    /// Whether the reason is the tag filter's (`enable_tag_filtering`).
    pub fn is_tag(self) -> bool {
        matches!(
            self,
            RejectReason::TagExcluded
                | RejectReason::TagRequired
                | RejectReason::TagMismatch
                | RejectReason::TagNotDefault
        )
    }
}

/// Why this pick happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cause {
    /// The request's first attempt.
    Fresh,
    /// A retry after an attempt failed.
    Retry,
    /// The requested name is a deployment id: that deployment serves, no choice was made.
    DeploymentId,
}

impl Cause {
    pub fn as_str(self) -> &'static str {
        match self {
            Cause::Fresh => "fresh",
            Cause::Retry => "retry",
            Cause::DeploymentId => "deployment_id",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_stable() {
        let reasons: Vec<_> = RejectReason::ALL.iter().map(|r| r.as_str()).collect();
        assert_eq!(
            reasons,
            [
                "other_provider",
                "route_unsupported",
                "unhealthy",
                "cooldown",
                "blocked",
                "provider_budget",
                "affinity_pinned",
                "context_window",
                "region",
                "unsupported_params",
                "tag_excluded",
                "tag_required",
                "tag_mismatch",
                "tag_not_default",
                "no_vision",
                "no_order",
                "order_tier",
                "excluded",
                "retry_skipped",
                "tpm_limit",
                "rpm_limit"
            ]
        );
        // Declared in chain order, so the derived order of the enum is the chain's.
        for (i, r) in RejectReason::ALL.iter().enumerate() {
            assert_eq!(*r as usize, i);
        }
        assert_eq!(Cause::Fresh.as_str(), "fresh");
        assert_eq!(Cause::Retry.as_str(), "retry");
        assert_eq!(Cause::DeploymentId.as_str(), "deployment_id");
    }
}
