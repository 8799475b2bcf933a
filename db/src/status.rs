//! What the database thread reports: whether the database is reachable, and how its spend
//! writes go. Read by `/metrics`, readiness and `pointwork check`.

use std::fmt::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

#[derive(Debug, Default)]
pub struct DbStatus {
    pub connected: AtomicBool,
    /// Spend rows waiting to be written (in memory; the pending file holds the same).
    pub rows_pending: AtomicU64,
    pub rows_written: AtomicU64,
    /// Rows a full queue or buffer lost (their spend still counted locally).
    pub rows_dropped: AtomicU64,
    /// Batches the database refused or did not answer.
    pub write_failures: AtomicU64,
    pub lookups: AtomicU64,
    /// Keys the thread holds in memory.
    pub keys_cached: AtomicU64,
    /// Cached keys read again by a refresh, and those whose row it found changed (by a writer
    /// that did not notify, or a notification not yet arrived).
    pub keys_refreshed: AtomicU64,
    pub keys_changed_unannounced: AtomicU64,
    /// Key changes heard (a notification of a key, or listening again after a break): the
    /// shards remember a wrong key until the next one.
    pub key_changes: AtomicU64,
    pub last_error: Mutex<String>,
}

impl DbStatus {
    pub fn is_connected(&self) -> bool {
        self.connected.load(Ordering::Relaxed)
    }

    pub(crate) fn set_error(&self, error: &str) {
        if let Ok(mut last) = self.last_error.lock() {
            *last = error.to_string();
        }
    }

    pub fn last_error(&self) -> String {
        self.last_error.lock().map(|e| e.clone()).unwrap_or_default()
    }

    /// Prometheus lines.
    pub fn render(&self, out: &mut String) {
        let lines: [(&str, &str, &str, u64); 9] = [
            (
                "pointwork_db_up",
                "gauge",
                "1 while the database answers, 0 while it is away.",
                self.is_connected() as u64,
            ),
            (
                "pointwork_db_spend_rows_pending",
                "gauge",
                "Spend rows waiting to be written.",
                self.rows_pending.load(Ordering::Relaxed),
            ),
            (
                "pointwork_db_spend_rows_written_total",
                "counter",
                "Spend rows written to LiteLLM_SpendLogs.",
                self.rows_written.load(Ordering::Relaxed),
            ),
            (
                "pointwork_db_spend_rows_dropped_total",
                "counter",
                "Spend rows lost to a full queue (their spend was still counted).",
                self.rows_dropped.load(Ordering::Relaxed),
            ),
            (
                "pointwork_db_write_failures_total",
                "counter",
                "Spend batches the database refused or did not answer.",
                self.write_failures.load(Ordering::Relaxed),
            ),
            (
                "pointwork_db_key_lookups_total",
                "counter",
                "Keys looked up in the database.",
                self.lookups.load(Ordering::Relaxed),
            ),
            (
                "pointwork_db_keys_cached",
                "gauge",
                "Database keys held in memory.",
                self.keys_cached.load(Ordering::Relaxed),
            ),
            (
                "pointwork_db_keys_refreshed_total",
                "counter",
                "Cached keys read again from the database (user_api_key_cache_ttl).",
                self.keys_refreshed.load(Ordering::Relaxed),
            ),
            (
                "pointwork_db_keys_changed_unannounced_total",
                "counter",
                "Cached keys a refresh found changed or deleted without a notification.",
                self.keys_changed_unannounced.load(Ordering::Relaxed),
            ),
        ];
        for (name, kind, help, value) in lines {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}");
        }
    }
}
