//! The best-value provider walk for OpenRouter on the request path (docs/routing.md, "The
//! pareto walk"): a request for a managed model group gets the provider the walk prefers now
//! — injected as `provider.only` on the one deployment (wildcard mode), or by narrowing the
//! group to the deployment pinned to it (pinned mode) — and what its failures teach (429s,
//! input caps, the account's allow-list) reaches every shard and the poller. The poller
//! (`crate::pareto_poller`) publishes the verdicts the walk reads.

pub(crate) mod body;
pub(crate) mod dry_run;
pub mod gauges;
mod learn;
pub(crate) mod steer;

use std::sync::Arc;

use pointwork_core::pareto::ParetoTelemetry;

pub use crate::routes::pareto::Pin;
pub(crate) use learn::learn;
pub(crate) use steer::{refusal_reply, steer, Steered};

/// What the poller has published (read per request for a managed model, without a lock).
pub(crate) fn published(hub: &crate::hub::Hub) -> Arc<ParetoTelemetry> {
    hub.pareto.telemetry.load_full()
}

/// Tells the poller the account's allow-list a 404 revealed.
pub(crate) fn allow_list_learned(hub: &crate::hub::Hub, providers: Vec<String>) {
    hub.pareto.allow_list_learned(providers);
}
