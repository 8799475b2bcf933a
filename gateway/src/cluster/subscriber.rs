//! The subscriber thread: what other instances published on the events channel, handed to
//! every shard's inbox with deployments found by id in the routes in service (an event about a
//! deployment this instance does not have is left out).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use super::redis_link::{connect, next_backoff};
use super::status::{Link, Status};
use super::wire::{Batch, Clock};
use crate::events::Mesh;
use crate::hub::Hub;

pub(super) struct Subscriber {
    pub(super) client: redis::Client,
    pub(super) channel: String,
    pub(super) status: Arc<Status>,
    pub(super) hub: Arc<Hub>,
    pub(super) mesh: Mesh,
}

impl Subscriber {
    pub(super) fn run(self) {
        let mut backoff = Duration::ZERO;
        loop {
            let outcome = connect(&self.client).and_then(|mut con| {
                let mut pubsub = con.as_pubsub();
                pubsub.subscribe(&self.channel)?;
                self.status.link(Link::Subscription, None);
                backoff = Duration::ZERO;
                loop {
                    match pubsub.get_message() {
                        Ok(msg) => self.apply(msg.get_payload_bytes()),
                        // The read timeout, on a quiet channel: still subscribed.
                        Err(e) if e.is_timeout() => {}
                        Err(e) => return Err::<(), _>(e),
                    }
                }
            });
            if let Err(e) = outcome {
                self.status.link(Link::Subscription, Some(&e.to_string()));
            }
            backoff = next_backoff(backoff);
            std::thread::sleep(backoff);
        }
    }

    fn apply(&self, payload: &[u8]) {
        // This instance's own messages come back too: skipped before they are parsed (a
        // message names its sender first).
        let own = format!(
            "{{\"from\":{},\"process\":{}",
            json_string(&self.status.instance),
            json_string(&self.status.process)
        );
        if payload.starts_with(own.as_bytes()) {
            return;
        }
        let Ok(batch) = serde_json::from_slice::<Batch>(payload) else { return };
        if batch.from == self.status.instance {
            if batch.process != self.status.process {
                self.status.duplicate_name(&batch.process);
            }
            return;
        }
        let routes = self.hub.routes.load_full();
        let clock = Clock::now();
        for wire in &batch.events {
            if let Some(event) = wire.to_event(&routes.snapshot, &clock) {
                self.mesh.deliver(&routes, &event);
                self.status.received.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}
