//! The poller's side of the sharing between instances (with Redis; `share` runs the threads):
//! whether this instance polls, by the lease, and the work it hands the coordinator.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};

use crate::cluster::lease::{Lease, Role};

/// How long a starting poller waits for its first word about the lease before polling anyway.
const FIRST_WORD_WAIT: Duration = Duration::from_secs(3);
/// How many pieces of work may wait for the coordinator; beyond that they are dropped (the next
/// publication or notice brings the same).
const WORK_CAPACITY: usize = 256;
/// The poller's side of the sharing, made before the poller starts (it polls nothing until
/// the lease says it may, or [`FIRST_WORD_WAIT`] passed without a word).
pub struct Sharing {
    pub(super) lease: OnceLock<Arc<Lease>>,
    pub(super) work: Sender<Work>,
    pub(super) inbox: Receiver<Work>,
    started: Instant,
}

/// What the coordinator is asked to do.
pub(super) enum Work {
    /// The poller published: the holder writes it to Redis.
    Published,
    /// A poller that reads wants the telemetry in Redis (at its start, after a reload).
    Load,
    /// A shard here learnt the account's allow-list: it goes to the holder.
    AllowList(Vec<String>),
    /// A message on the channel.
    Notice(Vec<u8>),
    /// The subscription (re)started: a notice may have been missed.
    Subscribed,
}

impl Default for Sharing {
    fn default() -> Self {
        let (work, inbox) = crossbeam_channel::bounded(WORK_CAPACITY);
        Sharing { lease: OnceLock::new(), work, inbox, started: Instant::now() }
    }
}

impl Sharing {
    /// What this instance is for the poller's lease at `now`.
    pub(super) fn role(&self, now: Instant) -> Role {
        self.lease.get().map_or(Role::Unknown, |l| l.role(now))
    }

    /// Whether a poller started at `since` polls at `now`: as the holder, or alone while Redis
    /// is out of reach; without a word yet about the lease, once [`FIRST_WORD_WAIT`] passed.
    pub(super) fn polls(&self, now: Instant, since: Instant) -> bool {
        match self.role(now) {
            Role::Unknown => now.saturating_duration_since(since.max(self.started)) >= FIRST_WORD_WAIT,
            role => role.does_the_job(),
        }
    }

    /// Hands the coordinator `work`, never waiting (dropped when its queue is full).
    pub(super) fn tell(&self, work: Work) {
        let _ = self.work.try_send(work);
    }
}
