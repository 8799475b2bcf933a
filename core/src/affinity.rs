//! Session and deployment affinity (LiteLLM's `session_affinity` and `deployment_affinity`
//! pre-call checks): a conversation stays on the deployment that served it, for
//! `deployment_affinity_ttl_seconds` after its last request, as long as that deployment passes
//! the filters before this one (healthy, not cooling down, not blocked).
//!
//! - session affinity: the request's `metadata.session_id`;
//! - deployment affinity: the caller's API key (a hash of it; the key itself is never kept).
//!
//! A pin is kept per model group under one `u64`: the affinity key mixed with the group name's
//! hash, so pins survive reloads that renumber groups. Pins travel between shards as events.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::tier::Tier;
use crate::DeploymentIdx;

/// Which affinities a group keeps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AffinityKinds {
    pub session: bool,
    pub deployment: bool,
}

impl AffinityKinds {
    pub fn any(self) -> bool {
        self.session || self.deployment
    }
}

/// `optional_pre_call_checks` (every group), `model_group_affinity_config` (per group, instead),
/// `deployment_affinity_ttl_seconds`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AffinitySettings {
    pub all_groups: AffinityKinds,
    pub per_group: Vec<(String, AffinityKinds)>,
    pub ttl: Duration,
}

impl Default for AffinitySettings {
    fn default() -> Self {
        AffinitySettings { all_groups: AffinityKinds::default(), per_group: Vec::new(), ttl: Duration::from_secs(3600) }
    }
}

impl AffinitySettings {
    pub fn kinds_for(&self, group: &str) -> AffinityKinds {
        self.per_group.iter().find(|(g, _)| g == group).map_or(self.all_groups, |(_, k)| *k)
    }
}

/// The request's affinity keys, hashed by the gateway ([`affinity_hash`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AffinityKeys {
    pub session: Option<u64>,
    pub api_key: Option<u64>,
}

/// FNV-1a, 64 bits: stable across processes and releases (pins cross shards and reloads).
pub fn affinity_hash(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// The key a pin is kept under: the affinity key, which kind it is, and the group.
pub fn pin_key(key: u64, deployment_kind: bool, group_hash: u64) -> u64 {
    let mixed = key ^ group_hash.rotate_left(17) ^ u64::from(deployment_kind).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    // A final multiply so that nearby keys spread.
    mixed.wrapping_mul(0xff51_afd7_ed55_8ccd).rotate_left(31)
}

/// A conversation's deployment, until its pin expires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pin {
    pub deployment: DeploymentIdx,
    pub until: Instant,
    /// The complexity tier a complexity router's session pin was decided in (its group is the
    /// deployment's); `None` for the pick's own pins.
    pub tier: Option<Tier>,
}

impl Pin {
    /// A pin of the pick's own (no tier).
    pub fn new(deployment: DeploymentIdx, until: Instant) -> Pin {
        Pin { deployment, until, tier: None }
    }
}

/// The pins a shard knows, by pin key. Expired pins are dropped in batches, when the table has
/// doubled since the last sweep, so that it stays proportional to the live conversations.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Pins {
    map: HashMap<u64, Pin>,
    sweep_at: usize,
}

/// The table size below which no sweep runs.
const FIRST_SWEEP: usize = 1024;

impl Pins {
    /// Sets a pin at `now`; a pin already there that lasts longer stays (a late event from
    /// another shard must not shorten a fresh one).
    pub(crate) fn set(&mut self, key: u64, pin: Pin, now: Instant) {
        let slot = self.map.entry(key).or_insert(pin);
        if pin.until >= slot.until {
            *slot = pin;
        }
        if self.map.len() >= self.sweep_at.max(FIRST_SWEEP) {
            self.map.retain(|_, p| p.until > now);
            self.sweep_at = self.map.len() * 2;
        }
    }

    pub(crate) fn get(&self, key: u64) -> Option<Pin> {
        self.map.get(&key).copied()
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = (u64, Pin)> + '_ {
        self.map.iter().map(|(&k, &p)| (k, p))
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_stable_and_keys_differ_by_kind_and_group() {
        assert_eq!(affinity_hash(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(affinity_hash(b"a"), 0xaf63_dc4c_8601_ec8c);
        let k = affinity_hash(b"session-1");
        let (g1, g2) = (affinity_hash(b"gpt"), affinity_hash(b"claude"));
        assert_ne!(pin_key(k, false, g1), pin_key(k, true, g1));
        assert_ne!(pin_key(k, false, g1), pin_key(k, false, g2));
        assert_eq!(pin_key(k, false, g1), pin_key(k, false, g1));
    }

    #[test]
    fn pins_keep_the_longer_one_and_expired_ones_are_swept() {
        let t0 = Instant::now();
        let s = Duration::from_secs;
        let mut pins = Pins::default();
        pins.set(1, Pin::new(DeploymentIdx(0), t0 + s(60)), t0);
        pins.set(1, Pin::new(DeploymentIdx(1), t0 + s(30)), t0);
        assert_eq!(pins.get(1).unwrap().deployment, DeploymentIdx(0));
        for k in 2..FIRST_SWEEP as u64 {
            pins.set(k, Pin::new(DeploymentIdx(2), t0 + s(1)), t0);
        }
        // The table reached the sweep size with every short pin expired at t0 + 2 s.
        pins.set(5000, Pin::new(DeploymentIdx(3), t0 + s(90)), t0 + s(2));
        assert_eq!(pins.len(), 2);
        assert_eq!(pins.get(5000).unwrap().deployment, DeploymentIdx(3));
    }

    #[test]
    fn a_group_setting_replaces_the_global_one() {
        let s = AffinitySettings {
            all_groups: AffinityKinds { session: true, deployment: false },
            per_group: vec![("gpt".into(), AffinityKinds { session: false, deployment: true })],
            ..AffinitySettings::default()
        };
        assert_eq!(s.kinds_for("gpt"), AffinityKinds { session: false, deployment: true });
        assert_eq!(s.kinds_for("other"), AffinityKinds { session: true, deployment: false });
        assert_eq!(AffinitySettings::default().ttl, Duration::from_secs(3600));
    }
}
