//! Pinned mode: a managed group of deployments, each pinned to provider slugs
//! (`extra_body.provider.only`, else `model_info.id` minus `or-`), narrowed per request to the
//! deployments that pin the provider the walk prefers now. The region policy first keeps
//! only deployments every slug of which it allows; without a winner the eligible deployments
//! go as they are (`pass_through`). Pinned mode never fails a request for 429s: the pick's own
//! cooldowns already take a rate-limited deployment out.

use crate::pareto::walk::first_usable;
use crate::pareto::{base_slug, Availability, ParetoRule, Reason, RegionVerdict, UnverifiedRegionPolicy, Verdict};

/// The region verdict of `slug` under `rule`, from what the last selection learned of each
/// organisation (`None`: the rule excludes no region, so the question does not arise).
pub fn region_of(rule: &ParetoRule, verdict: Option<&Verdict>, slug: &str) -> Option<RegionVerdict> {
    if rule.exclude_regions.is_empty() {
        return None;
    }
    let Some(verdict) = verdict else {
        // No telemetry: only the operator's word (`trust_fallback`) makes a slug allowed.
        let trusted = rule.unverified_region_policy == UnverifiedRegionPolicy::TrustFallback;
        return Some(if trusted { RegionVerdict::Allowed } else { RegionVerdict::Unknown });
    };
    let base = base_slug(slug);
    Some(if verdict.selection.excluded_bases.contains(base) {
        RegionVerdict::Excluded
    } else if verdict.selection.allowed_bases.contains(base) || rule.allow_unknown_region {
        RegionVerdict::Allowed
    } else {
        RegionVerdict::Unknown
    })
}

/// Whether `rule`'s region policy lets `slug` be pinned.
pub fn region_allows(rule: &ParetoRule, verdict: Option<&Verdict>, slug: &str) -> bool {
    region_of(rule, verdict, slug).is_none_or(|v| v == RegionVerdict::Allowed)
}

/// What pinned mode does with the group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Narrowing<'v> {
    pub reason: Reason,
    /// The provider the kept deployments are narrowed to (`winner`, `safe_set`).
    pub slug: Option<&'v str>,
    /// Which of the deployments may serve, parallel to the pins given.
    pub keep: Vec<bool>,
}

/// Narrows deployments pinned to `pins` (each deployment's slugs; empty: unidentifiable).
pub fn narrow<'v>(
    verdict: Option<&'v Verdict>,
    rule: &ParetoRule,
    pins: &[&'v [Box<str>]],
    now: &dyn Fn(&str) -> Availability,
) -> Narrowing<'v> {
    let skipped = |s: &str| {
        let a = now(s);
        a.hot || a.input_capped
    };
    let (eligible, refused) = region_eligible(verdict, rule, pins, &skipped);
    if let Some(reason) = refused {
        let keep = if reason == Reason::Unpinned { vec![true; pins.len()] } else { vec![false; pins.len()] };
        return Narrowing { reason, slug: None, keep };
    }
    let pass_through = Narrowing { reason: Reason::PassThrough, slug: None, keep: eligible.clone() };
    let Some((verdict, winner)) = verdict.and_then(|v| Some((v, v.winner.as_deref()?))) else {
        return pass_through;
    };
    let pinning = |slug: &str| -> Vec<bool> {
        pins.iter().zip(&eligible).map(|(p, &e)| e && p.iter().any(|s| &**s == slug)).collect()
    };
    let served = |slug: &str| pinning(slug).contains(&true);
    let unusable = |s: &str| skipped(s) || now(s).disallowed;
    let chosen = if !unusable(winner) && served(winner) {
        Some((winner, Reason::Winner))
    } else {
        let points = &verdict.selection.points;
        first_usable(points, rule.value_regression_tolerance, &unusable, &served)
            .map(|slug| (slug, if slug == winner { Reason::Winner } else { Reason::SafeSet }))
            // Everything preferred is unusable, yet the winner has a deployment: reach in.
            .or_else(|| (!now(winner).disallowed && served(winner)).then_some((winner, Reason::SafeSet)))
    };
    match chosen {
        Some((slug, reason)) => Narrowing { reason, slug: Some(slug), keep: pinning(slug) },
        None => pass_through,
    }
}

/// The deployments the region policy allows, or why it routes nowhere (`declined`) or
/// cedes the choice (`unpinned`).
fn region_eligible(
    verdict: Option<&Verdict>,
    rule: &ParetoRule,
    pins: &[&[Box<str>]],
    skipped: &dyn Fn(&str) -> bool,
) -> (Vec<bool>, Option<Reason>) {
    if rule.exclude_regions.is_empty() {
        return (vec![true; pins.len()], None);
    }
    let ceded = rule.unverified_region_policy == UnverifiedRegionPolicy::Unpinned;
    let eligible: Vec<bool> = match verdict {
        None if ceded => return (Vec::new(), Some(Reason::Unpinned)),
        None if rule.unverified_region_policy == UnverifiedRegionPolicy::NoRoute => {
            return (Vec::new(), Some(Reason::Declined))
        }
        // trust_fallback: deployments pinned only to vetted slugs, none of them skipped.
        None => pins
            .iter()
            .map(|p| {
                !p.is_empty() && p.iter().all(|s| rule.cold_start_fallback.iter().any(|f| **f == **s) && !skipped(s))
            })
            .collect(),
        Some(v) => pins
            .iter()
            .map(|p| match p.is_empty() {
                true => rule.allow_unknown_region,
                false => p.iter().all(|s| region_allows(rule, Some(v), s)),
            })
            .collect(),
    };
    if eligible.contains(&true) {
        (eligible, None)
    } else if ceded {
        (eligible, Some(Reason::Unpinned))
    } else {
        (eligible, Some(Reason::Declined))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pareto::promotion::verdict_over as verdict;

    fn pins(slugs: &[&[&str]]) -> Vec<Vec<Box<str>>> {
        slugs.iter().map(|p| p.iter().map(|s| Box::<str>::from(*s)).collect()).collect()
    }

    fn run(
        v: Option<&Verdict>,
        rule: &ParetoRule,
        pins: &[Vec<Box<str>>],
        hot: &[&str],
    ) -> (Reason, Option<String>, Vec<bool>) {
        let refs: Vec<&[Box<str>]> = pins.iter().map(Vec::as_slice).collect();
        let now = |s: &str| Availability { hot: hot.contains(&s), ..Availability::FREE };
        let n = narrow(v, rule, &refs, &now);
        (n.reason, n.slug.map(str::to_string), n.keep)
    }

    const POINTS: [(&str, f64, f64); 3] = [("a/fp8", 1.0, 10.0), ("b/fp8", 1.2, 30.0), ("c/fp8", 1.3, 25.0)];

    #[test]
    fn the_group_narrows_to_the_deployment_of_the_provider_the_walk_prefers() {
        let v = verdict("b/fp8", &POINTS);
        let rule = ParetoRule::default();
        let p = pins(&[&["a/fp8"], &["b/fp8"], &["c/fp8", "b/fp8"]]);
        assert_eq!(run(Some(&v), &rule, &p, &[]), (Reason::Winner, Some("b/fp8".into()), vec![false, true, true]));
        // b hot: the walk re-run without it reaches c.
        assert_eq!(
            run(Some(&v), &rule, &p, &["b/fp8"]),
            (Reason::SafeSet, Some("c/fp8".into()), vec![false, false, true])
        );
        // No deployment pins anything the walk offers: the group goes as it is.
        let other = pins(&[&["x/fp8"]]);
        assert_eq!(run(Some(&v), &rule, &other, &[]), (Reason::PassThrough, None, vec![true]));
        // No telemetry: pass through.
        assert_eq!(run(None, &rule, &p, &[]).0, Reason::PassThrough);
        // Every provider hot: the winner's deployment is reached into, never a failure.
        let all = ["a/fp8", "b/fp8", "c/fp8"];
        assert_eq!(run(Some(&v), &rule, &p, &all), (Reason::SafeSet, Some("b/fp8".into()), vec![false, true, true]));
    }

    #[test]
    fn the_region_policy_keeps_only_deployments_every_pin_of_which_it_allows() {
        let mut v = verdict("b/fp8", &POINTS);
        v.selection.allowed_bases = ["a".to_string(), "b".to_string()].into();
        v.selection.excluded_bases = ["c".to_string()].into();
        let rule = ParetoRule { exclude_regions: vec!["SG".into()], ..ParetoRule::default() };
        let p = pins(&[&["a/fp8"], &["c/fp8", "b/fp8"], &[]]);
        assert_eq!(run(Some(&v), &rule, &p, &["b/fp8"]).2, vec![true, false, false]);
        let only_c = pins(&[&["c/fp8"]]);
        assert_eq!(run(Some(&v), &rule, &only_c, &[]).0, Reason::Declined);
        let ceded = ParetoRule { unverified_region_policy: UnverifiedRegionPolicy::Unpinned, ..rule.clone() };
        assert_eq!(run(Some(&v), &ceded, &only_c, &[]), (Reason::Unpinned, None, vec![true]));
        // Cold start under each policy.
        assert_eq!(run(None, &rule, &p, &[]).0, Reason::Declined);
        assert_eq!(run(None, &ceded, &p, &[]).0, Reason::Unpinned);
        let trust = ParetoRule {
            unverified_region_policy: UnverifiedRegionPolicy::TrustFallback,
            cold_start_fallback: vec!["a/fp8".into()],
            ..rule.clone()
        };
        assert_eq!(run(None, &trust, &p, &[]), (Reason::PassThrough, None, vec![true, false, false]));
        assert_eq!(run(None, &trust, &p, &["a/fp8"]).0, Reason::Declined);
        assert_eq!(region_of(&rule, Some(&v), "c/fast"), Some(RegionVerdict::Excluded));
        assert_eq!(region_of(&rule, Some(&v), "z/fp8"), Some(RegionVerdict::Unknown));
        assert_eq!(region_of(&ParetoRule::default(), Some(&v), "c/fp8"), None);
    }
}
