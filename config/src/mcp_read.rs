//! Reading LiteLLM's top-level `mcp_servers` map (and `litellm_settings.mcp_aliases`) into
//! [`McpSettings`], as LiteLLM's `load_servers_from_config` reads it. A server that needs what
//! Pointwork does not serve yet (OAuth, SigV4, OpenAPI specs…) is left out with one warning; a
//! key LiteLLM does not know is an error.

use std::time::Duration;

use crate::check::{Checker, Fields, KeyPath};
use crate::kinds::{self, Kind};
use crate::mcp::{McpAuth, McpServer, McpSettings, McpTransport, DEFAULT_SEPARATOR, DEFAULT_TIMEOUT};
use crate::mcp_values::{auth, derived_server_id, header_names, string_map, url};
use crate::node::Node;

/// The top-level section.
pub(crate) const MCP_SERVERS: &str = "mcp_servers";
/// `litellm_settings.mcp_aliases`: alias → server name.
pub(crate) const MCP_ALIASES: &str = "mcp_aliases";
/// The `litellm_settings` keys read here (the router's reader leaves them alone).
pub(crate) const LITELLM_SETTINGS_KEYS: [&str; 1] = [MCP_ALIASES];
/// LiteLLM's environment variable for the separator between a server's prefix and a tool's name.
const SEPARATOR_ENV: &str = "MCP_TOOL_PREFIX_SEPARATOR";
/// LiteLLM's environment variable for a call's default timeout (seconds).
const TIMEOUT_ENV: &str = "LITELLM_MCP_CLIENT_TIMEOUT";

/// The keys of an entry Pointwork serves.
const SERVED: [&str; 19] = [
    "url",
    "transport",
    "command",
    "args",
    "env",
    "auth_type",
    "auth_value",
    "authentication_token",
    "static_headers",
    "extra_headers",
    "allowed_tools",
    "disallowed_tools",
    "access_groups",
    "allow_all_keys",
    "timeout",
    "description",
    "mcp_info",
    "alias",
    "server_id",
];

/// LiteLLM's keys that change how a server is reached or who may use it, which Pointwork does not
/// serve yet: a server that sets one (to anything but null or false) is left out. Each with what
/// it asks for, for the warning.
const NOT_SERVED: [(&str, &str); 44] = [
    ("spec_path", "an OpenAPI spec served as MCP tools"),
    ("delegate_auth_to_upstream", "delegating the caller's OAuth to the server"),
    ("oauth_passthrough", "passing the caller's OAuth token through"),
    ("oauth2_flow", "OAuth 2.0"),
    ("client_id", "OAuth 2.0"),
    ("client_secret", "OAuth 2.0"),
    ("issuer", "OAuth 2.0"),
    ("authorization_url", "OAuth 2.0"),
    ("token_url", "OAuth 2.0"),
    ("registration_url", "OAuth 2.0"),
    ("token_endpoint_auth_method", "OAuth 2.0"),
    ("scopes", "OAuth 2.0"),
    ("dcr_bridge", "OAuth 2.0 dynamic client registration"),
    ("per_server_oauth_discovery", "OAuth 2.0 discovery"),
    ("token_validation", "OAuth token validation"),
    ("oauth_identity_binding", "OAuth identity binding"),
    ("aws_access_key_id", "AWS SigV4 signing"),
    ("aws_secret_access_key", "AWS SigV4 signing"),
    ("aws_session_token", "AWS SigV4 signing"),
    ("aws_region_name", "AWS SigV4 signing"),
    ("aws_service_name", "AWS SigV4 signing"),
    ("aws_role_name", "AWS SigV4 signing"),
    ("aws_session_name", "AWS SigV4 signing"),
    ("token_exchange_endpoint", "OAuth token exchange"),
    ("token_exchange_profile", "OAuth token exchange"),
    ("audience", "OAuth token exchange"),
    ("subject_token_type", "OAuth token exchange"),
    ("upstream_resource", "OAuth token exchange"),
    ("upstream_token_header", "OAuth token exchange"),
    ("id_jag_resource_token_endpoint", "OAuth ID-JAG"),
    ("id_jag_resource", "OAuth ID-JAG"),
    ("id_jag_subject_source", "OAuth ID-JAG"),
    ("id_jag_resource_client_id", "OAuth ID-JAG"),
    ("id_jag_resource_client_secret", "OAuth ID-JAG"),
    ("client_private_key", "OAuth client assertions"),
    ("client_private_key_id", "OAuth client assertions"),
    ("client_assertion_signing_alg", "OAuth client assertions"),
    ("allow_sampling", "sampling requests from the server"),
    ("allow_elicitation", "elicitation requests from the server"),
    ("env_vars", "per-user variables in headers"),
    ("allowed_params", "per-tool parameter limits"),
    ("pinned_tools", "a pinned tool catalog"),
    ("rpm", "a server's request rate limit"),
    ("max_concurrent_requests", "a server's concurrency limit"),
];

/// LiteLLM's keys Pointwork reads past: `protocol_version` (Pointwork negotiates the version
/// itself; the value is still checked), `available_on_public_internet` (true, the default, is
/// what Pointwork does; false leaves the server out), `instructions` (warned: not passed on).
const PASSED: [&str; 3] = ["protocol_version", "available_on_public_internet", "instructions"];

/// `auth_type`s LiteLLM knows that Pointwork does not serve yet.
const AUTH_NOT_SERVED: [&str; 6] =
    ["oauth2", "aws_sigv4", "oauth2_token_exchange", "oauth2_id_jag", "true_passthrough", "oauth_delegate"];

/// The protocol versions LiteLLM accepts in `protocol_version`.
const PROTOCOL_VERSIONS: [&str; 6] = ["auto", "2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"];

/// A server the config names but Pointwork leaves out; a key may still name it (a warning).
pub(crate) struct LeftOutServer {
    pub(crate) name: String,
    pub(crate) access_groups: Vec<String>,
}

/// What `mcp_servers` gave: the servers served and the ones left out.
#[derive(Default)]
pub(crate) struct McpRead {
    pub(crate) settings: McpSettings,
    pub(crate) left_out: Vec<LeftOutServer>,
}

/// Reads `mcp_servers` (its node and path) with `litellm_settings.mcp_aliases` (the section's
/// node and path).
pub(crate) fn read_mcp_servers(
    c: &mut Checker,
    section: Option<(&Node, KeyPath)>,
    litellm_settings: Option<(&Node, KeyPath)>,
) -> McpRead {
    let mut read = McpRead::default();
    read.settings.separator = DEFAULT_SEPARATOR.into();
    let Some((node, path)) = section.filter(|(n, _)| !matches!(n, Node::Null)) else { return read };
    let Some(mut entries) = c.map(node, path) else { return read };
    read.settings.separator = separator(c);
    let timeout = default_timeout(c);
    let mut aliases = read_aliases(c, litellm_settings);
    let names: Vec<(&str, &Node, KeyPath)> = entries.untaken().collect();
    for (name, node, path) in names {
        entries.take(name);
        if name.trim().is_empty() {
            c.error(&path, "a server needs a name");
            continue;
        }
        if name.contains(&read.settings.separator) {
            let sep = &read.settings.separator;
            c.error(&path, format!("the name contains the tool separator {sep:?} ({SEPARATOR_ENV}), which would make the names of its tools ambiguous: use another character (LiteLLM refuses it too)"));
        }
        let Some(fields) = c.map(node, path.clone()) else { continue };
        match read_server(c, fields, name, timeout) {
            Entry::Served(pending) => {
                let server = name_server(c, *pending, &mut aliases, &read.settings);
                read.settings.servers.push(server);
            }
            Entry::LeftOut(left_out) => read.left_out.push(left_out),
            Entry::Bad => {}
        }
    }
    for alias in aliases.iter().filter(|a| !a.used) {
        let served = read.settings.server(&alias.target);
        let why = match served {
            Some(s) => format!("mcp_servers.{} already has the prefix {:?}", s.name, s.prefix),
            None if read.left_out.iter().any(|l| l.name == alias.target) => continue,
            None => format!("no mcp_servers entry is named {:?}", alias.target),
        };
        c.warn(&alias.path, format!("ignored: {why}"));
    }
    read
}

enum Entry {
    Served(Box<Pending>),
    LeftOut(LeftOutServer),
    /// An error was reported.
    Bad,
}

/// A server read from its entry, before [`name_server`] gives it its prefix and id.
struct Pending {
    server: McpServer,
    path: KeyPath,
    /// Its own `alias`, with that key's path.
    alias: Option<(String, KeyPath)>,
    /// `None` when `server_id` is pinned; else what LiteLLM derives the id from besides the name
    /// and alias (`url|transport|auth_type`, as written).
    id_source: Option<String>,
}

/// One entry's keys, checked.
fn read_server(c: &mut Checker, mut f: Fields, name: &str, default_timeout: Duration) -> Entry {
    let path = f.path.clone();
    if let Some((key, why)) = left_out_because(&f) {
        for key in SERVED.iter().chain(&PASSED).chain(NOT_SERVED.iter().map(|(k, _)| k)) {
            f.take(key);
        }
        c.refuse_unknown(&f, &SERVED);
        c.warn(path.key(key), format!("{why} is not served yet; the server is left out"));
        let access_groups = match f.peek("access_groups") {
            Some(Node::List(items)) => items.iter().filter_map(|i| (kinds::STRING.parse)(i)).collect(),
            _ => Vec::new(),
        };
        return Entry::LeftOut(LeftOutServer { name: name.to_string(), access_groups });
    }
    let errors = c.error_count();
    let transport = transport(c, &mut f);
    let auth = auth(c, &mut f);
    let static_headers = string_map(c, &mut f, "static_headers", true);
    let forwarded_headers = header_names(c, &mut f);
    let allowed_tools = c.optional(&mut f, "allowed_tools", &kinds::STRING_LIST);
    let disallowed_tools = c.optional(&mut f, "disallowed_tools", &kinds::STRING_LIST).unwrap_or_default();
    let access_groups = c.optional(&mut f, "access_groups", &kinds::STRING_LIST).unwrap_or_default();
    let allow_all_keys = c.optional(&mut f, "allow_all_keys", &kinds::BOOL).unwrap_or(false);
    let timeout = c.optional(&mut f, "timeout", &kinds::POSITIVE_SECONDS).unwrap_or(default_timeout);
    let mut description = c.optional(&mut f, "description", &kinds::STRING);
    if let Some(mut info) = c.optional_map(&mut f, "mcp_info") {
        let from_info = c.optional(&mut info, "description", &kinds::STRING);
        description = description.or(from_info);
        protocol_version(c, &mut info);
        // Any other `mcp_info` key is the operator's metadata (LiteLLM keeps them as written).
    }
    let alias_path = path.key("alias");
    let alias = c.optional(&mut f, "alias", &kinds::STRING).filter(|a| !a.is_empty()).map(|a| (a, alias_path));
    let pinned = c.optional(&mut f, "server_id", &kinds::NON_EMPTY_STRING).map(|id| id.trim().to_string());
    protocol_version(c, &mut f);
    f.take("available_on_public_internet");
    // Set to null or false: nothing to serve.
    for (key, _) in NOT_SERVED {
        f.take(key);
    }
    if f.take("instructions").is_some() {
        c.warn(path.key("instructions"), crate::check::IGNORED);
    }
    c.refuse_unknown(&f, &SERVED);
    let Some(transport) = transport.filter(|_| c.error_count() == errors) else { return Entry::Bad };
    let id_source = pinned.is_none().then(|| {
        // LiteLLM formats an absent transport as its enum member's name.
        let kind = match (f.peek("transport"), &transport) {
            (None, _) => "MCPTransport.http",
            (_, McpTransport::Http { .. }) => "http",
            (_, McpTransport::Sse { .. }) => "sse",
            (_, McpTransport::Stdio { .. }) => "stdio",
        };
        let url = match &transport {
            McpTransport::Http { url } | McpTransport::Sse { url } => url.as_str(),
            McpTransport::Stdio { .. } => "",
        };
        let auth_type = match f.peek("auth_type") {
            Some(Node::Str(s)) => s.trim(),
            _ => "",
        };
        format!("{url}|{kind}|{auth_type}")
    });
    let server = McpServer {
        name: name.to_string(),
        prefix: String::new(),
        server_id: pinned.unwrap_or_default(),
        description,
        transport,
        auth: auth.unwrap_or(McpAuth::None),
        static_headers,
        forwarded_headers,
        allowed_tools,
        disallowed_tools,
        access_groups,
        allow_all_keys,
        timeout,
        path: path.to_string(),
    };
    Entry::Served(Box::new(Pending { server, path, alias, id_source }))
}

/// The first key (and what it asks for) that leaves the server out, if any.
fn left_out_because(f: &Fields) -> Option<(&'static str, String)> {
    if let Some(Node::Str(auth)) = f.peek("auth_type") {
        if let Some(kind) = AUTH_NOT_SERVED.iter().find(|k| **k == auth.trim()) {
            return Some(("auth_type", (*kind).to_string()));
        }
    }
    let set =
        |key: &str| f.peek(key).is_some_and(|n| !matches!(n, Node::Null) && (kinds::BOOL.parse)(n) != Some(false));
    if let Some((key, why)) = NOT_SERVED.iter().find(|(key, _)| set(key)) {
        return Some((key, (*why).to_string()));
    }
    if f.peek("available_on_public_internet").is_some_and(|n| (kinds::BOOL.parse)(n) == Some(false)) {
        return Some((
            "available_on_public_internet",
            "hiding a server from callers outside the internal network".into(),
        ));
    }
    None
}

const TRANSPORTS: Kind<&'static str> = Kind {
    expected: "one of http, sse, stdio",
    parse: |n| match n {
        Node::Str(s) => ["http", "sse", "stdio"].into_iter().find(|t| *t == s.trim()),
        _ => None,
    },
    secret: false,
};

/// `transport` with what it needs: `url` for http and sse, `command` (with `args` and `env`) for
/// stdio. The keys the other transports read are warned about.
fn transport(c: &mut Checker, f: &mut Fields) -> Option<McpTransport> {
    let kind = match f.peek("transport") {
        None | Some(Node::Null) => {
            f.take("transport");
            Some("http")
        }
        Some(_) => c.optional(f, "transport", &TRANSPORTS),
    };
    let unused = |c: &mut Checker, f: &mut Fields, keys: &[&str], kind: &str| {
        for key in keys {
            if let Some((Node::Null, _)) | None = f.take(key) {
                continue;
            }
            c.warn(f.path.key(key), format!("ignored: a {kind} server has no {key}"));
        }
    };
    let Some(kind) = kind else {
        // Its keys are not checked against a transport that is not known.
        for key in ["url", "command", "args", "env"] {
            f.take(key);
        }
        return None;
    };
    match kind {
        "stdio" => {
            unused(c, f, &["url"], "stdio");
            let command = c.required(f, "command", &kinds::NON_EMPTY_STRING);
            let args = c.optional(f, "args", &kinds::STRING_LIST).unwrap_or_default();
            let env = string_map(c, f, "env", false);
            Some(McpTransport::Stdio { command: command?, args, env })
        }
        kind => {
            unused(c, f, &["command", "args", "env"], kind);
            let url = url(c, f, kind)?;
            Some(if kind == "sse" { McpTransport::Sse { url } } else { McpTransport::Http { url } })
        }
    }
}

const PROTOCOL_VERSION: Kind<()> = Kind {
    expected: "one of auto, 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28",
    parse: |n| match n {
        Node::Str(s) => PROTOCOL_VERSIONS.contains(&s.as_str()).then_some(()),
        _ => None,
    },
    secret: false,
};

/// `protocol_version`, checked as LiteLLM checks it; the gateway negotiates the version itself.
fn protocol_version(c: &mut Checker, f: &mut Fields) {
    c.optional(f, "protocol_version", &PROTOCOL_VERSION);
}

/// The separator: `MCP_TOOL_PREFIX_SEPARATOR`, else `-`.
fn separator(c: &mut Checker) -> String {
    match c.env.lookup(SEPARATOR_ENV) {
        Some(s) if s.is_empty() => {
            c.error(
                format!("{SEPARATOR_ENV} (environment)"),
                "must not be empty: it separates a server's prefix from a tool's name",
            );
            DEFAULT_SEPARATOR.into()
        }
        Some(s) => s,
        None => DEFAULT_SEPARATOR.into(),
    }
}

/// `LITELLM_MCP_CLIENT_TIMEOUT` (seconds), else 60 s; a value that is no positive number is
/// warned about, as LiteLLM falls back to its default.
fn default_timeout(c: &mut Checker) -> Duration {
    let Some(text) = c.env.lookup(TIMEOUT_ENV) else { return DEFAULT_TIMEOUT };
    match (kinds::POSITIVE_SECONDS.parse)(&Node::Str(text.clone())) {
        Some(d) => d,
        None => {
            let path = format!("{TIMEOUT_ENV} (environment)");
            c.warn(
                path,
                format!("expected a number of seconds greater than 0, got {text:?}: calls time out after 60s"),
            );
            DEFAULT_TIMEOUT
        }
    }
}

/// One `mcp_aliases` entry.
struct Alias {
    alias: String,
    target: String,
    path: KeyPath,
    used: bool,
}

fn read_aliases(c: &mut Checker, litellm_settings: Option<(&Node, KeyPath)>) -> Vec<Alias> {
    let Some((section, path)) = litellm_settings else { return Vec::new() };
    let path = path.key(MCP_ALIASES);
    let Some(node) = section.get(MCP_ALIASES).filter(|n| !matches!(n, Node::Null)) else { return Vec::new() };
    let Some(node) = c.resolved(node, &path) else { return Vec::new() };
    let Some(map) = c.map(&node, path) else { return Vec::new() };
    let mut out = Vec::new();
    for (alias, target, path) in map.untaken() {
        if let Some(target) = c.read(target, &path, &kinds::NON_EMPTY_STRING) {
            out.push(Alias { alias: alias.to_string(), target, path, used: false });
        }
    }
    out
}

/// Sets the server's prefix (its alias, else its first unused `mcp_aliases` alias, else its name;
/// spaces as `_`) and its id (pinned, else LiteLLM's), refusing a prefix with the separator, an
/// empty one, or one another server has, and an id another server has.
fn name_server(c: &mut Checker, pending: Pending, aliases: &mut [Alias], settings: &McpSettings) -> McpServer {
    let Pending { mut server, path, alias: own_alias, id_source } = pending;
    let (alias, alias_path) = match own_alias {
        Some((alias, path)) => (Some(alias), Some(path)),
        None => match aliases.iter_mut().find(|a| !a.used && a.target == server.name) {
            Some(a) => {
                a.used = true;
                (Some(a.alias.clone()), Some(a.path.clone()))
            }
            None => (None, None),
        },
    };
    server.prefix = alias.as_deref().unwrap_or(&server.name).replace(' ', "_");
    if let Some(source) = id_source {
        server.server_id = derived_server_id(&server.name, &source, alias.as_deref());
    }
    let sep = &settings.separator;
    if let Some(path) = &alias_path {
        if server.prefix.trim().is_empty() {
            c.error(path, "the alias is empty: the server's tools would have no prefix");
        } else if server.prefix.contains(sep.as_str()) {
            c.error(path, format!("the alias {:?} contains the tool separator {sep:?} ({SEPARATOR_ENV}), which would make the names of its tools ambiguous: use another character", server.prefix));
        }
    }
    if let Some(other) = settings.servers.iter().find(|s| s.prefix == server.prefix) {
        let path = alias_path.unwrap_or(path.clone());
        c.error(
            path,
            format!("the prefix {:?} is already {}'s: their tools' names would clash", server.prefix, other.path),
        );
    }
    if let Some(other) = settings.servers.iter().find(|s| s.server_id == server.server_id) {
        c.error(path.key("server_id"), format!("{:?} is already {}'s id", server.server_id, other.path));
    }
    server
}
