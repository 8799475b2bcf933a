//! The outcome of a pick: the chosen deployment and how it was chosen. The same value feeds
//! response headers, the access log, the dry-run endpoint and error messages.

use std::fmt::Write;
use std::time::Duration;

use crate::deployment::DeploymentIdx;
use crate::group::GroupIdx;
use crate::latency::LatencyMeasure;
use crate::reason::{Cause, RejectReason};
use crate::snapshot::Snapshot;

#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    pub deployment: DeploymentIdx,
    /// The group picked from; for a deployment-id request, the deployment's own group.
    pub group: GroupIdx,
    pub cause: Cause,
    /// How many candidates the requested name resolved to, before any filter.
    pub candidates: u32,
    /// Each candidate a filter removed, with that filter's reason, in chain order.
    pub rejected: Vec<(DeploymentIdx, RejectReason)>,
    /// What the strategy compared for the winner.
    pub basis: Basis,
    /// For a wildcard group (`openai/*`): the byte range of the requested name its `*`
    /// matched, which fills the `*` of the deployment's upstream model.
    pub wildcard: Option<(u32, u32)>,
}

/// The strategy's input for the deployment it chose: why it won.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Basis {
    /// No choice was made (a deployment id was requested).
    None,
    /// simple-shuffle: the winner's shuffle weight (a weighted draw, not a comparison).
    Weight(u64),
    /// least-busy: requests in flight to the winner on this shard.
    InFlight(u32),
    /// latency-based-routing: the winner's latency average and which one it is.
    Latency { latency: Duration, measure: LatencyMeasure },
    /// usage-based-routing-v2: the winner's tokens and requests this minute.
    Usage { tokens: u64, requests: u64 },
    /// cost-based-routing: the winner's input + output dollars per token; `None` = unknown
    /// (every survivor's price was unknown).
    Price(Option<f64>),
}

impl Basis {
    /// The parenthesised part of a route reason that says why the winner won, if any.
    fn write_why(&self, out: &mut String) -> bool {
        // Writing into a String cannot fail; the results are ignored for that reason.
        match *self {
            Basis::None | Basis::Weight(_) => return false,
            Basis::InFlight(n) => {
                let plural = if n == 1 { "" } else { "s" };
                let _ = write!(out, "fewest in flight: {n} request{plural}");
            }
            Basis::Latency { measure: LatencyMeasure::Untried, .. } => out.push_str("untried, explored first"),
            Basis::Latency { latency, measure } => {
                let what = match measure {
                    LatencyMeasure::TimeToFirstToken => "lowest time to first token",
                    _ => "lowest latency",
                };
                let _ = write!(out, "{what} {:.1} ms", latency.as_secs_f64() * 1000.0);
            }
            Basis::Usage { tokens, requests } => {
                let _ = write!(out, "lowest usage this minute: {tokens} tokens, {requests} requests");
            }
            Basis::Price(Some(price)) => {
                let _ = write!(out, "cheapest: ${:.2} per 1M input+output tokens", price * 1e6);
            }
            Basis::Price(None) => out.push_str("no known price"),
        }
        true
    }
}

impl Decision {
    /// How many candidates were removed for `reason`.
    pub fn rejected_for(&self, reason: RejectReason) -> usize {
        self.rejected.iter().filter(|(_, r)| *r == reason).count()
    }

    /// One sentence on how the deployment was chosen, e.g.
    /// `simple-shuffle picked d1 of 2 candidates (1 in cooldown)` or
    /// `latency-based-routing picked d1 of 3 candidates (lowest latency 12.4 ms; 1 in cooldown)`.
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
                let mut open = false;
                let mut separator = " (";
                let mut why = String::new();
                if self.basis.write_why(&mut why) {
                    let _ = write!(reason, "{separator}{why}");
                    (open, separator) = (true, "; ");
                }
                for r in RejectReason::ALL {
                    let n = self.rejected_for(r);
                    if n > 0 {
                        let _ = write!(reason, "{separator}{n} {}", r.phrase());
                        (open, separator) = (true, ", ");
                    }
                }
                if open {
                    reason.push(')');
                }
            }
        }
        reason
    }
}
