//! The names clients see: every server's tools and prompts as `PREFIX{sep}NAME`, its resources'
//! URIs as `PREFIX{sep}URI`. No prefix contains the separator (the config refuses one that
//! does), so a namespaced name splits back at its first separator one way only.

use pointwork_config::{McpServer, McpSettings};

/// `PREFIX{sep}NAME`.
pub fn join(settings: &McpSettings, server: &McpServer, name: &str) -> String {
    let mut out = String::with_capacity(server.prefix.len() + settings.separator.len() + name.len());
    out.push_str(&server.prefix);
    out.push_str(&settings.separator);
    out.push_str(name);
    out
}

/// The server a namespaced name belongs to, and the name as the server knows it.
pub fn split<'s, 'n>(settings: &'s McpSettings, namespaced: &'n str) -> Option<(&'s McpServer, &'n str)> {
    let (prefix, name) = namespaced.split_once(settings.separator.as_str())?;
    let server = settings.servers.iter().find(|s| s.prefix == prefix)?;
    Some((server, name))
}

/// Whether the server's `allowed_tools` / `disallowed_tools` let `tool` (its own name) through;
/// either list may name it bare or namespaced.
pub fn tool_allowed(settings: &McpSettings, server: &McpServer, tool: &str) -> bool {
    let names = |list: &[String]| list.iter().any(|t| t == tool || *t == join(settings, server, tool));
    server.allowed_tools.as_deref().is_none_or(names) && !names(&server.disallowed_tools)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pointwork_config::{McpAuth, McpTransport};

    fn server(name: &str, prefix: &str) -> McpServer {
        McpServer {
            name: name.into(),
            prefix: prefix.into(),
            server_id: name.into(),
            description: None,
            transport: McpTransport::Http { url: "http://127.0.0.1:1/mcp".into() },
            auth: McpAuth::None,
            static_headers: Vec::new(),
            forwarded_headers: Vec::new(),
            allowed_tools: None,
            disallowed_tools: Vec::new(),
            access_groups: Vec::new(),
            allow_all_keys: false,
            timeout: std::time::Duration::from_secs(60),
            path: format!("mcp_servers.{name}"),
        }
    }

    fn settings() -> McpSettings {
        McpSettings { servers: vec![server("github", "gh"), server("files", "files")], separator: "-".into() }
    }

    #[test]
    fn a_name_splits_back_into_its_server_and_tool() {
        let s = settings();
        assert_eq!(join(&s, &s.servers[0], "create-issue"), "gh-create-issue");
        let (server, tool) = split(&s, "gh-create-issue").unwrap();
        assert_eq!((server.name.as_str(), tool), ("github", "create-issue"));
        assert_eq!(split(&s, "files-note://a").map(|(s, n)| (s.name.as_str(), n)), Some(("files", "note://a")));
        assert!(split(&s, "github-x").is_none(), "the prefix, not the name, is what a client sees");
        assert!(split(&s, "nothing").is_none());
    }

    #[test]
    fn allowed_and_disallowed_tools_take_bare_or_namespaced_names() {
        let mut s = settings();
        s.servers[0].allowed_tools = Some(vec!["read".into(), "gh-write".into()]);
        s.servers[0].disallowed_tools = vec!["write".into()];
        assert!(tool_allowed(&s, &s.servers[0], "read"));
        assert!(!tool_allowed(&s, &s.servers[0], "write"));
        assert!(!tool_allowed(&s, &s.servers[0], "delete"));
        assert!(tool_allowed(&s, &s.servers[1], "anything"));
    }
}
