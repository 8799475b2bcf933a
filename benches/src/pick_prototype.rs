//! NOT the gateway's pick: a prototype that prices the fix the profile of `pick/*/10000`
//! points at (see docs/bench-micro.md). It makes the same decision as
//! `switchyard_core::pick_with_scratch` (same survivors, same single rng draw, same rejected
//! list in chain order; the tests check it) with one branch-free pass over the group and a walk
//! over per-block sums, instead of a copy, two or three compacting filter passes and two
//! strategy passes over the whole group; and it reads an 8-byte weight and an 8-byte cooldown end per candidate
//! from dense arrays instead of a 296-byte `Deployment` and a 72-byte `DeploymentState`.

use std::time::Instant;

use switchyard_core::{DeploymentIdx, PickRequest, RejectReason, Rng, Snapshot, State};

/// What the core would precompute, in member order: each member's shuffle weight (snapshot)
/// and the end of its cooldown as nanoseconds since an epoch the state picks (0: none).
pub struct Dense {
    pub weights: Vec<u64>,
    pub cooldown_until_ns: Vec<u64>,
    pub epoch: Instant,
}

impl Dense {
    pub fn new(snap: &Snapshot, state: &State, members: &[DeploymentIdx], now: Instant) -> Dense {
        let epoch = now - std::time::Duration::from_secs(3600);
        let until_ns = |m| state.cooldown(m, now).map_or(0, |c| (c.until - epoch).as_nanos() as u64);
        let weights: Vec<u64> = members.iter().map(|&m| snap.deployment(m).shuffle_weight).collect();
        // The snapshot would know this per group: when no sum can saturate, plain adds (which
        // vectorise) give the core's saturating sums.
        assert!(weights.iter().try_fold(0u64, |a, &w| a.checked_add(w)).is_some(), "weights too large");
        Dense { weights, cooldown_until_ns: members.iter().map(|&m| until_ns(m)).collect(), epoch }
    }
}

/// The chosen deployment and the rejected candidates, as in a `Decision`.
pub type Picked = (DeploymentIdx, Vec<(DeploymentIdx, RejectReason)>);

/// Members per block of the walk: the first pass sums each block's live weight, so the walk
/// skips whole blocks and then walks at most one block.
const BLOCK: usize = 64;

/// Kept by the caller, like `PickScratch`: the per-block live weights.
#[derive(Default)]
pub struct PrototypeScratch {
    block_weights: Vec<u64>,
}

/// Same decision as the core's pick, over [`Dense`]: one branch-free pass sums the live
/// weights per block; the rejections are listed only when something was rejected; the failed
/// members (at most a few) are looked up by position; one draw; a walk over the block sums,
/// then over one block.
pub fn fused_pick(
    snap: &Snapshot,
    req: &PickRequest<'_>,
    now: Instant,
    rng: &mut Rng,
    dense: &Dense,
    scratch: &mut PrototypeScratch,
) -> Option<Picked> {
    let group = snap.group_by_name(req.model)?;
    let members = &snap.group(group).members;
    let n = members.len();
    let (weights, until) = (&dense.weights[..n], &dense.cooldown_until_ns[..n]);
    let now_ns = (now - dense.epoch).as_nanos() as u64;

    let blocks = &mut scratch.block_weights;
    blocks.clear();
    let (mut total, mut live) = (0u64, 0u64);
    for (w, u) in weights.chunks(BLOCK).zip(until.chunks(BLOCK)) {
        let (mut block_total, mut block_live) = (0u64, 0u64);
        for (&w, &u) in w.iter().zip(u) {
            let ok = u64::from(u <= now_ns);
            block_total += w * ok;
            block_live += ok;
        }
        blocks.push(block_total);
        total += block_total;
        live += block_live;
    }
    let mut rejected = Vec::new();
    if live < n as u64 {
        rejected.reserve(n - live as usize);
        rejected.extend(
            members.iter().zip(until).filter(|(_, &u)| u > now_ns).map(|(&m, _)| (m, RejectReason::CoolingDown)),
        );
    }
    // The core would keep each deployment's position in its group in the snapshot.
    let mut failed_live: Vec<usize> =
        req.failed.iter().filter_map(|f| members.iter().position(|m| m == f)).filter(|&i| until[i] <= now_ns).collect();
    failed_live.sort_unstable();
    failed_live.dedup();
    let untried = live - failed_live.len() as u64;
    // The retry skip fails open, as the core's does: only while something untried remains.
    let skip_failed = !failed_live.is_empty() && untried > 0;
    let count = if skip_failed {
        rejected.extend(failed_live.iter().map(|&i| (members[i], RejectReason::RetrySkipped)));
        for &i in &failed_live {
            blocks[i / BLOCK] -= weights[i];
            total -= weights[i];
        }
        untried
    } else {
        live
    };
    let skipped = |i: usize| until[i] > now_ns || (skip_failed && failed_live.contains(&i));
    let chosen = if total == 0 {
        let at = rng.below(count) as usize;
        (0..n).filter(|&i| !skipped(i)).nth(at)
    } else {
        let mut ticket = rng.below(total);
        let block = blocks.iter().position(|&b| {
            if ticket < b {
                return true;
            }
            ticket -= b;
            false
        })?;
        (block * BLOCK..n.min(block * BLOCK + BLOCK)).find(|&i| {
            if skipped(i) {
                return false;
            }
            if ticket < weights[i] {
                return true;
            }
            ticket -= weights[i];
            false
        })
    };
    chosen.map(|i| (members[i], rejected))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pick_setup::{pick_setup, GROUP, GROUP_SIZES};
    use switchyard_core::{pick_with_scratch, PickScratch};

    #[test]
    fn the_prototype_decides_as_the_core_does() {
        for n in GROUP_SIZES {
            let s = pick_setup(n);
            let members = &s.snap.group(s.snap.group_by_name(GROUP).unwrap()).members;
            let dense = Dense::new(&s.snap, &s.state, members, s.now);
            // Every member failed: the retry skip fails open (quadratic, so small groups only).
            let all_failed = if n <= 100 { &members[..] } else { &[][..] };
            for failed in [&[][..], &s.failed[..], all_failed] {
                let req = PickRequest { model: GROUP, failed };
                let (mut core_rng, mut proto_rng) = (Rng::new(n as u64), Rng::new(n as u64));
                let (mut core_scratch, mut proto_scratch) = (PickScratch::new(), PrototypeScratch::default());
                for _ in 0..50 {
                    let d =
                        pick_with_scratch(&s.snap, &s.state, &req, s.now, &mut core_rng, &mut core_scratch).unwrap();
                    let p = fused_pick(&s.snap, &req, s.now, &mut proto_rng, &dense, &mut proto_scratch).unwrap();
                    assert_eq!((d.deployment, d.rejected), p);
                }
            }
        }
    }
}
