//! The policy router (see `docs/routing.md`, "The policy router"): a request that runs under a
//! policy is routed by a pure function — filter the endpoints to what the policy allows (14
//! ordered steps, each with its literal reason), score the survivors, take the highest — and it
//! says why in one sentence. Residency is a filter, never a preference: when nothing survives,
//! the request is refused, and failover never leaves the filtered set.

mod admit;
mod decide;
mod endpoint;
mod filter;
mod outcomes;
mod residency;
mod rules;
mod score;

pub use admit::{admit, Admission, AdmitRefusal};
pub use decide::{decide, PolicyDecision, PolicyRefusal, TieBreak, DEFAULT_TASK, MAX_ATTEMPTS};
pub use endpoint::{
    status_serves, EndpointKind, Modalities, Modality, PolicyAttrs, PolicyEndpoint, SovereigntyClass,
    DEFAULT_DOCS_COMPLETENESS, DEFAULT_FIT,
};
pub use filter::{first_reason, micros, PolicyReason};
pub use outcomes::{SharedLatency, SharedOutcomes};
pub use residency::{region_in_eu, RegionScope, Residency, ResidencyAllowed};
pub use rules::{Policy, PolicyRequest};
pub use score::{score, Live, ScoreTerms, Scored, DEFAULT_LATENCY_MS};
