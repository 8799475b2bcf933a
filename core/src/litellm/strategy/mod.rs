//! Strategies: given the survivors of the filter chain, choose one. The simple shuffle is here;
//! the strategies that choose the lowest of a measure are in `lowest.rs`.

mod lowest;

use std::time::Instant;

use crate::group::{bit_positions, BLOCK};
use crate::litellm::candidates::Candidates;
use crate::{Basis, DeploymentIdx, Rng, RoutingStrategy, Snapshot, State};

/// The strategy's choice among the live `survivors` and why it won; `None` only when there are
/// none. `stream`: whether the response streams (latency-based routing then compares times to
/// first token). `block_sums` is scratch room (one word per block), kept by the caller.
pub(crate) fn choose(
    snap: &Snapshot,
    state: &State,
    stream: bool,
    now: Instant,
    survivors: &Candidates<'_>,
    rng: &mut Rng,
    block_sums: &mut Vec<u64>,
) -> Option<(DeploymentIdx, Basis)> {
    match snap.settings.routing_strategy {
        RoutingStrategy::SimpleShuffle => {
            let idx = simple_shuffle(snap, survivors, rng, block_sums)?;
            Some((idx, Basis::Weight(snap.deployment(idx).shuffle_weight)))
        }
        RoutingStrategy::LeastBusy => lowest::least_busy(state, survivors, rng),
        RoutingStrategy::LatencyBased => lowest::lowest_latency(snap, state, stream, survivors, rng),
        RoutingStrategy::UsageBasedV2 => lowest::lowest_usage(state, now, survivors, rng),
        RoutingStrategy::CostBased => lowest::cheapest(snap, survivors, rng),
    }
}

/// LiteLLM's `simple-shuffle`: a weighted random choice by [`crate::Deployment::shuffle_weight`];
/// uniform when every survivor weighs 0. Draws exactly one number per pick, so equal seeds give
/// equal picks.
///
/// The choice is the one a walk over the survivors in member order makes: draw a ticket below
/// the total weight, then subtract each survivor's weight until the ticket falls inside one.
/// Instead of walking every survivor, it sums the live weight of each block of 64 members
/// (from the snapshot's block weights, adjusting for the few removed members, or adding the
/// few live ones), skips whole blocks, and walks one.
fn simple_shuffle(
    snap: &Snapshot,
    survivors: &Candidates<'_>,
    rng: &mut Rng,
    block_sums: &mut Vec<u64>,
) -> Option<DeploymentIdx> {
    let layout = survivors.layout();
    let (weights, full_blocks) = snap.weights(layout);
    let live = survivors.live_words();
    block_sums.clear();
    // Saturates rather than wraps: weights summing past u64::MAX are not meaningful rpm/tpm
    // values, and saturation only skews the split between such giants. While the group's
    // weights fit (the snapshot knows), no sum saturates, and subtracting the removed members'
    // weights from the block's full weight is exact: when fewer than half the block's members
    // were removed, their weights are subtracted, else the live ones' added up.
    for ((block_weights, &word), &full) in weights.chunks(BLOCK).zip(live).zip(full_blocks) {
        let removed = !word & (u64::MAX >> (BLOCK - block_weights.len()));
        let sum = if removed == 0 && layout.weights_fit {
            full
        } else if layout.weights_fit && removed & (removed - 1) == 0 {
            full - block_weights[removed.trailing_zeros() as usize]
        } else if layout.weights_fit && removed.count_ones() < BLOCK as u32 / 2 {
            full - sum_of(block_weights, removed, u64::wrapping_add)
        } else {
            sum_of(block_weights, word, u64::saturating_add)
        };
        block_sums.push(sum);
    }
    let total = block_sums.iter().fold(0u64, |sum, &w| sum.saturating_add(w));
    let members = survivors.members();
    if total == 0 {
        let mut at = rng.below(survivors.len() as u64);
        for (block, &word) in live.iter().enumerate() {
            let n = u64::from(word.count_ones());
            if at < n {
                return bit_positions(word, block * BLOCK).nth(at as usize).map(|pos| members[pos]);
            }
            at -= n;
        }
        return None;
    }
    let mut ticket = rng.below(total);
    for (block, &sum) in block_sums.iter().enumerate() {
        if ticket >= sum {
            ticket -= sum;
            continue;
        }
        // A block whose sum saturated is entered whatever the ticket; inside it the walk is exact.
        for pos in bit_positions(live[block], block * BLOCK) {
            if ticket < weights[pos] {
                return Some(members[pos]);
            }
            ticket -= weights[pos];
        }
    }
    // Not reached (the ticket is below the total, and the walk subtracts exact weights until it
    // falls inside one); the last survivor keeps the function total.
    live.iter()
        .enumerate()
        .rev()
        .find(|(_, &w)| w != 0)
        .map(|(block, &w)| members[block * BLOCK + 63 - w.leading_zeros() as usize])
}

/// The weights of the members whose bits are set in `bits`, added up with `add`.
#[inline(always)]
fn sum_of(block_weights: &[u64], bits: u64, add: fn(u64, u64) -> u64) -> u64 {
    let mut rest = bits;
    let mut sum = 0;
    while rest != 0 {
        sum = add(sum, block_weights[rest.trailing_zeros() as usize]);
        rest &= rest - 1;
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::litellm::candidates::CandidateScratch;
    use crate::{Deployment, GroupIdx, Provider, RejectReason, RouterSettings};

    /// The simple shuffle over the members of group 0 listed in `survivors`.
    fn shuffle(snap: &Snapshot, survivors: &[DeploymentIdx], rng: &mut Rng) -> Option<DeploymentIdx> {
        let mut scratch = CandidateScratch::default();
        let mut c = crate::litellm::candidates::Candidates::new(snap, GroupIdx(0), &mut scratch);
        let gone = snap.groups[0].members.iter().enumerate().filter(|(_, m)| !survivors.contains(m)).map(|(p, _)| p);
        c.mark_positions(gone);
        c.remove_marked(RejectReason::RetrySkipped);
        simple_shuffle(snap, &c, rng, &mut Vec::new())
    }

    /// The walk the block sums stand in for: over the survivors, in member order.
    fn reference(snap: &Snapshot, survivors: &[DeploymentIdx], rng: &mut Rng) -> Option<DeploymentIdx> {
        let weight = |idx: &DeploymentIdx| snap.deployment(*idx).shuffle_weight;
        let total = survivors.iter().map(weight).fold(0u64, u64::saturating_add);
        if total == 0 {
            let at = rng.below(survivors.len() as u64);
            return survivors.get(at as usize).copied();
        }
        let mut ticket = rng.below(total);
        for idx in survivors {
            if ticket < weight(idx) {
                return Some(*idx);
            }
            ticket -= weight(idx);
        }
        survivors.last().copied()
    }

    fn snap(weights: &[Option<u64>]) -> Snapshot {
        let deployments = weights
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let mut d = Deployment::new(&format!("d{i}"), "g", Provider::OpenAi, "m", "http://h");
                d.weight = *w;
                d
            })
            .collect();
        Snapshot::build(deployments, RouterSettings::default()).unwrap()
    }

    fn all(snap: &Snapshot) -> Vec<DeploymentIdx> {
        snap.groups[0].members.clone()
    }

    fn counts(snap: &Snapshot, survivors: &[DeploymentIdx], picks: u32, seed: u64) -> Vec<u32> {
        let mut rng = Rng::new(seed);
        let mut counts = vec![0u32; snap.deployments.len()];
        for _ in 0..picks {
            let idx = shuffle(snap, survivors, &mut rng).unwrap();
            counts[idx.get()] += 1;
        }
        counts
    }

    #[test]
    fn picks_follow_the_weights() {
        let snap = snap(&[Some(1), Some(3), Some(6)]);
        let c = counts(&snap, &all(&snap), 10_000, 1);
        // Expected 1000 / 3000 / 6000; 4 standard deviations is at most ±200.
        assert!((800..=1200).contains(&c[0]), "{c:?}");
        assert!((2800..=3200).contains(&c[1]), "{c:?}");
        assert!((5800..=6200).contains(&c[2]), "{c:?}");
    }

    #[test]
    fn a_zero_weight_member_is_never_picked_while_another_weighs_something() {
        let snap = snap(&[Some(0), Some(1), None]);
        let c = counts(&snap, &all(&snap), 10_000, 2);
        assert_eq!(c, [0, 10_000, 0]);
    }

    #[test]
    fn all_zero_weights_pick_uniformly() {
        let snap = snap(&[Some(0), Some(0)]);
        let c = counts(&snap, &all(&snap), 10_000, 3);
        assert!((4800..=5200).contains(&c[0]), "{c:?}");
    }

    #[test]
    fn equal_seeds_pick_equally() {
        let snap = snap(&[Some(2), Some(5), Some(1)]);
        let survivors = all(&snap);
        let run = |seed| {
            let mut rng = Rng::new(seed);
            (0..100).map(|_| shuffle(&snap, &survivors, &mut rng).unwrap()).collect::<Vec<_>>()
        };
        assert_eq!(run(9), run(9));
        assert_ne!(run(9), run(10));
    }

    #[test]
    fn saturated_weights_still_pick_a_survivor() {
        let snap = snap(&[Some(u64::MAX), Some(u64::MAX)]);
        let c = counts(&snap, &all(&snap), 100, 4);
        assert_eq!(c.iter().sum::<u32>(), 100);
    }

    #[test]
    fn no_survivors_no_pick() {
        let snap = snap(&[Some(1)]);
        assert_eq!(shuffle(&snap, &[], &mut Rng::new(0)), None);
    }

    #[test]
    fn the_block_walk_picks_what_the_walk_over_every_survivor_picks() {
        let mut gen = Rng::new(11);
        for case in 0..300u64 {
            let size = 1 + gen.below(300) as usize;
            let giant = case % 10 == 0;
            let weights: Vec<_> = (0..size)
                .map(|_| match gen.below(8) {
                    0 => Some(0),
                    _ if giant && gen.below(20) == 0 => Some(u64::MAX - gen.below(3)),
                    w => Some(w),
                })
                .collect();
            let snap = snap(&weights);
            let keep = 1 + gen.below(4);
            let survivors: Vec<_> = all(&snap).into_iter().filter(|_| gen.below(keep) != 0 || keep == 1).collect();
            let (mut a, mut b) = (Rng::new(case), Rng::new(case));
            for _ in 0..20 {
                assert_eq!(shuffle(&snap, &survivors, &mut a), reference(&snap, &survivors, &mut b), "case {case}");
            }
            assert_eq!(a, b, "case {case}: one draw per pick");
        }
    }
}
