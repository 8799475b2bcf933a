//! The OpenRouter best-value walk's set-ups: `n` provider endpoints of one model whose telemetry
//! rows all pass the hard filters, prices spread geometrically from $0.30 to $3.00 per million
//! input tokens and throughputs rising with price, then levelling off (with ±20% of
//! deterministic scatter) — so the frontier has many steps, the walk climbs several of them and
//! stops in the middle. The shard's cooldowns hold a few 429s below the threshold; `hot` more
//! providers (the head of the walk's ranked order) are 429-hot.

use std::time::{Duration, Instant};

use pointwork_core::pareto::{
    availability, ranked_order, select, Availability, ParetoRule, ProviderCooldowns, StatsRow, UptimeRow, Verdict,
};

/// The managed model (the rule key the cooldowns are kept under).
pub const MODEL: &str = "z-ai/glm-5.2";

/// The provider counts the walk benches run.
pub const PROVIDER_COUNTS: [usize; 2] = [5, 50];

/// A number in [0, 1) from `i` (splitmix64), the same on every machine.
fn scatter(i: u64) -> f64 {
    let mut x = i.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (x ^ (x >> 31)) as f64 / 2f64.powi(64)
}

/// Provider `i`'s endpoint slug.
pub fn slug(i: usize) -> String {
    format!("prov{i:02}/fp8")
}

/// (dollars per million input tokens, p50 tokens per second) of provider `i` of `n`.
fn price_and_speed(i: usize, n: usize) -> (f64, f64) {
    let price_m = 0.3 * 10f64.powf(i as f64 / (n - 1) as f64);
    let x = price_m * price_m;
    let tps = (8.0 + 240.0 * x / (1.0 + x)) * (0.8 + 0.4 * scatter(i as u64));
    (price_m, tps)
}

/// The frontend stats rows of `n` providers, every one passing the rule's hard filters.
pub fn stats_rows(n: usize) -> Vec<StatsRow> {
    (0..n)
        .map(|i| {
            let (price_m, tps) = price_and_speed(i, n);
            StatsRow {
                slug: slug(i),
                quantization: Some("fp8".into()),
                context_length: Some(1_048_576),
                retains_prompts: Some(false),
                p50_throughput: Some(tps),
                request_count: Some(500 + 37 * i as u64),
                prompt_price: Some(price_m / 1e6),
                completion_price: Some(3.0 * price_m / 1e6),
                geography: None,
            }
        })
        .collect()
}

/// The endpoints API's uptime of `n` providers (all above the 95% floor).
pub fn uptime_rows(n: usize) -> Vec<UptimeRow> {
    (0..n).map(|i| UptimeRow { tag: slug(i), uptime_last_5m: Some(96.0 + (i % 4) as f64) }).collect()
}

/// The rule: the built-in one (fp8, context ≥ 1M, ≥ 100 requests, two polls to promote).
pub fn rule() -> ParetoRule {
    ParetoRule::built_in()
}

pub struct WalkSetup {
    pub rule: ParetoRule,
    pub stats: Vec<StatsRow>,
    pub uptime: Vec<UptimeRow>,
    /// The verdict after two identical polls (the winner promoted).
    pub verdict: Verdict,
    /// The walk's ranked order with every provider usable, winner first.
    pub ranked: Vec<String>,
    pub cooldowns: ProviderCooldowns,
    /// A time at which every 429 recorded is inside the window.
    pub now: Instant,
}

impl WalkSetup {
    /// What the shard knows of `slug` now, as `gateway/src/pareto/steer.rs` asks it (no fresh
    /// allow-list: nothing is disallowed).
    pub fn availability(&self, slug: &str) -> Availability {
        availability(self.cooldowns.model(MODEL), None, self.now)(slug)
    }
}

/// `n` providers, the first `hot` of the walk's ranked order 429-hot; every third provider
/// (and the winner, when it is not hot) has 429s below the threshold.
pub fn walk_setup(n: usize, hot: usize) -> WalkSetup {
    let rule = rule();
    let (stats, uptime) = (stats_rows(n), uptime_rows(n));
    let first = Verdict::after_poll(None, select(&stats, &uptime, &rule, None), &rule);
    let verdict = Verdict::after_poll(Some(&first), select(&stats, &uptime, &rule, None), &rule);
    let ranked: Vec<String> = ranked_order(&verdict.selection.points, rule.value_regression_tolerance, &|_| false)
        .into_iter()
        .map(str::to_string)
        .collect();
    let t0 = Instant::now();
    let at = |s: u64| t0 + Duration::from_secs(s);
    let mut cooldowns = ProviderCooldowns::default();
    let threshold = cooldowns.settings().rate_limit_threshold as u64;
    for (i, s) in ranked.iter().enumerate() {
        let hits = if i < hot {
            threshold
        } else if i == 0 || i % 3 == 0 {
            threshold - 1
        } else {
            0
        };
        for h in 0..hits {
            cooldowns.record_429(MODEL, s, at(10 * h));
        }
    }
    WalkSetup { rule, stats, uptime, verdict, ranked, cooldowns, now: at(60) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pointwork_core::pareto::{choose, narrow, region_allows, Reason};

    #[test]
    fn every_row_passes_the_filters_and_the_walk_stops_mid_frontier() {
        for n in PROVIDER_COUNTS {
            let s = walk_setup(n, 0);
            let sel = &s.verdict.selection;
            assert!(sel.dropped.is_empty(), "{:?}", sel.dropped);
            assert_eq!(sel.candidates.len(), n);
            assert!(sel.frontier.len() >= n.min(10), "{n}: frontier {:?}", sel.frontier);
            let winner = s.verdict.winner.as_deref().expect("a winner");
            assert_eq!(Some(winner), sel.winner.as_deref());
            let at = sel.frontier.iter().position(|f| f == winner).expect("winner on the frontier");
            assert!(at >= 2 && at + 1 < sel.frontier.len(), "{n}: winner {winner} at {at} of {:?}", sel.frontier);
            assert_eq!(s.ranked[0], winner);
            assert_eq!(s.ranked.len(), n);
        }
    }

    #[test]
    fn the_winner_serves_until_it_and_the_next_two_are_hot() {
        for n in PROVIDER_COUNTS {
            let free = walk_setup(n, 0);
            assert_eq!(free.cooldowns.hot_count(MODEL, free.now), 0);
            assert!(free.cooldowns.model(MODEL).is_some());
            let region = |s: &str| region_allows(&free.rule, Some(&free.verdict), s);
            let c = choose(Some(&free.verdict), &free.rule, &|s| free.availability(s), &region);
            assert_eq!((c.reason, c.slug), (Reason::Winner, Some(free.ranked[0].as_str())));

            let hot = walk_setup(n, 3);
            assert_eq!(hot.cooldowns.hot_count(MODEL, hot.now), 3);
            let region = |s: &str| region_allows(&hot.rule, Some(&hot.verdict), s);
            let c = choose(Some(&hot.verdict), &hot.rule, &|s| hot.availability(s), &region);
            assert_eq!((c.reason, c.slug), (Reason::SafeSet, Some(hot.ranked[3].as_str())));

            let pins: Vec<Vec<Box<str>>> = (0..n).map(|i| vec![slug(i).into()]).collect();
            let refs: Vec<&[Box<str>]> = pins.iter().map(Vec::as_slice).collect();
            let got = narrow(Some(&free.verdict), &free.rule, &refs, &|s| free.availability(s));
            assert_eq!((got.reason, got.slug), (Reason::Winner, Some(free.ranked[0].as_str())));
            assert_eq!(got.keep.iter().filter(|&&k| k).count(), 1);
        }
    }
}
