//! Statements built with their parameters: each change is ONE statement (data-modifying CTEs
//! plus its `pg_notify`), because the management connection is shared with key lookups and
//! other calls, so a BEGIN … COMMIT spanning several round trips would take them in.

use serde_json::Value;
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{Client, Row};

use super::common::{channel, db_error, prefix};
use super::ManageReply;

/// Parameters in the order they were bound, each with its type (sent with the statement:
/// a parameter a statement happens not to use is no error); the `bind` methods return the
/// placeholder, cast.
#[derive(Default)]
pub(crate) struct Params(Vec<(Box<dyn ToSql + Sync + Send>, Type)>);

impl Params {
    fn push(&mut self, value: Box<dyn ToSql + Sync + Send>, ty: Type, cast: &str) -> String {
        self.0.push((value, ty));
        format!("(${}::{cast})", self.0.len())
    }

    pub(crate) fn json(&mut self, value: Value) -> String {
        self.push(Box::new(value), Type::JSONB, "jsonb")
    }

    pub(crate) fn text(&mut self, value: impl Into<String>) -> String {
        self.push(Box::new(value.into()), Type::TEXT, "text")
    }

    pub(crate) fn opt_text(&mut self, value: Option<String>) -> String {
        self.push(Box::new(value), Type::TEXT, "text")
    }

    pub(crate) fn texts(&mut self, value: Vec<String>) -> String {
        self.push(Box::new(value), Type::TEXT_ARRAY, "text[]")
    }

    pub(crate) fn bool(&mut self, value: bool) -> String {
        self.push(Box::new(value), Type::BOOL, "boolean")
    }

    pub(crate) fn int(&mut self, value: i64) -> String {
        self.push(Box::new(value), Type::INT8, "int8")
    }

    /// `pg_notify(channel, '<kind>:' || id_sql)`, as a text column (void cannot be read).
    pub(crate) fn notify(&mut self, kind: &str, id_sql: &str) -> String {
        let channel = self.text(channel());
        let prefix = self.text(prefix(kind));
        format!("pg_notify({channel}, {prefix} || {id_sql})::text")
    }

    /// `pg_notify(channel, 'models')`: the stored models changed.
    pub(crate) fn notify_models(&mut self) -> String {
        let channel = self.text(channel());
        let payload = self.text(crate::notify::Change::Models.payload());
        format!("pg_notify({channel}, {payload})::text")
    }

    pub(crate) async fn query(&self, client: &Client, sql: &str) -> Result<Vec<Row>, ManageReply> {
        let typed: Vec<(&(dyn ToSql + Sync), Type)> =
            self.0.iter().map(|(v, t)| (v.as_ref() as &(dyn ToSql + Sync), t.clone())).collect();
        client.query_typed(sql, &typed).await.map_err(db_error)
    }
}

/// Runs a statement without parameters of its own.
pub(crate) async fn query(client: &Client, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>, ManageReply> {
    client.query(sql, params).await.map_err(db_error)
}

/// The verification token table, quoted.
pub(crate) const KEYS: &str = "\"LiteLLM_VerificationToken\"";
pub(crate) const TEAMS: &str = "\"LiteLLM_TeamTable\"";
pub(crate) const USERS: &str = "\"LiteLLM_UserTable\"";
pub(crate) const DELETED_KEYS: &str = "\"LiteLLM_DeletedVerificationToken\"";

/// A CTE that copies the rows of CTE `source` (deleted or rotated keys) into LiteLLM's
/// `LiteLLM_DeletedVerificationToken`, as LiteLLM does, so `/key/info` can still say
/// "deleted". Through `jsonb_populate_record`, so that columns one schema version has and
/// the other lacks do not matter. `None` when that table does not exist (older schemas).
pub(crate) async fn archive_cte(
    client: &Client,
    params: &mut Params,
    source: &str,
    caller: &str,
) -> Result<Option<String>, ManageReply> {
    if !has_archive(client).await? {
        return Ok(None);
    }
    let by = params.text(caller);
    Ok(Some(format!(
        "archived AS (INSERT INTO {DELETED_KEYS} SELECT (jsonb_populate_record(NULL::{DELETED_KEYS}, to_jsonb(s) || \
         jsonb_build_object('id', gen_random_uuid()::text, 'deleted_at', {}, 'deleted_by', {by}))).* FROM {source} s)",
        super::fields::NOW
    )))
}

/// Whether `LiteLLM_DeletedVerificationToken` exists (it came with a later LiteLLM migration).
pub(crate) async fn has_archive(client: &Client) -> Result<bool, ManageReply> {
    let sql = format!("SELECT to_regclass('{DELETED_KEYS}') IS NOT NULL");
    let rows = query(client, &sql, &[]).await?;
    Ok(rows.first().is_some_and(|r| r.get::<_, bool>(0)))
}
