//! Strategies: given the survivors of the filter chain, choose one.

use crate::{DeploymentIdx, Rng, RoutingStrategy, Snapshot};

/// The strategy's choice among `survivors`; `None` only when there are none.
pub(crate) fn choose(
    strategy: RoutingStrategy,
    snap: &Snapshot,
    survivors: &[DeploymentIdx],
    rng: &mut Rng,
) -> Option<DeploymentIdx> {
    match strategy {
        RoutingStrategy::SimpleShuffle => simple_shuffle(snap, survivors, rng),
    }
}

/// LiteLLM's `simple-shuffle`: a weighted random choice by [`crate::Deployment::shuffle_weight`];
/// uniform when every survivor weighs 0. Draws exactly one number per pick, so equal seeds give
/// equal picks, and walks the survivors twice instead of collecting anything.
fn simple_shuffle(snap: &Snapshot, survivors: &[DeploymentIdx], rng: &mut Rng) -> Option<DeploymentIdx> {
    let weight = |idx: &DeploymentIdx| snap.deployment(*idx).shuffle_weight;
    // Saturates rather than wraps: weights summing past u64::MAX are not meaningful rpm/tpm
    // values, and saturation only skews the split between such giants.
    let total = survivors.iter().map(weight).fold(0u64, u64::saturating_add);
    if total == 0 {
        let at = rng.below(survivors.len() as u64) as usize;
        return survivors.get(at).copied();
    }
    let mut ticket = rng.below(total);
    for idx in survivors {
        let w = weight(idx);
        if ticket < w {
            return Some(*idx);
        }
        ticket -= w;
    }
    // Reached only when the sum saturated: the ticket fell past the last exact weight.
    survivors.last().copied()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Deployment, Provider, RouterSettings};

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
            let idx = simple_shuffle(snap, survivors, &mut rng).unwrap();
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
            (0..100).map(|_| simple_shuffle(&snap, &survivors, &mut rng).unwrap()).collect::<Vec<_>>()
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
        assert_eq!(simple_shuffle(&snap, &[], &mut Rng::new(0)), None);
    }
}
