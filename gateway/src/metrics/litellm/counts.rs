//! What LiteLLM's metrics count, kept alike on a shard (under indices) and in the report it
//! hands over (under label values): per request, per attempt, per cooldown.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use pointwork_core::{Failure, RouteKind};

use super::labels::{Where, Who};
use crate::keys::VirtualKey;

/// LiteLLM's latency buckets (seconds), `+Inf` aside: `LATENCY_BUCKETS` of its Prometheus
/// integration.
pub const LATENCY_BUCKETS: [f64; 17] =
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 420.0, 600.0];
/// `prometheus_client`'s default buckets, which LiteLLM's latency per output token keeps.
pub const DEFAULT_BUCKETS: [f64; 14] =
    [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0];

/// A histogram over fixed bounds: a count per bucket (not cumulative), the count and the sum.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Buckets<const N: usize> {
    pub counts: [u64; N],
    pub count: u64,
    pub sum: f64,
}

pub type Latency = Buckets<17>;

impl<const N: usize> Default for Buckets<N> {
    fn default() -> Self {
        Buckets { counts: [0; N], count: 0, sum: 0.0 }
    }
}

impl<const N: usize> Buckets<N> {
    pub fn observe(&mut self, value: f64, bounds: &[f64; N]) {
        if let Some(i) = bounds.iter().position(|&b| value <= b) {
            self.counts[i] += 1;
        }
        self.count += 1;
        self.sum += value;
    }

    pub fn add(&mut self, other: &Buckets<N>) {
        for (mine, theirs) in self.counts.iter_mut().zip(other.counts) {
            *mine += theirs;
        }
        self.count += other.count;
        self.sum += other.sum;
    }
}

/// One caller's attempts at one deployment.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AttemptCounts {
    pub successes: u64,
    pub failures: Vec<(Failure, u64)>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub total_tokens: u64,
    /// US dollars, at the deployment's prices.
    pub spend: f64,
    /// Successful attempts' upstream time, seconds.
    pub api_latency: Latency,
    /// Streamed successes: to the first body bytes, seconds.
    pub first_token: Latency,
    /// The first token's time (a stream) or the whole time, per output token.
    pub per_output_token: Buckets<14>,
}

impl AttemptCounts {
    pub fn failed(&mut self, failure: Failure, n: u64) {
        match self.failures.iter_mut().find(|(f, _)| *f == failure) {
            Some((_, count)) => *count += n,
            None => self.failures.push((failure, n)),
        }
    }

    pub fn failures(&self) -> u64 {
        self.failures.iter().map(|(_, n)| n).sum()
    }

    pub fn add(&mut self, other: &AttemptCounts) {
        self.successes += other.successes;
        for &(failure, n) in &other.failures {
            self.failed(failure, n);
        }
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.total_tokens += other.total_tokens;
        self.spend += other.spend;
        self.api_latency.add(&other.api_latency);
        self.first_token.add(&other.first_token);
        self.per_output_token.add(&other.per_output_token);
    }
}

/// Requests of one series.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RequestCounts {
    pub requests: u64,
    /// Successful requests: the whole time, seconds.
    pub total_latency: Latency,
    /// Successful requests: the gateway's own time (the whole time less the answering
    /// attempt's upstream time), seconds.
    pub overhead: Latency,
}

impl RequestCounts {
    pub fn add(&mut self, other: &RequestCounts) {
        self.requests += other.requests;
        self.total_latency.add(&other.total_latency);
        self.overhead.add(&other.overhead);
    }

    pub fn succeeded(&mut self, total: Duration, upstream: Duration) {
        self.total_latency.observe(total.as_secs_f64(), &LATENCY_BUCKETS);
        self.overhead.observe(total.saturating_sub(upstream).as_secs_f64(), &LATENCY_BUCKETS);
    }
}

/// The route a request came in on, as LiteLLM's `route` label writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Route {
    pub kind: RouteKind,
    /// Called with the `/v1` prefix.
    pub v1: bool,
}

impl Route {
    pub fn of(kind: RouteKind, path: &str) -> Route {
        Route { kind, v1: path.starts_with("/v1/") }
    }

    pub fn path(self) -> String {
        format!("{}{}", if self.v1 { "/v1" } else { "" }, self.kind.path())
    }
}

/// One series of requests, by label values.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RequestSeries {
    pub who: Arc<Who>,
    /// The model group the requested name resolves to (`other` when it names none).
    pub requested: Arc<str>,
    /// The deployment whose answer (or error) the client got, if one was tried.
    pub served: Option<Arc<Where>>,
    pub route: Route,
    pub status: u16,
}

/// A deployment's last attempt: when, and whether it failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LastOutcome {
    pub at: Instant,
    pub failed: bool,
}

impl LastOutcome {
    /// Keeps the later of two.
    pub fn merge(&mut self, other: LastOutcome) {
        if other.at >= self.at {
            *self = other;
        }
    }
}

/// What a shard hands over for LiteLLM's metrics, by label values.
#[derive(Debug, Default)]
pub struct LiteLlmReport {
    pub requests: HashMap<RequestSeries, RequestCounts>,
    pub attempts: HashMap<(Arc<Who>, Arc<Where>), AttemptCounts>,
    pub cooldowns: HashMap<(Arc<Where>, Failure), u64>,
    /// By deployment id.
    pub last_outcomes: HashMap<Arc<str>, LastOutcome>,
    /// Database keys that made requests, by digest: their budgets are rendered from their
    /// live accounts.
    pub database_keys: HashMap<[u8; 32], Arc<VirtualKey>>,
}

impl LiteLlmReport {
    pub fn merge(&mut self, other: LiteLlmReport) {
        for (series, counts) in other.requests {
            self.requests.entry(series).or_default().add(&counts);
        }
        for (series, counts) in other.attempts {
            self.attempts.entry(series).or_default().add(&counts);
        }
        for (series, n) in other.cooldowns {
            *self.cooldowns.entry(series).or_default() += n;
        }
        for (id, outcome) in other.last_outcomes {
            match self.last_outcomes.get_mut(&id) {
                Some(mine) => mine.merge(outcome),
                None => {
                    self.last_outcomes.insert(id, outcome);
                }
            }
        }
        // A report is newer than what was merged before it: its entry of a key is too.
        self.database_keys.extend(other.database_keys);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_count_each_value_once_at_its_first_bound() {
        let mut b = Latency::default();
        for v in [0.001, 0.005, 0.3, 1000.0] {
            b.observe(v, &LATENCY_BUCKETS);
        }
        assert_eq!((b.counts[0], b.counts[1], b.counts[6]), (2, 0, 1));
        assert_eq!(b.counts.iter().sum::<u64>(), 3, "1000 s is above every bound: only in +Inf");
        assert_eq!(b.count, 4);
        let mut sum = Latency::default();
        sum.add(&b);
        sum.add(&b);
        assert_eq!((sum.count, sum.counts[0]), (8, 4));
    }

    #[test]
    fn attempt_failures_add_up_by_failure() {
        let mut a = AttemptCounts::default();
        a.failed(Failure::Status(500), 1);
        a.failed(Failure::Timeout, 2);
        let mut b = AttemptCounts { successes: 3, ..AttemptCounts::default() };
        b.failed(Failure::Status(500), 4);
        a.add(&b);
        assert_eq!(a.failures, vec![(Failure::Status(500), 5), (Failure::Timeout, 2)]);
        assert_eq!((a.failures(), a.successes), (7, 3));
    }

    #[test]
    fn the_later_outcome_wins() {
        let t = Instant::now();
        let mut last = LastOutcome { at: t, failed: true };
        last.merge(LastOutcome { at: t + Duration::from_secs(1), failed: false });
        last.merge(LastOutcome { at: t, failed: true });
        assert!(!last.failed);
    }
}
