//! The cooldown ends as the pick's cooldown filter reads them: one `u64` per deployment in the
//! snapshot's slot order (see [`crate::snapshot`]), and for every block of 64 members a summary
//! that answers most blocks without reading their ends.
//!
//! An end is stored as a *code*: `0` for "no cooldown recorded", else the nanoseconds from the
//! epoch to the end, plus one (capped below 2^63, 292 years). The epoch is at or before every
//! recorded end, so codes keep the order of instants exactly, and a deployment cools down at
//! `now` iff its code is greater than [`CooldownEnds::code_at`]`(now)`, as
//! [`crate::DeploymentState::cooldown_at`] says with instants.

use std::time::{Duration, Instant};

use crate::deployment::DeploymentIdx;
use crate::group::{bit_positions, GroupLayout, BLOCK};
use crate::snapshot::Snapshot;

/// How far before the first cooldown end the epoch goes, so that a later cooldown ending
/// earlier than that first one rarely has to move it (which rewrites every code).
const EPOCH_LEAD: Duration = Duration::from_secs(24 * 3600);

/// The largest code: below 2^63, so that `now - end` never overflows an `i64`.
const MAX_CODE: u64 = i64::MAX as u64;

/// What one block's recorded ends say without reading them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct BlockEnds {
    /// The block's members with a cooldown recorded (code > 0), live or over.
    recorded: u64,
    /// The smallest and largest code among them (0 when there are none).
    min: u64,
    max: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct CooldownEnds {
    /// Each deployment's slot, by deployment index (copied from the snapshot; `u32::MAX` for
    /// none).
    slot_of: Vec<u32>,
    /// Each deployment's bit among all blocks' bits: block × 64 + bit in the block.
    bit_of: Vec<u32>,
    by_slot: Vec<u64>,
    blocks: Vec<BlockEnds>,
    epoch: Option<Instant>,
}

impl CooldownEnds {
    pub(crate) fn new(snapshot: &Snapshot) -> CooldownEnds {
        let places = (0..snapshot.deployments.len()).map(|i| snapshot.place_of(DeploymentIdx(i as u32)));
        let (slot_of, bit_of) = places
            .map(|p| p.map_or((u32::MAX, u32::MAX), |p| (p.slot as u32, (p.block * BLOCK) as u32 + p.bit)))
            .unzip();
        let (slots, blocks) = snapshot.slots_and_blocks();
        CooldownEnds {
            slot_of,
            bit_of,
            by_slot: vec![0; slots],
            blocks: vec![BlockEnds::default(); blocks],
            epoch: None,
        }
    }

    /// The code of `t`: 0 before the epoch (or while nothing was ever recorded).
    pub(crate) fn code_at(&self, t: Instant) -> u64 {
        match self.epoch.and_then(|epoch| t.checked_duration_since(epoch)) {
            Some(since) => u64::try_from(since.as_nanos()).unwrap_or(u64::MAX).min(MAX_CODE - 1) + 1,
            None => 0,
        }
    }

    /// The members of block `block` of the group laid out at `layout` that cool down at the
    /// instant whose code is `now`. Blocks this state does not have (it was built for another
    /// snapshot) cool down nowhere.
    pub(crate) fn cooling(&self, layout: &GroupLayout, block: usize, now: u64) -> u64 {
        let Some(summary) = self.blocks.get(layout.first_block + block) else {
            return 0;
        };
        if now >= summary.max {
            // Every recorded cooldown is over (or none was recorded): the common case.
            return 0;
        }
        if now < summary.min {
            // Every recorded cooldown is live.
            return summary.recorded;
        }
        let first = layout.first_slot + block * BLOCK;
        let len = (layout.len - block * BLOCK).min(BLOCK);
        let ends = self.by_slot.get(first..).unwrap_or(&[]);
        cooling_among(&ends[..len.min(ends.len())], now)
    }

    /// Records that `idx`'s cooldown now ends at `until` (never earlier than it ended before).
    /// `all_ends` lists every deployment's recorded end, this one included, in deployment order,
    /// for when `until` is before the epoch and every code is rewritten.
    pub(crate) fn set<I>(&mut self, idx: DeploymentIdx, until: Instant, all_ends: impl FnOnce() -> I)
    where
        I: Iterator<Item = Option<Instant>>,
    {
        if self.epoch.is_none_or(|epoch| until < epoch) {
            self.epoch = Some(until.checked_sub(EPOCH_LEAD).unwrap_or(until));
            self.by_slot.fill(0);
            self.blocks.fill(BlockEnds::default());
            for (i, end) in all_ends().enumerate() {
                if let Some(end) = end {
                    self.write(DeploymentIdx(i as u32), end);
                }
            }
        } else {
            self.write(idx, until);
        }
    }

    /// Records that `idx` has no cooldown (an admin ended it): its end is forgotten, and its
    /// block's summary is made again from the ends that stay.
    pub(crate) fn clear(&mut self, idx: DeploymentIdx) {
        self.put(idx, 0);
    }

    fn write(&mut self, idx: DeploymentIdx, until: Instant) {
        let code = self.code_at(until);
        self.put(idx, code);
    }

    /// Sets `idx`'s code (0: none recorded) and its block's summary.
    fn put(&mut self, idx: DeploymentIdx, code: u64) {
        let (Some(&slot), Some(&bit)) = (self.slot_of.get(idx.get()), self.bit_of.get(idx.get())) else {
            return;
        };
        let (slot, block, bit) = (slot as usize, bit as usize / BLOCK, bit as usize % BLOCK);
        let (Some(end), Some(summary)) = (self.by_slot.get_mut(slot), self.blocks.get_mut(block)) else {
            return;
        };
        *end = code;
        match code {
            0 => summary.recorded &= !(1 << bit),
            _ => summary.recorded |= 1 << bit,
        }
        // At most 64 ends, once per recorded cooldown: keeps `min` exact as ends move.
        let first = slot - bit;
        let (mut min, mut max) = (u64::MAX, 0);
        for b in bit_positions(summary.recorded, 0) {
            let end = self.by_slot[first + b];
            (min, max) = (min.min(end), max.max(end));
        }
        (summary.min, summary.max) = if summary.recorded == 0 { (0, 0) } else { (min, max) };
    }
}

/// Which of `ends` (at most 64) are greater than `now`, as bits. Branch-free: codes and `now`
/// are below 2^63, so `now - end` wraps to a set top bit exactly when `end > now`.
fn cooling_among(ends: &[u64], now: u64) -> u64 {
    let bit = |(i, &end): (usize, &u64)| (now.wrapping_sub(end) >> 63) << i;
    match <&[u64; BLOCK]>::try_from(ends) {
        Ok(full) => full.iter().enumerate().map(bit).fold(0, |m, b| m | b),
        Err(_) => ends.iter().enumerate().map(bit).fold(0, |m, b| m | b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Deployment, Provider, RouterSettings};

    #[test]
    fn cooling_among_compares_every_end() {
        let ends: Vec<u64> = (0..64).collect();
        assert_eq!(cooling_among(&ends, 61), 0b11 << 62);
        assert_eq!(cooling_among(&ends[..3], 0), 0b110);
        assert_eq!(cooling_among(&[MAX_CODE, 0], MAX_CODE - 1), 1);
        assert_eq!(cooling_among(&[MAX_CODE, 1], 0), 0b11);
        assert_eq!(cooling_among(&[], 5), 0);
    }

    #[test]
    fn codes_keep_the_order_of_instants_and_the_summaries_stay_exact() {
        let dep = |i: usize| Deployment::new(&format!("d{i}"), "g", Provider::OpenAi, "m", "http://h");
        let snap = Snapshot::build((0..70).map(dep).collect(), RouterSettings::default()).unwrap();
        let layout = snap.layout(crate::GroupIdx(0));
        let mut ends = CooldownEnds::new(&snap);
        let mut untils: Vec<Option<Instant>> = vec![None; 70];
        let t0 = Instant::now() + Duration::from_secs(10 * 24 * 3600);
        let s = Duration::from_secs;
        for (i, until) in
            [(3, t0 + s(10)), (5, t0 + s(20)), (66, t0 + s(5)), (3, t0 + s(30)), (7, t0 - s(5 * 24 * 3600))]
        {
            untils[i] = Some(until);
            ends.set(DeploymentIdx(i as u32), until, || untils.iter().copied());
        }
        for now in [t0 - s(6 * 24 * 3600), t0 - s(5 * 24 * 3600), t0, t0 + s(5), t0 + s(20), t0 + s(29), t0 + s(30)] {
            let code = ends.code_at(now);
            let expected = |block: usize| {
                (0..64)
                    .filter(|b| untils.get(block * 64 + b).copied().flatten().is_some_and(|u| now < u))
                    .fold(0u64, |m, b| m | 1 << b)
            };
            assert_eq!(ends.cooling(&layout, 0, code), expected(0));
            assert_eq!(ends.cooling(&layout, 1, code), expected(1));
        }
        assert_eq!(ends.blocks[0].recorded, 1 << 3 | 1 << 5 | 1 << 7);
        assert_eq!(ends.blocks[0].max, ends.code_at(t0 + s(30)));
    }

    #[test]
    fn a_cleared_end_cools_nothing_and_its_block_summary_shrinks() {
        let dep = |i: usize| Deployment::new(&format!("d{i}"), "g", Provider::OpenAi, "m", "http://h");
        let snap = Snapshot::build((0..70).map(dep).collect(), RouterSettings::default()).unwrap();
        let layout = snap.layout(crate::GroupIdx(0));
        let mut ends = CooldownEnds::new(&snap);
        let t0 = Instant::now();
        let s = Duration::from_secs;
        let mut untils: Vec<Option<Instant>> = vec![None; 70];
        for (i, until) in [(3, t0 + s(30)), (5, t0 + s(10)), (66, t0 + s(20))] {
            untils[i] = Some(until);
            ends.set(DeploymentIdx(i as u32), until, || untils.iter().copied());
        }
        let now = ends.code_at(t0 + s(1));
        assert_eq!(ends.cooling(&layout, 0, now), 1 << 3 | 1 << 5);
        // The latest end goes: the block's largest end is the one that stays.
        ends.clear(DeploymentIdx(3));
        assert_eq!(ends.cooling(&layout, 0, now), 1 << 5);
        assert_eq!((ends.blocks[0].recorded, ends.blocks[0].max), (1 << 5, ends.code_at(t0 + s(10))));
        ends.clear(DeploymentIdx(5));
        assert_eq!(ends.cooling(&layout, 0, now), 0);
        assert_eq!(ends.blocks[0], BlockEnds::default());
        // The other block is untouched; clearing twice, or what was never set, changes nothing.
        assert_eq!(ends.cooling(&layout, 1, now), 1 << 2);
        ends.clear(DeploymentIdx(5));
        ends.clear(DeploymentIdx(69));
        assert_eq!(ends.cooling(&layout, 1, now), 1 << 2);
    }
}
