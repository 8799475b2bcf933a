//! Region exclusion, per organisation: a provider is dropped when its headquarters or any
//! datacenter is an excluded region; approving one needs both a known headquarters and a
//! complete datacenter list. Unknown geography is ineligible unless `allow_unknown_region`.

use std::collections::{BTreeMap, BTreeSet};

use crate::pareto::telemetry::{base_slug, StatsRow};
use crate::pareto::ParetoRule;

/// What the telemetry says of one endpoint's geography.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum RegionVerdict {
    Allowed,
    Excluded,
    Unknown,
}

impl RegionVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            RegionVerdict::Allowed => "allowed",
            RegionVerdict::Excluded => "excluded",
            RegionVerdict::Unknown => "unknown",
        }
    }
}

fn location(value: &str) -> Option<String> {
    let code = value.trim().to_uppercase();
    (!code.is_empty()).then_some(code)
}

/// One endpoint's verdict against `excluded` (normalised codes).
pub fn verdict(row: &StatsRow, excluded: &[String]) -> RegionVerdict {
    let Some(geo) = &row.geography else { return RegionVerdict::Unknown };
    let hq = geo.headquarters.as_deref().and_then(location);
    let dcs: Vec<Option<String>> = geo.datacenters.iter().flatten().map(|d| location(d)).collect();
    let reported = hq.iter().chain(dcs.iter().flatten());
    if reported.clone().any(|loc| excluded.contains(loc)) {
        return RegionVerdict::Excluded;
    }
    if hq.is_some() && !dcs.is_empty() && dcs.iter().all(Option::is_some) {
        RegionVerdict::Allowed
    } else {
        RegionVerdict::Unknown
    }
}

/// The organisations the rule's region policy drops, and those with affirmative evidence of
/// eligibility. Both empty without `exclude_regions`.
pub fn region_bases(rows: &[StatsRow], rule: &ParetoRule) -> (BTreeSet<String>, BTreeSet<String>) {
    if rule.exclude_regions.is_empty() {
        return (BTreeSet::new(), BTreeSet::new());
    }
    let mut seen: BTreeMap<&str, BTreeSet<RegionVerdict>> = BTreeMap::new();
    for row in rows {
        seen.entry(base_slug(&row.slug)).or_default().insert(verdict(row, &rule.exclude_regions));
    }
    let dropped =
        |v: RegionVerdict| v == RegionVerdict::Excluded || (v == RegionVerdict::Unknown && !rule.allow_unknown_region);
    let excluded = seen.iter().filter(|(_, vs)| vs.iter().any(|&v| dropped(v))).map(|(b, _)| b.to_string()).collect();
    let allowed = seen.iter().filter(|(_, vs)| !vs.iter().any(|&v| dropped(v))).map(|(b, _)| b.to_string()).collect();
    (excluded, allowed)
}
