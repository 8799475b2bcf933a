//! Health-check routing: the last background health check of each deployment (the filter that
//! skips deployments whose recent check failed is in the pick's filters).

use std::time::{Duration, Instant};

/// The result of a deployment's last health check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HealthCheck {
    pub healthy: bool,
    pub checked_at: Instant,
}

impl HealthCheck {
    /// Whether this result says "unhealthy" and is younger than `staleness` at `now`. A result
    /// stamped after `now` (another shard's clock read a little later) is as fresh as can be.
    pub fn is_fresh_failure(&self, now: Instant, staleness: Duration) -> bool {
        !self.healthy && now.saturating_duration_since(self.checked_at) < staleness
    }

    /// Keeps whichever of the two results is the later check.
    pub(crate) fn later(current: Option<HealthCheck>, new: HealthCheck) -> HealthCheck {
        match current {
            Some(current) if current.checked_at > new.checked_at => current,
            _ => new,
        }
    }
}
