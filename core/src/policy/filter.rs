//! The policy filter: 14 steps in a fixed order, each with its literal reason. The first step an
//! endpoint fails is the reason recorded for it: the kind of an endpoint is decided before its
//! status, residency before the provider and model lists, and price last.

use std::fmt;

use crate::policy::{status_serves, EndpointKind, Modality, Policy, PolicyEndpoint, PolicyRequest, SovereigntyClass};

/// Why the filter removed an endpoint; `Display` is the literal reason string.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PolicyReason<'a> {
    /// 1: nothing on this deployment answers a request.
    CatalogueOnly,
    /// 2: neither up nor degraded.
    EndpointStatus(&'a str),
    /// 3: a class neither the policy nor the requested residency admits.
    Residency(SovereigntyClass),
    /// 4: outside the scope of the residency the request named.
    ResidencyRegion(&'a str),
    /// 5: a region the policy's residency values do not name.
    PolicyRegion(&'a str),
    /// 6: speech recognition, embeddings, a reranker.
    NotATextModel,
    /// 7: its provider is in `providers_deny`.
    ProviderDenied,
    /// 8: its provider is missing from a non-empty `providers_allow`.
    ProviderNotAllowed,
    /// 9: its model is in `models_deny`.
    ModelDenied,
    /// 10: its model is missing from a non-empty `models_allow`.
    ModelNotAllowed,
    /// 11: a partner endpoint, partners not allowed.
    PartnerNotAllowed,
    /// 12: the request carries an image, the model has no vision.
    VisionRequired,
    /// 13: the context window is smaller than the input plus `max_tokens`.
    ContextTooSmall { window: u64, needed: u64 },
    /// 14: priced above the cap, in micro-dollars per million tokens.
    PriceAboveCap(u64),
}

impl PolicyReason<'_> {
    /// The step of the filter that gives this reason (1 to 14).
    pub fn step(&self) -> u8 {
        match self {
            PolicyReason::CatalogueOnly => 1,
            PolicyReason::EndpointStatus(_) => 2,
            PolicyReason::Residency(_) => 3,
            PolicyReason::ResidencyRegion(_) => 4,
            PolicyReason::PolicyRegion(_) => 5,
            PolicyReason::NotATextModel => 6,
            PolicyReason::ProviderDenied => 7,
            PolicyReason::ProviderNotAllowed => 8,
            PolicyReason::ModelDenied => 9,
            PolicyReason::ModelNotAllowed => 10,
            PolicyReason::PartnerNotAllowed => 11,
            PolicyReason::VisionRequired => 12,
            PolicyReason::ContextTooSmall { .. } => 13,
            PolicyReason::PriceAboveCap(_) => 14,
        }
    }
}

impl fmt::Display for PolicyReason<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PolicyReason::CatalogueOnly => f.write_str("catalogue_only"),
            PolicyReason::EndpointStatus(status) => write!(f, "endpoint_{status}"),
            PolicyReason::Residency(class) => write!(f, "residency:{class}"),
            PolicyReason::ResidencyRegion(region) => write!(f, "residency_region:{region}"),
            PolicyReason::PolicyRegion(region) => write!(f, "policy_region:{region}"),
            PolicyReason::NotATextModel => f.write_str("not_a_text_model"),
            PolicyReason::ProviderDenied => f.write_str("provider_denied"),
            PolicyReason::ProviderNotAllowed => f.write_str("provider_not_allowed"),
            PolicyReason::ModelDenied => f.write_str("model_denied"),
            PolicyReason::ModelNotAllowed => f.write_str("model_not_allowed"),
            PolicyReason::PartnerNotAllowed => f.write_str("partner_not_allowed"),
            PolicyReason::VisionRequired => f.write_str("vision_required"),
            PolicyReason::ContextTooSmall { window, needed } => write!(f, "context_too_small:{window}<{needed}"),
            PolicyReason::PriceAboveCap(micros) => write!(f, "price_above_cap:{micros}"),
        }
    }
}

/// Micro-dollars, as the price reason writes a price per million tokens.
pub fn micros(usd: f64) -> u64 {
    (usd * 1_000_000.0).round() as u64
}

/// The first step `e` fails, or `None` when it survives. `status` is the endpoint's status as
/// the shards know it now.
pub fn first_reason<'a>(
    e: &'a PolicyEndpoint,
    status: &'a str,
    policy: &Policy,
    req: &PolicyRequest,
) -> Option<PolicyReason<'a>> {
    if e.kind == EndpointKind::CatalogueOnly {
        return Some(PolicyReason::CatalogueOnly);
    }
    if !status_serves(status) {
        return Some(PolicyReason::EndpointStatus(status));
    }
    // catalogue_unknown does not know where it runs: no residency admits it.
    let admitted = e.class != SovereigntyClass::CatalogueUnknown
        && policy.residency_allowed.classes.contains(&e.class)
        && req.residency.as_ref().is_none_or(|r| r.classes.contains(&e.class));
    if !admitted {
        return Some(PolicyReason::Residency(e.class));
    }
    if req.residency.as_ref().is_some_and(|r| !r.scope.contains(&e.region)) {
        return Some(PolicyReason::ResidencyRegion(&e.region));
    }
    if !policy.residency_allowed.admits_region(&e.region) {
        return Some(PolicyReason::PolicyRegion(&e.region));
    }
    if !e.modalities.contains(Modality::Text) {
        return Some(PolicyReason::NotATextModel);
    }
    if policy.provider_denied(&e.provider) {
        return Some(PolicyReason::ProviderDenied);
    }
    if policy.provider_not_allowed(&e.provider) {
        return Some(PolicyReason::ProviderNotAllowed);
    }
    if policy.model_denied(&e.model) {
        return Some(PolicyReason::ModelDenied);
    }
    if policy.model_not_allowed(&e.model) {
        return Some(PolicyReason::ModelNotAllowed);
    }
    if e.partner && !req.partners_allowed(policy) {
        return Some(PolicyReason::PartnerNotAllowed);
    }
    if req.has_image && !e.modalities.contains(Modality::Vision) {
        return Some(PolicyReason::VisionRequired);
    }
    if let Some(window) = e.context_window.filter(|&w| w < req.needed_tokens) {
        return Some(PolicyReason::ContextTooSmall { window, needed: req.needed_tokens });
    }
    match (e.usd_per_1m, req.price_cap(policy)) {
        (Some(price), Some(cap)) if price > cap => Some(PolicyReason::PriceAboveCap(micros(price))),
        _ => None,
    }
}
