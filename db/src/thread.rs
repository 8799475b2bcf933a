//! The database thread: a current-thread tokio runtime with three connections — lookups and
//! management calls (`client`), spend batches (the flush task's own, since a transaction holds
//! its connection), and LISTEN for changes. Each reconnects on its own with a pause; while the
//! lookup connection is away, [`DbStatus`] says so and keys never seen answer `Unavailable`.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use futures_channel::oneshot;
use pointwork_core::{KeyLimits, KeyMeter};
use tokio::sync::mpsc;
use tokio_postgres::{Client, Config};

use crate::account::{Account, KeyEntry, KeyRecord, ModelMeters};
use crate::connect::connect;
use crate::manage::{self, ManageReply};
use crate::model_budget::{ModelBudget, ModelMeter};
use crate::models;
use crate::notify::{self, Change};
use crate::refresh;
use crate::spend::{self, Buffer, SpendRow};
use crate::{key_row, schema, Command, DbSettings, DbStatus, LimitedMeters, Lookup};

/// How long a wrong key stays known as wrong: a key another proxy (LiteLLM's) creates on the
/// same database is found after at most this long.
const NEGATIVE_TTL: Duration = Duration::from_secs(10);
/// The pause between attempts to reach the database again.
const RECONNECT_EVERY: Duration = Duration::from_secs(1);
/// How often spend past `budget_reset_at` is set back to zero.
const RESET_EVERY: Duration = Duration::from_secs(30);

pub(crate) fn spawn(
    settings: Arc<DbSettings>,
    status: Arc<DbStatus>,
    limited: Arc<LimitedMeters>,
    commands: mpsc::Receiver<Command>,
) -> Result<std::sync::mpsc::Receiver<Result<(), String>>, String> {
    let config = crate::connect::parse(&settings.url)?;
    let (started, on_start) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("pointwork-db".into())
        .spawn(move || {
            let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
                Ok(r) => r,
                Err(e) => {
                    let _ = started.send(Err(format!("database thread: cannot build its runtime: {e}")));
                    return;
                }
            };
            let local = tokio::task::LocalSet::new();
            local.block_on(&runtime, run(config, settings, status, limited, commands, started));
        })
        .map_err(|e| format!("cannot start the database thread: {e}"))?;
    Ok(on_start)
}

struct Thread {
    config: Config,
    settings: Arc<DbSettings>,
    status: Arc<DbStatus>,
    client: RefCell<Option<Rc<Client>>>,
    marks: notify::Marks,
    keys: RefCell<Keys>,
    buffer: RefCell<Buffer>,
    /// Wakes the task that reads the stored models again (coalescing notifications).
    models_changed: tokio::sync::Notify,
    /// The stored models last handed over: a read that finds the same hands nothing over.
    models_sent: RefCell<Option<models::DbModels>>,
}

async fn run(
    config: Config,
    settings: Arc<DbSettings>,
    status: Arc<DbStatus>,
    limited: Arc<LimitedMeters>,
    mut commands: mpsc::Receiver<Command>,
    started: std::sync::mpsc::Sender<Result<(), String>>,
) {
    let negative = Negative::new(settings.negative_cache);
    let thread = Rc::new(Thread {
        config,
        settings,
        status,
        client: RefCell::new(None),
        marks: notify::Marks::new(),
        keys: RefCell::new(Keys { negative, limited, ..Keys::default() }),
        buffer: RefCell::new(Buffer::default()),
        models_changed: tokio::sync::Notify::new(),
        models_sent: RefCell::new(None),
    });
    match tokio::time::timeout(thread.settings.connect_timeout, thread.connect()).await {
        Ok(Ok(client)) => {
            if let Err(e) = schema::check(&client).await {
                let _ = started.send(Err(e));
                return;
            }
            // The stored models serve from the first request on.
            if let Err(e) = thread.send_models(&client).await {
                eprintln!("pointwork: database: cannot read the stored models yet ({e}); trying again");
                thread.models_changed.notify_one();
            }
        }
        Ok(Err(e)) => thread.lost(&format!("cannot connect to {}: {e}", thread.settings.redacted_url())),
        Err(_) => thread.lost(&format!(
            "{} did not answer within {:?}",
            thread.settings.redacted_url(),
            thread.settings.connect_timeout
        )),
    }
    if let Some(path) = &thread.settings.pending_file {
        match spend::read_pending(path) {
            Ok(rows) => {
                let mut buffer = thread.buffer.borrow_mut();
                buffer.saved = !rows.is_empty();
                buffer.rows.extend(rows);
                thread.status.rows_pending.store(buffer.rows.len() as u64, Ordering::Relaxed);
            }
            Err(e) => {
                let _ = started.send(Err(format!("database: the pending spend file {e}")));
                return;
            }
        }
    }
    let _ = started.send(Ok(()));
    tokio::task::spawn_local(reconnect_loop(thread.clone()));
    tokio::task::spawn_local(listen_loop(thread.clone()));
    tokio::task::spawn_local(flush_loop(thread.clone()));
    tokio::task::spawn_local(reset_loop(thread.clone()));
    if thread.settings.store_model_in_db {
        tokio::task::spawn_local(models_loop(thread.clone()));
    }
    while let Some(command) = commands.recv().await {
        match command {
            Command::Lookup(digest, reply) => thread.lookup(digest, reply),
            Command::Spend(row) => thread.buffer_row(*row),
            Command::Manage(call, reply) => {
                let thread = thread.clone();
                tokio::task::spawn_local(async move {
                    let answer = match thread.current() {
                        Some(client) => {
                            let cx = manage::Ctx {
                                client: client.clone(),
                                store_model_in_db: thread.settings.store_model_in_db,
                                secret_key: thread.settings.secret_key(),
                                encryption: thread.settings.encryption,
                            };
                            let answer = manage::handle(&cx, &call).await;
                            // A change answered here is in this instance's caches already.
                            if call.method == "POST" && answer.status == 200 {
                                thread.marks.caught_up(&client).await;
                            }
                            answer
                        }
                        None => ManageReply::unavailable(&thread.status.last_error()),
                    };
                    let _ = reply.send(answer);
                });
            }
            Command::Flush(done) => {
                flush_all(&thread).await;
                let _ = done.send(());
            }
        }
    }
    flush_all(&thread).await;
}

impl Thread {
    async fn connect(self: &Rc<Self>) -> Result<Rc<Client>, tokio_postgres::Error> {
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
    async fn send_models(&self, client: &Client) -> Result<(), tokio_postgres::Error> {
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

    fn current(&self) -> Option<Rc<Client>> {
        self.client.borrow().clone()
    }

    fn lost(&self, error: &str) {
        if self.client.borrow_mut().take().is_some() || self.status.is_connected() {
            eprintln!("pointwork: database away: {error}");
        }
        self.status.connected.store(false, Ordering::Relaxed);
        self.status.set_error(error);
    }

    fn lookup(self: &Rc<Self>, digest: [u8; 32], reply: oneshot::Sender<Lookup>) {
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

    fn buffer_row(&self, row: SpendRow) {
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
    fn changed(&self, change: &Change) {
        if let Change::Mark(mark) = change {
            return self.marks.seen(mark);
        }
        let mut keys = self.keys.borrow_mut();
        match change {
            Change::Key(token) => {
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
    fn save_pending(&self) {
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

async fn reconnect_loop(thread: Rc<Thread>) {
    loop {
        tokio::time::sleep(RECONNECT_EVERY).await;
        if thread.current().is_some() {
            continue;
        }
        match tokio::time::timeout(thread.settings.connect_timeout, thread.connect()).await {
            Ok(Ok(_)) => eprintln!("pointwork: database back: {}", thread.settings.redacted_url()),
            Ok(Err(e)) => thread.status.set_error(&e.to_string()),
            Err(_) => thread.status.set_error("the database did not answer"),
        }
    }
}

async fn listen_loop(thread: Rc<Thread>) {
    let mut first = true;
    loop {
        let this = thread.clone();
        let mut on_listening = || {
            // Notifications sent while no one listened are lost: forget every key.
            if !first {
                this.keys.borrow_mut().retire_where(|_| true);
            }
            // The models too may have changed unheard (the first time: since start read them).
            this.models_changed.notify_one();
            first = false;
        };
        let that = thread.clone();
        let mut on_change = move |change: Change| that.changed(&change);
        let _ = notify::listen(&thread.config, &mut on_listening, &mut on_change).await;
        tokio::time::sleep(RECONNECT_EVERY).await;
    }
}

/// Reads the stored models again after each `models` notification (several at once are read
/// once), and every `models_poll_interval` (rows a LiteLLM proxy wrote announce nothing),
/// until it succeeds: a database away is tried again every second.
async fn models_loop(thread: Rc<Thread>) {
    loop {
        let every = thread.settings.models_poll_interval;
        let _ = tokio::time::timeout(every, thread.models_changed.notified()).await;
        loop {
            if let Some(client) = thread.current() {
                match thread.send_models(&client).await {
                    Ok(()) => break,
                    Err(e) => eprintln!("pointwork: database: reading the stored models failed: {e}; trying again"),
                }
            }
            tokio::time::sleep(RECONNECT_EVERY).await;
        }
    }
}

/// Writes spend every `flush_interval`, and reads the cached keys again every
/// `refresh_interval` — on the same connection and task, so that a refresh's spend figures never
/// cross a batch's.
async fn flush_loop(thread: Rc<Thread>) {
    let mut writer: Option<Client> = None;
    let mut cursor = refresh::Cursor::default();
    let settings = thread.settings.clone();
    let mut next_refresh = Instant::now() + settings.refresh_interval;
    loop {
        tokio::time::sleep(settings.flush_interval.min(settings.refresh_interval)).await;
        flush(&thread, &mut writer).await;
        if Instant::now() >= next_refresh {
            refresh_keys(&thread, &mut writer, &mut cursor).await;
            next_refresh = Instant::now() + settings.refresh_interval;
        }
    }
}

/// The writer's connection, connecting it if needed; `None` while the database is away.
async fn writer_connection<'w>(thread: &Thread, writer: &'w mut Option<Client>) -> Option<&'w mut Client> {
    if writer.is_none() {
        match tokio::time::timeout(thread.settings.connect_timeout, connect(&thread.config)).await {
            Ok(Ok((client, connection))) => {
                tokio::task::spawn_local(connection);
                *writer = Some(client);
            }
            _ => return None,
        }
    }
    writer.as_mut()
}

/// Reads a round of the cached keys again (see `refresh`).
async fn refresh_keys(thread: &Rc<Thread>, writer: &mut Option<Client>, cursor: &mut refresh::Cursor) {
    let round = refresh::next_round(thread.keys.borrow().entries.keys().copied(), cursor);
    for batch in round.chunks(refresh::BATCH) {
        let asked: Vec<([u8; 32], Arc<KeyEntry>)> = {
            let keys = thread.keys.borrow();
            batch.iter().filter_map(|d| Some((*d, keys.entries.get(d)?.clone()))).collect()
        };
        let Some(client) = writer_connection(thread, writer).await else { return };
        let tokens: Vec<String> = asked.iter().map(|(_, e)| e.record.token.clone()).collect();
        let rows = match client.query(key_row::SELECT_KEYS, &[&tokens]).await {
            Ok(rows) => rows,
            Err(e) => {
                thread.status.set_error(&e.to_string());
                *writer = None;
                return;
            }
        };
        let read = rows.iter().map(key_row::record).map(|r| (r.token.clone(), r)).collect();
        let mut keys = thread.keys.borrow_mut();
        let status = &thread.status;
        status.keys_refreshed.fetch_add(asked.len() as u64, Ordering::Relaxed);
        let changed = keys.refreshed(asked, read);
        status.keys_changed_unannounced.fetch_add(changed, Ordering::Relaxed);
        status.keys_cached.store(keys.entries.len() as u64, Ordering::Relaxed);
    }
}

/// Writes every buffered row it can, batch by batch; on failure the rows stay (and the
/// pending file holds them).
async fn flush(thread: &Rc<Thread>, writer: &mut Option<Client>) {
    while !thread.buffer.borrow().rows.is_empty() {
        let Some(client) = writer_connection(thread, writer).await else {
            thread.save_pending();
            return;
        };
        let batch: Vec<SpendRow> = {
            let mut buffer = thread.buffer.borrow_mut();
            let n = buffer.rows.len().min(spend::BATCH);
            buffer.rows.drain(..n).collect()
        };
        match spend::write(client, &batch).await {
            Ok(totals) => {
                spend::settle(&batch, &totals);
                for token in &totals.crossed {
                    thread.changed(&Change::Key(token.clone()));
                }
                thread.status.rows_written.fetch_add(batch.len() as u64, Ordering::Relaxed);
                let mut buffer = thread.buffer.borrow_mut();
                thread.status.rows_pending.store(buffer.rows.len() as u64, Ordering::Relaxed);
                if buffer.rows.is_empty() {
                    // The pending file (if any) holds rows now written: empty it.
                    buffer.saved = false;
                }
            }
            Err(e) => {
                thread.status.write_failures.fetch_add(1, Ordering::Relaxed);
                thread.status.set_error(&e.to_string());
                let mut buffer = thread.buffer.borrow_mut();
                for row in batch.into_iter().rev() {
                    buffer.rows.push_front(row);
                }
                drop(buffer);
                *writer = None;
                thread.save_pending();
                return;
            }
        }
    }
    thread.save_pending();
}

async fn flush_all(thread: &Rc<Thread>) {
    let mut writer = None;
    flush(thread, &mut writer).await;
}

/// Spend past `budget_reset_at` starts over (LiteLLM's reset job, on whichever instance gets
/// there first: the update is atomic per row), and every instance is told.
async fn reset_loop(thread: Rc<Thread>) {
    const RESET: &[(&str, &str, &str)] = &[
        ("LiteLLM_VerificationToken", "token", "key"),
        ("LiteLLM_TeamTable", "team_id", "team"),
        ("LiteLLM_UserTable", "user_id", "user"),
    ];
    loop {
        tokio::time::sleep(RESET_EVERY).await;
        let Some(client) = thread.current() else { continue };
        for (table, id, kind) in RESET {
            let sql = format!(
                "WITH reset AS (UPDATE \"{table}\" SET spend = 0, budget_reset_at = (now() AT TIME ZONE 'UTC') \
                 + regexp_replace(budget_duration, 'mo$', 'mon')::interval \
                 WHERE budget_reset_at < (now() AT TIME ZONE 'UTC') AND budget_duration ~ '^[0-9]+(s|m|h|d|w|mo)$' \
                 RETURNING {id}) SELECT pg_notify('{}', '{kind}:' || {id}) FROM reset",
                notify::CHANNEL
            );
            if let Err(e) = client.execute(&sql, &[]).await {
                eprintln!("pointwork: database: resetting budgets in {table} failed: {e}");
            }
        }
    }
}

/// The keys the thread knows, those it knows are wrong, and the accounts they share.
#[derive(Default)]
struct Keys {
    entries: HashMap<[u8; 32], Arc<KeyEntry>>,
    negative: Negative,
    /// Lookups in flight, with everyone waiting for each.
    waiting: HashMap<[u8; 32], Vec<oneshot::Sender<Lookup>>>,
    /// `key:<token>`, `team:<id>`, `user:<id>` → the account every entry of it shares.
    accounts: HashMap<String, Weak<Account>>,
    /// The meters of keys and teams with rpm / tpm, shared with the cluster thread.
    limited: Arc<LimitedMeters>,
    /// `<owner>:model:<model>:<period>` → its `model_max_budget` meter (owner: `key:<token>`,
    /// `team:<id>`, `user:<id>`).
    model_meters: HashMap<String, Weak<KeyMeter>>,
}

impl Keys {
    fn entry_for(&mut self, record: KeyRecord) -> Arc<KeyEntry> {
        let key = self.account(format!("key:{}", record.token), record.spend);
        let team = record.team.as_ref().map(|t| format!("team:{}", t.team_id));
        let team = team.map(|id| self.account(id, record.team_spend));
        let user = record.user_id.as_ref().map(|u| format!("user:{u}"));
        let user = user.map(|id| self.account(id, record.user_spend));
        let limits = KeyLimits { rpm: record.rpm_limit, tpm: record.tpm_limit, ..KeyLimits::default() };
        let id = format!("key:{}", record.token);
        self.limited.register_parallel(id.clone(), record.max_parallel_requests.is_some(), &key);
        self.limited.register(id, limits, &key.meter);
        if let (Some(t), Some(account)) = (&record.team, &team) {
            let limits = KeyLimits { rpm: t.rpm_limit, tpm: t.tpm_limit, ..KeyLimits::default() };
            let id = format!("team:{}", t.team_id);
            self.limited.register_parallel(id.clone(), t.max_parallel_requests.is_some(), account);
            self.limited.register(id, limits, &account.meter);
        }
        let mut model_meters = ModelMeters::default();
        let owners = [
            (Some(format!("key:{}", record.token)), &record.model_max_budget, &mut model_meters.key),
            (
                record.user_id.as_ref().map(|u| format!("user:{u}")),
                &record.user_model_max_budget,
                &mut model_meters.user,
            ),
        ];
        for (owner, budgets, meters) in owners {
            let Some(owner) = owner else { continue };
            meters.extend(budgets.iter().map(|b| self.model_meter(&owner, b)));
        }
        if let Some(t) = &record.team {
            let owner = format!("team:{}", t.team_id);
            model_meters.team = t.model_max_budget.iter().map(|b| self.model_meter(&owner, b)).collect();
        }
        if self.accounts.len() > 2 * self.entries.len() + 1024 {
            self.accounts.retain(|_, a| a.strong_count() > 0);
            self.model_meters.retain(|_, m| m.strong_count() > 0);
        }
        Arc::new(KeyEntry::new(record, key, team, user, model_meters))
    }

    /// A `model_max_budget` entry's meter: the same one for as long as an entry of its owner
    /// (`key:<token>`, …) has the same model and period (its spend outlives a change to the row).
    fn model_meter(&mut self, owner: &str, budget: &ModelBudget) -> ModelMeter {
        let id = budget.meter_id(owner);
        let meter = self.model_meters.get(&id).and_then(Weak::upgrade).unwrap_or_default();
        self.model_meters.insert(id.clone(), Arc::downgrade(&meter));
        self.limited.register(id, budget.limits(), &meter);
        ModelMeter { budget: budget.clone(), meter }
    }

    fn account(&mut self, id: String, db_spend: f64) -> Arc<Account> {
        if let Some(account) = self.accounts.get(&id).and_then(Weak::upgrade) {
            account.set_db_spend(db_spend);
            return account;
        }
        let account = Arc::new(Account::with_spend(db_spend));
        self.accounts.insert(id, Arc::downgrade(&account));
        account
    }

    /// Takes in the rows of `asked` read again (`read`, by token): an entry whose rules changed
    /// is replaced (the old one retired), one whose row is gone is forgotten, and one whose
    /// spend alone moved has its accounts set to the database's figures. An entry replaced
    /// meanwhile (a lookup, a notification) was read as recently: it stays. Returns how many
    /// entries were replaced or forgotten.
    fn refreshed(&mut self, asked: Vec<([u8; 32], Arc<KeyEntry>)>, mut read: HashMap<String, KeyRecord>) -> u64 {
        let mut changed = 0;
        for (digest, held) in asked {
            if !self.entries.get(&digest).is_some_and(|e| Arc::ptr_eq(e, &held)) {
                continue;
            }
            match read.remove(&held.record.token) {
                None => {
                    self.entries.remove(&digest);
                    held.retire();
                    changed += 1;
                }
                Some(record) if refresh::same_rules(&held.record, &record) => {
                    held.key.set_db_spend(record.spend);
                    if let Some(team) = &held.team {
                        team.set_db_spend(record.team_spend);
                    }
                    if let Some(user) = &held.user {
                        user.set_db_spend(record.user_spend);
                    }
                }
                Some(record) => {
                    let entry = self.entry_for(record);
                    self.entries.insert(digest, entry);
                    held.retire();
                    changed += 1;
                }
            }
        }
        changed
    }

    fn retire_where(&mut self, matches: impl Fn(&KeyRecord) -> bool) {
        self.entries.retain(|_, entry| {
            let hit = matches(&entry.record);
            if hit {
                entry.retire();
            }
            !hit
        });
    }
}

/// Wrong key digests, each for [`NEGATIVE_TTL`], at most `cap` of them (the oldest go first).
#[derive(Default)]
struct Negative {
    seen: HashMap<[u8; 32], Instant>,
    order: VecDeque<[u8; 32]>,
    cap: usize,
}

impl Negative {
    fn new(cap: usize) -> Negative {
        Negative { cap: cap.max(1), ..Negative::default() }
    }

    fn contains(&self, digest: &[u8; 32], now: Instant) -> bool {
        self.seen.get(digest).is_some_and(|at| now.duration_since(*at) < NEGATIVE_TTL)
    }

    fn insert(&mut self, digest: [u8; 32], now: Instant) {
        if self.seen.insert(digest, now).is_none() {
            self.order.push_back(digest);
        }
        while self.order.len() > self.cap {
            if let Some(old) = self.order.pop_front() {
                self.seen.remove(&old);
            }
        }
    }

    fn remove(&mut self, digest: &[u8; 32]) {
        if self.seen.remove(digest).is_some() {
            self.order.retain(|d| d != digest);
        }
    }
}

pub(crate) fn hex(digest: &[u8; 32]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<[u8; 32]> {
    let bytes = text.as_bytes();
    if bytes.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, pair) in bytes.chunks(2).enumerate() {
        out[i] = u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_negative_cache_is_bounded_and_forgets() {
        let mut n = Negative::new(2);
        let now = Instant::now();
        n.insert([1; 32], now);
        n.insert([2; 32], now);
        n.insert([3; 32], now);
        assert!(!n.contains(&[1; 32], now), "the oldest went first");
        assert!(n.contains(&[3; 32], now));
        assert!(!n.contains(&[3; 32], now + NEGATIVE_TTL), "and each is forgotten after a while");
        n.remove(&[2; 32]);
        assert!(!n.contains(&[2; 32], now));
    }

    #[test]
    fn hex_round_trips() {
        let d = [0xab; 32];
        assert_eq!(unhex(&hex(&d)), Some(d));
        assert_eq!(unhex("zz"), None);
    }
}
