//! Which MCP servers a request reaches: those its key may use (a virtual key's `mcp_servers`
//! names servers, their prefixes, ids or access groups; a server with `allow_all_keys` is open
//! to every key), narrowed to the servers its path (`/mcp/a,b`, `/a/mcp`) or `x-mcp-servers`
//! header names.

use pointwork_config::{McpServer, McpSettings};

use crate::keys::Caller;

/// Whether `caller` may use `server`.
pub fn may_use(caller: &Caller, server: &McpServer) -> bool {
    server.allowed_for(caller.virtual_key().and_then(|k| k.mcp_servers.as_deref()))
}

/// LiteLLM's entry of a key's tool list that grants every tool.
const ALL_TOOLS: &str = "*";

/// Whether `caller` may call `tool` (its own name) on `server`: the server's `allowed_tools` /
/// `disallowed_tools`, then the key's tool lists for that server (`mcp_tool_permissions`), if
/// any name it.
pub fn may_call(settings: &McpSettings, caller: &Caller, server: &McpServer, tool: &str) -> bool {
    if !crate::mcp::names::tool_allowed(settings, server, tool) {
        return false;
    }
    let Some(key) = caller.virtual_key() else { return true };
    let mut lists = key.mcp_tools.iter().filter(|(entry, _)| server.answers_to(entry)).peekable();
    lists.peek().is_none() || lists.any(|(_, tools)| tools.iter().any(|t| t == tool || t == ALL_TOOLS))
}

/// The servers a comma-separated scope names (by name, prefix or server id), or the name that
/// is none.
pub fn scoped<'s>(settings: &'s McpSettings, scope: &str) -> Result<Vec<&'s McpServer>, String> {
    let mut out: Vec<&McpServer> = Vec::new();
    for wanted in scope.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        match settings.servers.iter().find(|s| s.name == wanted || s.prefix == wanted || s.server_id == wanted) {
            Some(s) if !out.iter().any(|o| o.name == s.name) => out.push(s),
            Some(_) => {}
            None => return Err(wanted.to_string()),
        }
    }
    Ok(out)
}

/// The servers a request reaches: its scope's (every server without one) that its key may use.
pub fn reachable<'s>(settings: &'s McpSettings, caller: &Caller, scope: Option<&[String]>) -> Vec<&'s McpServer> {
    settings
        .servers
        .iter()
        .filter(|s| scope.is_none_or(|names| names.contains(&s.name)))
        .filter(|s| may_use(caller, s))
        .collect()
}
