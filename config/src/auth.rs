//! `pointwork.auth`: who may call the gateway beyond the master key. Virtual keys (each with
//! the models it may use, rpm / tpm limits, a budget and tags) and admin keys are written as
//! SHA-256 digests of the key, never the key itself (`pointwork hash-key` prints one).
//!
//! ```yaml
//! pointwork:
//!   auth:
//!     metrics: key            # `open` (the default) or `key`: /metrics needs the master or an admin key
//!     admin_keys:
//!       - {name: ops, sha256: 5e88…}
//!     virtual_keys:
//!       - name: team-a
//!         sha256: 9f86…
//!         models: [gpt-4o, "openai/*"]
//!         rpm: 600
//!         tpm: 200000
//!         max_budget: 25        # US dollars
//!         budget_duration: 30d  # start over every period; without it, for the process's lifetime
//!         tags: [team-a]        # added to every request's tags (tag routing)
//!         policy: eu-strict     # the key's requests run under this policy (`pointwork.policies`)
//!         mcp_servers: [github, internal-tools]  # MCP servers: names, prefixes, server ids or access groups
//!         allowed_cache_controls: [no-cache, ttl]  # the response cache controls it may set (none: any)
//!     spend_file: key-spend.json   # keys' spend kept across restarts (owner-only, never via a symlink)
//! ```

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use pointwork_core::KeyLimits;

use crate::check::{Checker, Fields, KeyPath};
use crate::kinds::{self, Kind};
use crate::mcp_read::McpRead;
use crate::node::Node;
use crate::policies::check_policy_ref;
use crate::router::TIME_PERIOD;

/// Who may call what; empty = only the master key (if any) guards the gateway.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Auth {
    /// `metrics: key`: `GET /metrics` needs the master key or an admin key.
    pub metrics_need_key: bool,
    pub admin_keys: Vec<AdminKey>,
    pub virtual_keys: Vec<VirtualKey>,
    /// Where the virtual keys' spend is kept across restarts (relative to the config's folder);
    /// `None` = in memory only.
    pub spend_file: Option<PathBuf>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdminKey {
    pub name: String,
    pub sha256: [u8; 32],
}

#[derive(Clone, Debug, PartialEq)]
pub struct VirtualKey {
    /// What logs and metrics call the key (never the key).
    pub name: String,
    pub sha256: [u8; 32],
    /// The model names (groups, aliases, deployment ids; `prefix*` patterns) the key may ask
    /// for; `None` = every model.
    pub models: Option<Vec<String>>,
    pub limits: KeyLimits,
    pub tags: Vec<String>,
    /// The policy (`pointwork.policies`) the key's requests run under; `None`:
    /// `pointwork.default_policy`, if any.
    pub policy: Option<String>,
    /// `mcp_servers`: the MCP servers the key may use, each entry a server's name, prefix or
    /// server id, or an access group (see `McpServer::allowed_for`); `None` = every server,
    /// `[]` = none (a server with `allow_all_keys` excepted).
    pub mcp_servers: Option<Vec<String>>,
    /// `mcp_tool_permissions`: per server (name, prefix, server id or access group), the only
    /// tools the key may call on it (`*`: all), as LiteLLM's object permission has them. Each
    /// server named is in `mcp_servers` too.
    pub mcp_tools: Vec<(String, Vec<String>)>,
    /// `allowed_cache_controls`: the members of a request's `cache` object (and the
    /// `Cache-Control` directives) the key may set, as LiteLLM's key column; empty = any.
    pub allowed_cache_controls: Vec<String>,
}

/// The response cache controls a key's `allowed_cache_controls` may name.
const CACHE_CONTROLS: [&str; 7] = ["no-cache", "no-store", "ttl", "s-maxage", "s-max-age", "namespace", "use-cache"];

const KEYS: [&str; 4] = ["metrics", "admin_keys", "virtual_keys", "spend_file"];
const ADMIN_KEY_KEYS: [&str; 2] = ["name", "sha256"];
const VIRTUAL_KEY_KEYS: [&str; 12] = [
    "name",
    "sha256",
    "models",
    "rpm",
    "tpm",
    "max_budget",
    "budget_duration",
    "tags",
    "policy",
    "mcp_servers",
    "mcp_tool_permissions",
    "allowed_cache_controls",
];

/// `dir`: the folder relative paths are relative to; `policies`: the names a key's `policy` may
/// use (`None`: not checked).
pub(crate) fn read_auth(c: &mut Checker, mut fields: Fields, dir: &Path, policies: &Option<Vec<String>>) -> Auth {
    let mut auth = Auth::default();
    if let Some(file) = c.optional(&mut fields, "spend_file", &kinds::NON_EMPTY_STRING) {
        auth.spend_file = Some(dir.join(file.trim()));
    }
    if let Some(metrics) = c.optional(&mut fields, "metrics", &METRICS) {
        auth.metrics_need_key = metrics;
    }
    // Digests already seen, for duplicates across both lists.
    let mut seen: HashMap<[u8; 32], KeyPath> = HashMap::new();
    let mut names: HashMap<String, KeyPath> = HashMap::new();
    for (mut entry, path) in list_of_maps(c, &mut fields, "admin_keys") {
        let name = c.required(&mut entry, "name", &kinds::NON_EMPTY_STRING);
        let sha256 = c.required(&mut entry, "sha256", &SHA256);
        c.refuse_unknown(&entry, &ADMIN_KEY_KEYS);
        if let (Some(name), Some(sha256)) = (name, sha256) {
            unique(c, &mut seen, &mut names, &path, sha256, &name);
            auth.admin_keys.push(AdminKey { name, sha256 });
        }
    }
    for (mut entry, path) in list_of_maps(c, &mut fields, "virtual_keys") {
        let name = c.required(&mut entry, "name", &kinds::NON_EMPTY_STRING);
        let sha256 = c.required(&mut entry, "sha256", &SHA256);
        let models = c.optional(&mut entry, "models", &kinds::STRING_LIST);
        let limits = KeyLimits {
            rpm: c.optional(&mut entry, "rpm", &kinds::POSITIVE_INT),
            tpm: c.optional(&mut entry, "tpm", &kinds::POSITIVE_INT),
            max_budget: c.optional(&mut entry, "max_budget", &kinds::NON_NEGATIVE_NUMBER),
            budget_duration: c.optional(&mut entry, "budget_duration", &TIME_PERIOD),
        };
        if limits.budget_duration.is_some() && limits.max_budget.is_none() {
            c.error(path.key("budget_duration"), "a budget period needs max_budget");
        }
        let tags = c.optional(&mut entry, "tags", &kinds::STRING_LIST).unwrap_or_default();
        let policy = c.optional(&mut entry, "policy", &kinds::NON_EMPTY_STRING);
        let mut mcp_servers = c.optional(&mut entry, "mcp_servers", &kinds::STRING_LIST);
        let mcp_tools: Vec<(String, Vec<String>)> = match c.optional_map(&mut entry, "mcp_tool_permissions") {
            Some(lists) => {
                let lists: Vec<_> = lists.untaken().collect();
                lists
                    .into_iter()
                    .filter_map(|(server, node, at)| {
                        Some((server.to_string(), c.read(node, &at, &kinds::STRING_LIST)?))
                    })
                    .collect()
            }
            None => Vec::new(),
        };
        // As in LiteLLM's object permission, the servers a tool list names are granted too.
        if !mcp_tools.is_empty() {
            let granted = mcp_servers.get_or_insert_with(Vec::new);
            for (server, _) in &mcp_tools {
                if !granted.contains(server) {
                    granted.push(server.clone());
                }
            }
        }
        let allowed_cache_controls = cache_controls(c, &mut entry);
        if let Some(policy) = &policy {
            check_policy_ref(c, policies, policy, &path.key("policy"));
        }
        c.refuse_unknown(&entry, &VIRTUAL_KEY_KEYS);
        if let (Some(name), Some(sha256)) = (name, sha256) {
            unique(c, &mut seen, &mut names, &path, sha256, &name);
            auth.virtual_keys.push(VirtualKey {
                name,
                sha256,
                models,
                limits,
                tags,
                policy,
                mcp_servers,
                mcp_tools,
                allowed_cache_controls,
            });
        }
    }
    c.refuse_unknown(&fields, &KEYS);
    auth
}

/// A key's `allowed_cache_controls`: each a name of [`CACHE_CONTROLS`], else an error at its
/// index.
fn cache_controls(c: &mut Checker, entry: &mut Fields) -> Vec<String> {
    let Some((node, path)) = entry.take("allowed_cache_controls") else { return Vec::new() };
    if matches!(node, Node::Null) {
        return Vec::new();
    }
    let Some(items) = c.list(node, &path) else { return Vec::new() };
    items.iter().enumerate().filter_map(|(i, item)| c.read(item, &path.index(i), &CACHE_CONTROL)).collect()
}

const CACHE_CONTROL: Kind<String> = Kind {
    expected: "one of no-cache, no-store, ttl, s-maxage, s-max-age, namespace, use-cache",
    parse: |n| match n {
        Node::Str(s) => CACHE_CONTROLS.contains(&s.trim()).then(|| s.trim().to_string()),
        _ => None,
    },
    secret: false,
};

/// Every entry of a key's `mcp_servers` must name a server (name, prefix, server id) or an
/// access group of `mcp_servers`: an error otherwise, a warning when it names only servers that
/// are left out. `section`: the `pointwork` section's path.
pub(crate) fn check_mcp_permissions(c: &mut Checker, auth: &Auth, mcp: &McpRead, section: &KeyPath) {
    for (i, key) in auth.virtual_keys.iter().enumerate() {
        let at = section.key("auth").key("virtual_keys").index(i);
        // A tool list's server is in `mcp_servers` too: it is checked once, at the tool list.
        let in_tool_lists = |entry: &String| key.mcp_tools.iter().any(|(server, _)| server == entry);
        let listed = key.mcp_servers.iter().flatten().enumerate().filter(|(_, e)| !in_tool_lists(e));
        let listed = listed.map(|(j, e)| (at.key("mcp_servers").index(j), e));
        let tools = key.mcp_tools.iter().map(|(e, _)| (at.key("mcp_tool_permissions").key(e), e));
        for (path, entry) in listed.chain(tools) {
            if mcp.settings.servers.iter().any(|s| s.answers_to(entry)) {
                continue;
            }
            if let Some(left_out) = mcp.left_out.iter().find(|l| l.name == *entry || l.access_groups.contains(entry)) {
                let why =
                    format!("{entry:?} names only mcp_servers.{}, which is left out (see its warning)", left_out.name);
                c.warn(&path, why);
                continue;
            }
            let names: Vec<&str> = mcp.settings.servers.iter().map(|s| s.name.as_str()).collect();
            let known = if names.is_empty() {
                "mcp_servers names none".to_string()
            } else {
                format!("servers: {}", names.join(", "))
            };
            c.error(
                &path,
                format!("{entry:?} names no MCP server (name, prefix or server_id) and no access group ({known})"),
            );
        }
    }
}

/// The maps of a list under `key`, each with its path; errors for what is not a map.
fn list_of_maps<'n>(c: &mut Checker, fields: &mut Fields<'n>, key: &str) -> Vec<(Fields<'n>, KeyPath)> {
    let Some((node, path)) = fields.take(key) else { return Vec::new() };
    if matches!(node, Node::Null) {
        return Vec::new();
    }
    let Some(items) = c.list(node, &path) else { return Vec::new() };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let item_path = path.index(i);
        if let Some(entry) = c.map(item, item_path.clone()) {
            out.push((entry, item_path));
        }
    }
    out
}

/// Two keys with one digest would make a caller's identity ambiguous; two with one name, its logs.
fn unique(
    c: &mut Checker,
    seen: &mut HashMap<[u8; 32], KeyPath>,
    names: &mut HashMap<String, KeyPath>,
    path: &KeyPath,
    sha256: [u8; 32],
    name: &str,
) {
    if let Some(first) = seen.insert(sha256, path.clone()) {
        c.error(path.key("sha256"), format!("the same key digest as {first}"));
    }
    if let Some(first) = names.insert(name.to_string(), path.clone()) {
        c.error(path.key("name"), format!("{name:?} already names {first}"));
    }
}

const METRICS: Kind<bool> = Kind {
    expected: "open or key",
    parse: |n| match n {
        Node::Str(s) if s.trim() == "open" => Some(false),
        Node::Str(s) if s.trim() == "key" => Some(true),
        _ => None,
    },
    secret: false,
};

/// A SHA-256 digest as 64 hex digits (an optional `sha256:` prefix is allowed). Marked secret so
/// that an error never repeats what may be a key pasted in clear by mistake.
const SHA256: Kind<[u8; 32]> = Kind {
    expected: "64 hex digits (the SHA-256 of the key, as `pointwork hash-key` prints it; never the key itself)",
    parse: |n| match n {
        Node::Str(s) => parse_digest(s.trim().strip_prefix("sha256:").unwrap_or(s.trim())),
        _ => None,
    },
    secret: true,
};

fn parse_digest(hex: &str) -> Option<[u8; 32]> {
    let bytes = hex.as_bytes();
    if bytes.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, pair) in bytes.chunks_exact(2).enumerate() {
        let digit = |b: u8| (b as char).to_digit(16);
        out[i] = (digit(pair[0])? * 16 + digit(pair[1])?) as u8;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_are_64_hex_digits() {
        let hex = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
        let d = parse_digest(hex).unwrap();
        assert_eq!((d[0], d[31]), (0x9f, 0x08));
        assert_eq!(parse_digest(&hex.to_uppercase()), Some(d));
        assert_eq!(parse_digest(&hex[..63]), None);
        assert_eq!(parse_digest(&format!("{}zz", &hex[..62])), None);
        assert_eq!(parse_digest("sk-1234"), None);
    }
}
