//! A key's `allowed_cache_controls` (a `text[]` of `LiteLLM_VerificationToken`), read by the
//! database thread on a real PostgreSQL carrying LiteLLM's real schema.

#[path = "support/postgres.rs"]
mod postgres;

use std::time::{Duration, Instant};

use pointwork_db::{Database, DbSettings, Lookup};
use postgres::Postgres;
use sha2::{Digest, Sha256};

/// The key's record as the database thread reads it.
fn record_of(db: &Database, key: &str) -> pointwork_db::KeyRecord {
    let digest: [u8; 32] = Sha256::digest(key.as_bytes()).into();
    let mut rx = db.lookup(digest).expect("the queue has room");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match rx.try_recv() {
            Ok(Some(Lookup::Found(entry))) => return entry.record.clone(),
            Ok(Some(other)) => panic!("{key}: {other:?}"),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            other => panic!("no answer for {key}: {other:?}"),
        }
    }
}

#[test]
fn a_keys_allowed_cache_controls_are_read() {
    let pg = Postgres::start();
    let url = pg.litellm_database("cc");
    pg.insert_key("cc", "sk-limited-0001", ", allowed_cache_controls", ", ARRAY['no-cache', 'ttl']");
    pg.insert_key("cc", "sk-default-0002", "", "");
    pg.insert_key("cc", "sk-null-0003", ", allowed_cache_controls", ", NULL");
    let db = Database::start(DbSettings::new(url)).expect("database thread");

    assert_eq!(record_of(&db, "sk-limited-0001").allowed_cache_controls, ["no-cache", "ttl"]);
    // The column's default (an empty array) and NULL both allow any control (LiteLLM's reading).
    assert!(record_of(&db, "sk-default-0002").allowed_cache_controls.is_empty());
    assert!(record_of(&db, "sk-null-0003").allowed_cache_controls.is_empty());
}
