//! The database thread's state and what it does for the shards: a current-thread tokio runtime
//! (started, with its standing tasks, in `tasks`) with three connections — lookups and
//! management calls (`client`), spend batches (the flush task's own, since a transaction holds
//! its connection), and LISTEN for changes. Each reconnects on its own with a pause; while the
//! lookup connection is away, [`DbStatus`] says so and keys never seen answer `Unavailable`.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use futures_channel::oneshot;
use tokio_postgres::{Client, Config};

use crate::connect::connect;
use crate::key_cache::{hex, unhex, Keys};
use crate::models;
use crate::notify::{self, Change};
use crate::spend::{self, Buffer, SpendRow};
use crate::{key_row, DbSettings, DbStatus, Lookup};

pub(crate) struct Thread {
    pub(crate) config: Config,
    pub(crate) settings: Arc<DbSettings>,
    pub(crate) status: Arc<DbStatus>,
    pub(crate) client: RefCell<Option<Rc<Client>>>,
    pub(crate) marks: notify::Marks,
    pub(crate) keys: RefCell<Keys>,
    pub(crate) buffer: RefCell<Buffer>,
    /// Wakes the task that reads the stored models again (coalescing notifications).
    pub(crate) models_changed: tokio::sync::Notify,
    /// The stored models last handed over: a read that finds the same hands nothing over.
    pub(crate) models_sent: RefCell<Option<models::DbModels>>,
}

impl Thread {
    pub(crate) async fn connect(self: &Rc<Self>) -> Result<Rc<Client>, tokio_postgres::Error> {
        let (client, connection) = connect(&self.config).await?;
        let client = Rc::new(client);
        let this = self.clone();
        let weak = Rc::downgrade(&client);
        tokio::task::spawn_local(async move {
            let error = connection.await.err().map(|e| e.to_string()).unwrap_or_else(|| "connection closed".into());
            // Only if this connection is still the current one.
            let current =
                this.client.borrow().as_ref().is_some_and(|c| weak.upgrade().is_some_and(|w| Rc::ptr_eq(c, &w)));
            if current {
                this.lost(&error);
            }
        });
        *self.client.borrow_mut() = Some(client.clone());
        self.status.connected.store(true, Ordering::Relaxed);
        Ok(client)
    }

    /// Reads the stored models and hands them over (with `store_model_in_db`).
    pub(crate) async fn send_models(&self, client: &Client) -> Result<(), tokio_postgres::Error> {
        let Some(sink) = self.settings.on_models.as_ref().filter(|_| self.settings.store_model_in_db) else {
            return Ok(());
        };
        let models = models::read(client, self.settings.secret_key().as_ref()).await?;
        if self.models_sent.borrow().as_ref() != Some(&models) {
            *self.models_sent.borrow_mut() = Some(models.clone());
            sink(models);
        }
        Ok(())
    }

    pub(crate) fn current(&self) -> Option<Rc<Client>> {
        self.client.borrow().clone()
    }

    pub(crate) fn lost(&self, error: &str) {
        if self.client.borrow_mut().take().is_some() || self.status.is_connected() {
            eprintln!("pointwork: database away: {error}");
        }
        self.status.connected.store(false, Ordering::Relaxed);
        self.status.set_error(error);
    }

    pub(crate) fn lookup(self: &Rc<Self>, digest: [u8; 32], reply: oneshot::Sender<Lookup>) {
        let mut keys = self.keys.borrow_mut();
        if let Some(entry) = keys.entries.get(&digest) {
            let _ = reply.send(Lookup::Found(entry.clone()));
            return;
        }
        if keys.negative.contains(&digest, Instant::now()) {
            let _ = reply.send(Lookup::Unknown);
            return;
        }
        if let Some(waiting) = keys.waiting.get_mut(&digest) {
            waiting.push(reply);
            return;
        }
        let Some(client) = self.current() else {
            let _ = reply.send(Lookup::Unavailable);
            return;
        };
        keys.waiting.insert(digest, vec![reply]);
        drop(keys);
        self.status.lookups.fetch_add(1, Ordering::Relaxed);
        let this = self.clone();
        tokio::task::spawn_local(async move {
            let found = client.query_opt(key_row::SELECT_KEYS, &[&vec![hex(&digest)]]).await;
            let mut keys = this.keys.borrow_mut();
            let answer = match found {
                Ok(Some(row)) => {
                    let entry = keys.entry_for(key_row::record(&row));
                    keys.entries.insert(digest, entry.clone());
                    this.status.keys_cached.store(keys.entries.len() as u64, Ordering::Relaxed);
                    Lookup::Found(entry)
                }
                Ok(None) => {
                    keys.negative.insert(digest, Instant::now());
                    Lookup::Unknown
                }
                Err(e) => {
                    drop(keys);
                    this.lost(&e.to_string());
                    keys = this.keys.borrow_mut();
                    Lookup::Unavailable
                }
            };
            for reply in keys.waiting.remove(&digest).unwrap_or_default() {
                let _ = reply.send(answer.clone());
            }
        });
    }

    pub(crate) fn buffer_row(&self, mut row: SpendRow) {
        if row.request_id.is_empty() {
            row.request_id = crate::request_id::new();
        }
        let mut buffer = self.buffer.borrow_mut();
        if buffer.rows.len() >= spend::BUFFER_MAX {
            buffer.rows.pop_front();
            self.status.rows_dropped.fetch_add(1, Ordering::Relaxed);
        }
        buffer.rows.push_back(row);
        buffer.saved = false;
        self.status.rows_pending.store(buffer.rows.len() as u64, Ordering::Relaxed);
    }

    /// Forgets what changed: the entries it touches are retired (a shard holding one asks
    /// again), and a key is no longer known as wrong.
    pub(crate) fn changed(&self, change: &Change) {
        if let Change::Mark(mark) = change {
            return self.marks.seen(mark);
        }
        let mut keys = self.keys.borrow_mut();
        match change {
            Change::Key(token) => {
                self.status.key_changes.fetch_add(1, Ordering::Relaxed);
                if let Some(digest) = unhex(token) {
                    keys.negative.remove(&digest);
                    if let Some(entry) = keys.entries.remove(&digest) {
                        entry.retire();
                    }
                }
            }
            Change::Team(id) => keys.retire_where(|r| r.team.as_ref().is_some_and(|t| &t.team_id == id)),
            Change::User(id) => keys.retire_where(|r| r.user_id.as_ref() == Some(id)),
            Change::Models => self.models_changed.notify_one(),
            Change::Mark(_) => {}
        }
        self.status.keys_cached.store(keys.entries.len() as u64, Ordering::Relaxed);
    }

    /// Writes the pending file if it does not hold the buffer yet.
    pub(crate) fn save_pending(&self) {
        let Some(path) = &self.settings.pending_file else { return };
        let mut buffer = self.buffer.borrow_mut();
        if buffer.saved {
            return;
        }
        match spend::write_pending(path, &buffer.rows) {
            Ok(()) => buffer.saved = true,
            Err(e) => eprintln!("pointwork: cannot write the pending spend file {}: {e}", path.display()),
        }
    }
}
