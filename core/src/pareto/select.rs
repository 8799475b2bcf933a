//! One poll's selection for one rule: the hard filters (each drop with its reason), the
//! de-duplicated candidates, the frontier, the value walk's winner and the safe set.

use std::collections::{BTreeSet, HashMap};

use crate::pareto::region::region_bases;
use crate::pareto::telemetry::{base_slug, StatsRow, UptimeRow};
use crate::pareto::walk::{frontier_slugs, value_winner, Point};
use crate::pareto::ParetoRule;

/// Below this uptime (percent, last five minutes) a provider is not considered (OpenRouter's
/// own floor); a provider with no uptime is not considered either.
pub const UPTIME_FLOOR: f64 = 95.0;

/// Why the hard filters dropped a provider endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dropped {
    /// Its organisation is in or serves from an excluded region, or its geography is unknown.
    Region,
    /// Not in the account's allowed providers.
    NotAllowed,
    Quantization,
    Context,
    /// Not zero data retention (`retainsPrompts` not exactly false).
    Retention,
    Uptime,
    Throughput,
    SampleSize,
    /// A missing, non-finite or non-positive price.
    Price,
    AboveMaxPrice,
}

impl Dropped {
    pub fn as_str(self) -> &'static str {
        match self {
            Dropped::Region => "region",
            Dropped::NotAllowed => "not_allowed",
            Dropped::Quantization => "quantization",
            Dropped::Context => "context",
            Dropped::Retention => "retention",
            Dropped::Uptime => "uptime",
            Dropped::Throughput => "throughput",
            Dropped::SampleSize => "sample_size",
            Dropped::Price => "price",
            Dropped::AboveMaxPrice => "max_price",
        }
    }
}

/// A provider endpoint that passed the hard filters.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    pub slug: String,
    pub input_price_m: f64,
    pub output_price_m: f64,
    pub tps: f64,
    pub requests: u64,
    pub context: u64,
    pub uptime: f64,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Selection {
    /// The value walk's winner this poll.
    pub winner: Option<String>,
    /// Every candidate, cheapest first (faster first at a price).
    pub safe_set: Vec<String>,
    /// The candidates as the walk reads them, in `safe_set`'s order.
    pub points: Vec<Point>,
    pub frontier: Vec<String>,
    pub candidates: Vec<Candidate>,
    pub dropped: Vec<(String, Dropped)>,
    pub excluded_bases: BTreeSet<String>,
    pub allowed_bases: BTreeSet<String>,
}

/// Selects over one poll's rows. `allowed`: the account's allowed providers (organisations),
/// when known and fresh.
pub fn select(stats: &[StatsRow], uptime: &[UptimeRow], rule: &ParetoRule, allowed: Option<&[String]>) -> Selection {
    let uptime_by_tag: HashMap<&str, f64> =
        uptime.iter().filter_map(|u| Some((u.tag.as_str(), u.uptime_last_5m?))).collect();
    let (excluded_bases, allowed_bases) = region_bases(stats, rule);
    let mut selection = Selection { excluded_bases, allowed_bases, ..Selection::default() };
    for row in stats {
        let base = base_slug(&row.slug);
        let verdict = if selection.excluded_bases.contains(base) {
            Err(Dropped::Region)
        } else if allowed.is_some_and(|a| !a.iter().any(|x| x == base)) {
            Err(Dropped::NotAllowed)
        } else {
            candidate(row, rule, &uptime_by_tag)
        };
        match verdict {
            Ok(c) => selection.candidates.push(c),
            Err(why) => selection.dropped.push((row.slug.clone(), why)),
        }
    }
    // Duplicate slugs keep the fastest, then the cheaper.
    let mut deduped: Vec<&Candidate> = Vec::new();
    for c in &selection.candidates {
        match deduped.iter_mut().find(|d| d.slug == c.slug) {
            Some(d) if (c.tps, -c.input_price_m) > (d.tps, -d.input_price_m) => *d = c,
            Some(_) => {}
            None => deduped.push(c),
        }
    }
    deduped.sort_by(|a, b| a.input_price_m.total_cmp(&b.input_price_m).then(b.tps.total_cmp(&a.tps)));
    selection.points = deduped
        .iter()
        .map(|c| Point { slug: c.slug.as_str().into(), input_price_m: c.input_price_m, tps: c.tps })
        .collect();
    selection.safe_set = deduped.iter().map(|c| c.slug.clone()).collect();
    let refs: Vec<&Point> = selection.points.iter().collect();
    selection.frontier = frontier_slugs(&refs).into_iter().map(str::to_string).collect();
    selection.winner = value_winner(&refs, rule.value_regression_tolerance).map(|p| p.slug.to_string());
    selection
}

/// The hard filters of one row, in order; the first that fails says why.
fn candidate(row: &StatsRow, rule: &ParetoRule, uptime_by_tag: &HashMap<&str, f64>) -> Result<Candidate, Dropped> {
    if !row.quantization.as_ref().is_some_and(|q| rule.precision.contains(q)) {
        return Err(Dropped::Quantization);
    }
    let context = row.context_length.filter(|&c| c >= rule.min_context).ok_or(Dropped::Context)?;
    if row.retains_prompts != Some(false) {
        return Err(Dropped::Retention);
    }
    let uptime = uptime_by_tag
        .get(row.slug.as_str())
        .copied()
        .filter(|u| u.is_finite() && *u >= UPTIME_FLOOR)
        .ok_or(Dropped::Uptime)?;
    let tps = row.p50_throughput.filter(|t| t.is_finite() && *t > 0.0).ok_or(Dropped::Throughput)?;
    let requests = row.request_count.ok_or(Dropped::SampleSize)?;
    if requests < rule.min_stats_requests {
        return Err(Dropped::SampleSize);
    }
    let (prompt, completion) = row.prompt_price.zip(row.completion_price).ok_or(Dropped::Price)?;
    let (input_price_m, output_price_m) = (prompt * 1e6, completion * 1e6);
    if !(input_price_m.is_finite() && output_price_m.is_finite()) || input_price_m <= 0.0 {
        return Err(Dropped::Price);
    }
    if rule.max_price.is_some_and(|max| input_price_m > max) {
        return Err(Dropped::AboveMaxPrice);
    }
    Ok(Candidate { slug: row.slug.clone(), input_price_m, output_price_m, tps, requests, context, uptime })
}
