//! The filter chain. Each filter is one small unit that can only remove candidates, and names,
//! for every candidate it removes, a [`crate::RejectReason`]. The chain's order lives in
//! [`crate::pick`]; a filter that fails open says so in its own code. What the filters read is
//! precomputed: per group in the snapshot's member sets, per deployment in the shard's state.

mod affinity;
mod attempt;
mod budget;
mod capability;
#[cfg(test)]
mod chain_props;
mod health;
mod order;
mod pass_through;
mod pre_call;
pub(crate) mod tags;
mod usage;

pub(crate) use affinity::AffinityFilter;
pub(crate) use attempt::{CooldownFilter, ExcludedFilter, RetrySkipFilter};
pub(crate) use budget::ProviderBudgetFilter;
pub(crate) use capability::{BlockedFilter, RouteCapabilityFilter, VisionFilter};
pub(crate) use health::HealthFilter;
pub(crate) use order::OrderFilter;
pub(crate) use pass_through::PassThroughFilter;
pub(crate) use pre_call::{ContextWindowFilter, RegionFilter, UnsupportedParamsFilter};
pub(crate) use tags::TagFilter;
pub(crate) use usage::UsageLimitFilter;
