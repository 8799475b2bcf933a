//! The LiteLLM pick (`docs/routing.md`): resolve the requested name to a model group, run the
//! filter chain over its members, let the configured strategy choose among the survivors; after
//! a failure, the fallback walk says whether to retry, fall back to another group, or stop.
//!
//! What every router shares stays below this folder: the [`crate::Snapshot`] (with the member
//! sets the filters read), the per-shard [`crate::State`], the request's facts, the
//! [`crate::Decision`] and the errors.

pub(crate) mod candidates;
pub(crate) mod filters;
pub mod pick;
pub(crate) mod strategy;
pub mod walk;
