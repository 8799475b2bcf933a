//! Reading a key with its team and user: one query, LiteLLM's columns.

use std::collections::HashMap;

use serde_json::Value;
use tokio_postgres::Row;

use crate::account::{KeyRecord, TeamRecord};

/// Keys' rows joined with their teams' and users', by `token` (any of $1, a `text[]`): one
/// key looked up, or many read again.
pub(crate) const SELECT_KEYS: &str = r#"
SELECT k.token, k.key_alias, k.key_name, k.models, COALESCE(k.blocked, false) AS blocked,
       extract(epoch FROM k.expires)::float8 AS expires, k.max_budget, k.budget_duration,
       k.rpm_limit, k.tpm_limit, k.max_parallel_requests, k.model_max_budget, k.model_spend,
       k.aliases, k.metadata, k.user_id, k.spend, k.allowed_cache_controls,
       t.team_id, t.team_alias, t.models AS team_models, t.blocked AS team_blocked,
       t.max_budget AS team_max_budget, t.rpm_limit AS team_rpm_limit, t.tpm_limit AS team_tpm_limit,
       t.max_parallel_requests AS team_max_parallel_requests, t.spend AS team_spend,
       t.model_max_budget AS team_model_max_budget,
       u.max_budget AS user_max_budget, u.spend AS user_spend, u.model_max_budget AS user_model_max_budget,
       op.mcp_servers, op.mcp_access_groups, op.mcp_tool_permissions
FROM "LiteLLM_VerificationToken" k
LEFT JOIN "LiteLLM_TeamTable" t ON t.team_id = k.team_id
LEFT JOIN "LiteLLM_UserTable" u ON u.user_id = k.user_id
LEFT JOIN "LiteLLM_ObjectPermissionTable" op ON op.object_permission_id = k.object_permission_id
WHERE k.token = ANY($1)"#;

pub(crate) fn record(row: &Row) -> KeyRecord {
    let token: String = row.get("token");
    let key_alias: Option<String> = row.get("key_alias");
    let key_name: Option<String> = row.get("key_name");
    let name = key_alias.clone().or(key_name.clone()).unwrap_or_else(|| format!("{}…", &token[..token.len().min(8)]));
    let metadata: Option<Value> = row.get("metadata");
    let team = row.get::<_, Option<String>>("team_id").map(|team_id| TeamRecord {
        team_id,
        team_alias: row.get("team_alias"),
        models: row.get::<_, Option<Vec<String>>>("team_models").unwrap_or_default(),
        blocked: row.get::<_, Option<bool>>("team_blocked").unwrap_or(false),
        max_budget: row.get("team_max_budget"),
        rpm_limit: limit(row.get("team_rpm_limit")),
        tpm_limit: limit(row.get("team_tpm_limit")),
        max_parallel_requests: limit(row.get::<_, Option<i32>>("team_max_parallel_requests").map(i64::from)),
        model_max_budget: crate::model_budget::parse(row.get("team_model_max_budget")),
    });
    KeyRecord {
        name,
        key_alias,
        key_name,
        models: row.get::<_, Option<Vec<String>>>("models").unwrap_or_default(),
        blocked: row.get("blocked"),
        expires: row.get("expires"),
        max_budget: row.get("max_budget"),
        budget_duration: row.get("budget_duration"),
        rpm_limit: limit(row.get("rpm_limit")),
        tpm_limit: limit(row.get("tpm_limit")),
        max_parallel_requests: limit(row.get::<_, Option<i32>>("max_parallel_requests").map(i64::from)),
        model_max_budget: crate::model_budget::parse(row.get("model_max_budget")),
        model_spend: numbers(row.get("model_spend")),
        aliases: strings(row.get("aliases")),
        tags: metadata.as_ref().map(tags).unwrap_or_default(),
        user_id: row.get("user_id"),
        user_max_budget: row.get("user_max_budget"),
        user_model_max_budget: crate::model_budget::parse(row.get("user_model_max_budget")),
        spend: row.get::<_, Option<f64>>("spend").unwrap_or(0.0),
        team_spend: row.get::<_, Option<f64>>("team_spend").unwrap_or(0.0),
        user_spend: row.get::<_, Option<f64>>("user_spend").unwrap_or(0.0),
        mcp_servers: mcp_permissions(
            row.get::<_, Option<Vec<String>>>("mcp_servers").unwrap_or_default(),
            row.get::<_, Option<Vec<String>>>("mcp_access_groups").unwrap_or_default(),
            row.get("mcp_tool_permissions"),
        ),
        mcp_tools: mcp_tool_lists(row.get("mcp_tool_permissions")),
        allowed_cache_controls: row.get::<_, Option<Vec<String>>>("allowed_cache_controls").unwrap_or_default(),
        team,
        token,
    }
}

/// LiteLLM's opt-out entry in a key's `mcp_servers`: no server at all.
const NO_MCP_SERVERS: &str = "no-mcp-servers";

/// A key's MCP permissions from its object permission: the servers (LiteLLM's server ids, or
/// names and aliases), the access groups, and the servers its `mcp_tool_permissions` name (the
/// whole server: tool-level limits are not applied yet). All empty = every server (LiteLLM: an
/// empty level does not restrict); `no-mcp-servers` = none.
fn mcp_permissions(servers: Vec<String>, groups: Vec<String>, tool_permissions: Option<Value>) -> Option<Vec<String>> {
    if servers.iter().any(|s| s == NO_MCP_SERVERS) {
        return Some(Vec::new());
    }
    let by_tools = match tool_permissions {
        Some(Value::Object(map)) => map.into_iter().map(|(server, _)| server).collect(),
        _ => Vec::new(),
    };
    let mut all: Vec<String> = Vec::new();
    for entry in servers.into_iter().chain(groups).chain(by_tools) {
        if !all.contains(&entry) {
            all.push(entry);
        }
    }
    (!all.is_empty()).then_some(all)
}

/// `mcp_tool_permissions` (`{"server": ["tool", …]}`): each server's tool list; a value that is
/// not a list of strings grants no tool on that server (LiteLLM's lists are checked on write).
fn mcp_tool_lists(tool_permissions: Option<Value>) -> Vec<(String, Vec<String>)> {
    let Some(Value::Object(map)) = tool_permissions else { return Vec::new() };
    map.into_iter()
        .map(|(server, tools)| {
            let tools = tools.as_array().map(|t| t.iter().filter_map(|t| t.as_str().map(str::to_string)).collect());
            (server, tools.unwrap_or_default())
        })
        .collect()
}

/// A limit column: NULL or negative = none.
fn limit(value: Option<i64>) -> Option<u64> {
    value.and_then(|v| u64::try_from(v).ok())
}

fn numbers(value: Option<Value>) -> HashMap<String, f64> {
    let Some(Value::Object(map)) = value else { return HashMap::new() };
    map.into_iter().filter_map(|(k, v)| Some((k, v.as_f64()?))).collect()
}

fn strings(value: Option<Value>) -> HashMap<String, String> {
    let Some(Value::Object(map)) = value else { return HashMap::new() };
    map.into_iter().filter_map(|(k, v)| Some((k, v.as_str()?.to_string()))).collect()
}

fn tags(metadata: &Value) -> Vec<String> {
    let Some(Value::Array(tags)) = metadata.get("tags") else { return Vec::new() };
    tags.iter().filter_map(|t| t.as_str().map(str::to_string)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcp_permissions_read_as_litellm_reads_them() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(mcp_permissions(vec![], vec![], None), None);
        assert_eq!(mcp_permissions(vec![], vec![], Some(serde_json::json!({}))), None);
        assert_eq!(mcp_permissions(s(&["no-mcp-servers", "a"]), s(&["g"]), None), Some(vec![]));
        let tools = serde_json::json!({"c": ["create_issue"]});
        assert_eq!(mcp_permissions(s(&["a"]), s(&["g"]), Some(tools.clone())), Some(s(&["a", "g", "c"])));
        assert_eq!(mcp_tool_lists(Some(tools)), vec![("c".to_string(), s(&["create_issue"]))]);
        assert_eq!(mcp_tool_lists(Some(serde_json::json!({"d": "x"}))), vec![("d".to_string(), vec![])]);
        assert!(mcp_tool_lists(None).is_empty());
    }
}
