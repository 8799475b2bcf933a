//! Switchyard's routing engine: the immutable [`Snapshot`], the [`RequestFacts`] of one request,
//! the per-shard [`State`], and the pick that turns a requested name into one deployment.
//!
//! Everything here is a pure function of its inputs: no IO, no clock (`now` is an argument),
//! no global randomness (the caller passes a seeded [`Rng`]).

pub mod attempt;
pub mod cooldown;
pub mod decision;
pub mod deployment;
pub mod error;
pub mod facts;
pub mod failure;
pub mod pick;
pub mod provider;
pub mod reason;
pub mod rng;
pub mod secret;
pub mod snapshot;
pub mod state;

mod cooldown_ends;
mod filter;
mod strategy;
mod window;

pub use attempt::{AttemptPlan, Next};
pub use cooldown::{Cooldown, CooldownStarted, Outcomes};
pub use decision::Decision;
pub use deployment::{Deployment, DeploymentIdx};
pub use error::RouteError;
pub use facts::{RequestFacts, RouteKind};
pub use failure::Failure;
pub use pick::{pick, pick_with_scratch, PickRequest, PickScratch};
pub use provider::Provider;
pub use reason::{Cause, RejectReason};
pub use rng::Rng;
pub use secret::redact;
pub use snapshot::{Group, GroupIdx, RouterSettings, RoutingStrategy, Snapshot, SnapshotError};
pub use state::{DeploymentState, State};
