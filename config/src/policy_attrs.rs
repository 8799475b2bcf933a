//! The policy router's endpoint attributes in `model_info` (`kind`, `status`,
//! `sovereignty_class`, `region`, …), each checked with its key path. An entry that sets any of
//! them is a policy endpoint (`Deployment::policy`); one that sets none is not, and routes as
//! before. The values stay in the entry's `model_info` JSON, as read.

use pointwork_core::policy::{EndpointKind, Modalities, Modality, PolicyAttrs, SovereigntyClass};
use serde_json::Value;

use crate::check::{Checker, Fields};
use crate::kinds::{self, Kind};
use crate::node::Node;

/// The `model_info` keys that make an entry a policy endpoint.
pub(crate) const ATTR_KEYS: [&str; 11] = [
    "kind",
    "status",
    "sovereignty_class",
    "region",
    "provider",
    "partner",
    "modalities",
    "task_fit",
    "language_fit",
    "docs_completeness",
    "sovereignty_bonus",
];

const KIND: Kind<EndpointKind> = Kind {
    expected: "hosted or catalogue_only",
    parse: |n| match n {
        Node::Str(s) => EndpointKind::from_name(s.trim()),
        _ => None,
    },
    secret: false,
};

/// Any lowercase word: only `up` and `degraded` serve, and the filter's reason is
/// `endpoint_<status>`, so it must read as one token.
const STATUS: Kind<String> = Kind {
    expected: "a status word in lowercase (up, degraded, down, maintenance, …)",
    parse: |n| match n {
        Node::Str(s) => Some(s.trim())
            .filter(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'))
            .map(str::to_string),
        _ => None,
    },
    secret: false,
};

/// The attributes an entry's `model_info` sets (`None` when it sets none), and each as read,
/// for the kept JSON.
pub(crate) struct ReadAttrs {
    pub(crate) attrs: Option<PolicyAttrs>,
    pub(crate) kept: Vec<(&'static str, Value)>,
}

/// Takes the attribute keys out of `info` (the caller keeps the rest).
pub(crate) fn read_policy_attrs(c: &mut Checker, info: &mut Fields) -> ReadAttrs {
    // A key that is present counts as set even when its value is bad: its error refuses the
    // config anyway.
    let set = ATTR_KEYS.iter().any(|k| info.is_set(k));
    let mut kept = Vec::new();
    let mut a = PolicyAttrs::default();
    if let Some(kind) = c.optional(info, "kind", &KIND) {
        kept.push(("kind", Value::from(kind.as_str())));
        a.kind = kind;
    }
    if let Some(status) = c.optional(info, "status", &STATUS) {
        kept.push(("status", Value::from(status.as_str())));
        a.status = Some(status.into());
    }
    let class_path = info.path.key("sovereignty_class");
    if let Some(name) = c.optional(info, "sovereignty_class", &kinds::NON_EMPTY_STRING) {
        match SovereigntyClass::from_name(name.trim()) {
            Some(class) => {
                kept.push(("sovereignty_class", Value::from(class.as_str())));
                a.class = Some(class);
            }
            None => c.error(class_path, format!("unknown sovereignty class {name:?}; valid: {}", class_names())),
        }
    }
    if let Some(region) = c.optional(info, "region", &kinds::REGION) {
        kept.push(("region", Value::from(region.as_str())));
        a.region = Some(region.into());
    }
    if let Some(provider) = c.optional(info, "provider", &kinds::NON_EMPTY_STRING) {
        let provider = provider.trim();
        kept.push(("provider", Value::from(provider)));
        a.provider = Some(provider.into());
    }
    if let Some(partner) = c.optional(info, "partner", &kinds::BOOL) {
        kept.push(("partner", Value::from(partner)));
        a.partner = partner;
    }
    if let Some(list) = read_modalities(c, info) {
        kept.push(("modalities", Value::from(list.iter().map(|m| m.as_str()).collect::<Vec<_>>())));
        a.modalities = Modalities::of(&list);
    }
    for (key, target) in [("task_fit", &mut a.task_fit), ("language_fit", &mut a.language_fit)] {
        if let Some(fits) = read_fits(c, info, key) {
            kept.push((key, Value::Object(fits.iter().map(|(k, v)| (k.to_string(), Value::from(*v))).collect())));
            *target = fits;
        }
    }
    for (key, target) in
        [("docs_completeness", &mut a.docs_completeness), ("sovereignty_bonus", &mut a.sovereignty_bonus)]
    {
        if let Some(value) = c.optional(info, key, &kinds::FRACTION) {
            kept.push((key, Value::from(value)));
            *target = Some(value);
        }
    }
    // Without a class the endpoint is catalogue_unknown, which no residency admits: it would
    // never serve a policy request, and nothing else would say why.
    if set && a.class.is_none() && a.kind == EndpointKind::Hosted && !info.is_set("sovereignty_class") {
        c.warn(
            &info.path,
            "policy attributes without sovereignty_class: the endpoint is catalogue_unknown and never serves a policy-routed request",
        );
    }
    ReadAttrs { attrs: set.then_some(a), kept }
}

pub(crate) fn class_names() -> String {
    SovereigntyClass::ALL.map(|c| c.as_str()).join(", ")
}

fn modality_names() -> String {
    Modality::ALL.map(|m| m.as_str()).join(", ")
}

/// `modalities`: a non-empty list of known names.
fn read_modalities(c: &mut Checker, info: &mut Fields) -> Option<Vec<Modality>> {
    let (node, path) = info.take("modalities")?;
    if matches!(node, Node::Null) {
        return None;
    }
    let items = c.list(node, &path)?;
    if items.is_empty() {
        c.error(&path, format!("empty: list at least one of {}", modality_names()));
        return None;
    }
    let mut list = Vec::with_capacity(items.len());
    let mut bad = false;
    for (i, item) in items.iter().enumerate() {
        let item_path = path.index(i);
        let Some(name) = c.read(item, &item_path, &kinds::NON_EMPTY_STRING) else {
            bad = true;
            continue;
        };
        match Modality::from_name(name.trim()) {
            Some(m) if !list.contains(&m) => list.push(m),
            Some(_) => {}
            None => {
                c.error(item_path, format!("unknown modality {name:?}; valid: {}", modality_names()));
                bad = true;
            }
        }
    }
    (!bad).then_some(list)
}

/// `task_fit` / `language_fit`: a map of names to numbers from 0 to 1, in document order.
fn read_fits(c: &mut Checker, info: &mut Fields, key: &str) -> Option<Vec<(Box<str>, f64)>> {
    let map = c.optional_map(info, key)?;
    let mut fits = Vec::new();
    let mut bad = false;
    for (name, value, path) in map.untaken() {
        match c.read(value, &path, &kinds::FRACTION) {
            Some(v) => fits.push((name.into(), v)),
            None => bad = true,
        }
    }
    (!bad).then_some(fits)
}
