//! `pointwork.policies`: named policies for the policy router, each with the spec's fields and
//! defaults, and the references to them (`pointwork.default_policy`, a virtual key's `policy`).
//! Strict like the rest of `pointwork:`: an unknown key is an error naming the valid ones.
//!
//! ```yaml
//! pointwork:
//!   policies:
//!     eu-strict:
//!       residency_allowed: [eu_owned_eu_operated, de, fr]   # classes, then regions that narrow them
//!       providers_deny: [openai]
//!       max_usd_per_1m: 5
//!       retention: 0
//!   default_policy: eu-strict
//! ```

use pointwork_core::policy::{Policy, ResidencyAllowed, SovereigntyClass};
use pointwork_core::Deployment;

use crate::check::{Checker, Fields, KeyPath};
use crate::kinds::{self, is_region};
use crate::node::Node;

const POLICY_KEYS: [&str; 10] = [
    "residency_allowed",
    "providers_allow",
    "providers_deny",
    "models_allow",
    "models_deny",
    "allow_partner_endpoints",
    "max_usd_per_1m",
    "retention",
    "data_classes_allowed",
    "max_usd_per_day",
];

/// The policies read, and every name the section defines (policies with errors too, so a
/// reference to one is not reported again).
pub(crate) struct Policies {
    pub(crate) list: Vec<Policy>,
    /// `None`: `pointwork.policies` is not a map, so references to it are not checked.
    pub(crate) names: Option<Vec<String>>,
}

pub(crate) fn read_policies(c: &mut Checker, fields: &mut Fields) -> Policies {
    let mut out = Policies { list: Vec::new(), names: Some(Vec::new()) };
    let Some((node, path)) = fields.take("policies") else { return out };
    if matches!(node, Node::Null) {
        return out;
    }
    let Some(map) = c.map(node, path) else {
        out.names = None;
        return out;
    };
    for (name, node, path) in map.untaken() {
        out.names.get_or_insert_with(Vec::new).push(name.to_string());
        if !is_policy_name(name) {
            // The name is the `policy_id` of responses, headers included.
            c.error(&path, "a policy name is letters, digits, '.', '_' or '-'");
            continue;
        }
        if let Some(policy) = read_policy(c, name, node, path) {
            out.list.push(policy);
        }
    }
    out
}

fn is_policy_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// Reports a reference (`default_policy`, a key's `policy`) to a policy the section does not
/// define.
pub(crate) fn check_policy_ref(c: &mut Checker, names: &Option<Vec<String>>, name: &str, path: &KeyPath) {
    let Some(names) = names else { return };
    if names.iter().any(|n| n == name) {
        return;
    }
    let known = if names.is_empty() {
        "pointwork.policies defines none".to_string()
    } else {
        format!("policies: {}", names.join(", "))
    };
    c.error(path, format!("unknown policy {name:?}; {known}"));
}

/// One policy; `null` is a policy with every default.
fn read_policy(c: &mut Checker, name: &str, node: &Node, path: KeyPath) -> Option<Policy> {
    let mut p = Policy::new(name);
    if matches!(node, Node::Null) {
        return Some(p);
    }
    let mut f = c.map(node, path)?;
    if let Some(residency) = read_residency_allowed(c, &mut f) {
        p.residency_allowed = residency;
    }
    let mut list = |key: &str| -> Vec<Box<str>> {
        let names = c.optional(&mut f, key, &kinds::STRING_LIST).unwrap_or_default();
        names.into_iter().map(Box::from).collect()
    };
    p.providers_allow = list("providers_allow");
    p.providers_deny = list("providers_deny");
    p.models_allow = list("models_allow");
    p.models_deny = list("models_deny");
    p.data_classes_allowed = list("data_classes_allowed");
    p.allow_partner_endpoints = c.optional(&mut f, "allow_partner_endpoints", &kinds::BOOL).unwrap_or(false);
    p.max_usd_per_1m = c.optional(&mut f, "max_usd_per_1m", &kinds::NON_NEGATIVE_NUMBER);
    p.max_usd_per_day = c.optional(&mut f, "max_usd_per_day", &kinds::NON_NEGATIVE_NUMBER);
    let retention_path = f.path.key("retention");
    match c.optional(&mut f, "retention", &kinds::NON_NEGATIVE_U32) {
        Some(0) => p.retention = Some(0),
        Some(days) => c.error(
            retention_path,
            format!("only zero retention is implemented (days a provider may keep a prompt), got {days}"),
        ),
        None => {}
    }
    c.refuse_unknown(&f, &POLICY_KEYS);
    Some(p)
}

/// `residency_allowed`: when given, exactly the classes and regions it lists (the default,
/// both EU classes, applies only when the key is absent).
fn read_residency_allowed(c: &mut Checker, f: &mut Fields) -> Option<ResidencyAllowed> {
    let (node, path) = f.take("residency_allowed")?;
    if matches!(node, Node::Null) {
        return None;
    }
    let items = c.list(node, &path)?;
    let mut residency = ResidencyAllowed { classes: Vec::new(), regions: Vec::new() };
    let mut bad = false;
    for (i, item) in items.iter().enumerate() {
        let item_path = path.index(i);
        let Some(value) = c.read(item, &item_path, &kinds::NON_EMPTY_STRING) else {
            bad = true;
            continue;
        };
        match residency_value(value.trim()) {
            Ok(()) => residency.add(value.trim()),
            Err(message) => {
                c.error(item_path, message);
                bad = true;
            }
        }
    }
    // Regions only narrow the classes: with no class, nothing could ever serve.
    if !bad && residency.classes.is_empty() {
        c.error(
            &path,
            format!(
                "names no sovereignty class, so no endpoint could serve under this policy; add one or more of {}",
                addressable_classes()
            ),
        );
    }
    (!bad).then_some(residency)
}

/// Whether one value of `residency_allowed` is a class or a region, or why not.
fn residency_value(value: &str) -> Result<(), String> {
    // The request's named residencies look like regions but are not: say what they stand for.
    let named = match value {
        "eu-hosted" => Some("eu_owned_eu_operated, eu_region_of_non_eu_parent, eu"),
        "eu-owned" => Some("eu_owned_eu_operated, eu"),
        "any" => Some("eu_owned_eu_operated, eu_region_of_non_eu_parent, non_eu"),
        _ => None,
    };
    match (SovereigntyClass::from_name(value), named) {
        (Some(SovereigntyClass::CatalogueUnknown), _) => Err(
            "catalogue_unknown is not an addressable residency: an endpoint of that class never serves a policy-routed request"
                .to_string(),
        ),
        (Some(_), _) => Ok(()),
        (None, Some(expansion)) => Err(format!(
            "{value:?} is a residency a request names; residency_allowed lists sovereignty classes and regions: write {expansion}"
        )),
        (None, None) if is_region(value) => Ok(()),
        (None, None) => Err(format!(
            "{value:?} is neither a sovereignty class ({}) nor a region (a country code like de, a region like de-ber, or eu)",
            addressable_classes()
        )),
    }
}

fn addressable_classes() -> String {
    let classes = SovereigntyClass::ALL.into_iter().filter(|c| *c != SovereigntyClass::CatalogueUnknown);
    classes.map(|c| c.as_str()).collect::<Vec<_>>().join(", ")
}

/// A price cap cannot cap an endpoint without a price: say which ones it never stops.
pub(crate) fn warn_uncapped(c: &mut Checker, policies: &[Policy], deployments: &[Deployment], section: &KeyPath) {
    // A catalogue row never serves, priced or not.
    let unpriced: Vec<&str> = deployments
        .iter()
        .filter(|d| d.policy.as_ref().is_some_and(|p| p.kind != pointwork_core::policy::EndpointKind::CatalogueOnly))
        .filter(|d| d.price_per_token().is_none())
        .map(|d| d.id.as_str())
        .collect();
    if unpriced.is_empty() {
        return;
    }
    for p in policies.iter().filter(|p| p.max_usd_per_1m.is_some()) {
        let path = section.key("policies").key(&p.id).key("max_usd_per_1m");
        c.warn(
            path,
            format!(
                "these deployments have no input_cost_per_token/output_cost_per_token (nor a model_cost_map entry) and are never above this cap: {}",
                unpriced.join(", ")
            ),
        );
    }
}
