//! The provider budget limiter (LiteLLM's `provider_budget_config`): each provider may spend
//! `budget_limit` US dollars per `time_period`; once it has, its deployments leave the chain
//! (a callback filter) until the period ends.
//!
//! Spend is what the responses' usage costs at the deployment's prices (`input_cost_per_token`
//! × prompt tokens + `output_cost_per_token` × completion tokens, from the deployment or the
//! model cost map). A period opens with the first spend and closes `time_period` later, as
//! LiteLLM's budget keys with a TTL do. Every shard counts every shard's spend (events).

use std::time::{Duration, Instant};

use crate::deployment::Deployment;
use crate::provider::Provider;
use crate::window::FixedWindow;

/// One provider's budget.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProviderBudget {
    pub provider: Provider,
    /// US dollars per period.
    pub budget_limit: f64,
    pub time_period: Duration,
}

/// What one response cost at the deployment's prices; `None` when a price is unknown.
pub fn response_cost(d: &Deployment, prompt_tokens: u64, completion_tokens: u64) -> Option<f64> {
    Some(d.input_cost_per_token? * prompt_tokens as f64 + d.output_cost_per_token? * completion_tokens as f64)
}

/// Spend per provider (by `Provider::ALL` position), each in its own period.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Spend {
    windows: Box<[FixedWindow<Dollars>]>,
}

impl Default for Spend {
    fn default() -> Spend {
        Spend { windows: vec![FixedWindow::default(); Provider::ALL.len()].into_boxed_slice() }
    }
}

/// `f64` dollars with the `Copy + Default` a window counts in.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Dollars(pub(crate) f64);

impl Spend {
    pub(crate) fn add(&mut self, provider: Provider, dollars: f64, at: Instant, period: Duration) {
        if dollars.is_finite() && dollars > 0.0 {
            self.windows[provider.index()].open_at(at, period).0 += dollars;
        }
    }

    pub(crate) fn at(&self, provider: Provider, now: Instant) -> f64 {
        self.windows[provider.index()].counts_at(now).0
    }
}
