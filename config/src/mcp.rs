//! LiteLLM's `mcp_servers`: the MCP servers the gateway offers behind `/mcp`, each under its
//! own name (`github-create_issue`), with the credential the gateway keeps for it.
//!
//! The types here are what the gateway reads; `read_mcp_servers` fills them from the file.

use std::time::Duration;

/// LiteLLM's default separator between a server's prefix and a tool's name
/// (`MCP_TOOL_PREFIX_SEPARATOR`).
pub const DEFAULT_SEPARATOR: &str = "-";
/// LiteLLM's default time for one call to an MCP server (`LITELLM_MCP_CLIENT_TIMEOUT`, 60 s).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// Every MCP server the config names, and how their names are joined.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct McpSettings {
    /// In the order written; the servers left out (with a warning each) are not here.
    pub servers: Vec<McpServer>,
    /// Between a server's prefix and a tool's, prompt's or resource's name: the environment's
    /// `MCP_TOOL_PREFIX_SEPARATOR`, else `-`. No server's prefix contains it, so a namespaced
    /// name splits back into server and tool one way only.
    pub separator: String,
}

/// One `mcp_servers.NAME` entry.
#[derive(Clone, Debug, PartialEq)]
pub struct McpServer {
    /// The key under `mcp_servers`.
    pub name: String,
    /// What its tools' names start with: `alias`, else the alias `litellm_settings.mcp_aliases`
    /// gives it, else `name`; spaces become `_` (LiteLLM's `normalize_server_name`).
    pub prefix: String,
    /// `server_id` when the entry pins one, else the id LiteLLM derives for it (the first 32 hex
    /// digits of the SHA-256 of `name|url|transport|auth_type|alias`), so a database key's
    /// object permission written by LiteLLM names the same server.
    pub server_id: String,
    /// `description` (or `mcp_info.description`).
    pub description: Option<String>,
    pub transport: McpTransport,
    /// `auth_type` with `auth_value` (or `authentication_token`).
    pub auth: McpAuth,
    /// `static_headers`: sent on every request to the server, after the credential.
    pub static_headers: Vec<(String, String)>,
    /// `extra_headers`: the names of the caller's headers passed on to the server as they came.
    pub forwarded_headers: Vec<String>,
    /// `allowed_tools`: only these of its tools are offered and callable; `None` = all.
    pub allowed_tools: Option<Vec<String>>,
    /// `disallowed_tools`: never offered, never callable.
    pub disallowed_tools: Vec<String>,
    /// `access_groups`: a key granted one of these groups may use the server.
    pub access_groups: Vec<String>,
    /// `allow_all_keys`: every key may use it, even one whose permissions name other servers.
    pub allow_all_keys: bool,
    /// `timeout` (seconds): how long one call may take, else [`DEFAULT_TIMEOUT`].
    pub timeout: Duration,
    /// Where it is in the file (`mcp_servers.github`), for messages.
    pub path: String,
}

/// How the gateway reaches a server.
#[derive(Clone, Debug, PartialEq)]
pub enum McpTransport {
    /// `transport: http` (the default): Streamable HTTP at `url`.
    Http { url: String },
    /// `transport: sse`: the older HTTP+SSE transport, the event stream at `url`.
    Sse { url: String },
    /// `transport: stdio`: a child process the gateway starts, speaking on its stdin/stdout.
    Stdio { command: String, args: Vec<String>, env: Vec<(String, String)> },
}

/// The credential the gateway sends a server (never the caller's key).
#[derive(Clone, Debug, PartialEq)]
pub enum McpAuth {
    /// `none`, or no `auth_type`.
    None,
    /// `bearer_token`: `Authorization: Bearer VALUE` (a `Bearer ` written in the file is not doubled).
    Bearer(String),
    /// `api_key`: `X-API-Key: VALUE`.
    ApiKey(String),
    /// `basic`: `Authorization: Basic VALUE`; `user:password` in the file is base64-encoded
    /// by the reader, `Basic <base64>` kept as its base64 (LiteLLM's `to_basic_credentials`).
    Basic(String),
    /// `token`: `Authorization: token VALUE` (a `token ` written in the file is not doubled).
    Token(String),
    /// `authorization`: `Authorization: VALUE` as written.
    Authorization(String),
}

impl McpAuth {
    /// The header this credential is sent in, name and value.
    pub fn header(&self) -> Option<(&'static str, String)> {
        match self {
            McpAuth::None => None,
            McpAuth::Bearer(v) => Some(("authorization", format!("Bearer {v}"))),
            McpAuth::ApiKey(v) => Some(("x-api-key", v.clone())),
            McpAuth::Basic(v) => Some(("authorization", format!("Basic {v}"))),
            McpAuth::Token(v) => Some(("authorization", format!("token {v}"))),
            McpAuth::Authorization(v) => Some(("authorization", v.clone())),
        }
    }
}

impl McpSettings {
    pub fn server(&self, name: &str) -> Option<&McpServer> {
        self.servers.iter().find(|s| s.name == name)
    }
}

impl McpServer {
    /// Whether a permission entry (a key's `mcp_servers` item) names this server: its name, its
    /// prefix, its server id, or one of its access groups.
    pub fn answers_to(&self, entry: &str) -> bool {
        entry == self.name
            || entry == self.prefix
            || entry == self.server_id
            || self.access_groups.iter().any(|g| g == entry)
    }

    /// Whether a key with these MCP permissions (`VirtualKey.mcp_servers`; `None` = every
    /// server) may use this server: `allow_all_keys`, or an entry that [answers to](Self::answers_to) it.
    pub fn allowed_for(&self, permissions: Option<&[String]>) -> bool {
        self.allow_all_keys || permissions.is_none_or(|entries| entries.iter().any(|e| self.answers_to(e)))
    }
}
