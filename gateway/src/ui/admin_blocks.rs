//! Deployments an admin blocked or unblocked at run time (`/admin/deployments/{id}/block`),
//! kept by the hub and laid over the config whenever the routes are built.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use pointwork_config::Config;

/// Deployments an admin blocked (`true`) or unblocked (`false`) at run time, by id: laid over
/// the config's `model_info.blocked` whenever the routes are built, so they outlive a reload
/// (the admin's last word stands until the process ends). Kept by id even while a reload has
/// taken the deployment out: it applies again if the deployment comes back.
#[derive(Default)]
pub struct AdminBlocks(Mutex<HashMap<String, bool>>);

impl AdminBlocks {
    /// What an admin set for deployment `id`, if anything.
    pub fn get(&self, id: &str) -> Option<bool> {
        self.map().get(id).copied()
    }

    /// Records the admin's word for `id`; returns what was there before.
    pub(crate) fn set(&self, id: &str, blocked: bool) -> Option<bool> {
        self.map().insert(id.to_string(), blocked)
    }

    /// Puts back what [`AdminBlocks::set`] replaced (the routes could not be built).
    pub(crate) fn restore(&self, id: &str, before: Option<bool>) {
        match before {
            Some(blocked) => self.map().insert(id.to_string(), blocked),
            None => self.map().remove(id),
        };
    }

    /// Every admin's word, by id (the reload report lists them).
    pub(crate) fn listed(&self) -> BTreeMap<String, bool> {
        self.map().iter().map(|(id, &blocked)| (id.clone(), blocked)).collect()
    }

    /// Sets `blocked` of every deployment of `config` an admin blocked or unblocked, and its
    /// `model_info.blocked` as `GET /model/info` shows it. For a model stored in LiteLLM's
    /// database (`store_model_in_db`) only the routes in memory change: its row keeps its
    /// `model_info`, and other instances reading the database do not see the block (LiteLLM's
    /// `POST /model/block` is what writes the row).
    pub(crate) fn lay_over(&self, config: &mut Config) {
        let map = self.map();
        if map.is_empty() {
            return;
        }
        for (d, info) in config.deployments.iter_mut().zip(&mut config.deployment_info) {
            if let Some(&blocked) = map.get(&d.id) {
                d.blocked = blocked;
                info.model_info.insert("blocked".into(), blocked.into());
            }
        }
    }

    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, bool>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}
