//! A policy (`pointwork.policies`), and what one request asks within it (its `llmeu` object or
//! `x-llmeu-*` headers, and the facts the filter reads).

use crate::policy::{Residency, ResidencyAllowed};

/// One named policy, with the spec's defaults.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Policy {
    /// Its name in `pointwork.policies`: the `policy_id` a response reports.
    pub id: Box<str>,
    pub residency_allowed: ResidencyAllowed,
    pub providers_allow: Vec<Box<str>>,
    pub providers_deny: Vec<Box<str>>,
    pub models_allow: Vec<Box<str>>,
    pub models_deny: Vec<Box<str>>,
    pub allow_partner_endpoints: bool,
    /// US dollars per million tokens (input and output together).
    pub max_usd_per_1m: Option<f64>,
    /// Days a provider may keep a prompt: only 0 is implemented (`None`: not set).
    pub retention: Option<u32>,
    /// The data classes requests may carry (empty: any).
    pub data_classes_allowed: Vec<Box<str>>,
    /// US dollars a day for every request under the policy.
    pub max_usd_per_day: Option<f64>,
}

impl Policy {
    pub fn new(id: &str) -> Policy {
        Policy { id: id.into(), ..Policy::default() }
    }

    fn listed(list: &[Box<str>], name: &str) -> bool {
        list.iter().any(|x| &**x == name)
    }

    pub(crate) fn provider_denied(&self, provider: &str) -> bool {
        Policy::listed(&self.providers_deny, provider)
    }

    pub(crate) fn provider_not_allowed(&self, provider: &str) -> bool {
        !self.providers_allow.is_empty() && !Policy::listed(&self.providers_allow, provider)
    }

    pub(crate) fn model_denied(&self, model: &str) -> bool {
        Policy::listed(&self.models_deny, model)
    }

    pub(crate) fn model_not_allowed(&self, model: &str) -> bool {
        !self.models_allow.is_empty() && !Policy::listed(&self.models_allow, model)
    }
}

/// What one request asks of the policy router.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct PolicyRequest {
    /// The model named by slug; `None`: the auto model, every survivor competes.
    pub model: Option<Box<str>>,
    /// `llmeu.residency`: narrows the policy's.
    pub residency: Option<Residency>,
    /// `llmeu.max_usd_per_1m`: can only lower the policy's cap (a higher one is ignored).
    pub max_usd_per_1m: Option<f64>,
    /// `llmeu.allow_partners`: admits partner endpoints for this call.
    pub allow_partners: bool,
    /// `llmeu.task` (`coding`, `chat`, …) for `task_fit`.
    pub task: Option<Box<str>>,
    /// `llmeu.language` for `language_fit`.
    pub language: Option<Box<str>>,
    pub has_image: bool,
    /// The prompt's estimated tokens plus the output it asks for.
    pub needed_tokens: u64,
}

impl PolicyRequest {
    /// The price ceiling in force: the lower of the policy's and the request's.
    pub fn price_cap(&self, policy: &Policy) -> Option<f64> {
        match (policy.max_usd_per_1m, self.max_usd_per_1m) {
            (Some(p), Some(r)) => Some(p.min(r)),
            (p, r) => p.or(r),
        }
    }

    pub fn partners_allowed(&self, policy: &Policy) -> bool {
        policy.allow_partner_endpoints || self.allow_partners
    }

    /// The residency the route reason and the 409 name: the requested one, else the policy's
    /// own description.
    pub fn residency_name<'a>(&'a self, policy: &Policy) -> &'a str {
        match &self.residency {
            Some(r) => &r.name,
            None => policy.residency_allowed.description(),
        }
    }
}
