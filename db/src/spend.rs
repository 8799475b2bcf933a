//! Spend, written where LiteLLM keeps it: one `LiteLLM_SpendLogs` row per request, and the
//! cost added to the `spend` of the key (`LiteLLM_VerificationToken`), its team
//! (`LiteLLM_TeamTable`) and its user (`LiteLLM_UserTable`) — as increments, so that several
//! instances never overwrite each other.
//!
//! Exactly once: a batch is one transaction that inserts the rows with `ON CONFLICT
//! (request_id) DO NOTHING` and adds only the inserted rows' spend. A batch whose commit was
//! lost is sent again and adds nothing twice; so are the rows of the pending file after a
//! restart (rows written to the database just before a crash are in both).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet, VecDeque};
use std::io::{BufRead, Write};
use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tokio_postgres::Client;

use crate::account::KeyEntry;

/// One finished request's spend. What it repeats from request to request is shared, not
/// copied: the key's names ([`crate::KeyNames`], built with its entry) and the deployment's
/// ([`SpendPlace`], built with the routes), so a request fills in little more than numbers.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SpendRow {
    /// A UUID, drawn by the database thread as it takes the row in (empty until then).
    pub request_id: String,
    /// LiteLLM's call type: `acompletion`, `aembedding`, `anthropic_messages`, `aresponses`.
    pub call_type: Cow<'static, str>,
    /// The key's SHA-256 hex (`token`).
    pub api_key: Arc<str>,
    pub key_alias: Option<Arc<str>>,
    pub spend: f64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Unix milliseconds.
    pub start_ms: u64,
    pub end_ms: u64,
    /// The upstream model, as sent.
    pub model: Arc<str>,
    /// The deployment's id (`model_info.id`).
    pub model_id: Arc<str>,
    pub model_group: Arc<str>,
    pub custom_llm_provider: Arc<str>,
    pub api_base: Arc<str>,
    /// The request's `user` field (the end user).
    pub end_user: String,
    pub team_id: Option<Arc<str>>,
    pub user_id: Option<Arc<str>>,
    pub tags: Vec<String>,
    pub status: Cow<'static, str>,
    pub session_id: Option<String>,
    pub cache_hit: bool,
    /// The accounts the spend was charged to (not kept in the pending file: a restarted
    /// instance reads the spend from the database).
    #[serde(skip)]
    pub entry: Option<Arc<KeyEntry>>,
}

/// A deployment's names as its spend rows carry them.
#[derive(Clone, Debug, Default)]
pub struct SpendPlace {
    pub model: Arc<str>,
    pub model_id: Arc<str>,
    pub model_group: Arc<str>,
    pub custom_llm_provider: Arc<str>,
    pub api_base: Arc<str>,
}

/// The rows waiting to be written, oldest first.
#[derive(Default)]
pub(crate) struct Buffer {
    pub rows: VecDeque<SpendRow>,
    /// Whether the pending file holds what `rows` holds.
    pub saved: bool,
}

/// At most this many rows go in one transaction.
pub(crate) const BATCH: usize = 2_000;
/// At most this many rows wait in memory; beyond, the oldest rows' spend is still counted on
/// the accounts, but their log rows are dropped (and counted).
pub(crate) const BUFFER_MAX: usize = 500_000;

const INSERT: &str = r#"
INSERT INTO "LiteLLM_SpendLogs" (request_id, call_type, api_key, spend, total_tokens, prompt_tokens,
    completion_tokens, "startTime", "endTime", request_duration_ms, model, model_id, model_group,
    custom_llm_provider, api_base, "user", metadata, cache_hit, cache_key, request_tags, team_id,
    end_user, session_id, status)
SELECT r, ct, k, s, (pt + ctok)::int, pt::int, ctok::int,
       to_timestamp(st) AT TIME ZONE 'UTC', to_timestamp(et) AT TIME ZONE 'UTC', ((et - st) * 1000)::int,
       m, mid, mg, p, ab, u, md::jsonb, ch, '', tg::jsonb, tm, NULLIF(u, ''), sid, stat
FROM unnest($1::text[], $2::text[], $3::text[], $4::float8[], $5::int8[], $6::int8[], $7::float8[],
            $8::float8[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[],
            $15::text[], $16::text[], $17::text[], $18::text[], $19::text[], $20::text[])
     AS x(r, ct, k, s, pt, ctok, st, et, m, mid, mg, p, ab, u, md, ch, tg, tm, sid, stat)
ON CONFLICT (request_id) DO NOTHING
RETURNING request_id"#;

const ADD_KEY_SPEND: &str = r#"
UPDATE "LiteLLM_VerificationToken" AS t SET spend = t.spend + d.amount
FROM unnest($1::text[], $2::float8[]) AS d(id, amount) WHERE t.token = d.id
RETURNING t.token, t.spend"#;
const ADD_TEAM_SPEND: &str = r#"
UPDATE "LiteLLM_TeamTable" AS t SET spend = t.spend + d.amount
FROM unnest($1::text[], $2::float8[]) AS d(id, amount) WHERE t.team_id = d.id
RETURNING t.team_id, t.spend"#;
const ADD_USER_SPEND: &str = r#"
UPDATE "LiteLLM_UserTable" AS t SET spend = t.spend + d.amount
FROM unnest($1::text[], $2::float8[]) AS d(id, amount) WHERE t.user_id = d.id
RETURNING t.user_id, t.spend"#;

/// What a written batch left in the database: each account's spend now.
#[derive(Default)]
pub(crate) struct Totals {
    pub keys: HashMap<String, f64>,
    pub teams: HashMap<String, f64>,
    pub users: HashMap<String, f64>,
    /// Keys whose spend crossed their budget with this batch (the other instances are told).
    pub crossed: Vec<String>,
}

/// Writes `rows` in one transaction; returns the accounts' new spend.
pub(crate) async fn write(client: &mut Client, rows: &[SpendRow]) -> Result<Totals, tokio_postgres::Error> {
    let tx = client.transaction().await?;
    // Borrowed columns: the rows' strings go to the wire as they are.
    let text = |f: fn(&SpendRow) -> &str| rows.iter().map(f).collect::<Vec<&str>>();
    let ids = text(|r| &r.request_id);
    let metadata = rows.iter().map(metadata).collect::<Vec<String>>();
    let tags = rows.iter().map(|r| serde_json::to_string(&r.tags).unwrap_or_default()).collect::<Vec<String>>();
    let inserted = tx
        .query(
            INSERT,
            &[
                &ids,
                &text(|r| &r.call_type),
                &text(|r| &r.api_key),
                &rows.iter().map(|r| r.spend).collect::<Vec<f64>>(),
                &rows.iter().map(|r| r.prompt_tokens as i64).collect::<Vec<i64>>(),
                &rows.iter().map(|r| r.completion_tokens as i64).collect::<Vec<i64>>(),
                &rows.iter().map(|r| r.start_ms as f64 / 1000.0).collect::<Vec<f64>>(),
                &rows.iter().map(|r| r.end_ms as f64 / 1000.0).collect::<Vec<f64>>(),
                &text(|r| &r.model),
                &text(|r| &r.model_id),
                &text(|r| &r.model_group),
                &text(|r| &r.custom_llm_provider),
                &text(|r| &r.api_base),
                &text(|r| &r.end_user),
                &metadata,
                &text(|r| if r.cache_hit { "True" } else { "False" }),
                &tags,
                &rows.iter().map(|r| r.team_id.as_deref()).collect::<Vec<Option<&str>>>(),
                &rows.iter().map(|r| r.session_id.as_deref()).collect::<Vec<Option<&str>>>(),
                &text(|r| &r.status),
            ],
        )
        .await?;
    let inserted: HashSet<String> = inserted.iter().map(|row| row.get(0)).collect();
    let mut sums: [HashMap<&str, f64>; 3] = Default::default();
    for r in rows.iter().filter(|r| inserted.contains(&r.request_id) && r.spend > 0.0) {
        *sums[0].entry(&r.api_key).or_default() += r.spend;
        if let Some(team) = &r.team_id {
            *sums[1].entry(team).or_default() += r.spend;
        }
        if let Some(user) = &r.user_id {
            *sums[2].entry(user).or_default() += r.spend;
        }
    }
    let mut totals = Totals::default();
    for (i, (sql, into)) in
        [(ADD_KEY_SPEND, &mut totals.keys), (ADD_TEAM_SPEND, &mut totals.teams), (ADD_USER_SPEND, &mut totals.users)]
            .into_iter()
            .enumerate()
    {
        if sums[i].is_empty() {
            continue;
        }
        let (names, amounts): (Vec<&str>, Vec<f64>) = sums[i].iter().map(|(k, v)| (*k, *v)).unzip();
        for row in tx.query(sql, &[&names, &amounts]).await? {
            into.insert(row.get(0), row.get(1));
        }
    }
    // Tell the other instances of every key that crossed its budget with this batch.
    for r in rows {
        let (Some(entry), Some(total)) = (&r.entry, totals.keys.get(&*r.api_key)) else { continue };
        let Some(max) = entry.record.max_budget else { continue };
        let before = total - sums[0].get(&*r.api_key).copied().unwrap_or(0.0);
        if before < max && *total >= max && !totals.crossed.iter().any(|t| **t == *r.api_key) {
            totals.crossed.push(r.api_key.to_string());
        }
    }
    for token in &totals.crossed {
        tx.execute("SELECT pg_notify($1, $2)", &[&crate::notify::CHANNEL, &format!("key:{token}")]).await?;
    }
    tx.commit().await?;
    Ok(totals)
}

/// Settles the accounts of written rows: their charges are in the database now.
pub(crate) fn settle(rows: &[SpendRow], totals: &Totals) {
    for r in rows {
        let Some(entry) = &r.entry else { continue };
        let known = |map: &HashMap<String, f64>, id: Option<&str>| id.and_then(|id| map.get(id).copied());
        if let Some(total) = known(&totals.keys, Some(&r.api_key)) {
            entry.key.written(r.spend, total);
        }
        if let (Some(team), Some(total)) = (&entry.team, known(&totals.teams, r.team_id.as_deref())) {
            team.written(r.spend, total);
        }
        if let (Some(user), Some(total)) = (&entry.user, known(&totals.users, r.user_id.as_deref())) {
            user.written(r.spend, total);
        }
    }
}

/// The row's `metadata`, with the keys LiteLLM's spend views read.
/// The row's `metadata` column: LiteLLM's names for the key, team, user and group.
fn metadata(r: &SpendRow) -> String {
    #[derive(Serialize)]
    struct Metadata<'r> {
        user_api_key: &'r str,
        user_api_key_alias: Option<&'r str>,
        user_api_key_team_id: Option<&'r str>,
        user_api_key_user_id: Option<&'r str>,
        model_group: &'r str,
        status: &'r str,
        gateway: &'static str,
    }
    serde_json::to_string(&Metadata {
        user_api_key: &r.api_key,
        user_api_key_alias: r.key_alias.as_deref(),
        user_api_key_team_id: r.team_id.as_deref(),
        user_api_key_user_id: r.user_id.as_deref(),
        model_group: &r.model_group,
        status: &r.status,
        gateway: "pointwork",
    })
    .unwrap_or_default()
}

/// Reads the pending file (one JSON row per line; a missing file is an empty one).
pub(crate) fn read_pending(path: &Path) -> Result<Vec<SpendRow>, String> {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let mut rows = Vec::new();
    for (n, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| format!("{}: {e}", path.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        let row = serde_json::from_str(&line).map_err(|e| {
            format!("{} line {}: not a spend row ({e}); move the file away to start over", path.display(), n + 1)
        })?;
        rows.push(row);
    }
    Ok(rows)
}

/// Replaces the pending file with `rows` (a new owner-only file renamed over the old one).
pub(crate) fn write_pending(path: &Path, rows: &VecDeque<SpendRow>) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    if rows.is_empty() {
        return match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        };
    }
    let mut temp = path.as_os_str().to_owned();
    temp.push(format!(".{}.tmp", std::process::id()));
    let temp = std::path::PathBuf::from(temp);
    let _ = std::fs::remove_file(&temp);
    let file = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&temp)?;
    let mut out = std::io::BufWriter::new(file);
    for row in rows {
        serde_json::to_writer(&mut out, row)?;
        out.write_all(b"\n")?;
    }
    let file = out.into_inner().map_err(|e| e.into_error())?;
    file.sync_all()?;
    std::fs::rename(&temp, path)
}
