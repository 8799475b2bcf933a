//! The stable strings the pick reports: why a candidate was removed and why a pick happened.
//! They appear in headers, access logs, the dry-run endpoint and docs; each is defined here once.

/// Why a filter removed a candidate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RejectReason {
    /// The deployment cools down after failures.
    CoolingDown,
    /// The deployment already failed for this request.
    RetrySkipped,
}

impl RejectReason {
    /// Every reason, in filter-chain order.
    pub const ALL: [RejectReason; 2] = [RejectReason::CoolingDown, RejectReason::RetrySkipped];

    pub fn as_str(self) -> &'static str {
        match self {
            RejectReason::CoolingDown => "cooldown",
            RejectReason::RetrySkipped => "retry_skipped",
        }
    }

    /// How a route reason counts candidates removed for this reason ("2 in cooldown").
    pub fn phrase(self) -> &'static str {
        match self {
            RejectReason::CoolingDown => "in cooldown",
            RejectReason::RetrySkipped => "retry-skipped",
        }
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
        assert_eq!(reasons, ["cooldown", "retry_skipped"]);
        assert_eq!(Cause::Fresh.as_str(), "fresh");
        assert_eq!(Cause::Retry.as_str(), "retry");
        assert_eq!(Cause::DeploymentId.as_str(), "deployment_id");
    }
}
