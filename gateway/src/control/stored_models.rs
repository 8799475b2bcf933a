//! Models stored in LiteLLM's database (`store_model_in_db`): the database thread hands the
//! whole set over at start and after every change (a `models` notification from any
//! instance); the control thread compiles it with the config file's models and publishes new
//! routes the way a reload does — requests in flight keep the routes they started with, and
//! what shards learned per deployment id stays. The database thread never waits: it leaves
//! the newest set in a slot (older ones unread are dropped) and wakes the control thread.

use std::sync::{Arc, Mutex};

use crossbeam_channel::Sender;
use pointwork_config::{Config, StoredModel};
use pointwork_db::{DbModels, ModelsSink};

use crate::hub::{ControlMsg, Hub};
use crate::routes::{Routes, Tokens};
use crate::ui::admin_blocks::AdminBlocks;

/// The newest set of stored models not yet published.
pub struct StoredModelsSlot {
    newest: Mutex<Option<DbModels>>,
    control: Sender<ControlMsg>,
}

impl StoredModelsSlot {
    pub fn new(control: Sender<ControlMsg>) -> Arc<StoredModelsSlot> {
        Arc::new(StoredModelsSlot { newest: Mutex::new(None), control })
    }

    /// What the database thread calls: keep the set, wake the control thread.
    pub fn sink(self: &Arc<Self>) -> ModelsSink {
        let slot = self.clone();
        Arc::new(move |models| {
            if let Ok(mut newest) = slot.newest.lock() {
                *newest = Some(models);
            }
            let _ = slot.control.send(ControlMsg::StoredModelsChanged);
        })
    }

    /// The newest set, once.
    pub fn take(&self) -> Option<DbModels> {
        self.newest.lock().ok().and_then(|mut newest| newest.take())
    }
}

/// The rows as `model_list` entries.
pub fn entries(models: &DbModels) -> Vec<StoredModel> {
    models.rows.iter().map(|row| StoredModel { row: row.label(), entry: row.entry() }).collect()
}

/// Compiles `file_config` with the stored models and publishes the routes (see
/// [`routes_with`]). Returns a line for the log.
pub fn publish(hub: &Hub, file_config: &Config, stored: &[StoredModel], said: &[String]) -> Result<String, String> {
    for warning in said {
        eprintln!("pointwork: warning: {warning}");
    }
    let old = hub.routes.load();
    let (routes, served) = routes_with(file_config, stored, &old, &hub.blocked_by_admin)?;
    let line = format!(
        "{served} of {} stored models serve; now {} model groups, {} deployments",
        stored.len(),
        routes.snapshot.groups.len(),
        routes.snapshot.deployments.len()
    );
    hub.routes.store(Arc::new(routes));
    Ok(line)
}

/// The routes of `file_config` with the stored models (and how many of them serve), with the
/// deployments an admin blocked or unblocked at run time (`blocks`) so. Every row that does
/// not compile is said and left out; so is a row whose deployment cannot be built
/// (`deployment <id>: …`, e.g. a credential that does not load). An error of the file's own
/// is the error.
pub fn routes_with(
    file_config: &Config,
    stored: &[StoredModel],
    old: &Routes,
    blocks: &AdminBlocks,
) -> Result<(Routes, usize), String> {
    let mut kept: Vec<StoredModel> = stored.to_vec();
    loop {
        let mut merged = file_config.with_stored_models(&kept);
        blocks.lay_over(&mut merged.config);
        match Routes::from_config(&merged.config, Some(old), Tokens::Obtain) {
            Ok(routes) => {
                for warning in &merged.warnings {
                    eprintln!("pointwork: warning: {warning}");
                }
                return Ok((routes, merged.served));
            }
            Err(e) => {
                let Some(bad) = kept.iter().position(|m| breaks(m, &e)) else { return Err(e) };
                let row = kept.remove(bad);
                eprintln!(
                    "pointwork: warning: {}: {e}; the stored model is left out; the rest serve without it",
                    row.row
                );
            }
        }
    }
}

/// Whether building the routes failed on this stored model's deployment.
fn breaks(model: &StoredModel, error: &str) -> bool {
    model.entry["model_info"]["id"].as_str().is_some_and(|id| error.starts_with(&format!("deployment {id}: ")))
}
