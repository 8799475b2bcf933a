//! The outcome of a pick: the chosen deployment and how it was chosen. The same value feeds
//! response headers, the access log, the dry-run endpoint and error messages.

use std::fmt::Write;

use crate::{Cause, DeploymentIdx, GroupIdx, RejectReason, Snapshot};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    pub deployment: DeploymentIdx,
    /// The group picked from; for a deployment-id request, the deployment's own group.
    pub group: GroupIdx,
    pub cause: Cause,
    /// How many candidates the requested name resolved to, before any filter.
    pub candidates: u32,
    /// Each candidate a filter removed, with that filter's reason, in chain order.
    pub rejected: Vec<(DeploymentIdx, RejectReason)>,
}

impl Decision {
    /// How many candidates were removed for `reason`.
    pub fn rejected_for(&self, reason: RejectReason) -> usize {
        self.rejected.iter().filter(|(_, r)| *r == reason).count()
    }

    /// One sentence on how the deployment was chosen, e.g.
    /// `simple-shuffle picked d1 of 2 candidates (1 in cooldown)`.
    pub fn route_reason(&self, snap: &Snapshot) -> String {
        let id = &snap.deployment(self.deployment).id;
        let mut reason = String::new();
        // Writing into a String cannot fail; the results are ignored for that reason.
        match self.cause {
            Cause::DeploymentId => {
                let _ = write!(reason, "{id} requested by deployment id (filters and strategy skipped)");
            }
            Cause::Fresh | Cause::Retry => {
                let plural = if self.candidates == 1 { "" } else { "s" };
                let _ = write!(
                    reason,
                    "{} picked {id} of {} candidate{plural}",
                    snap.settings.routing_strategy.as_str(),
                    self.candidates
                );
                if self.cause == Cause::Retry {
                    reason.push_str(" on retry");
                }
                let mut separator = " (";
                for r in RejectReason::ALL {
                    let n = self.rejected_for(r);
                    if n > 0 {
                        let _ = write!(reason, "{separator}{n} {}", r.phrase());
                        separator = ", ";
                    }
                }
                if !self.rejected.is_empty() {
                    reason.push(')');
                }
            }
        }
        reason
    }
}
