//! The strategies that choose the survivor with the lowest of some measure, ties (and, for
//! latency, near-ties within the buffer) broken by one seeded draw:
//! - `least-busy`: requests in flight on this shard;
//! - `latency-based-routing`: the latency average (time to first token for a stream), 0 for
//!   a deployment without samples, so it is tried first;
//! - `usage-based-routing-v2`: tokens used this minute (the limit filters ran before);
//! - `cost-based-routing`: input + output price per token, unknown prices last.
//!
//! Each walks the live bitset twice or three times (lowest value; how many are eligible; the
//! drawn one), reading a few bytes per candidate from vectors by deployment index, and
//! allocates nothing.

use crate::group::{bit_positions, BLOCK};
use crate::latency::Latency;
use crate::litellm::candidates::Candidates;
use crate::usage::MinuteUsage;
use crate::{Basis, DeploymentIdx, LatencyMeasure, Rng, Snapshot, State};

pub(crate) fn least_busy(state: &State, survivors: &Candidates<'_>, rng: &mut Rng) -> Option<(DeploymentIdx, Basis)> {
    let in_flight = |idx: DeploymentIdx| state.in_flight.get(idx.get()).copied().unwrap_or(0);
    let idx = lowest(survivors, |idx| f64::from(in_flight(idx)), |min| min, rng)?;
    Some((idx, Basis::InFlight(in_flight(idx))))
}

pub(crate) fn lowest_latency(
    snap: &Snapshot,
    state: &State,
    stream: bool,
    survivors: &Candidates<'_>,
    rng: &mut Rng,
) -> Option<(DeploymentIdx, Basis)> {
    let latency = |idx: DeploymentIdx| {
        state.latency.get(idx.get()).map_or((0.0, LatencyMeasure::Untried), |l: &Latency| l.routing_seconds(stream))
    };
    let buffer = snap.settings.lowest_latency_buffer;
    // LiteLLM: every deployment within lowest + buffer × lowest is eligible. A non-finite or
    // negative buffer (the config refuses them) counts as 0.
    let buffer = if buffer.is_finite() && buffer > 0.0 { buffer } else { 0.0 };
    let idx = lowest(survivors, |idx| latency(idx).0, |min| min + min * buffer, rng)?;
    let (seconds, measure) = latency(idx);
    let latency = std::time::Duration::try_from_secs_f64(seconds).unwrap_or_default();
    Some((idx, Basis::Latency { latency, measure }))
}

pub(crate) fn lowest_usage(
    state: &State,
    now: std::time::Instant,
    survivors: &Candidates<'_>,
    rng: &mut Rng,
) -> Option<(DeploymentIdx, Basis)> {
    let minute = state.minutes.minute(now);
    let usage =
        |idx: DeploymentIdx| state.usage.get(idx.get()).map_or(MinuteUsage::default(), |u| *u).in_minute(minute);
    let idx = lowest(survivors, |idx| usage(idx).tokens as f64, |min| min, rng)?;
    let used = usage(idx);
    Some((idx, Basis::Usage { tokens: used.tokens, requests: used.requests }))
}

pub(crate) fn cheapest(snap: &Snapshot, survivors: &Candidates<'_>, rng: &mut Rng) -> Option<(DeploymentIdx, Basis)> {
    let prices = &snap.dense().prices;
    let price = |idx: DeploymentIdx| prices.get(idx.get()).copied().unwrap_or(f64::INFINITY);
    let idx = lowest(survivors, price, |min| min, rng)?;
    let p = price(idx);
    Some((idx, Basis::Price(p.is_finite().then_some(p))))
}

/// A uniformly drawn survivor among those whose `value` is at most `ceiling(lowest value)`;
/// `None` only when there are no survivors. Values must not be NaN. One draw per pick.
fn lowest(
    survivors: &Candidates<'_>,
    value: impl Fn(DeploymentIdx) -> f64,
    ceiling: impl Fn(f64) -> f64,
    rng: &mut Rng,
) -> Option<DeploymentIdx> {
    let members = survivors.members();
    let live = survivors.live_words();
    let each = || {
        live.iter().enumerate().flat_map(move |(block, &word)| bit_positions(word, block * BLOCK)).map(|p| members[p])
    };
    // The lowest value and how many share it.
    let (mut min, mut at_min) = (f64::INFINITY, 0u64);
    let mut any = false;
    for idx in each() {
        let v = value(idx);
        any = true;
        if v < min {
            (min, at_min) = (v, 1);
        } else if v == min {
            at_min += 1;
        }
    }
    if !any {
        return None;
    }
    // A ceiling below the lowest value (or NaN, from ∞ × 0) admits the lowest ones only.
    let ceiling = match ceiling(min) {
        c if c >= min => c,
        _ => min,
    };
    let count = if ceiling == min { at_min } else { each().filter(|&idx| value(idx) <= ceiling).count() as u64 };
    let n = rng.below(count);
    each().filter(|&idx| value(idx) <= ceiling).nth(n as usize)
}

#[cfg(test)]
#[path = "lowest_tests.rs"]
mod tests;
