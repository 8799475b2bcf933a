//! Several instances sharing routing state through Redis (`router_settings.redis_*`,
//! `pointwork.cluster`). Redis is a peer of the shards, never in their way: two threads of their
//! own talk to it, and with Redis out of reach every instance serves on its own state.
//!
//! - the publisher ([`publisher`]): what the shards broadcast (cooldowns, pins, health, usage,
//!   429 windows, …) leaves through a bounded outbox onto the events channel, and every
//!   `sync_interval` the shared counters (virtual keys' rpm / tpm / spend, policies' daily
//!   spend) are reconciled ([`meters`]);
//! - the subscriber ([`subscriber`]): what other instances published is handed to every shard's
//!   inbox, by deployment id.
//!
//! Nothing here runs without Redis configured: no thread, no outbox, no cost on the request path.

pub mod lease;
mod meters;
mod publisher;
mod subscriber;
pub mod wire;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossbeam_channel::Receiver;
use pointwork_config::ClusterSettings;

use crate::events::{Mesh, Outbox, ShardEvent};
use crate::hub::Hub;
use crate::metrics::render::{counter, gauge};

/// How many events may wait for the publisher; beyond that they are dropped and counted.
const OUTBOX_CAPACITY: usize = 16_384;
/// How long connecting, and each command, may take before Redis counts as out of reach.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(1);
/// The longest wait between two attempts to reach Redis again.
const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// What the cluster threads report, for `/metrics` and the log.
pub struct Status {
    pub instance: String,
    /// The Redis server, without its password.
    pub server: String,
    /// A random number per process: tells this process's messages from another process's
    /// under the same instance name.
    pub process: String,
    commands_up: AtomicBool,
    subscription_up: AtomicBool,
    /// Whether the log last said Redis is reachable (`None` before the first word).
    said_up: Mutex<Option<bool>>,
    pub dropped_full: Arc<AtomicU64>,
    pub dropped_down: AtomicU64,
    pub published: AtomicU64,
    pub received: AtomicU64,
    pub syncs: AtomicU64,
    pub sync_failures: AtomicU64,
    /// Instances seen at the last reconcile, this one included.
    pub instances: AtomicU64,
    duplicate_name_said: AtomicBool,
    /// The client every thread that talks to Redis connects with.
    client: redis::Client,
    /// The leases this instance keeps ([`lease`]), for `/metrics` and a drain.
    leases: Mutex<Vec<Arc<lease::Lease>>>,
    /// Asks the publisher for a last reconcile before the process exits ([`Status::leave`]).
    last_words: crossbeam_channel::Sender<crossbeam_channel::Sender<()>>,
}

/// Which of the two connections a word about reachability is about.
#[derive(Clone, Copy)]
enum Link {
    Commands,
    Subscription,
}

impl Status {
    fn new(
        settings: &ClusterSettings,
        instance: String,
        dropped_full: Arc<AtomicU64>,
        client: redis::Client,
        last_words: crossbeam_channel::Sender<crossbeam_channel::Sender<()>>,
    ) -> Status {
        Status {
            instance,
            server: settings.redis.display(),
            process: format!("{:016x}", random_u64()),
            commands_up: AtomicBool::new(false),
            subscription_up: AtomicBool::new(false),
            said_up: Mutex::new(None),
            dropped_full,
            dropped_down: AtomicU64::new(0),
            published: AtomicU64::new(0),
            received: AtomicU64::new(0),
            syncs: AtomicU64::new(0),
            sync_failures: AtomicU64::new(0),
            instances: AtomicU64::new(0),
            duplicate_name_said: AtomicBool::new(false),
            client,
            leases: Mutex::new(Vec::new()),
            last_words,
        }
    }

    /// Before the process exits (the drain finished): the publisher sends what waits, writes
    /// the counters a last time (so that the spend of the last requests is in the record) and
    /// takes this instance out of those sharing the limits. Waits at most `within`; with Redis
    /// out of reach there is nothing to wait for.
    pub fn leave(&self, within: Duration) {
        if !self.commands_up.load(Ordering::Relaxed) {
            return;
        }
        let (done, wait) = crossbeam_channel::bounded(1);
        if self.last_words.try_send(done).is_ok() && wait.recv_timeout(within).is_err() {
            log("Redis did not take the last counts in time: the record may miss the last requests' spend");
        }
    }

    pub fn is_up(&self) -> bool {
        self.commands_up.load(Ordering::Relaxed) && self.subscription_up.load(Ordering::Relaxed)
    }

    /// Records that `link` works (`error` = `None`) or failed, and says on stderr, once per
    /// change, when Redis as a whole becomes reachable or unreachable.
    fn link(&self, link: Link, error: Option<&str>) {
        let flag = match link {
            Link::Commands => &self.commands_up,
            Link::Subscription => &self.subscription_up,
        };
        flag.store(error.is_none(), Ordering::Relaxed);
        let up = self.is_up();
        let Ok(mut said) = self.said_up.lock() else { return };
        match (error, *said) {
            (Some(e), None | Some(true)) => {
                *said = Some(false);
                log(&format!(
                    "Redis at {} is out of reach ({e}): serving on this instance's state alone; trying again",
                    self.server
                ));
            }
            (None, None | Some(false)) if up => {
                *said = Some(true);
                log(&format!("Redis at {} reached: sharing state as instance {:?}", self.server, self.instance));
            }
            _ => {}
        }
    }

    fn duplicate_name(&self, other_process: &str) {
        if !self.duplicate_name_said.swap(true, Ordering::Relaxed) {
            log(&format!(
                "another process (id {other_process}) also calls itself instance {:?}: their shared counters \
                 overwrite each other; give each instance its own pointwork.cluster.instance",
                self.instance
            ));
        }
    }

    /// The `pointwork_cluster_*` metrics.
    pub fn render(&self, out: &mut String) {
        let n = |a: &AtomicU64| a.load(Ordering::Relaxed);
        gauge(
            out,
            "pointwork_cluster_redis_up",
            "1 while Redis is reachable and state is shared.",
            i64::from(self.is_up()),
        );
        gauge(
            out,
            "pointwork_cluster_instances",
            "Instances that shared counters at the last reconcile.",
            n(&self.instances) as i64,
        );
        counter(
            out,
            "pointwork_cluster_events_published_total",
            "Events sent to the other instances.",
            n(&self.published),
        );
        counter(
            out,
            "pointwork_cluster_events_received_total",
            "Events from other instances applied here.",
            n(&self.received),
        );
        let dropped = "pointwork_cluster_events_dropped_total";
        let _ = std::fmt::Write::write_fmt(
            out,
            format_args!(
                "# HELP {dropped} Events not sent: the outbox was full, or Redis was out of reach.\n\
                 # TYPE {dropped} counter\n{dropped}{{reason=\"outbox_full\"}} {}\n{dropped}{{reason=\"redis_down\"}} {}\n",
                n(&self.dropped_full),
                n(&self.dropped_down)
            ),
        );
        counter(out, "pointwork_cluster_syncs_total", "Reconciles of the shared counters.", n(&self.syncs));
        counter(
            out,
            "pointwork_cluster_sync_failures_total",
            "Reconciles that failed (Redis out of reach or slow).",
            n(&self.sync_failures),
        );
        self.render_leases(out);
    }
}

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

/// Waits before the next attempt to reach Redis: doubling from 100 ms up to [`MAX_BACKOFF`].
pub(crate) fn next_backoff(current: Duration) -> Duration {
    (current * 2).clamp(Duration::from_millis(100), MAX_BACKOFF)
}

pub(crate) fn connect(client: &redis::Client) -> redis::RedisResult<redis::Connection> {
    let con = client.get_connection_with_timeout(COMMAND_TIMEOUT)?;
    con.set_read_timeout(Some(COMMAND_TIMEOUT))?;
    con.set_write_timeout(Some(COMMAND_TIMEOUT))?;
    Ok(con)
}

/// `<hostname>-<port>`: stable across restarts of an instance, distinct between instances on
/// one machine.
fn default_instance(listen: SocketAddr) -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let host = host.trim();
    format!("{}-{}", if host.is_empty() { "localhost" } else { host }, listen.port())
}

fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
    h.write_u32(std::process::id());
    h.finish()
}

fn log(line: &str) {
    eprintln!("pointwork: cluster: {line}");
}
