//! The per-request choice for a managed model: the promoted winner when it is usable now, else
//! the value walk re-run without what is unavailable (429-hot, not allowed), with input caps a
//! preference only; the cold-start fallback list when there is no winner. Each choice names
//! the branch that took it (the decision log's closed set of reasons).

use crate::pareto::walk::first_usable;
use crate::pareto::{ParetoRule, UnverifiedRegionPolicy, Verdict};

/// What the shards know of a provider now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Availability {
    /// 429s at the threshold within the window.
    pub hot: bool,
    /// Not in the account's allowed providers (a fresh allow-list).
    pub disallowed: bool,
    /// A recent 400 said the input was too long for it.
    pub input_capped: bool,
}

impl Availability {
    pub const FREE: Availability = Availability { hot: false, disallowed: false, input_capped: false };

    fn excluded(self) -> bool {
        self.hot || self.disallowed
    }
}

/// Which branch chose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// The value-walk winner, usable.
    Winner,
    /// The winner was unusable; the walk re-run over what remains chose.
    SafeSet,
    /// Every usable provider is input-capped: the preferred one is tried all the same.
    InputCap,
    /// No telemetry: an operator-vetted `cold_start_fallback` provider.
    ColdStart,
    /// Every eligible provider is 429-hot (or not allowed): the request fails.
    AllHot,
    /// `unverified_region_policy: unpinned`: OpenRouter chooses.
    Unpinned,
    /// Nothing may be routed to (region policy, strict gate, no usable fallback).
    Declined,
    /// No winner: the operator's own pins go as they are.
    PassThrough,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Winner => "winner",
            Reason::SafeSet => "safe_set",
            Reason::InputCap => "input_cap",
            Reason::ColdStart => "cold_start",
            Reason::AllHot => "all_hot",
            Reason::Unpinned => "unpinned",
            Reason::Declined => "declined",
            Reason::PassThrough => "pass_through",
        }
    }
}

/// A choice: the provider slug to pin (none for `unpinned`, `declined`, `pass_through` and
/// `all_hot`) and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Choice<'v> {
    pub slug: Option<&'v str>,
    pub reason: Reason,
}

/// Chooses for a request. `verdict`: what the poller learned (`None`: nothing yet, or stale
/// beyond use); `region_allows`: whether a slug may be used under the rule's region policy
/// when there is no telemetry to judge it by (the cold-start list).
pub fn choose<'v>(
    verdict: Option<&'v Verdict>,
    rule: &'v ParetoRule,
    now: &dyn Fn(&str) -> Availability,
    region_allows: &dyn Fn(&str) -> bool,
) -> Choice<'v> {
    let Some((verdict, winner)) = verdict.and_then(|v| Some((v, v.winner.as_deref()?))) else {
        return cold_start(rule, now, region_allows);
    };
    let first = now(winner);
    if !first.excluded() && !first.input_capped {
        return Choice { slug: Some(winner), reason: Reason::Winner };
    }
    let points = &verdict.selection.points;
    let tolerance = rule.value_regression_tolerance;
    // The walk re-run without the hot and the disallowed (input-capped providers stay in it as
    // stepping stones), taking the first that is not input-capped.
    let excluded = |slug: &str| now(slug).excluded();
    if let Some(slug) = first_usable(points, tolerance, &excluded, &|s| !now(s).input_capped) {
        let reason = if slug == winner { Reason::Winner } else { Reason::SafeSet };
        return Choice { slug: Some(slug), reason };
    }
    // Every usable provider is input-capped: the winner if it is usable, else the walk's first.
    let capped =
        (!first.excluded()).then_some(winner).or_else(|| first_usable(points, tolerance, &excluded, &|_| true));
    match capped {
        Some(slug) => Choice { slug: Some(slug), reason: Reason::InputCap },
        None => Choice { slug: None, reason: Reason::AllHot },
    }
}

/// No winner: the vetted fallback list in order (under a region policy, only what it allows).
fn cold_start<'v>(
    rule: &'v ParetoRule,
    now: &dyn Fn(&str) -> Availability,
    region_allows: &dyn Fn(&str) -> bool,
) -> Choice<'v> {
    let eligible: Vec<&str> = rule
        .cold_start_fallback
        .iter()
        .map(String::as_str)
        .filter(|s| !now(s).disallowed && region_allows(s))
        .collect();
    let usable: Vec<&str> = eligible.iter().copied().filter(|s| !now(s).hot).collect();
    if let Some(&slug) = usable.iter().find(|s| !now(s).input_capped) {
        return Choice { slug: Some(slug), reason: Reason::ColdStart };
    }
    if let Some(&slug) = usable.first() {
        return Choice { slug: Some(slug), reason: Reason::InputCap };
    }
    if !eligible.is_empty() {
        return Choice { slug: None, reason: Reason::AllHot };
    }
    if !rule.exclude_regions.is_empty() && rule.unverified_region_policy == UnverifiedRegionPolicy::Unpinned {
        return Choice { slug: None, reason: Reason::Unpinned };
    }
    Choice { slug: None, reason: Reason::Declined }
}
