//! The telemetry poller of the best-value provider walk (spec 004): a thread of its own that
//! polls OpenRouter's telemetry for every managed model, selects per rule (the pareto frontier,
//! the value walk, flap damping: `pointwork_core::pareto`), and publishes what it learned for
//! the shards to read without a lock (`ParetoTelemetry` in an arc-swap). It never touches the
//! shards; they reach it with notes (an allow-list learned from a 404) through a channel.
//!
//! First poll at start, then every `poll_interval` per model; a failed poll keeps the last
//! verdict, marks it stale, and is retried after 1 s, 2 s, 4 s, … up to the interval. What it
//! learned is kept in a cache file (when `cache_dir` is set) and published, stale, at the next
//! start before the first poll answers.
//!
//! - `fetch`: one HTTP/1.1 GET, whole body, size limit, timeout; `tls`: its TLS settings.
//! - `parse`: the three OpenRouter documents into rows; `round`: one round of fetches.
//! - `state`: what the poller knows, without IO or clock; `backoff`: the retry schedule.
//! - `cache`: the cache file; `shared`: what the hub holds.
//! - `share`: with Redis, one instance polls (a lease) and the others read what it published.

mod backoff;
mod cache;
mod parse;
mod round;
pub mod share;
pub mod shared;
mod sharing;
mod state;
pub(crate) mod tls;

#[cfg(test)]
mod poller_tests;
#[cfg(test)]
pub(crate) mod test_support;

pub use cache::FILE_NAME as CACHE_FILE_NAME;
pub use shared::ParetoShared;

use std::rc::Rc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use pointwork_core::pareto::{ParetoSettings, ParetoTelemetry, TelemetrySettings};

use crate::clock::unix_seconds;
use crate::cluster::lease::Role;
use crate::upstream::fetch::{self, Client};
use cache::{CacheFile, Contents, Shared};
use round::Canonicals;
use sharing::{Sharing, Work};
use state::PollerState;

/// How often a poller that reads (another instance polls) looks whether it should poll.
const READER_LOOKS_EVERY: Duration = Duration::from_secs(1);

/// What the poller is told from outside its thread.
pub enum Note {
    /// A shard parsed the account's allowed providers from a 404.
    AllowList(Vec<String>),
    /// A config reload with the walk still on.
    Reconfigure(Arc<ParetoSettings>),
    /// Poll every model now.
    PollNow,
    /// The allow-list another instance's shard learnt (this instance holds the poller's lease).
    PeerAllowList(Vec<String>),
    /// What the poller's lease holder published (this instance reads).
    Shared(Box<Shared>),
    /// This instance's role for the poller's lease changed.
    LeaseChanged,
    /// The walk was turned off: the thread ends.
    Stop,
}

/// The way to a running poller, and what it publishes.
pub struct PollerHandle {
    /// What the shards read per request (one arc-swap load, no lock).
    pub telemetry: Arc<ArcSwap<ParetoTelemetry>>,
    notes: Sender<Note>,
    published: Arc<Published>,
}

/// Counts publications, so that a caller can wait for the next one.
#[derive(Default)]
struct Published {
    count: Mutex<u64>,
    changed: Condvar,
}

impl PollerHandle {
    /// Stores the account's allowed providers (discovered now): every model is selected again
    /// under them at once, from the last rows, without a fetch; then published and persisted.
    pub fn allow_list_learned(&self, providers: Vec<String>) {
        let _ = self.notes.send(Note::AllowList(providers));
    }

    /// A config reload: verdicts whose (rule key, fingerprint) stays are kept, new rules are
    /// polled at once, removed ones dropped.
    pub fn reconfigure(&self, settings: Arc<ParetoSettings>) {
        let _ = self.notes.send(Note::Reconfigure(settings));
    }

    /// Polls every model now (admin and tests).
    pub fn poll_now(&self) {
        let _ = self.notes.send(Note::PollNow);
    }

    /// Ends the poller's thread (after the round in progress, if any).
    pub fn stop(&self) {
        let _ = self.notes.send(Note::Stop);
    }

    /// Waits until the published telemetry satisfies `ready`, at most `timeout`: the telemetry
    /// that did, or `None` when the time ran out.
    pub fn wait_for(
        &self,
        timeout: Duration,
        ready: impl Fn(&ParetoTelemetry) -> bool,
    ) -> Option<Arc<ParetoTelemetry>> {
        let deadline = Instant::now() + timeout;
        let mut count = self.published.count.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            // Checked under the lock the publisher takes after storing: no publication is missed.
            let now = self.telemetry.load_full();
            if ready(&now) {
                return Some(now);
            }
            let left = deadline.checked_duration_since(Instant::now()).filter(|d| !d.is_zero())?;
            count = self.published.changed.wait_timeout(count, left).unwrap_or_else(|e| e.into_inner()).0;
        }
    }
}

/// What the cache file of `settings` holds now (each verdict stale until a poll confirms it);
/// empty without a cache or when it cannot be read. `pointwork route` explains the walk on it.
pub fn read_cache(settings: &ParetoSettings) -> ParetoTelemetry {
    let Some(dir) = &settings.telemetry.cache_dir else { return ParetoTelemetry::default() };
    let now = unix_seconds();
    match cache::CacheFile::new(dir, settings.telemetry.cache_retention).read(now) {
        Ok(contents) => {
            ParetoTelemetry { models: contents.models, allow_list: contents.allow_list, ..ParetoTelemetry::default() }
        }
        Err(e) => {
            eprintln!("pointwork: openrouter-pareto: {e}");
            ParetoTelemetry::default()
        }
    }
}

/// Starts the poller with a telemetry of its own.
pub fn start(settings: Arc<ParetoSettings>) -> PollerHandle {
    start_into(settings, Arc::new(ArcSwap::from_pointee(ParetoTelemetry::default())))
}

/// Starts the poller publishing into `telemetry` (the hub's, which shards already read).
pub fn start_into(settings: Arc<ParetoSettings>, telemetry: Arc<ArcSwap<ParetoTelemetry>>) -> PollerHandle {
    start_shared(settings, telemetry, None)
}

/// [`start_into`], polling only as `sharing` allows (with Redis).
fn start_shared(
    settings: Arc<ParetoSettings>,
    telemetry: Arc<ArcSwap<ParetoTelemetry>>,
    sharing: Option<Arc<Sharing>>,
) -> PollerHandle {
    let (notes, inbox) = crossbeam_channel::unbounded();
    let published = Arc::new(Published::default());
    let handle = PollerHandle { telemetry: telemetry.clone(), notes, published: published.clone() };
    let spawned =
        std::thread::Builder::new().name("pareto-poller".into()).spawn(move || {
            match monoio::RuntimeBuilder::<monoio::LegacyDriver>::new().enable_timer().build() {
                Ok(rt) => Poller::new(settings, telemetry, published, rt, sharing).run(&inbox),
                Err(e) => {
                    eprintln!("pointwork: openrouter-pareto: telemetry poller off: cannot start its runtime: {e}")
                }
            }
        });
    if let Err(e) = spawned {
        eprintln!("pointwork: openrouter-pareto: telemetry poller off: cannot spawn its thread: {e}");
    }
    handle
}

type Runtime = monoio::Runtime<monoio::time::TimeDriver<monoio::LegacyDriver>>;

/// The poller's thread: its state, its client, where it publishes and persists.
struct Poller {
    state: PollerState,
    client: Rc<Client>,
    canonicals: Canonicals,
    cache: Option<CacheFile>,
    /// The cache file's last write failed (logged once until one succeeds).
    cache_failing: bool,
    telemetry: Arc<ArcSwap<ParetoTelemetry>>,
    published: Arc<Published>,
    rt: Runtime,
    /// With Redis: polls only as the lease allows, reads otherwise.
    sharing: Option<Arc<Sharing>>,
    started: Instant,
    /// Not polling (another instance does) since the last look.
    reading: bool,
}

fn log(lines: Vec<String>) {
    for line in lines {
        eprintln!("{line}");
    }
}

fn client(settings: &TelemetrySettings) -> Client {
    Client { tls: tls::connector(settings), timeout: settings.timeout, max_body: fetch::MAX_BODY }
}

fn cache_file(settings: &TelemetrySettings) -> Option<CacheFile> {
    settings.cache_dir.as_deref().map(|dir| CacheFile::new(dir, settings.cache_retention))
}

impl Poller {
    /// Reads the cache and publishes what it holds (stale) before anything is polled.
    fn new(
        settings: Arc<ParetoSettings>,
        telemetry: Arc<ArcSwap<ParetoTelemetry>>,
        published: Arc<Published>,
        rt: Runtime,
        sharing: Option<Arc<Sharing>>,
    ) -> Poller {
        let cache = cache_file(&settings.telemetry);
        let cached = match cache.as_ref().map(|c| c.read(unix_seconds())) {
            None => Contents::default(),
            Some(Ok(contents)) => contents,
            Some(Err(why)) => {
                eprintln!("pointwork: openrouter-pareto: warning: the telemetry cache is not used: {why}");
                Contents::default()
            }
        };
        let state = PollerState::new(settings.clone(), cached, Instant::now());
        let restored = state.telemetry().models.len();
        if restored > 0 {
            eprintln!("pointwork: openrouter-pareto: {restored} verdicts from the cache (stale until polled)");
        }
        let poller = Poller {
            state,
            client: Rc::new(client(&settings.telemetry)),
            canonicals: Canonicals::default(),
            cache,
            cache_failing: false,
            telemetry,
            published,
            rt,
            reading: sharing.is_some(),
            sharing,
            started: Instant::now(),
        };
        poller.publish();
        poller
    }

    fn run(mut self, inbox: &Receiver<Note>) {
        self.tell(Work::Load);
        loop {
            let wait = match self.polls(Instant::now()) {
                true => self.state.next_due().unwrap_or_else(|| Instant::now() + self.state.poll_interval()),
                // The role may change without a note too (a ttl without an answer from Redis).
                false => Instant::now() + READER_LOOKS_EVERY,
            };
            match inbox.recv_deadline(wait) {
                Ok(Note::AllowList(providers)) => {
                    if !self.holds_lease() {
                        self.tell(Work::AllowList(providers.clone()));
                    }
                    log(self.state.allow_list_learned(providers, unix_seconds()));
                    self.persist_and_publish();
                }
                Ok(Note::PeerAllowList(providers)) => {
                    log(self.state.allow_list_learned(providers, unix_seconds()));
                    self.persist_and_publish();
                }
                Ok(Note::Shared(shared)) => self.adopt(*shared),
                Ok(Note::Reconfigure(settings)) => self.reconfigure(settings),
                Ok(Note::PollNow) => self.state.poll_now(Instant::now()),
                Ok(Note::Stop) | Err(RecvTimeoutError::Disconnected) => return,
                Ok(Note::LeaseChanged) | Err(RecvTimeoutError::Timeout) => {}
            }
            if self.polls(Instant::now()) {
                let due = self.state.due(Instant::now());
                if !due.is_empty() {
                    self.round(due);
                }
            }
        }
    }

    /// Whether this instance polls at `now` (always without Redis). Every model is due when it
    /// starts polling again: what it read may be a poll interval old.
    fn polls(&mut self, now: Instant) -> bool {
        let Some(sharing) = &self.sharing else { return true };
        let polls = sharing.polls(now, self.started);
        if polls && self.reading {
            self.state.poll_now(now);
        }
        self.reading = !polls;
        polls
    }

    fn holds_lease(&self) -> bool {
        self.sharing.as_ref().is_some_and(|s| s.role(Instant::now()) == Role::Holder)
    }

    fn tell(&self, work: Work) {
        if let Some(sharing) = &self.sharing {
            sharing.tell(work);
        }
    }

    /// Publishes what the lease's holder published, unless this instance polls itself now.
    fn adopt(&mut self, shared: Shared) {
        if self.polls(Instant::now()) {
            return;
        }
        log(self.state.adopt(shared.models, shared.allow_list, &shared.from));
        self.persist_and_publish();
    }

    fn reconfigure(&mut self, settings: Arc<ParetoSettings>) {
        let old = self.state.settings().telemetry.clone();
        if old != settings.telemetry {
            self.client = Rc::new(client(&settings.telemetry));
            if old.base_url != settings.telemetry.base_url {
                self.canonicals = Canonicals::default();
            }
            let cache = cache_file(&settings.telemetry);
            if cache.as_ref().map(|c| &c.path) != self.cache.as_ref().map(|c| &c.path) {
                self.cache_failing = false;
            }
            self.cache = cache;
        }
        self.state.reconfigure(settings, Instant::now());
        self.persist_and_publish();
        if self.reading {
            // New rules may be in what the holder published.
            self.tell(Work::Load);
        }
    }

    /// Polls `due`, learns from every outcome, publishes and persists once.
    fn round(&mut self, due: Vec<String>) {
        let mut lines = Vec::new();
        let base_url = self.state.settings().telemetry.base_url.clone();
        let client = self.client.clone();
        let canonicals = &mut self.canonicals;
        let outcomes = self.rt.block_on(round::poll(client, &base_url, due, canonicals, &mut lines));
        let (now, unix) = (Instant::now(), unix_seconds());
        for (key, outcome) in outcomes {
            lines.extend(self.state.polled(&key, outcome, now, unix));
        }
        log(lines);
        self.persist_and_publish();
    }

    /// The file first: whoever sees a publication finds it in the file too. The lease's holder
    /// then has it written to Redis for the other instances.
    fn persist_and_publish(&mut self) {
        self.persist();
        self.publish();
        if self.holds_lease() {
            self.tell(Work::Published);
        }
    }

    fn publish(&self) {
        self.telemetry.store(Arc::new(self.state.telemetry()));
        let mut count = self.published.count.lock().unwrap_or_else(|e| e.into_inner());
        *count += 1;
        self.published.changed.notify_all();
    }

    fn persist(&mut self) {
        let Some(cache) = &self.cache else { return };
        match cache.write(&self.state.cache_entries(), self.state.allow_list(), unix_seconds()) {
            Ok(()) => self.cache_failing = false,
            Err(why) if !self.cache_failing => {
                self.cache_failing = true;
                eprintln!("pointwork: openrouter-pareto: warning: the telemetry cache is not kept: {why}");
            }
            Err(_) => {}
        }
    }
}
