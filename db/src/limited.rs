//! The database keys' and teams' meters that have a limit to share: what the cluster thread
//! reconciles through Redis beside the config keys' (so that `rpm_limit: 6` means 6 a minute
//! across every instance, as LiteLLM's Redis-backed limiter does). The database thread adds a
//! meter when it reads a row with rpm / tpm (or a `model_max_budget` entry: its spend this
//! period), and an account when the row caps its parallel requests; the cluster thread reads
//! the list every `sync_interval`. Neither is on a request's way: a request only touches its
//! own meter.
//!
//! A meter new on the instance admits on an even share of its limit from its first request
//! (as if reconciled with nothing counted), not on the whole limit until its first reconcile:
//! the cluster thread says how many instances share ([`LimitedMeters::set_instances`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{SystemTime, UNIX_EPOCH};

use pointwork_core::{KeyLimits, KeyMeter, MeterWindows, OthersCounts, OwnCounts};

use crate::account::Account;

/// Meters by their id in Redis: `key:<token>` (the key's SHA-256, as config keys are named),
/// `team:<team_id>`, and `<key, team or user>:model:<model>:<time_period>`.
#[derive(Debug, Default)]
pub struct LimitedMeters {
    meters: Mutex<HashMap<String, (KeyLimits, Weak<KeyMeter>)>>,
    /// Accounts with `max_parallel_requests`, by the same ids: their requests in flight.
    parallel: Mutex<HashMap<String, Weak<Account>>>,
    /// The instances sharing the limits, as the cluster's last reconcile saw them (0: none).
    instances: AtomicU64,
}

impl LimitedMeters {
    /// Shares `meter` under `id` with `limits` (the row's latest); a meter without rpm, tpm or
    /// a budget leaves the list.
    pub(crate) fn register(&self, id: String, limits: KeyLimits, meter: &Arc<KeyMeter>) {
        let mut meters = self.meters.lock().unwrap_or_else(|e| e.into_inner());
        if limits.rpm.is_none() && limits.tpm.is_none() && limits.max_budget.is_none() {
            meters.remove(&id);
            return;
        }
        let known = meters.get(&id).and_then(|(_, m)| m.upgrade()).is_some_and(|m| Arc::ptr_eq(&m, meter));
        let instances = self.instances.load(Ordering::Relaxed);
        if !known && instances > 1 {
            let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
            let others = OthersCounts { instances, ..OthersCounts::default() };
            meter.reconciled(&limits, MeterWindows::at(&limits, now), OwnCounts::default(), others);
        }
        meters.insert(id, (limits, Arc::downgrade(meter)));
    }

    /// How many instances share the limits now (the cluster thread, at each reconcile; 0 while
    /// Redis is out of reach).
    pub fn set_instances(&self, instances: u64) {
        self.instances.store(instances, Ordering::Relaxed);
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

    #[test]
    fn a_new_meter_admits_on_its_share_of_the_instances() {
        let list = LimitedMeters::default();
        list.set_instances(2);
        let meter = Arc::new(KeyMeter::default());
        let rpm = KeyLimits { rpm: Some(6), ..KeyLimits::default() };
        list.register("key:new".into(), rpm.clone(), &meter);
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs();
        let admitted = (0..6).filter(|_| meter.admit(&rpm, now).is_ok()).count();
        // Half of 6 (or, the minute having turned meanwhile, a new minute's even part).
        assert_eq!(admitted, 3);
    }
}
