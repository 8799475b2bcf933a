//! What one shard tells the others: a cooldown it started, usage it counted, a health result.
//! One unbounded crossbeam channel per shard; a shard drains its inbox before every pick, so an
//! event sent before a response went out is applied before any later request is routed.
//!
//! An event names its deployment by index in the routes it was learnt under; a receiver whose
//! routes were reloaded since translates the index by deployment id (or drops the event when
//! the deployment is gone).
//!
//! With Redis configured, what this instance learns also goes to the cluster thread's outbox (a
//! bounded queue: when it is full the event is dropped and counted, never waited for), and
//! what other instances learnt comes in through [`Mesh::deliver`].

use std::sync::Arc;

use crossbeam_channel::{Receiver, Sender};
use pointwork_core::Event;

use crate::routes::Routes;

pub struct ShardEvent {
    /// The routes `event`'s deployment index refers to.
    pub routes: Arc<Routes>,
    pub event: Event,
}

/// The senders to every shard's inbox, indexed by shard id, and the cluster's outbox.
#[derive(Clone)]
pub struct Mesh {
    inboxes: Vec<Sender<ShardEvent>>,
    cluster: Option<Outbox>,
}

/// The way to the other instances: the cluster thread's bounded queue, and where a drop is
/// counted.
#[derive(Clone)]
pub struct Outbox {
    pub queue: Sender<ShardEvent>,
    pub dropped: Arc<std::sync::atomic::AtomicU64>,
}

impl Mesh {
    /// A mesh of `shards` inboxes and the receiving end of each; `cluster`: the outbox to the
    /// other instances, when Redis is configured.
    pub fn new(shards: usize, cluster: Option<Outbox>) -> (Mesh, Vec<Receiver<ShardEvent>>) {
        let (inboxes, receivers) = (0..shards).map(|_| crossbeam_channel::unbounded()).unzip();
        (Mesh { inboxes, cluster }, receivers)
    }

    /// Sends what this instance learnt to every shard but `from` (`None`: to all of them, e.g.
    /// from the health checker), and to the other instances.
    pub fn broadcast(&self, from: Option<usize>, routes: &Arc<Routes>, event: &Event) {
        self.send_to_shards(from, routes, event);
        if let Some(out) = &self.cluster {
            if out.queue.try_send(ShardEvent { routes: routes.clone(), event: event.clone() }).is_err() {
                out.dropped.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        }
    }

    /// Hands every shard what another instance learnt (it does not go back out).
    pub fn deliver(&self, routes: &Arc<Routes>, event: &Event) {
        self.send_to_shards(None, routes, event);
    }

    fn send_to_shards(&self, from: Option<usize>, routes: &Arc<Routes>, event: &Event) {
        for (id, inbox) in self.inboxes.iter().enumerate() {
            if Some(id) != from {
                // Fails only once the receiving shard's thread is gone: nothing to tell then.
                let _ = inbox.send(ShardEvent { routes: routes.clone(), event: event.clone() });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::Instant;

    use pointwork_core::{DeploymentIdx, Event};

    use super::*;

    fn routes() -> Arc<Routes> {
        let yaml =
            "model_list:\n  - model_name: g\n    litellm_params: {model: openai/m, api_base: http://127.0.0.1:9}\n";
        let loaded = pointwork_config::load_str(yaml, std::path::Path::new("."), &|_| None).unwrap();
        Arc::new(Routes::from_config(&loaded.config, None, crate::routes::Tokens::CheckOnly).unwrap())
    }

    #[test]
    fn a_full_outbox_drops_and_counts_but_every_shard_still_hears_everything() {
        let (queue, outbox) = crossbeam_channel::bounded(2);
        let dropped = Arc::new(AtomicU64::new(0));
        let (mesh, inboxes) = Mesh::new(2, Some(Outbox { queue, dropped: dropped.clone() }));
        let routes = routes();
        let event = Event::Health { idx: DeploymentIdx(0), healthy: false, checked_at: Instant::now() };
        for _ in 0..5 {
            mesh.broadcast(Some(0), &routes, &event);
        }
        assert_eq!(outbox.len(), 2, "the outbox holds what fits");
        assert_eq!(dropped.load(Ordering::Relaxed), 3, "the rest is counted, never waited for");
        assert_eq!((inboxes[0].len(), inboxes[1].len()), (0, 5), "the sender's own shard is skipped");
        // What another instance learnt reaches every shard and does not go back out.
        mesh.deliver(&routes, &event);
        assert_eq!((inboxes[0].len(), inboxes[1].len(), outbox.len()), (1, 6, 2));
    }
}
