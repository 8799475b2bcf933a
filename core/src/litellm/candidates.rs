//! The candidates of one pick: a bitset over the group's member positions (one `u64` word per
//! block of 64 members, see [`crate::snapshot`]). A filter first *marks* the live candidates it
//! would remove — a whole word at a time from the snapshot's and the state's dense arrays, by
//! predicate, or by position — then looks at how many it marked (that is where a fail-open rule
//! decides) and *removes* them under its reason. Removals are kept as one bitset per removing
//! filter; the decision's rejected list is built from them once, at the end, with its exact size.

use crate::group::{bit_positions, GroupLayout, BLOCK};
use crate::{DeploymentIdx, GroupIdx, RejectReason, Snapshot};

/// The bitsets of a pick, kept in [`crate::PickScratch`] so that a warm pick allocates nothing.
#[derive(Clone, Debug, Default)]
pub(crate) struct CandidateScratch {
    live: Vec<u64>,
    marks: Vec<u64>,
    stages: Vec<(RejectReason, usize)>,
}

/// The candidates still standing, and what the filters removed so far.
pub(crate) struct Candidates<'s> {
    group: GroupIdx,
    layout: GroupLayout,
    members: &'s [DeploymentIdx],
    /// Bit `i` of word `b`: member `b * 64 + i` is still a candidate.
    live: &'s mut [u64],
    live_count: usize,
    /// One bitset per removing filter, in chain order (`stages` says for which reason and how
    /// many), then the bitset the current filter marks in, then room for more.
    marks: &'s mut Vec<u64>,
    /// How many candidates the current filter marked.
    marked_count: usize,
    stages: &'s mut Vec<(RejectReason, usize)>,
}

impl<'s> Candidates<'s> {
    /// Every member of `group` is a candidate.
    pub(crate) fn new(snap: &'s Snapshot, group: GroupIdx, scratch: &'s mut CandidateScratch) -> Candidates<'s> {
        let layout = snap.layout(group);
        let members = &snap.group(group).members[..];
        let words = layout.blocks();
        let CandidateScratch { live, marks, stages } = scratch;
        live.clear();
        live.resize(words, u64::MAX);
        if let Some(last) = live.last_mut() {
            *last = block_mask(members.len(), words - 1);
        }
        // Room for one removing filter per reason and the marks, so that the first pick that
        // rejects allocates only the decision's list. Never cleared: every `mark_*` writes all
        // the words it marks in, and only committed stages are read.
        let room = words * (RejectReason::ALL.len() + 1);
        if marks.len() < room {
            marks.resize(room, 0);
        }
        stages.clear();
        stages.reserve(RejectReason::ALL.len());
        Candidates { group, layout, members, live, live_count: members.len(), marks, marked_count: 0, stages }
    }

    pub(crate) fn group(&self) -> GroupIdx {
        self.group
    }

    pub(crate) fn layout(&self) -> &GroupLayout {
        &self.layout
    }

    pub(crate) fn members(&self) -> &'s [DeploymentIdx] {
        self.members
    }

    /// How many candidates are still standing.
    pub(crate) fn len(&self) -> usize {
        self.live_count
    }

    /// The live bitset, one word per block.
    pub(crate) fn live_words(&self) -> &[u64] {
        self.live
    }

    /// Marks the live candidates among the bits `doomed(block)` returns for each block (only
    /// live bits count), and returns how many it marked.
    pub(crate) fn mark_blocks(&mut self, mut doomed: impl FnMut(usize) -> u64) -> usize {
        let mut count = 0;
        let from = self.stages.len() * self.live.len();
        for (block, (marked, &live)) in self.marks[from..].iter_mut().zip(self.live.iter()).enumerate() {
            *marked = doomed(block) & live;
            if *marked != 0 {
                count += marked.count_ones() as usize;
            }
        }
        self.marked_count = count;
        count
    }

    /// Marks the live candidates for which `doomed(position)` holds, asking only about live
    /// ones, and returns how many it marked.
    pub(crate) fn mark_where(&mut self, mut doomed: impl FnMut(usize) -> bool) -> usize {
        let mut count = 0;
        let from = self.stages.len() * self.live.len();
        for (block, (marked, &live)) in self.marks[from..].iter_mut().zip(self.live.iter()).enumerate() {
            *marked = 0;
            for pos in bit_positions(live, block * BLOCK) {
                if doomed(pos) {
                    *marked |= 1 << (pos % BLOCK);
                    count += 1;
                }
            }
        }
        self.marked_count = count;
        count
    }

    /// Marks the live candidates at these member positions (repeats and positions outside the
    /// group are ignored), and returns how many it marked.
    pub(crate) fn mark_positions(&mut self, positions: impl IntoIterator<Item = usize>) -> usize {
        let from = self.stages.len() * self.live.len();
        let marked = &mut self.marks[from..from + self.live.len()];
        match &mut *marked {
            // A small group's one word: a store, not a call to `memset`.
            [word] => *word = 0,
            words => words.fill(0),
        }
        let mut count = 0;
        for pos in positions {
            let (block, bit) = (pos / BLOCK, 1u64 << (pos % BLOCK));
            if let (Some(marked), Some(&live)) = (marked.get_mut(block), self.live.get(block)) {
                if live & bit != 0 && *marked & bit == 0 {
                    *marked |= bit;
                    count += 1;
                }
            }
        }
        self.marked_count = count;
        count
    }

    /// Removes what the current filter marked, recording `reason` for each.
    #[inline]
    pub(crate) fn remove_marked(&mut self, reason: RejectReason) {
        if self.marked_count == 0 {
            return;
        }
        let words = self.live.len();
        let marked = &self.marks[self.stages.len() * words..];
        for (live, &marked) in self.live.iter_mut().zip(marked) {
            *live &= !marked;
        }
        self.stages.push((reason, self.marked_count));
        self.live_count -= self.marked_count;
        self.marked_count = 0;
        // The next filter marks after this one's bitset.
        let room = (self.stages.len() + 1) * words;
        if self.marks.len() < room {
            self.marks.resize(room, 0);
        }
    }

    /// The reason of the last filter that removed anything.
    pub(crate) fn last_reason(&self) -> Option<RejectReason> {
        self.stages.last().map(|&(reason, _)| reason)
    }

    /// Each removed candidate with its reason, in chain order and member order within one
    /// filter: one allocation, of the exact size, and none when nothing was removed.
    pub(crate) fn rejected(&self) -> Vec<(DeploymentIdx, RejectReason)> {
        let mut rejected = Vec::with_capacity(self.stages.iter().map(|&(_, n)| n).sum());
        let words = self.live.len();
        for (stage, &(reason, _)) in self.stages.iter().enumerate() {
            let removed = &self.marks[stage * words..(stage + 1) * words];
            for (members, &word) in self.members.chunks(BLOCK).zip(removed) {
                let mut rest = word;
                while rest != 0 {
                    rejected.push((members[rest.trailing_zeros() as usize], reason));
                    rest &= rest - 1;
                }
            }
        }
        rejected
    }
}

/// The bits of block `block` that hold members of a group of `len`.
fn block_mask(len: usize, block: usize) -> u64 {
    match len - block * BLOCK {
        n if n >= BLOCK => u64::MAX,
        n => (1u64 << n) - 1,
    }
}

/// One link of the chain.
pub(crate) trait Filter {
    fn apply(&self, candidates: &mut Candidates<'_>);
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::{Deployment, Provider, RouterSettings};

    /// One group of `n` plain deployments (also the filters' tests' snapshot).
    pub(crate) fn snap(n: usize) -> Snapshot {
        let dep = |i: usize| Deployment::new(&format!("d{i}"), "g", Provider::OpenAi, "m", "http://h/v1");
        let settings = RouterSettings { allowed_fails: Some(0), ..RouterSettings::default() };
        Snapshot::build((0..n).map(dep).collect(), settings).unwrap()
    }

    #[test]
    fn mark_where_asks_only_about_live_candidates() {
        let snap = snap(130);
        let mut scratch = CandidateScratch::default();
        let mut c = Candidates::new(&snap, GroupIdx(0), &mut scratch);
        assert_eq!(c.mark_positions([3, 70, 129, 500]), 3);
        c.remove_marked(RejectReason::RetrySkipped);
        let mut asked = Vec::new();
        let n = c.mark_where(|pos| {
            asked.push(pos);
            pos % 2 == 1
        });
        assert_eq!(asked.len(), 127);
        assert!(!asked.contains(&3) && !asked.contains(&70) && !asked.contains(&129));
        assert_eq!(n, 63);
        c.remove_marked(RejectReason::CoolingDown);
        assert_eq!(c.len(), 64);
        let rejected = c.rejected();
        assert_eq!(rejected.len(), 66);
        assert_eq!(rejected[..3], [3, 70, 129].map(|i| (DeploymentIdx(i), RejectReason::RetrySkipped)));
    }
}
