//! The publisher thread: sends what this instance's shards broadcast to the other instances,
//! and reconciles the shared counters every `sync_interval`. It alone waits on Redis: a slow or
//! absent Redis fills the outbox, whose overflow is dropped and counted, and never reaches a
//! shard.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use pointwork_config::ClusterSettings;

use super::meters::Meters;
use super::wire::{Batch, Clock, WireEvent};
use super::{connect, next_backoff, Link, Status};
use crate::events::ShardEvent;
use crate::hub::Hub;

/// The most events one message carries.
const BATCH: usize = 512;

pub(super) struct Publisher {
    client: redis::Client,
    channel: String,
    status: Arc<Status>,
    hub: Arc<Hub>,
    outbox: Receiver<ShardEvent>,
    meters: Meters,
    sync_interval: Duration,
    /// [`Status::leave`]'s requests, answered once done.
    last_words: Receiver<Sender<()>>,
}

impl Publisher {
    pub(super) fn new(
        client: redis::Client,
        channel: String,
        settings: &ClusterSettings,
        status: Arc<Status>,
        hub: Arc<Hub>,
        outbox: Receiver<ShardEvent>,
        last_words: Receiver<Sender<()>>,
    ) -> Publisher {
        let meters = Meters::new(&settings.key_prefix, &status.instance, settings.sync_interval);
        Publisher { client, channel, status, hub, outbox, meters, sync_interval: settings.sync_interval, last_words }
    }

    pub(super) fn run(mut self) {
        let mut backoff = Duration::ZERO;
        loop {
            // Reachable means reconciled: a restarted instance has its counts back before it
            // says so.
            let connected = connect(&self.client).and_then(|mut con| self.reconcile(&mut con).map(|()| con));
            let mut con = match connected {
                Ok(con) => {
                    backoff = Duration::ZERO;
                    self.status.link(Link::Commands, None);
                    con
                }
                Err(e) => {
                    self.status.link(Link::Commands, Some(&e.to_string()));
                    self.unshare();
                    backoff = next_backoff(backoff);
                    self.drop_events_for(backoff);
                    continue;
                }
            };
            if let Err(e) = self.serve(&mut con) {
                self.status.link(Link::Commands, Some(&e.to_string()));
                self.unshare();
            }
        }
    }

    /// Publishes and reconciles on `con` until a command fails.
    fn serve(&mut self, con: &mut redis::Connection) -> redis::RedisResult<()> {
        let mut next_sync = Instant::now() + self.sync_interval;
        // Once every shard is gone (the drain ended) no event comes any more; the last
        // reconcile still may.
        let mut events = self.outbox.clone();
        loop {
            if Instant::now() >= next_sync {
                self.reconcile(con)?;
                next_sync = Instant::now() + self.sync_interval;
            }
            crossbeam_channel::select! {
                recv(events) -> event => match event {
                    Ok(first) => self.publish(con, first)?,
                    Err(_) => events = crossbeam_channel::never(),
                },
                recv(self.last_words) -> asked => {
                    if let Ok(done) = asked {
                        self.say_last_words(con)?;
                        let _ = done.send(());
                    }
                }
                default(next_sync.saturating_duration_since(Instant::now())) => {}
            }
        }
    }

    fn reconcile(&mut self, con: &mut redis::Connection) -> redis::RedisResult<()> {
        let routes = self.hub.routes.load_full();
        match self.meters.reconcile(con, &routes) {
            Ok(instances) => {
                self.status.syncs.fetch_add(1, Ordering::Relaxed);
                self.status.instances.store(instances, Ordering::Relaxed);
                Ok(())
            }
            Err(e) => {
                self.status.sync_failures.fetch_add(1, Ordering::Relaxed);
                Err(e)
            }
        }
    }

    /// Sends `first` and whatever else waits (up to [`BATCH`]) as one message.
    fn publish(&mut self, con: &mut redis::Connection, first: ShardEvent) -> redis::RedisResult<()> {
        let clock = Clock::now();
        let mut events: Vec<WireEvent> = Vec::new();
        let mut add = |e: ShardEvent| {
            let Some(wire) = WireEvent::from_event(&e.event, &e.routes.snapshot, &clock) else { return };
            if !events.iter_mut().any(|held| held.absorb(&wire)) {
                events.push(wire);
            }
        };
        add(first);
        for e in self.outbox.try_iter().take(BATCH - 1) {
            add(e);
        }
        if events.is_empty() {
            return Ok(());
        }
        let n = events.len() as u64;
        let batch = Batch { from: self.status.instance.clone(), process: self.status.process.clone(), events };
        let payload = serde_json::to_vec(&batch).unwrap_or_default();
        redis::cmd("PUBLISH").arg(&self.channel).arg(payload).exec(con)?;
        self.status.published.fetch_add(n, Ordering::Relaxed);
        Ok(())
    }

    /// Publishes what waits, reconciles, and leaves the instances that share the limits.
    fn say_last_words(&mut self, con: &mut redis::Connection) -> redis::RedisResult<()> {
        if let Ok(first) = self.outbox.try_recv() {
            self.publish(con, first)?;
        }
        self.reconcile(con)?;
        self.meters.leave(con)
    }

    /// While Redis is out of reach: events are dropped (counted) as they come, for `wait`.
    fn drop_events_for(&self, wait: Duration) {
        let until = Instant::now() + wait;
        while let Ok(_dropped) = self.outbox.recv_deadline(until) {
            self.status.dropped_down.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Each meter admits on its own counts and the others' last known ones, without a share.
    fn unshare(&mut self) {
        self.meters.unshare(&self.hub.routes.load_full());
        self.status.instances.store(0, Ordering::Relaxed);
    }
}
