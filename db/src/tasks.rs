//! The database thread's runtime: its start, the loop that serves the shards' commands, and its
//! standing tasks: reconnecting the lookup connection, listening for
//! changes, reading the stored models again, writing spend in batches (and reading the cached
//! keys again between batches), and setting spend back to zero when a budget period ends.

use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_postgres::Client;

use crate::account::KeyEntry;
use crate::connect::connect;
use crate::key_cache::{Keys, Negative};
use crate::key_row;
use crate::manage::{self, ManageReply};
use crate::notify::{self, Change};
use crate::refresh;
use crate::spend::{self, Buffer, SpendRow};
use crate::thread::Thread;
use crate::{schema, Command, DbSettings, DbStatus, LimitedMeters};
use std::cell::RefCell;
use tokio::sync::mpsc;
use tokio_postgres::Config;

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
            Command::Spend(rows) => rows.into_iter().for_each(|row| thread.buffer_row(row)),
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

pub(crate) async fn reconnect_loop(thread: Rc<Thread>) {
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

pub(crate) async fn listen_loop(thread: Rc<Thread>) {
    let mut first = true;
    loop {
        let this = thread.clone();
        let mut on_listening = || {
            // Notifications sent while no one listened are lost: forget every key.
            if !first {
                this.keys.borrow_mut().retire_where(|_| true);
                this.status.key_changes.fetch_add(1, Ordering::Relaxed);
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
pub(crate) async fn models_loop(thread: Rc<Thread>) {
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
pub(crate) async fn flush_loop(thread: Rc<Thread>) {
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

pub(crate) async fn flush_all(thread: &Rc<Thread>) {
    let mut writer = None;
    flush(thread, &mut writer).await;
}

/// Spend past `budget_reset_at` starts over (LiteLLM's reset job, on whichever instance gets
/// there first: the update is atomic per row), and every instance is told.
pub(crate) async fn reset_loop(thread: Rc<Thread>) {
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
                "WITH reset AS (UPDATE \"{table}\" SET spend = 0, budget_reset_at = {} \
                 WHERE budget_reset_at < (now() AT TIME ZONE 'UTC') \
                 AND lower(trim(budget_duration)) ~ '^([0-9]+(s|m|h|d|w|mo)|hourly|daily|weekly|monthly)$' \
                 RETURNING {id}) SELECT pg_notify('{}', '{kind}:' || {id}) FROM reset",
                crate::duration::next_reset_sql("budget_duration"),
                notify::CHANNEL
            );
            if let Err(e) = client.execute(&sql, &[]).await {
                eprintln!("pointwork: database: resetting budgets in {table} failed: {e}");
            }
        }
    }
}
