//! The poller across instances (with Redis): one instance polls, every instance reads.
//!
//! Only the holder of the lease `{key_prefix}:lease:pareto_poller` ([`crate::cluster::lease`])
//! polls. After each publication it writes the telemetry it published into
//! `{key_prefix}:pareto:telemetry` (the cache file's entries, keyed by rule and fingerprint,
//! with their staleness: [`super::cache::write_shared`]) and announces it on the channel
//! `{key_prefix}:pareto`; the other instances read it on the notice (and when they start, or
//! subscribe again) and publish it into their own hub as their poller would have. An allow-list
//! a shard learns on an instance that does not poll goes to the holder on the same channel, and
//! comes back to everyone in the telemetry. With Redis out of reach every instance polls for
//! itself, as without Redis.
//!
//! Two threads, neither a shard's: the coordinator (the lease, writes and reads) and the
//! subscriber. The lease is only kept while the walk is on here, so an instance without the walk
//! never holds it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use pointwork_config::ClusterSettings;
use serde::{Deserialize, Serialize};

use super::cache::{read_shared, write_shared};
use super::shared::ParetoShared;
use super::sharing::Work;
use super::Note;
use crate::cluster::lease::{ttl_for, Keeper, Lease, Role};
use crate::cluster::status::Status;

/// How long the telemetry stays in Redis without a new publication.
const TELEMETRY_TTL: Duration = Duration::from_secs(86_400);
/// How often the coordinator looks whether the walk was turned on, while it is off.
const IDLE_LOOK: Duration = Duration::from_secs(1);

/// Writes the telemetry and announces it, only while `ARGV[1]` holds the lease `KEYS[1]`.
const WRITE: &str = r"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[5])
redis.call('PUBLISH', ARGV[3], ARGV[4])
return 1
";

/// A message on `{key_prefix}:pareto`: new telemetry, or an allow-list for the holder.
#[derive(Serialize, Deserialize)]
struct Notice {
    process: String,
    #[serde(default)]
    allow_list: Option<Vec<String>>,
}

/// Starts the coordinator and the subscriber for the sharing prepared in `pareto` (nothing
/// when there is none); `interval`: the poller's, when the walk is on.
pub fn start(pareto: &Arc<ParetoShared>, interval: Option<Duration>, status: &Arc<Status>, settings: &ClusterSettings) {
    let Some(sharing) = pareto.sharing() else { return };
    let ttl = ttl_for(interval.unwrap_or(pointwork_core::pareto::TelemetrySettings::DEFAULT_POLL_INTERVAL));
    let holder = status.lease_holder();
    let lease = Arc::new(Lease::new("pareto_poller", "polls the telemetry", &settings.key_prefix, holder, ttl));
    let prefix = &settings.key_prefix;
    let coordinator = Coordinator {
        keeper: Keeper::new(status.client().clone(), lease.clone()),
        pareto: pareto.clone(),
        status: status.clone(),
        inbox: sharing.inbox.clone(),
        telemetry_key: format!("{prefix}:pareto:telemetry"),
        channel: format!("{prefix}:pareto"),
        write: redis::Script::new(WRITE),
        read_from: None,
    };
    let subscriber = Subscriber {
        client: status.client().clone(),
        channel: coordinator.channel.clone(),
        work: sharing.work.clone(),
    };
    let spawned = std::thread::Builder::new()
        .name("pareto-share".into())
        .spawn(move || coordinator.run())
        .and_then(|_| std::thread::Builder::new().name("pareto-sub".into()).spawn(move || subscriber.run()));
    match spawned {
        Ok(_) => {
            status.add_lease(lease.clone());
            let _ = sharing.lease.set(lease);
        }
        // Without a word about the lease the poller polls alone after its wait.
        Err(e) => eprintln!("pointwork: openrouter-pareto: the poller is not shared: cannot spawn its thread: {e}"),
    }
}

struct Coordinator {
    keeper: Keeper,
    pareto: Arc<ParetoShared>,
    status: Arc<Status>,
    inbox: Receiver<Work>,
    telemetry_key: String,
    channel: String,
    write: redis::Script,
    /// The instance whose telemetry was last read (logged when it changes).
    read_from: Option<String>,
}

impl Coordinator {
    fn run(mut self) {
        let mut next = Instant::now();
        loop {
            let now = Instant::now();
            let wait_until = if self.pareto.poller().is_none() {
                // The walk is off here: this instance must not hold the poller's lease. When
                // it is back (its poller says `Load`), the lease is tried at once.
                let lease = self.keeper.lease().clone();
                if lease.role(now) == Role::Holder {
                    let _ = self.keeper.with(|con| lease.release(con));
                }
                lease.forget();
                next = now;
                now + IDLE_LOOK
            } else {
                if now >= next {
                    let (role, changed, at) = self.keeper.keep(now);
                    next = at;
                    if changed {
                        self.note(Note::LeaseChanged);
                        if role == Role::Follower {
                            self.load();
                        }
                    }
                }
                next
            };
            match self.inbox.recv_deadline(wait_until) {
                Ok(work) => self.handle(work),
                Err(RecvTimeoutError::Timeout) => {}
                // `Sharing` holds a sender for as long as the hub lives.
                Err(RecvTimeoutError::Disconnected) => return,
            }
        }
    }

    fn role(&self, now: Instant) -> Role {
        self.keeper.lease().role(now)
    }

    fn handle(&mut self, work: Work) {
        let role = self.role(Instant::now());
        match work {
            Work::Published if role == Role::Holder => self.write(),
            Work::Load | Work::Subscribed if role == Role::Follower => self.load(),
            Work::AllowList(providers) if role != Role::Holder => self.announce(Some(providers)),
            Work::Notice(bytes) => {
                let Ok(notice) = serde_json::from_slice::<Notice>(&bytes) else { return };
                if notice.process == self.status.process {
                    return;
                }
                match notice.allow_list {
                    Some(providers) if role == Role::Holder => self.note(Note::PeerAllowList(providers)),
                    None if role == Role::Follower => self.load(),
                    _ => {}
                }
            }
            _ => {}
        }
    }

    fn note(&self, note: Note) {
        if let Some(poller) = self.pareto.poller() {
            let _ = poller.notes.send(note);
        }
    }

    /// Writes what this instance's poller published, as the lease's holder, and announces it.
    fn write(&mut self) {
        let doc = write_shared(&self.pareto.telemetry.load(), &self.status.instance);
        let Some(notice) = self.notice(None) else { return };
        let lease = self.keeper.lease().clone();
        let (script, key, channel) = (&self.write, &self.telemetry_key, &self.channel);
        let ttl_ms = TELEMETRY_TTL.as_millis() as u64;
        let _ = self.keeper.with(|con| {
            script
                .key(lease.key())
                .key(key)
                .arg(lease.holder())
                .arg(&doc)
                .arg(channel)
                .arg(&notice)
                .arg(ttl_ms)
                .invoke::<i64>(con)
        });
    }

    /// Reads the holder's telemetry and hands it to this instance's poller.
    fn load(&mut self) {
        let key = self.telemetry_key.clone();
        let Ok(Some(bytes)) = self.keeper.with(|con| redis::cmd("GET").arg(&key).query::<Option<Vec<u8>>>(con)) else {
            return;
        };
        match read_shared(&bytes) {
            Ok(shared) => {
                if self.read_from.as_deref() != Some(shared.from.as_str()) {
                    eprintln!(
                        "pointwork: openrouter-pareto: routing on the telemetry instance {} polls ({} verdicts)",
                        shared.from,
                        shared.models.len()
                    );
                    self.read_from = Some(shared.from.clone());
                }
                self.note(Note::Shared(Box::new(shared)));
            }
            Err(why) => eprintln!("pointwork: openrouter-pareto: {key} not read: {why}"),
        }
    }

    /// Announces an allow-list to the holder.
    fn announce(&mut self, allow_list: Option<Vec<String>>) {
        let Some(notice) = self.notice(allow_list) else { return };
        let channel = self.channel.clone();
        let _ = self.keeper.with(|con| redis::cmd("PUBLISH").arg(&channel).arg(&notice).exec(con));
    }

    fn notice(&self, allow_list: Option<Vec<String>>) -> Option<Vec<u8>> {
        serde_json::to_vec(&Notice { process: self.status.process.clone(), allow_list }).ok()
    }
}

/// Hands the coordinator what arrives on the channel.
struct Subscriber {
    client: redis::Client,
    channel: String,
    work: Sender<Work>,
}

impl Subscriber {
    fn run(self) {
        let mut backoff = Duration::ZERO;
        loop {
            let outcome = crate::cluster::redis_link::connect(&self.client).and_then(|mut con| {
                let mut pubsub = con.as_pubsub();
                pubsub.subscribe(&self.channel)?;
                backoff = Duration::ZERO;
                let _ = self.work.try_send(Work::Subscribed);
                loop {
                    match pubsub.get_message() {
                        Ok(msg) => {
                            let _ = self.work.try_send(Work::Notice(msg.get_payload_bytes().to_vec()));
                        }
                        // The read timeout, on a quiet channel: still subscribed.
                        Err(e) if e.is_timeout() => {}
                        Err(e) => return Err::<(), _>(e),
                    }
                }
            });
            // The coordinator's lease attempts say whether Redis is reachable.
            drop(outcome);
            backoff = crate::cluster::redis_link::next_backoff(backoff);
            std::thread::sleep(backoff);
        }
    }
}
