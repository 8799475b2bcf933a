//! The database thread: virtual keys, teams, users and spend in LiteLLM's own PostgreSQL schema
//! (`LiteLLM_VerificationToken`, `LiteLLM_TeamTable`, `LiteLLM_UserTable`, `LiteLLM_SpendLogs`),
//! and LiteLLM's management API over them.
//!
//! The database is never in a request's way. It is reached only from one thread of its own
//! (a small tokio runtime, two connections: one for lookups and management, one listening for
//! changes); shards talk to it through a bounded queue ([`Database`]) and never wait on it for a
//! key they have seen: every key the thread ever found is shared as an [`KeyEntry`] that the
//! shards keep in their own caches. A key not seen yet costs one trip to the thread; a wrong
//! key costs the database one query, then nothing while it stays in the negative cache.
//!
//! Spend is local first: a request's cost is added at once to the key's, team's and user's
//! [`Account`] (so budgets hold between writes), and its [`SpendRow`] goes to the thread, which
//! writes rows and increments in batches, exactly once per request id (see `spend`).

mod account;
mod connect;
pub mod crypto;
pub mod duration;
mod key_cache;
mod key_row;
mod limited;
pub mod manage;
mod model_budget;
pub mod models;
mod notify;
pub mod probe;
mod refresh;
mod request_id;
pub mod schema;
mod settings;
mod spend;
mod status;
mod tasks;
mod thread;

use std::sync::Arc;

use futures_channel::oneshot;

pub use account::{means_every_model, Account, KeyEntry, KeyRecord, ModelMeters, TeamRecord};
pub use limited::LimitedMeters;
pub use manage::{ManageCall, ManageReply};
pub use model_budget::{governing_model_meter, ModelBudget, ModelMeter};
pub use models::{DbModels, ModelRow, ModelsSink};
pub use settings::DbSettings;
pub use spend::{SpendPlace, SpendRow};
pub use status::DbStatus;

/// What the database thread knows of a key digest.
#[derive(Clone, Debug)]
pub enum Lookup {
    Found(Arc<KeyEntry>),
    /// No such key (in the database, or in the negative cache).
    Unknown,
    /// The database is out of reach and the key was never seen.
    Unavailable,
}

/// What shards send the database thread.
pub(crate) enum Command {
    Lookup([u8; 32], oneshot::Sender<Lookup>),
    /// A shard's rows, handed over together (one wake-up of the thread for many rows).
    Spend(Vec<SpendRow>),
    Manage(Box<ManageCall>, oneshot::Sender<ManageReply>),
    /// Write what is buffered (to the database, else the pending file), then answer.
    Flush(oneshot::Sender<()>),
}

/// How many commands may wait for the thread; a shard never waits when the queue is full.
const QUEUE: usize = 65_536;

/// The way to the database thread; cheap to clone, one per shard.
#[derive(Clone)]
pub struct Database {
    queue: tokio::sync::mpsc::Sender<Command>,
    pub status: Arc<DbStatus>,
    pub settings: Arc<DbSettings>,
    /// The keys' and teams' meters with rpm / tpm, for the cluster's reconcile.
    pub limited: Arc<LimitedMeters>,
}

impl Database {
    /// Starts the database thread. It first connects and checks the schema (waiting up to
    /// `settings.connect_timeout`): a schema that lacks a column Pointwork needs is an error
    /// here, naming the table, the column and the LiteLLM migration that adds it. A database
    /// out of reach is not: the thread goes on trying, and reports it in [`DbStatus`].
    pub fn start(settings: DbSettings) -> Result<Database, String> {
        let settings = Arc::new(settings);
        let status = Arc::new(DbStatus::default());
        let limited = Arc::new(LimitedMeters::default());
        let (queue, commands) = tokio::sync::mpsc::channel(QUEUE);
        let started = tasks::spawn(settings.clone(), status.clone(), limited.clone(), commands)?;
        started.recv().map_err(|_| "database thread ended at start".to_string())??;
        Ok(Database { queue, status, settings, limited })
    }

    /// Asks for the key with this SHA-256; `None` when the thread's queue is full (answer as
    /// if the database were away).
    pub fn lookup(&self, digest: [u8; 32]) -> Option<oneshot::Receiver<Lookup>> {
        let (tx, rx) = oneshot::channel();
        self.queue.try_send(Command::Lookup(digest, tx)).ok().map(|()| rx)
    }

    /// Hands finished requests' spend to the thread. The accounts were charged already; a full
    /// queue loses the rows (counted in [`DbStatus`]), never the local charge.
    pub fn spend(&self, rows: Vec<SpendRow>) {
        let count = rows.len() as u64;
        if self.queue.try_send(Command::Spend(rows)).is_err() {
            self.status.rows_dropped.fetch_add(count, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// Runs a management call (`/key/generate`, …) on the thread.
    pub fn manage(&self, call: ManageCall) -> oneshot::Receiver<ManageReply> {
        let (tx, rx) = oneshot::channel();
        if let Err(e) = self.queue.try_send(Command::Manage(Box::new(call), tx)) {
            if let Command::Manage(_, tx) = e.into_inner() {
                let _ = tx.send(ManageReply::busy());
            }
        }
        rx
    }

    /// Writes what is buffered and waits for it (at exit): to the database, or else to the
    /// pending file.
    pub fn flush_blocking(&self, timeout: std::time::Duration) {
        let (tx, rx) = oneshot::channel();
        if self.queue.try_send(Command::Flush(tx)).is_ok() {
            let deadline = std::time::Instant::now() + timeout;
            let mut rx = rx;
            while std::time::Instant::now() < deadline {
                match rx.try_recv() {
                    Ok(Some(())) | Err(_) => return,
                    Ok(None) => std::thread::sleep(std::time::Duration::from_millis(5)),
                }
            }
        }
    }
}
