//! Pointwork's routing engine: the immutable [`Snapshot`], the [`RequestFacts`] of one request,
//! the per-shard [`State`], and the pick that turns a requested name into one deployment.
//!
//! Everything here is a pure function of its inputs: no IO, no clock (`now` is an argument),
//! no global randomness (the caller passes a seeded [`Rng`]).

pub mod affinity;
pub mod budget;
pub mod compatible;
pub mod complexity;
pub mod cooldown;
pub mod decision;
pub mod deployment;
pub mod error;
pub mod event;
pub mod facts;
pub mod failure;
pub mod fallback;
pub mod health;
pub mod key_meter;
pub mod latency;
pub mod pareto;
pub mod pass_through;
pub mod policy;
pub mod provider;
pub mod reason;
pub mod resolve;
pub mod rng;
pub mod secret;
pub mod snapshot;
pub mod state;
pub mod tier;
pub mod upstream_auth;
pub mod usage;

mod carry_over;
mod cooldown_ends;
mod end_cooldown;
mod group;
mod litellm;
mod member_sets;
mod names;
mod settings;
mod window;

pub use litellm::{pick, walk};

pub use affinity::{affinity_hash, pin_key, AffinityKeys, AffinityKinds, AffinitySettings, Pin};
pub use budget::{response_cost, ProviderBudget};
pub use cooldown::{Cooldown, CooldownStarted, Outcomes};
pub use decision::{Basis, Decision};
pub use deployment::{ContextWindow, Deployment, DeploymentIdx};
pub use error::{Emptied, RouteError};
pub use event::Event;
pub use facts::{Param, RequestFacts, RequestParams, RouteKind, NO_FACTS};
pub use failure::Failure;
pub use fallback::{ErrorClass, FallbackList, Fallbacks, RetryPolicy};
pub use health::HealthCheck;
pub use key_meter::{KeyLimits, KeyMeter, KeyRefusal, KeyUsage, MeterWindows, OthersCounts, OwnCounts};
pub use latency::{Latency, LatencyMeasure, LatencySample};
pub use litellm::filters::tags::DEFAULT_TAG;
pub use litellm::pick::{pick, pick_with_scratch, PickRequest, PickScratch};
pub use litellm::walk::{Step, Walk};
pub use member_sets::region_labels;
pub use provider::{Dialect, Provider};
pub use reason::{Cause, RejectReason};
pub use resolve::{wildcard_upstream_model, ModelGroupAlias, Resolution};
pub use rng::Rng;
pub use secret::redact;
pub use snapshot::{
    translate, AllowedFailsPolicy, Group, GroupIdx, RouterSettings, RoutingStrategy, Snapshot, SnapshotError,
};
pub use state::{DeploymentState, State};
pub use upstream_auth::UpstreamAuth;
pub use usage::Usage;
