//! Several instances sharing routing state through Redis (`router_settings.redis_*`,
//! `pointwork.cluster`). Redis is a peer of the shards, never in their way: two threads of their
//! own talk to it, and with Redis out of reach every instance serves on its own state.
//!
//! - the publisher ([`publisher`]): what the shards broadcast (cooldowns, pins, health, usage,
//!   429 windows, …) leaves through a bounded outbox onto the events channel, and every
//!   `sync_interval` the shared counters (virtual keys' rpm / tpm / spend, policies' daily
//!   spend) are reconciled ([`meters`]), and the database keys' requests in flight
//!   ([`parallel`]);
//! - the subscriber ([`subscriber`]): what other instances published is handed to every shard's
//!   inbox, by deployment id.
//!
//! Nothing here runs without Redis configured: no thread, no outbox, no cost on the request path.

pub mod lease;
mod meters;
mod parallel;
mod publisher;
pub(crate) mod redis_link;
pub mod status;
mod subscriber;
pub mod wire;

use std::net::SocketAddr;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use crossbeam_channel::Receiver;
use pointwork_config::ClusterSettings;

use crate::events::{Mesh, Outbox, ShardEvent};
use crate::hub::Hub;
pub use status::Status;

/// How many events may wait for the publisher; beyond that they are dropped and counted.
const OUTBOX_CAPACITY: usize = 16_384;

/// The cluster before the shards start: their outbox, and what starts the threads once they run.
pub struct Pending {
    settings: ClusterSettings,
    dropped: Arc<AtomicU64>,
    outbox: Receiver<ShardEvent>,
}

/// Prepares the cluster for `settings`: the shards' outbox, and the rest for [`Pending::start`].
pub fn prepare(settings: &ClusterSettings) -> (Outbox, Pending) {
    let dropped = Arc::new(AtomicU64::new(0));
    let (queue, outbox) = crossbeam_channel::bounded(OUTBOX_CAPACITY);
    (Outbox { queue, dropped: dropped.clone() }, Pending { settings: settings.clone(), dropped, outbox })
}

impl Pending {
    /// Starts the publisher and the subscriber once the shards listen on `addr` (which names
    /// the instance when the config does not); `mesh` delivers other instances' events.
    pub fn start(self, hub: Arc<Hub>, mesh: Mesh, addr: SocketAddr) -> std::io::Result<Arc<Status>> {
        let Pending { settings, dropped, outbox } = self;
        let instance = settings.instance.clone().unwrap_or_else(|| default_instance(addr));
        let client = redis::Client::open(settings.redis.url())
            .map_err(|e| std::io::Error::other(format!("Redis at {}: {e}", settings.redis.display())))?;
        let (last_words, asked) = crossbeam_channel::bounded(1);
        let status = Arc::new(Status::new(&settings, instance, dropped, client.clone(), last_words));
        let _ = hub.cluster.set(status.clone());
        let channel = format!("{}:events", settings.key_prefix);
        let sub = subscriber::Subscriber {
            client: client.clone(),
            channel: channel.clone(),
            status: status.clone(),
            hub: hub.clone(),
            mesh,
        };
        std::thread::Builder::new().name("cluster-sub".into()).spawn(move || sub.run())?;
        let publisher = publisher::Publisher::new(client, channel, &settings, status.clone(), hub, outbox, asked);
        let started = status.clone();
        std::thread::Builder::new().name("cluster-pub".into()).spawn(move || publisher.run())?;
        Ok(started)
    }
}

/// `<hostname>-<port>`: stable across restarts of an instance, distinct between instances on
/// one machine.
fn default_instance(listen: SocketAddr) -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let host = host.trim();
    format!("{}-{}", if host.is_empty() { "localhost" } else { host }, listen.port())
}
