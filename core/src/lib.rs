//! Switchyard's routing engine: the immutable [`Snapshot`], the [`RequestFacts`] of one request,
//! the per-shard [`State`], and the pick that turns a requested name into one deployment.
//!
//! Everything here is a pure function of its inputs: no IO, no clock (`now` is an argument),
//! no global randomness (the caller passes a seeded [`Rng`]).

pub mod deployment;
pub mod facts;
pub mod provider;
pub mod snapshot;

pub use deployment::{Deployment, DeploymentIdx};
pub use facts::{RequestFacts, RouteKind};
pub use provider::Provider;
pub use snapshot::{Group, GroupIdx, RouterSettings, RoutingStrategy, Snapshot, SnapshotError};
