//! The keys the database thread holds: every entry it found (shared with the shards), the
//! digests it knows are wrong (bounded, each for a while), the lookups in flight, and the
//! accounts and meters the entries of one key, team or user share.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use futures_channel::oneshot;
use pointwork_core::{KeyLimits, KeyMeter};

use crate::account::{Account, KeyEntry, KeyRecord, ModelMeters};
use crate::model_budget::{ModelBudget, ModelMeter};
use crate::refresh;
use crate::{LimitedMeters, Lookup};

/// How long a wrong key stays known as wrong: a key another proxy (LiteLLM's) creates on the
/// same database is found after at most this long.
const NEGATIVE_TTL: Duration = Duration::from_secs(10);

/// The keys the thread knows, those it knows are wrong, and the accounts they share.
#[derive(Default)]
pub(crate) struct Keys {
    pub(crate) entries: HashMap<[u8; 32], Arc<KeyEntry>>,
    pub(crate) negative: Negative,
    /// Lookups in flight, with everyone waiting for each.
    pub(crate) waiting: HashMap<[u8; 32], Vec<oneshot::Sender<Lookup>>>,
    /// `key:<token>`, `team:<id>`, `user:<id>` → the account every entry of it shares.
    pub(crate) accounts: HashMap<String, Weak<Account>>,
    /// The meters of keys and teams with rpm / tpm, shared with the cluster thread.
    pub(crate) limited: Arc<LimitedMeters>,
    /// `<owner>:model:<model>:<period>` → its `model_max_budget` meter (owner: `key:<token>`,
    /// `team:<id>`, `user:<id>`).
    pub(crate) model_meters: HashMap<String, Weak<KeyMeter>>,
}

impl Keys {
    pub(crate) fn entry_for(&mut self, record: KeyRecord) -> Arc<KeyEntry> {
        let key = self.account(format!("key:{}", record.token), record.spend);
        let team = record.team.as_ref().map(|t| format!("team:{}", t.team_id));
        let team = team.map(|id| self.account(id, record.team_spend));
        let user = record.user_id.as_ref().map(|u| format!("user:{u}"));
        let user = user.map(|id| self.account(id, record.user_spend));
        let limits = KeyLimits { rpm: record.rpm_limit, tpm: record.tpm_limit, ..KeyLimits::default() };
        let id = format!("key:{}", record.token);
        self.limited.register_parallel(id.clone(), record.max_parallel_requests.is_some(), &key);
        self.limited.register(id, limits, &key.meter);
        if let (Some(t), Some(account)) = (&record.team, &team) {
            let limits = KeyLimits { rpm: t.rpm_limit, tpm: t.tpm_limit, ..KeyLimits::default() };
            let id = format!("team:{}", t.team_id);
            self.limited.register_parallel(id.clone(), t.max_parallel_requests.is_some(), account);
            self.limited.register(id, limits, &account.meter);
        }
        let mut model_meters = ModelMeters::default();
        let owners = [
            (Some(format!("key:{}", record.token)), &record.model_max_budget, &mut model_meters.key),
            (
                record.user_id.as_ref().map(|u| format!("user:{u}")),
                &record.user_model_max_budget,
                &mut model_meters.user,
            ),
        ];
        for (owner, budgets, meters) in owners {
            let Some(owner) = owner else { continue };
            meters.extend(budgets.iter().map(|b| self.model_meter(&owner, b)));
        }
        if let Some(t) = &record.team {
            let owner = format!("team:{}", t.team_id);
            model_meters.team = t.model_max_budget.iter().map(|b| self.model_meter(&owner, b)).collect();
        }
        if self.accounts.len() > 2 * self.entries.len() + 1024 {
            self.accounts.retain(|_, a| a.strong_count() > 0);
            self.model_meters.retain(|_, m| m.strong_count() > 0);
        }
        Arc::new(KeyEntry::new(record, key, team, user, model_meters))
    }

    /// A `model_max_budget` entry's meter: the same one for as long as an entry of its owner
    /// (`key:<token>`, …) has the same model and period (its spend outlives a change to the row).
    pub(crate) fn model_meter(&mut self, owner: &str, budget: &ModelBudget) -> ModelMeter {
        let id = budget.meter_id(owner);
        let meter = self.model_meters.get(&id).and_then(Weak::upgrade).unwrap_or_default();
        self.model_meters.insert(id.clone(), Arc::downgrade(&meter));
        self.limited.register(id, budget.limits(), &meter);
        ModelMeter { budget: budget.clone(), meter }
    }

    pub(crate) fn account(&mut self, id: String, db_spend: f64) -> Arc<Account> {
        if let Some(account) = self.accounts.get(&id).and_then(Weak::upgrade) {
            account.set_db_spend(db_spend);
            return account;
        }
        let account = Arc::new(Account::with_spend(db_spend));
        self.accounts.insert(id, Arc::downgrade(&account));
        account
    }

    /// Takes in the rows of `asked` read again (`read`, by token): an entry whose rules changed
    /// is replaced (the old one retired), one whose row is gone is forgotten, and one whose
    /// spend alone moved has its accounts set to the database's figures. An entry replaced
    /// meanwhile (a lookup, a notification) was read as recently: it stays. Returns how many
    /// entries were replaced or forgotten.
    pub(crate) fn refreshed(
        &mut self,
        asked: Vec<([u8; 32], Arc<KeyEntry>)>,
        mut read: HashMap<String, KeyRecord>,
    ) -> u64 {
        let mut changed = 0;
        for (digest, held) in asked {
            if !self.entries.get(&digest).is_some_and(|e| Arc::ptr_eq(e, &held)) {
                continue;
            }
            match read.remove(&held.record.token) {
                None => {
                    self.entries.remove(&digest);
                    held.retire();
                    changed += 1;
                }
                Some(record) if refresh::same_rules(&held.record, &record) => {
                    held.key.set_db_spend(record.spend);
                    if let Some(team) = &held.team {
                        team.set_db_spend(record.team_spend);
                    }
                    if let Some(user) = &held.user {
                        user.set_db_spend(record.user_spend);
                    }
                }
                Some(record) => {
                    let entry = self.entry_for(record);
                    self.entries.insert(digest, entry);
                    held.retire();
                    changed += 1;
                }
            }
        }
        changed
    }

    pub(crate) fn retire_where(&mut self, matches: impl Fn(&KeyRecord) -> bool) {
        self.entries.retain(|_, entry| {
            let hit = matches(&entry.record);
            if hit {
                entry.retire();
            }
            !hit
        });
    }
}

/// Wrong key digests, each for [`NEGATIVE_TTL`], at most `cap` of them (the oldest go first).
#[derive(Default)]
pub(crate) struct Negative {
    seen: HashMap<[u8; 32], Instant>,
    order: VecDeque<[u8; 32]>,
    cap: usize,
}

impl Negative {
    pub(crate) fn new(cap: usize) -> Negative {
        Negative { cap: cap.max(1), ..Negative::default() }
    }

    pub(crate) fn contains(&self, digest: &[u8; 32], now: Instant) -> bool {
        self.seen.get(digest).is_some_and(|at| now.duration_since(*at) < NEGATIVE_TTL)
    }

    pub(crate) fn insert(&mut self, digest: [u8; 32], now: Instant) {
        if self.seen.insert(digest, now).is_none() {
            self.order.push_back(digest);
        }
        while self.order.len() > self.cap {
            if let Some(old) = self.order.pop_front() {
                self.seen.remove(&old);
            }
        }
    }

    pub(crate) fn remove(&mut self, digest: &[u8; 32]) {
        if self.seen.remove(digest).is_some() {
            self.order.retain(|d| d != digest);
        }
    }
}

pub(crate) fn hex(digest: &[u8; 32]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

pub(crate) fn unhex(text: &str) -> Option<[u8; 32]> {
    let bytes = text.as_bytes();
    if bytes.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, pair) in bytes.chunks(2).enumerate() {
        out[i] = u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_negative_cache_is_bounded_and_forgets() {
        let mut n = Negative::new(2);
        let now = Instant::now();
        n.insert([1; 32], now);
        n.insert([2; 32], now);
        n.insert([3; 32], now);
        assert!(!n.contains(&[1; 32], now), "the oldest went first");
        assert!(n.contains(&[3; 32], now));
        assert!(!n.contains(&[3; 32], now + NEGATIVE_TTL), "and each is forgotten after a while");
        n.remove(&[2; 32]);
        assert!(!n.contains(&[2; 32], now));
    }

    #[test]
    fn hex_round_trips() {
        let d = [0xab; 32];
        assert_eq!(unhex(&hex(&d)), Some(d));
        assert_eq!(unhex("zz"), None);
    }
}
