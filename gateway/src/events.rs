//! What one shard tells the others: a cooldown it started, usage it counted, a health result.
//! One unbounded crossbeam channel per shard; a shard drains its inbox before every pick, so an
//! event sent before a response went out is applied before any later request is routed.
//!
//! An event names its deployment by index in the routes it was learnt under; a receiver whose
//! routes were reloaded since translates the index by deployment id (or drops the event when
//! the deployment is gone).

use std::sync::Arc;

use crossbeam_channel::{Receiver, Sender};
use pointwork_core::Event;

use crate::routes::Routes;

pub struct ShardEvent {
    /// The routes `event`'s deployment index refers to.
    pub routes: Arc<Routes>,
    pub event: Event,
}

/// The senders to every shard's inbox, indexed by shard id.
#[derive(Clone)]
pub struct Mesh {
    inboxes: Vec<Sender<ShardEvent>>,
}

impl Mesh {
    /// A mesh of `shards` inboxes and the receiving end of each.
    pub fn new(shards: usize) -> (Mesh, Vec<Receiver<ShardEvent>>) {
        let (inboxes, receivers) = (0..shards).map(|_| crossbeam_channel::unbounded()).unzip();
        (Mesh { inboxes }, receivers)
    }

    /// Sends `event` to every shard but `from` (`None`: to all of them, e.g. from the health checker).
    pub fn broadcast(&self, from: Option<usize>, routes: &Arc<Routes>, event: &Event) {
        for (id, inbox) in self.inboxes.iter().enumerate() {
            if Some(id) != from {
                // Fails only once the receiving shard's thread is gone: nothing to tell then.
                let _ = inbox.send(ShardEvent { routes: routes.clone(), event: event.clone() });
            }
        }
    }
}
