//! A snapshot with one group of `n` weighted deployments and a shard state in which about 10%
//! of them cool down, as the pick benches need it; optionally another 10% whose cooldowns have
//! ended.

use std::time::{Duration, Instant};

use switchyard_core::{Deployment, DeploymentIdx, Failure, Provider, RouterSettings, Snapshot, State};

/// The group sizes the pick benches run.
pub const GROUP_SIZES: [usize; 5] = [2, 10, 100, 1_000, 10_000];

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
    let deployments = (0..n)
        .map(|i| {
            let id = format!("dep-{i:05}");
            let api_base = format!("http://10.0.{}.{}:8000/v1", i / 250, i % 250);
            let mut d = Deployment::new(&id, GROUP, Provider::OpenAi, "gpt-4o-mini", &api_base);
            d.weight = Some(1 + (i % 4) as u64);
            d
        })
        .collect();
    let snap = Snapshot::build(deployments, RouterSettings::default()).expect("unique ids");
    let mut state = State::new(&snap);
    let t0 = Instant::now();
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
    use switchyard_core::{pick_with_scratch, Cause, PickRequest, PickScratch, RejectReason, Rng};

    #[test]
    fn a_tenth_cools_down_and_the_pick_skips_it() {
        for (n, ended) in GROUP_SIZES.into_iter().flat_map(|n| [(n, false), (n, true)]) {
            let s = pick_setup_with(n, ended);
            assert_eq!(s.cooling, n / 10);
            assert_eq!(s.ended, if ended { n / 10 } else { 0 });
            let mut rng = Rng::new(1);
            let mut scratch = PickScratch::new();
            for failed in [&[][..], &s.failed[..]] {
                let req = PickRequest { model: GROUP, failed };
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
}
