//! The per-request choice for a managed model: the promoted winner when it is usable now, else
//! the value walk re-run without what is unavailable (429-hot, not allowed), with input caps a
//! preference only; the cold-start fallback list when there is no winner. Each choice names
//! the branch that took it (the decision log's closed set of reasons).

use std::time::Instant;

use crate::pareto::walk::first_usable;
use crate::pareto::{AllowList, ModelView, ParetoRule, UnverifiedRegionPolicy, Verdict};

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

/// What is known of each provider of a model now, as [`choose`] and [`crate::pareto::narrow`]
/// ask it: its 429 window and input cap (`marks`, looked up once per request; `None`: nothing
/// recorded) and the account's allow-list when it is fresh.
pub fn availability<'a>(
    marks: Option<ModelView<'a>>,
    allow: Option<&'a AllowList>,
    now: Instant,
) -> impl Fn(&str) -> Availability + 'a {
    move |slug| {
        let (hot, input_capped) = marks.map_or((false, false), |m| m.marks(slug, now));
        Availability { hot, input_capped, disallowed: allow.is_some_and(|a| !a.allows(slug)) }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pareto::promotion::verdict_over as verdict;

    fn with<'a>(hot: &'a [&str], capped: &'a [&str], disallowed: &'a [&str]) -> impl Fn(&str) -> Availability + 'a {
        move |slug| Availability {
            hot: hot.contains(&slug),
            input_capped: capped.contains(&slug),
            disallowed: disallowed.contains(&slug),
        }
    }

    const POINTS: [(&str, f64, f64); 4] = [("a", 1.0, 10.0), ("b", 1.2, 30.0), ("c", 1.3, 25.0), ("d", 5.0, 26.0)];

    fn pick<'v>(
        v: &'v Verdict,
        rule: &'v ParetoRule,
        now: &dyn Fn(&str) -> Availability,
    ) -> (Option<&'v str>, &'static str) {
        let c = choose(Some(v), rule, now, &|_| true);
        (c.slug, c.reason.as_str())
    }

    #[test]
    fn the_winner_or_the_walk_re_run_without_what_is_unavailable() {
        let rule = ParetoRule::default();
        let v = verdict("b", &POINTS);
        assert_eq!(pick(&v, &rule, &with(&[], &[], &[])), (Some("b"), "winner"));
        // b hot: the walk without b reaches c, which b dominated.
        assert_eq!(pick(&v, &rule, &with(&["b"], &[], &[])), (Some("c"), "safe_set"));
        assert_eq!(pick(&v, &rule, &with(&[], &[], &["b"])), (Some("c"), "safe_set"));
        // b capped: it stays a stepping stone, c is taken.
        assert_eq!(pick(&v, &rule, &with(&[], &["b"], &[])), (Some("c"), "safe_set"));
        // Every usable one capped: the winner is tried all the same.
        assert_eq!(pick(&v, &rule, &with(&["c"], &["a", "b", "d"], &[])), (Some("b"), "input_cap"));
        assert_eq!(pick(&v, &rule, &with(&["b"], &["a", "c", "d"], &[])), (Some("c"), "input_cap"));
        // Every one hot or disallowed: the request fails.
        assert_eq!(pick(&v, &rule, &with(&["a", "b", "c"], &[], &["d"])), (None, "all_hot"));
    }

    #[test]
    fn a_damped_winner_keeps_its_place_while_usable() {
        // The poll's walk says b, flap damping holds a: a serves while usable.
        let mut v = verdict("b", &POINTS);
        v.winner = Some("a".into());
        assert_eq!(pick(&v, &ParetoRule::default(), &with(&[], &[], &[])), (Some("a"), "winner"));
        assert_eq!(pick(&v, &ParetoRule::default(), &with(&["a"], &[], &[])), (Some("b"), "safe_set"));
    }

    #[test]
    fn without_telemetry_the_vetted_list_or_the_region_policy_decides() {
        let rule = ParetoRule { cold_start_fallback: vec!["x/fp8".into(), "y/fp8".into()], ..ParetoRule::default() };
        let cold = |now: &dyn Fn(&str) -> Availability, region: &dyn Fn(&str) -> bool| {
            let c = choose(None, &rule, now, region);
            (c.slug, c.reason.as_str())
        };
        assert_eq!(cold(&with(&[], &[], &[]), &|_| true), (Some("x/fp8"), "cold_start"));
        assert_eq!(cold(&with(&["x/fp8"], &[], &[]), &|_| true), (Some("y/fp8"), "cold_start"));
        assert_eq!(cold(&with(&[], &["x/fp8", "y/fp8"], &[]), &|_| true), (Some("x/fp8"), "input_cap"));
        assert_eq!(cold(&with(&["x/fp8", "y/fp8"], &[], &[]), &|_| true), (None, "all_hot"));
        assert_eq!(cold(&with(&[], &[], &[]), &|_| false), (None, "declined"));
        let unpinned = ParetoRule {
            exclude_regions: vec!["SG".into()],
            unverified_region_policy: UnverifiedRegionPolicy::Unpinned,
            ..rule.clone()
        };
        let c = choose(None, &unpinned, &with(&[], &[], &[]), &|_| false);
        assert_eq!((c.slug, c.reason), (None, Reason::Unpinned));
        let none = ParetoRule::default();
        assert_eq!(choose(None, &none, &with(&[], &[], &[]), &|_| true).reason, Reason::Declined);
    }
}
