//! LiteLLM's schema, as far as Pointwork reads and writes it: the columns it needs (checked
//! once at start, with one error naming every missing column and the LiteLLM migration that
//! adds it), and `pointwork db init`, which creates those tables on an empty database.

use tokio_postgres::Client;

/// The tables `pointwork db init` creates: LiteLLM's DDL for them (`db/sql/init.sql`).
pub const INIT_SQL: &str = include_str!("../sql/init.sql");

/// The migration of LiteLLM's that every column below dates from, unless it names another.
const BASELINE: &str = "20250326162113_baseline";
/// The migration that adds object permissions (a key's MCP servers).
const MCP_PERMISSIONS: &str = "20250507184818_add_mcp_key_team_permission_mgmt";

/// Table → the columns read or written, each with the migration of `litellm-proxy-extras`
/// that adds it.
const REQUIRED: &[(&str, &[(&str, &str)])] = &[
    (
        "LiteLLM_VerificationToken",
        &[
            ("token", BASELINE),
            ("key_name", BASELINE),
            ("key_alias", BASELINE),
            ("spend", BASELINE),
            ("expires", BASELINE),
            ("models", BASELINE),
            ("aliases", BASELINE),
            ("user_id", BASELINE),
            ("team_id", BASELINE),
            ("max_parallel_requests", BASELINE),
            ("metadata", BASELINE),
            ("blocked", BASELINE),
            ("tpm_limit", BASELINE),
            ("rpm_limit", BASELINE),
            ("max_budget", BASELINE),
            ("budget_duration", BASELINE),
            ("budget_reset_at", BASELINE),
            ("model_spend", BASELINE),
            ("model_max_budget", BASELINE),
            ("object_permission_id", MCP_PERMISSIONS),
        ],
    ),
    (
        "LiteLLM_ObjectPermissionTable",
        &[
            ("object_permission_id", MCP_PERMISSIONS),
            ("mcp_servers", MCP_PERMISSIONS),
            ("mcp_access_groups", "20250711220620_add_stdio_mcp"),
            ("mcp_tool_permissions", "20251006143948_add_mcp_tool_permissions"),
        ],
    ),
    (
        "LiteLLM_TeamTable",
        &[
            ("team_id", BASELINE),
            ("team_alias", BASELINE),
            ("models", BASELINE),
            ("blocked", BASELINE),
            ("max_budget", BASELINE),
            ("spend", BASELINE),
            ("rpm_limit", BASELINE),
            ("tpm_limit", BASELINE),
            ("max_parallel_requests", BASELINE),
            ("budget_duration", BASELINE),
            ("budget_reset_at", BASELINE),
            ("model_max_budget", BASELINE),
        ],
    ),
    (
        "LiteLLM_UserTable",
        &[("user_id", BASELINE), ("max_budget", BASELINE), ("spend", BASELINE), ("model_max_budget", BASELINE)],
    ),
    (
        "LiteLLM_SpendLogs",
        &[
            ("request_id", BASELINE),
            ("call_type", BASELINE),
            ("api_key", BASELINE),
            ("spend", BASELINE),
            ("total_tokens", BASELINE),
            ("prompt_tokens", BASELINE),
            ("completion_tokens", BASELINE),
            ("startTime", BASELINE),
            ("endTime", BASELINE),
            ("model", BASELINE),
            ("model_id", BASELINE),
            ("model_group", BASELINE),
            ("custom_llm_provider", BASELINE),
            ("api_base", BASELINE),
            ("user", BASELINE),
            ("metadata", BASELINE),
            ("cache_hit", BASELINE),
            ("cache_key", BASELINE),
            ("request_tags", BASELINE),
            ("team_id", BASELINE),
            ("end_user", BASELINE),
            ("session_id", "20250425182129_add_session_id"),
            ("status", "20250508072103_add_status_to_spendlogs"),
            ("request_duration_ms", "20260224201417_spend_logs_request_duration"),
        ],
    ),
];

/// Checks that every column Pointwork needs is there; the error names each missing one.
pub async fn check(client: &Client) -> Result<(), String> {
    let tables: Vec<&str> = REQUIRED.iter().map(|(t, _)| *t).collect();
    let rows = client
        .query(
            "SELECT table_name::text, column_name::text FROM information_schema.columns \
             WHERE table_schema = current_schema() AND table_name = ANY($1)",
            &[&tables],
        )
        .await
        .map_err(|e| format!("database: cannot read the schema: {e}"))?;
    let present: std::collections::HashSet<(String, String)> =
        rows.iter().map(|r| (r.get::<_, String>(0), r.get::<_, String>(1))).collect();
    let missing = missing(&present);
    if missing.is_empty() {
        return Ok(());
    }
    Err(format!(
        "database: LiteLLM's schema is missing what Pointwork needs: {}. Apply LiteLLM's migrations \
         (the PyPI package litellm-proxy-extras; `litellm --use_prisma_migrate` does), or run \
         `pointwork db init` on an empty database",
        missing.join("; ")
    ))
}

fn missing(present: &std::collections::HashSet<(String, String)>) -> Vec<String> {
    let has_table = |t: &str| present.iter().any(|(table, _)| table == t);
    let mut missing = Vec::new();
    for (table, columns) in REQUIRED {
        if !has_table(table) {
            missing.push(format!("table \"{table}\" does not exist (LiteLLM's migration {BASELINE} creates it)"));
            continue;
        }
        for (column, migration) in *columns {
            if !present.contains(&(table.to_string(), column.to_string())) {
                missing.push(format!(
                    "table \"{table}\" has no column \"{column}\" (LiteLLM's migration {migration} adds it)"
                ));
            }
        }
    }
    missing
}

/// Creates the tables Pointwork uses (what exists is left as it is).
pub async fn init(client: &Client) -> Result<(), String> {
    client.batch_execute(INIT_SQL).await.map_err(|e| format!("database: pointwork db init failed: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_column_is_named_with_the_migration_that_adds_it() {
        let mut present = std::collections::HashSet::new();
        for (table, columns) in REQUIRED {
            for (column, _) in *columns {
                if *column != "status" {
                    present.insert((table.to_string(), column.to_string()));
                }
            }
        }
        assert_eq!(
            missing(&present),
            vec!["table \"LiteLLM_SpendLogs\" has no column \"status\" (LiteLLM's migration 20250508072103_add_status_to_spendlogs adds it)"]
        );
        present.retain(|(t, _)| t != "LiteLLM_UserTable");
        assert!(missing(&present)[0].starts_with("table \"LiteLLM_UserTable\" does not exist"));
    }
}
