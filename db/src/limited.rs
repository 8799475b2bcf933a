//! The database keys' and teams' meters that have a limit to share: what the cluster thread
//! reconciles through Redis beside the config keys' (so that `rpm_limit: 6` means 6 a minute
//! across every instance, as LiteLLM's Redis-backed limiter does). The database thread adds a
//! meter when it reads a row with rpm / tpm (or a `model_max_budget` entry: its spend this
//! period), and an account when the row caps its parallel requests; the cluster thread reads the list every
//! `sync_interval`. Neither is on a request's way: a request only touches its own meter.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use pointwork_core::{KeyLimits, KeyMeter};

use crate::account::Account;

/// Meters by their id in Redis: `key:<token>` (the key's SHA-256, as config keys are named),
/// `team:<team_id>`, and `<key, team or user>:model:<model>:<time_period>`.
#[derive(Debug, Default)]
pub struct LimitedMeters {
    meters: Mutex<HashMap<String, (KeyLimits, Weak<KeyMeter>)>>,
    /// Accounts with `max_parallel_requests`, by the same ids: their requests in flight.
    parallel: Mutex<HashMap<String, Weak<Account>>>,
}

impl LimitedMeters {
    /// Shares `meter` under `id` with `limits` (the row's latest); a meter without rpm, tpm or
    /// a budget leaves the list.
    pub(crate) fn register(&self, id: String, limits: KeyLimits, meter: &Arc<KeyMeter>) {
        let mut meters = self.meters.lock().unwrap_or_else(|e| e.into_inner());
        if limits.rpm.is_none() && limits.tpm.is_none() && limits.max_budget.is_none() {
            meters.remove(&id);
        } else {
            meters.insert(id, (limits, Arc::downgrade(meter)));
        }
    }

    /// Shares `account`'s requests in flight under `id` while it has a cap on them.
    pub(crate) fn register_parallel(&self, id: String, capped: bool, account: &Arc<Account>) {
        let mut parallel = self.parallel.lock().unwrap_or_else(|e| e.into_inner());
        if capped {
            parallel.insert(id, Arc::downgrade(account));
        } else {
            parallel.remove(&id);
        }
    }

    /// The capped accounts still in use, with their ids.
    pub fn live_parallel(&self) -> Vec<(String, Arc<Account>)> {
        let mut parallel = self.parallel.lock().unwrap_or_else(|e| e.into_inner());
        parallel.retain(|_, account| account.strong_count() > 0);
        parallel.iter().filter_map(|(id, account)| Some((id.clone(), account.upgrade()?))).collect()
    }

    /// The meters still in use, with their ids and limits (forgetting those no key holds).
    pub fn live(&self) -> Vec<(String, KeyLimits, Arc<KeyMeter>)> {
        let mut meters = self.meters.lock().unwrap_or_else(|e| e.into_inner());
        meters.retain(|_, (_, meter)| meter.strong_count() > 0);
        meters.iter().filter_map(|(id, (limits, meter))| Some((id.clone(), limits.clone(), meter.upgrade()?))).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_limited_meters_in_use_are_shared() {
        let list = LimitedMeters::default();
        let (a, b) = (Arc::new(KeyMeter::default()), Arc::new(KeyMeter::default()));
        let rpm = KeyLimits { rpm: Some(6), ..KeyLimits::default() };
        list.register("key:a".into(), rpm.clone(), &a);
        list.register("team:b".into(), rpm.clone(), &b);
        list.register("key:none".into(), KeyLimits::default(), &a);
        assert_eq!(list.live().len(), 2);
        drop(b);
        let live = list.live();
        assert_eq!((live.len(), live[0].0.as_str(), live[0].1.rpm), (1, "key:a", Some(6)));
        list.register("key:a".into(), KeyLimits::default(), &a);
        assert!(list.live().is_empty(), "a row without limits any more leaves the list");
    }
}
