//! A key's MCP permissions as LiteLLM keeps them (`LiteLLM_ObjectPermissionTable`, the key
//! row's `object_permission_id`), read by the database thread on a real PostgreSQL carrying
//! LiteLLM's real schema.

#[path = "support/postgres.rs"]
mod postgres;

use std::time::{Duration, Instant};

use pointwork_db::{Database, DbSettings, Lookup};
use postgres::Postgres;
use sha2::{Digest, Sha256};

/// The key's MCP servers as the database thread reads them.
fn mcp_servers_of(db: &Database, key: &str) -> Option<Vec<String>> {
    record_of(db, key).mcp_servers
}

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
fn a_keys_object_permission_names_its_mcp_servers() {
    let pg = Postgres::start();
    let url = pg.litellm_database("mcp");
    pg.psql(
        "mcp",
        "INSERT INTO \"LiteLLM_ObjectPermissionTable\" (object_permission_id, mcp_servers, mcp_access_groups, mcp_tool_permissions) VALUES \
         ('p-servers', ARRAY['d7ae332d01f2fb4e2ec4912da756f5a2', 'wiki'], ARRAY['dev-tools'], '{\"jira\": [\"create_issue\"]}'), \
         ('p-empty', ARRAY[]::text[], ARRAY[]::text[], NULL), \
         ('p-none', ARRAY['no-mcp-servers'], ARRAY[]::text[], NULL)",
    );
    pg.insert_key("mcp", "sk-servers-0001", ", object_permission_id", ", 'p-servers'");
    pg.insert_key("mcp", "sk-empty-0002", ", object_permission_id", ", 'p-empty'");
    pg.insert_key("mcp", "sk-none-0003", ", object_permission_id", ", 'p-none'");
    pg.insert_key("mcp", "sk-plain-0004", "", "");
    let db = Database::start(DbSettings::new(url)).expect("database thread");

    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert_eq!(
        mcp_servers_of(&db, "sk-servers-0001"),
        Some(s(&["d7ae332d01f2fb4e2ec4912da756f5a2", "wiki", "dev-tools", "jira"]))
    );
    // The tool list limits the tools on its server.
    assert_eq!(record_of(&db, "sk-servers-0001").mcp_tools, vec![("jira".to_string(), s(&["create_issue"]))]);
    assert!(record_of(&db, "sk-plain-0004").mcp_tools.is_empty());
    // An empty permission and none at all restrict nothing (LiteLLM's reading).
    assert_eq!(mcp_servers_of(&db, "sk-empty-0002"), None);
    assert_eq!(mcp_servers_of(&db, "sk-plain-0004"), None);
    // LiteLLM's opt-out.
    assert_eq!(mcp_servers_of(&db, "sk-none-0003"), Some(vec![]));
}
