//! The stable strings the pick reports: why a candidate was removed and why a pick happened.
//! They appear in headers, access logs, the dry-run endpoint and docs; each is defined here once.

/// Why a filter removed a candidate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RejectReason {
    /// The deployment's last health check failed, recently (`enable_health_check_routing`).
    Unhealthy,
    /// The deployment cools down after failures.
    CoolingDown,
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
    pub const ALL: [RejectReason; 5] = [
        RejectReason::Unhealthy,
        RejectReason::CoolingDown,
        RejectReason::RetrySkipped,
        RejectReason::TpmLimit,
        RejectReason::RpmLimit,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            RejectReason::Unhealthy => "unhealthy",
            RejectReason::CoolingDown => "cooldown",
            RejectReason::RetrySkipped => "retry_skipped",
            RejectReason::TpmLimit => "tpm_limit",
            RejectReason::RpmLimit => "rpm_limit",
        }
    }

    /// How a route reason counts candidates removed for this reason ("2 in cooldown").
    pub fn phrase(self) -> &'static str {
        match self {
            RejectReason::Unhealthy => "unhealthy",
            RejectReason::CoolingDown => "in cooldown",
            RejectReason::RetrySkipped => "retry-skipped",
            RejectReason::TpmLimit => "at tpm limit",
            RejectReason::RpmLimit => "at rpm limit",
        }
    }

    /// Whether the reason is a usage limit that lifts when the minute ends.
    pub fn is_usage_limit(self) -> bool {
        matches!(self, RejectReason::TpmLimit | RejectReason::RpmLimit)
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
        assert_eq!(reasons, ["unhealthy", "cooldown", "retry_skipped", "tpm_limit", "rpm_limit"]);
        assert_eq!(Cause::Fresh.as_str(), "fresh");
        assert_eq!(Cause::Retry.as_str(), "retry");
        assert_eq!(Cause::DeploymentId.as_str(), "deployment_id");
    }
}
