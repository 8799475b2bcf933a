//! A snapshot with one group of `n` weighted deployments and a shard state in which about 10%
//! of them cool down, as the pick benches need it; optionally another 10% whose cooldowns have
//! ended.

use std::time::{Duration, Instant};

use pointwork_core::{
    Deployment, DeploymentIdx, Failure, LatencySample, Provider, RouterSettings, RoutingStrategy, Snapshot, State,
};

/// The group sizes the pick benches run.
pub const GROUP_SIZES: [usize; 5] = [2, 10, 100, 1_000, 10_000];

/// The group sizes the strategy benches run.
pub const STRATEGY_GROUP_SIZES: [usize; 2] = [10, 10_000];

/// The strategies the strategy benches run, with their bench names.
pub const STRATEGIES: [(&str, RoutingStrategy); 4] = [
    ("least-busy", RoutingStrategy::LeastBusy),
    ("latency", RoutingStrategy::LatencyBased),
    ("usage-v2", RoutingStrategy::UsageBasedV2),
    ("cost", RoutingStrategy::CostBased),
];

/// The requested group name.
pub const GROUP: &str = "bench-model";

pub struct PickSetup {
    pub snap: Snapshot,
    pub state: State,
    /// A time at which every cooldown started by the set-up is live.
    pub now: Instant,
    /// A non-empty `PickRequest::failed` for the retry variant: one deployment that is not
    /// cooling down already failed.
    pub failed: Vec<DeploymentIdx>,
    pub cooling: usize,
    /// Deployments whose cooldown has ended by `now` (0 unless asked for).
    pub ended: usize,
}

/// Whether deployment `i` cools down: every tenth one, so 10% (none in a group of 2).
fn cools_down(i: usize) -> bool {
    i % 10 == 5
}

/// Whether deployment `i` had a cooldown that has ended, when asked for: another 10%.
fn cooled_down(i: usize) -> bool {
    i % 10 == 7
}

/// One group of `n`, 10% of it cooling down at `now`.
pub fn pick_setup(n: usize) -> PickSetup {
    pick_setup_with(n, false)
}

/// [`pick_setup`], and with `ended` another 10% whose cooldowns ended before `now`: every block
/// of 64 members then holds both live and ended cooldowns, so the cooldown filter compares
/// each member's end instead of answering from the block's summary.
pub fn pick_setup_with(n: usize, ended: bool) -> PickSetup {
    setup(n, ended, RoutingStrategy::SimpleShuffle)
}

/// [`pick_setup`] under `strategy`, with what the stateful strategies read: requests in flight
/// (0 to 4), a latency average for every deployment (20 to 80 ms), this minute's usage well
/// under the `rpm`/`tpm` limits, and prices (every seventh unknown); a 10% latency buffer.
pub fn strategy_setup(n: usize, strategy: RoutingStrategy) -> PickSetup {
    let mut s = setup(n, false, strategy);
    for i in 0..n {
        let idx = DeploymentIdx(i as u32);
        for _ in 0..i % 5 {
            s.state.request_started(idx);
        }
        let total = Duration::from_millis(20 + (i * 7919 % 61) as u64);
        s.state.record_latency(idx, LatencySample { stream: false, total, first_token: None, output_tokens: Some(50) });
        s.state.record_usage(idx, s.now, 1 + (i % 3) as u64, 100 * (i * 31 % 17) as u64);
    }
    s
}

fn setup(n: usize, ended: bool, strategy: RoutingStrategy) -> PickSetup {
    let deployments = (0..n)
        .map(|i| {
            let id = format!("dep-{i:05}");
            let api_base = format!("http://10.0.{}.{}:8000/v1", i / 250, i % 250);
            let mut d = Deployment::new(&id, GROUP, Provider::OpenAi, "gpt-4o-mini", &api_base);
            d.weight = Some(1 + (i % 4) as u64);
            d.rpm = Some(10_000);
            d.tpm = Some(10_000_000);
            d.input_cost_per_token = (i % 7 != 3).then_some(1e-7 * (1 + i * 13 % 29) as f64);
            d.output_cost_per_token = Some(4e-7);
            d
        })
        .collect();
    let settings =
        RouterSettings { routing_strategy: strategy, lowest_latency_buffer: 0.1, ..RouterSettings::default() };
    let snap = Snapshot::build(deployments, settings).expect("unique ids");
    let mut state = State::new(&snap);
    let t0 = Instant::now();
    state.set_minute_origin(t0);
    let now = t0 + Duration::from_secs(1);
    let mut ended_count = 0;
    for i in (0..n).filter(|&i| ended && cooled_down(i)) {
        let idx = DeploymentIdx(i as u32);
        // 5 s from t0 - 10 s: over by `now`.
        state.record_failure(&snap, idx, Failure::Status(429), t0 - Duration::from_secs(10)).expect("cooldown");
        assert!(!state.is_cooling_down(idx, now));
        ended_count += 1;
    }
    let mut cooling = 0;
    for i in (0..n).filter(|&i| cools_down(i)) {
        let idx = DeploymentIdx(i as u32);
        // With `allowed_fails` unset, a 429 cools down any deployment that has siblings.
        state.record_failure(&snap, idx, Failure::Status(429), t0).expect("a 429 with siblings starts a cooldown");
        assert!(state.is_cooling_down(idx, now));
        cooling += 1;
    }
    let failed = vec![DeploymentIdx(0)];
    assert!(!state.is_cooling_down(failed[0], now));
    PickSetup { snap, state, now, failed, cooling, ended: ended_count }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pointwork_core::{pick_with_scratch, Cause, PickRequest, PickScratch, RejectReason, Rng};

    #[test]
    fn a_tenth_cools_down_and_the_pick_skips_it() {
        for (n, ended) in GROUP_SIZES.into_iter().flat_map(|n| [(n, false), (n, true)]) {
            let s = pick_setup_with(n, ended);
            assert_eq!(s.cooling, n / 10);
            assert_eq!(s.ended, if ended { n / 10 } else { 0 });
            let mut rng = Rng::new(1);
            let mut scratch = PickScratch::new();
            for failed in [&[][..], &s.failed[..]] {
                let req = PickRequest {
                    model: GROUP,
                    failed,
                    stream: false,
                    input_tokens: 100,
                    excluded: &[],
                    order: None,
                    facts: &pointwork_core::NO_FACTS,
                };
                let d = pick_with_scratch(&s.snap, &s.state, &req, s.now, &mut rng, &mut scratch).unwrap();
                assert!(!s.state.is_cooling_down(d.deployment, s.now));
                assert_eq!(d.candidates as usize, n);
                assert_eq!(d.rejected_for(RejectReason::CoolingDown), n / 10);
                let retry = !failed.is_empty();
                assert_eq!(d.cause, if retry { Cause::Retry } else { Cause::Fresh });
                assert_eq!(d.rejected_for(RejectReason::RetrySkipped), usize::from(retry));
            }
        }
    }

    #[test]
    fn the_strategy_setups_pick_what_their_strategy_says() {
        for n in STRATEGY_GROUP_SIZES {
            for (_, strategy) in STRATEGIES {
                let s = strategy_setup(n, strategy);
                let req = PickRequest {
                    model: GROUP,
                    failed: &[],
                    stream: false,
                    input_tokens: 100,
                    excluded: &[],
                    order: None,
                    facts: &pointwork_core::NO_FACTS,
                };
                let d = pick_with_scratch(&s.snap, &s.state, &req, s.now, &mut Rng::new(1), &mut PickScratch::new())
                    .unwrap();
                assert!(!s.state.is_cooling_down(d.deployment, s.now));
                assert_eq!(d.rejected.len(), n / 10, "{strategy:?}: only the cooldowns");
                if strategy == RoutingStrategy::LeastBusy {
                    assert_eq!(s.state.in_flight(d.deployment), 0);
                }
            }
        }
    }
}
