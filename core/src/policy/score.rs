//! The score of the endpoints that survived the filter:
//!
//! ```text
//! score = task_fit × 5 + language_fit × 3 + docs_completeness × 1 + sovereignty_bonus × 2
//!       − price_norm × 2 − latency_norm × 2 − error_rate × 3
//! ```
//!
//! Price and latency are normalised across the survivors (0 for the lowest, 1 for the highest,
//! 0 for all when they are equal), so the score compares candidates with each other. A
//! candidate with no recorded latency counts 500 ms; one without a price counts the highest
//! price among the survivors (an unpriced endpoint never looks cheap).

use crate::policy::{PolicyEndpoint, PolicyRequest};

/// Latency of an endpoint nothing has been measured for.
pub const DEFAULT_LATENCY_MS: f64 = 500.0;

/// What the shards know of an endpoint now.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Live<'a> {
    /// The status an operator set since the config was read (`None`: the config's).
    pub status: Option<&'a str>,
    /// The latency EWMA in milliseconds (`None`: nothing measured).
    pub latency_ms: Option<f64>,
    /// Failures among recent outcomes, 0 to 1.
    pub error_rate: f64,
}

impl Live<'_> {
    pub const UNKNOWN: Live<'static> = Live { status: None, latency_ms: None, error_rate: 0.0 };
}

/// One survivor's score, term by term (each term already weighted).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScoreTerms {
    pub task_fit: f64,
    pub language_fit: f64,
    pub docs_completeness: f64,
    pub sovereignty_bonus: f64,
    pub price: f64,
    pub latency: f64,
    pub error_rate: f64,
}

impl ScoreTerms {
    pub fn total(&self) -> f64 {
        self.task_fit + self.language_fit + self.docs_completeness + self.sovereignty_bonus
            - self.price
            - self.latency
            - self.error_rate
    }
}

/// A survivor: its index among the endpoints, the inputs the ties read, and its score.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scored {
    pub endpoint: usize,
    pub usd_per_1m: f64,
    pub latency_ms: f64,
    pub terms: ScoreTerms,
    pub score: f64,
}

/// Min–max normalisation over the survivors' values.
struct Range {
    low: f64,
    span: f64,
}

impl Range {
    fn of(values: impl Iterator<Item = f64>) -> Range {
        let (low, high) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)));
        Range { low, span: high - low }
    }

    fn norm(&self, v: f64) -> f64 {
        if self.span > 0.0 {
            (v - self.low) / self.span
        } else {
            0.0
        }
    }
}

/// Scores `survivors` (indexes into `endpoints`, each with what the shards know of it).
pub fn score(endpoints: &[PolicyEndpoint], survivors: &[(usize, Live<'_>)], req: &PolicyRequest) -> Vec<Scored> {
    let highest_price = survivors.iter().filter_map(|(i, _)| endpoints[*i].usd_per_1m).fold(0.0, f64::max);
    let price_of = |i: usize| endpoints[i].usd_per_1m.unwrap_or(highest_price);
    let latency_of = |live: &Live| live.latency_ms.unwrap_or(DEFAULT_LATENCY_MS);
    let prices = Range::of(survivors.iter().map(|(i, _)| price_of(*i)));
    let latencies = Range::of(survivors.iter().map(|(_, live)| latency_of(live)));
    survivors
        .iter()
        .map(|&(i, live)| {
            let e = &endpoints[i];
            let (usd_per_1m, latency_ms) = (price_of(i), latency_of(&live));
            let terms = ScoreTerms {
                task_fit: e.task_fit(req.task.as_deref()) * 5.0,
                language_fit: e.language_fit(req.language.as_deref()) * 3.0,
                docs_completeness: e.docs_completeness,
                sovereignty_bonus: e.sovereignty_bonus * 2.0,
                price: prices.norm(usd_per_1m) * 2.0,
                latency: latencies.norm(latency_ms) * 2.0,
                error_rate: live.error_rate * 3.0,
            };
            Scored { endpoint: i, usd_per_1m, latency_ms, terms, score: terms.total() }
        })
        .collect()
}
