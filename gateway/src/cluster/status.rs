//! What the cluster threads report, for `/metrics`, the log and a drain: whether Redis is
//! reached, what was published, received and dropped, the instances counted, and the leases
//! this instance keeps.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pointwork_config::ClusterSettings;

use super::lease::{Keeper, Lease, Role};
use super::redis_link::{connect, log};
use crate::hub::MetricsPart;
use crate::metrics::render::{counter, gauge};

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
    /// The instances sharing and when each last reconciled (Unix ms), as last read while the
    /// live view watched.
    members: Mutex<Vec<(String, u64)>>,
    /// The leases this instance keeps ([`lease`]), for `/metrics` and a drain.
    leases: Mutex<Vec<Arc<Lease>>>,
    /// Asks the publisher for a last reconcile before the process exits ([`Status::leave`]).
    last_words: crossbeam_channel::Sender<crossbeam_channel::Sender<()>>,
}

/// Which of the two connections a word about reachability is about.
#[derive(Clone, Copy)]
pub(super) enum Link {
    Commands,
    Subscription,
}

impl Status {
    pub(super) fn new(
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
            members: Mutex::new(Vec::new()),
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

    pub(super) fn set_members(&self, members: Vec<(String, u64)>) {
        *self.members.lock().unwrap_or_else(|e| e.into_inner()) = members;
    }

    pub fn is_up(&self) -> bool {
        self.commands_up.load(Ordering::Relaxed) && self.subscription_up.load(Ordering::Relaxed)
    }

    /// Records that `link` works (`error` = `None`) or failed, and says on stderr, once per
    /// change, when Redis as a whole becomes reachable or unreachable.
    pub(super) fn link(&self, link: Link, error: Option<&str>) {
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

    pub(super) fn duplicate_name(&self, other_process: &str) {
        if !self.duplicate_name_said.swap(true, Ordering::Relaxed) {
            log(&format!(
                "another process (id {other_process}) also calls itself instance {:?}: their shared counters \
                 overwrite each other; give each instance its own pointwork.cluster.instance",
                self.instance
            ));
        }
    }
}

impl Status {
    /// Keeps `lease` on a thread of its own (`thread`), and shows it in `/metrics`. `None` when
    /// the thread cannot start (said on stderr): the caller does its job alone.
    pub fn keep_lease(&self, thread: &str, lease: Lease) -> Option<Arc<Lease>> {
        let lease = Arc::new(lease);
        let keeper = Keeper::new(self.client.clone(), lease.clone());
        match std::thread::Builder::new().name(thread.into()).spawn(move || keeper.run()) {
            Ok(_) => {
                self.add_lease(lease.clone());
                Some(lease)
            }
            Err(e) => {
                log(&format!("cannot start the thread that keeps the lease {}: {e}", lease.key()));
                None
            }
        }
    }

    /// Shows `lease` in `/metrics` and releases it with [`Status::release_leases`].
    pub fn add_lease(&self, lease: Arc<Lease>) {
        if let Ok(mut leases) = self.leases.lock() {
            leases.push(lease);
        }
    }

    /// The client every thread that talks to Redis connects with.
    pub fn client(&self) -> &redis::Client {
        &self.client
    }

    /// `<instance>:<process>`: what a lease this process holds says.
    pub fn lease_holder(&self) -> String {
        format!("{}:{}", self.instance, self.process)
    }

    /// Gives up every lease this instance holds (a drained instance's successor takes over at
    /// once instead of after a ttl). Best effort, one short connection.
    pub fn release_leases(&self) {
        let leases: Vec<Arc<Lease>> = self.leases.lock().map(|l| l.clone()).unwrap_or_default();
        if leases.is_empty() {
            return;
        }
        for lease in &leases {
            lease.stop();
        }
        let Ok(mut con) = connect(&self.client) else { return };
        for lease in leases {
            if let Ok(true) = lease.release(&mut con) {
                log(&format!("released the lease {}", lease.key()));
            }
        }
    }

    /// `pointwork_cluster_lease_held{lease}`: 1 where this instance holds the lease.
    pub(super) fn render_leases(&self, out: &mut String) {
        let Ok(leases) = self.leases.lock() else { return };
        if leases.is_empty() {
            return;
        }
        let name = "pointwork_cluster_lease_held";
        out.push_str(&format!(
            "# HELP {name} 1 while this instance holds the lease (does its job for every instance).\n\
             # TYPE {name} gauge\n"
        ));
        let now = Instant::now();
        for lease in leases.iter() {
            let held = u8::from(lease.role(now) == Role::Holder);
            out.push_str(&format!("{name}{{lease=\"{}\"}} {held}\n", lease.name()));
        }
    }
}

fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
    h.write_u32(std::process::id());
    h.finish()
}

impl MetricsPart for Status {
    fn live(&self) -> Option<serde_json::Value> {
        let n = |a: &AtomicU64| a.load(Ordering::Relaxed);
        Some(serde_json::json!({
            "instance": self.instance,
            "server": self.server,
            "redis_up": self.is_up(),
            "instances": n(&self.instances),
            "published": n(&self.published),
            "received": n(&self.received),
            "dropped": n(&self.dropped_full) + n(&self.dropped_down),
            "sync_failures": n(&self.sync_failures),
            "members": self.members.lock().unwrap_or_else(|e| e.into_inner()).iter()
                .map(|(name, at)| serde_json::json!({"instance": name, "reconciled_ms": at}))
                .collect::<Vec<_>>(),
        }))
    }

    /// The `pointwork_cluster_*` metrics.
    fn render(&self, out: &mut String) {
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
