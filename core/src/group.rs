//! A model group and the dense layout its members share: the group's index, its members, and
//! where the group's slots and blocks of 64 members lie in the snapshot's dense arrays (see
//! [`crate::snapshot`]). Snapshot building, the per-shard cooldown index and the filters all lay
//! their bitsets out this way; this module names nothing of them.

use crate::deployment::DeploymentIdx;

/// A model group's position in [`crate::Snapshot::groups`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GroupIdx(pub u32);

impl GroupIdx {
    pub fn get(self) -> usize {
        self.0 as usize
    }
}

/// The deployments that share one public `model_name`, in config order. A member's position in
/// `members` is its position in the pick's per-group bitsets and dense arrays.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    pub name: String,
    pub members: Vec<DeploymentIdx>,
}

/// Members per block: the pick's bitsets hold one `u64` word per block of a group.
pub(crate) const BLOCK: usize = u64::BITS as usize;

/// Where a group's dense data lives (see [`crate::snapshot`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct GroupLayout {
    /// The group's members have the slots `first_slot..first_slot + len`.
    pub(crate) first_slot: usize,
    /// The group's blocks are `first_block..first_block + blocks()` of the block weights.
    pub(crate) first_block: usize,
    pub(crate) len: usize,
    /// Whether the weights of all members sum to at most `u64::MAX`: then no sum over some of
    /// them saturates, and the pick may add and subtract block weights exactly.
    pub(crate) weights_fit: bool,
}

impl GroupLayout {
    /// How many blocks (bitset words) the group spans.
    pub(crate) fn blocks(&self) -> usize {
        self.len.div_ceil(BLOCK)
    }
}

/// The positions of the set bits of `word`, lowest first, plus `base`.
pub(crate) fn bit_positions(word: u64, base: usize) -> BitPositions {
    BitPositions { rest: word, base }
}

/// See [`bit_positions`]; knows its exact length, so that collecting it reserves once.
#[derive(Clone, Debug)]
pub(crate) struct BitPositions {
    rest: u64,
    base: usize,
}

impl Iterator for BitPositions {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        if self.rest == 0 {
            return None;
        }
        let bit = self.rest.trailing_zeros() as usize;
        self.rest &= self.rest - 1;
        Some(self.base + bit)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.rest.count_ones() as usize;
        (n, Some(n))
    }
}

impl ExactSizeIterator for BitPositions {}
