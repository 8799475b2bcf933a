//! A small seeded PRNG (wyrand) so that the same seed gives the same decisions.
//!
//! Not cryptographic: it spreads traffic, it does not guard secrets.

/// wyrand: one 64-bit state word, one multiply-xor per draw. Passes BigCrush and PractRand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rng {
    state: u64,
}

const WYRAND_INCREMENT: u64 = 0xa076_1d64_78bd_642f;
const WYRAND_MIX: u64 = 0xe703_7ed1_a0b4_28db;

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng { state: seed }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(WYRAND_INCREMENT);
        let product = u128::from(self.state) * u128::from(self.state ^ WYRAND_MIX);
        ((product >> 64) as u64) ^ (product as u64)
    }

    /// A number in `0..n` by Lemire's multiply-shift: the high word of `x * n`. The bias is at
    /// most `n / 2^64`, far below anything a traffic split can show. `below(0)` is 0: an empty
    /// range has nothing to draw, and callers stay branch-free.
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream() {
        let mut a = Rng::new(42);
        let mut b = Rng::new(42);
        for _ in 0..1000 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
        assert_ne!(Rng::new(1).next_u64(), Rng::new(2).next_u64());
    }

    #[test]
    fn below_stays_in_range_and_covers_it() {
        let mut rng = Rng::new(7);
        let mut seen = [0u32; 7];
        for _ in 0..7000 {
            let x = rng.below(7);
            assert!(x < 7);
            seen[x as usize] += 1;
        }
        // Each bucket expects 1000; 4 standard deviations is about ±120.
        assert!(seen.iter().all(|&c| (880..=1120).contains(&c)), "{seen:?}");
        assert_eq!(rng.below(0), 0);
        assert_eq!(rng.below(1), 0);
    }
}
