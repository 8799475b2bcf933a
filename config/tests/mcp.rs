//! LiteLLM's `mcp_servers`: every key read, each credential's header, prefixes and aliases, the
//! separator from the environment, the servers left out, and each error with its key path.

mod common;

use std::path::Path;
use std::time::Duration;

use common::{errors, load};
use pointwork_config::{load_str, Loaded, McpAuth, McpTransport};

const MODELS: &str = "model_list:\n- model_name: m\n  litellm_params: {model: openai/gpt-4o}\n";

fn with_models(yaml: &str) -> String {
    format!("{MODELS}{yaml}")
}

fn loads(yaml: &str) -> Loaded {
    load(&with_models(yaml)).unwrap_or_else(|e| panic!("{e}"))
}

fn warnings(loaded: &Loaded) -> Vec<String> {
    loaded.warnings.iter().map(|w| w.to_string()).collect()
}

fn errors_of(yaml: &str) -> Vec<String> {
    errors(&with_models(yaml))
}

/// A block as LiteLLM's docs write it, every served key used once.
const FULL: &str = r#"
mcp_servers:
  github:
    url: https://api.githubcopilot.com/mcp
    auth_type: bearer_token
    auth_value: os.environ/OPENAI_API_KEY
    description: GitHub's tools
    allowed_tools: [create_issue, list_issues]
    disallowed_tools: [delete_repo]
    access_groups: [dev-tools]
    extra_headers: [X-GitHub-Api-Version]
    static_headers: {X-Team: platform}
    timeout: 12.5
  deepwiki:
    transport: sse
    url: https://mcp.deepwiki.com/sse
    allow_all_keys: true
    mcp_info: {description: Wikis of repositories, logo_url: "https://example.com/l.png", protocol_version: "2025-06-18"}
    available_on_public_internet: true
  "local files":
    transport: stdio
    command: npx
    args: ["-y", "@modelcontextprotocol/server-filesystem", /tmp]
    env: {DEBUG: "1", PORT: 8080}
    server_id: files-1
"#;

#[test]
fn a_full_litellm_block_is_read_key_by_key() {
    let loaded = loads(FULL);
    assert_eq!(warnings(&loaded), Vec::<String>::new());
    let mcp = &loaded.config.mcp;
    assert_eq!(mcp.separator, "-");
    let names: Vec<&str> = mcp.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["github", "deepwiki", "local files"]);

    let gh = mcp.server("github").unwrap();
    assert_eq!(gh.prefix, "github");
    assert_eq!(gh.transport, McpTransport::Http { url: "https://api.githubcopilot.com/mcp".into() });
    assert_eq!(gh.auth, McpAuth::Bearer("sk-openai-test-key-1111".into()));
    assert_eq!(gh.description.as_deref(), Some("GitHub's tools"));
    assert_eq!(gh.allowed_tools.as_deref(), Some(&["create_issue".to_string(), "list_issues".to_string()][..]));
    assert_eq!(gh.disallowed_tools, ["delete_repo"]);
    assert_eq!(gh.access_groups, ["dev-tools"]);
    assert_eq!(gh.forwarded_headers, ["X-GitHub-Api-Version"]);
    assert_eq!(gh.static_headers, [("X-Team".to_string(), "platform".to_string())]);
    assert_eq!(gh.timeout, Duration::from_millis(12_500));
    assert!(!gh.allow_all_keys);
    assert_eq!(gh.path, "mcp_servers.github");
    // LiteLLM's derived id: sha256("github|https://api.githubcopilot.com/mcp|MCPTransport.http|bearer_token|")[:32]
    assert_eq!(gh.server_id, "d142c54b7b2e98b3a7a20e0901d53905");

    let wiki = mcp.server("deepwiki").unwrap();
    assert_eq!(wiki.transport, McpTransport::Sse { url: "https://mcp.deepwiki.com/sse".into() });
    assert_eq!(wiki.description.as_deref(), Some("Wikis of repositories"));
    assert!(wiki.allow_all_keys);
    assert_eq!(wiki.auth, McpAuth::None);
    assert_eq!(wiki.timeout, Duration::from_secs(60));

    let files = mcp.server("local files").unwrap();
    assert_eq!(files.prefix, "local_files");
    assert_eq!(files.server_id, "files-1");
    let env = vec![("DEBUG".to_string(), "1".to_string()), ("PORT".to_string(), "8080".to_string())];
    let args = vec!["-y".to_string(), "@modelcontextprotocol/server-filesystem".to_string(), "/tmp".to_string()];
    assert_eq!(files.transport, McpTransport::Stdio { command: "npx".into(), args, env });
}

#[test]
fn each_auth_type_sends_its_header() {
    let cases = [
        ("bearer_token", "abc", ("authorization", "Bearer abc")),
        ("bearer_token", "Bearer abc", ("authorization", "Bearer abc")),
        ("api_key", "k-1", ("x-api-key", "k-1")),
        ("basic", "user:pass", ("authorization", "Basic dXNlcjpwYXNz")),
        ("basic", "Basic dXNlcjpwYXNz", ("authorization", "Basic dXNlcjpwYXNz")),
        ("token", "ghp_1", ("authorization", "token ghp_1")),
        ("token", "token ghp_1", ("authorization", "token ghp_1")),
        ("authorization", "Custom xyz", ("authorization", "Custom xyz")),
    ];
    for (kind, value, (name, header)) in cases {
        let loaded = loads(&format!(
            "mcp_servers:\n  s:\n    url: http://127.0.0.1:9/mcp\n    auth_type: {kind}\n    auth_value: '{value}'\n"
        ));
        let auth = &loaded.config.mcp.servers[0].auth;
        assert_eq!(auth.header(), Some((name, header.to_string())), "{kind} {value}");
    }
    // `authentication_token` is LiteLLM's other name for the value, and wins.
    let loaded = loads("mcp_servers:\n  s:\n    url: http://h/mcp\n    auth_type: api_key\n    authentication_token: t1\n    auth_value: t2\n");
    assert_eq!(loaded.config.mcp.servers[0].auth, McpAuth::ApiKey("t1".into()));
    let loaded = loads("mcp_servers:\n  s: {url: http://h/mcp, auth_type: none}\n");
    assert_eq!(loaded.config.mcp.servers[0].auth.header(), None);
}

#[test]
fn a_credential_half_given_sends_nothing_and_says_so() {
    let loaded = loads(
        "mcp_servers:\n  s: {url: http://h/mcp, auth_type: bearer_token}\n  t: {url: http://h/mcp, auth_value: abc}\n",
    );
    assert_eq!(loaded.config.mcp.servers[0].auth, McpAuth::None);
    assert_eq!(loaded.config.mcp.servers[1].auth, McpAuth::None);
    assert_eq!(
        warnings(&loaded),
        [
            "mcp_servers.s.auth_type: bearer_token without auth_value: no credential is sent",
            "mcp_servers.t.auth_value: ignored: no auth_type says how to send it (none is sent)",
        ]
    );
}

#[test]
fn prefixes_come_from_the_alias_then_mcp_aliases_then_the_name() {
    let loaded = loads(
        "mcp_servers:\n  github: {url: http://h/a}\n  jira: {url: http://h/b, alias: tickets}\n  wiki: {url: http://h/c}\n\
         litellm_settings:\n  mcp_aliases: {gh: github, hub: github, tix: jira, docs: nowhere}\n",
    );
    let prefixes: Vec<&str> = loaded.config.mcp.servers.iter().map(|s| s.prefix.as_str()).collect();
    assert_eq!(prefixes, ["gh", "tickets", "wiki"]);
    assert_eq!(
        warnings(&loaded),
        [
            r#"litellm_settings.mcp_aliases.hub: ignored: mcp_servers.github already has the prefix "gh""#,
            r#"litellm_settings.mcp_aliases.tix: ignored: mcp_servers.jira already has the prefix "tickets""#,
            r#"litellm_settings.mcp_aliases.docs: ignored: no mcp_servers entry is named "nowhere""#,
        ]
    );
}

#[test]
fn the_separator_and_the_default_timeout_come_from_the_environment() {
    let env = |name: &str| match name {
        "MCP_TOOL_PREFIX_SEPARATOR" => Some("__".to_string()),
        "LITELLM_MCP_CLIENT_TIMEOUT" => Some("7".to_string()),
        _ => common::test_env(name),
    };
    let yaml = with_models("mcp_servers:\n  my-server: {url: http://h/mcp}\n");
    let loaded = load_str(&yaml, Path::new("."), &env).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(loaded.config.mcp.separator, "__");
    assert_eq!(loaded.config.mcp.servers[0].prefix, "my-server");
    assert_eq!(loaded.config.mcp.servers[0].timeout, Duration::from_secs(7));

    let yaml = with_models("mcp_servers:\n  a__b: {url: http://h/mcp}\n");
    let e = load_str(&yaml, Path::new("."), &env).unwrap_err();
    assert!(
        e.to_string()
            .contains(r#"mcp_servers.a__b: the name contains the tool separator "__" (MCP_TOOL_PREFIX_SEPARATOR)"#),
        "{e}"
    );

    let empty = |name: &str| (name == "MCP_TOOL_PREFIX_SEPARATOR").then(String::new);
    let yaml = with_models("mcp_servers:\n  a: {url: http://h/mcp}\n");
    let e = load_str(&yaml, Path::new("."), &empty).unwrap_err();
    assert!(e.to_string().contains("MCP_TOOL_PREFIX_SEPARATOR (environment): must not be empty"), "{e}");
}

#[test]
fn servers_needing_what_is_not_served_are_left_out_with_one_warning() {
    let loaded = loads(
        "mcp_servers:\n\
         \x20 gmail: {url: 'https://gmailmcp.googleapis.com/mcp/v1', auth_type: oauth2, oauth2_flow: authorization_code, delegate_auth_to_upstream: true}\n\
         \x20 s3: {url: 'https://h/mcp', auth_type: aws_sigv4, aws_region_name: us-east-1}\n\
         \x20 petstore: {url: 'https://h', spec_path: /specs/petstore.json}\n\
         \x20 sampler: {url: 'https://h/mcp', allow_sampling: true}\n\
         \x20 internal: {url: 'https://h/mcp', available_on_public_internet: false}\n\
         \x20 plain: {url: 'https://h/mcp', allow_sampling: false, delegate_auth_to_upstream: false}\n",
    );
    let names: Vec<&str> = loaded.config.mcp.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["plain"]);
    assert_eq!(
        warnings(&loaded),
        [
            "mcp_servers.gmail.auth_type: oauth2 is not served yet; the server is left out",
            "mcp_servers.s3.auth_type: aws_sigv4 is not served yet; the server is left out",
            "mcp_servers.petstore.spec_path: an OpenAPI spec served as MCP tools is not served yet; the server is left out",
            "mcp_servers.sampler.allow_sampling: sampling requests from the server is not served yet; the server is left out",
            "mcp_servers.internal.available_on_public_internet: hiding a server from callers outside the internal network is not served yet; the server is left out",
        ]
    );
}

#[test]
fn bad_entries_are_errors_naming_their_key_paths() {
    let e = errors_of(
        "mcp_servers:\n\
         \x20 a: {url: 'https://h/mcp', auth_type: oauth3}\n\
         \x20 b: {transport: streamable_http, url: 'https://h/mcp'}\n\
         \x20 c: {transport: http}\n\
         \x20 d: {url: 'ftp://h/mcp'}\n\
         \x20 e: {transport: stdio, args: [1]}\n\
         \x20 f: {transport: stdio, command: x, env: {A: [1]}}\n\
         \x20 g: {url: 'https://h/mcp', static_headers: {'Bad Header': v}, extra_headers: ['x:y']}\n\
         \x20 h: {url: 'https://h/mcp', timeout: 0, urll: x}\n\
         \x20 my-server: {url: 'https://h/mcp'}\n\
         \x20 i: {url: 'https://h/mcp', alias: my-tools}\n\
         \x20 k: {url: 'https://h/mcp', server_id: files}\n\
         \x20 l: {url: 'https://h/mcp', server_id: files}\n\
         \x20 j: {url: 'https://h/mcp', alias: k}\n\
         \x20 m: {url: 'https://h/mcp', protocol_version: '2023-01-01'}\n\
         \x20 n: not-a-map\n",
    );
    let expected = [
        "mcp_servers.a.auth_type: expected one of none, bearer_token, api_key, basic, token, authorization, got \"oauth3\"",
        "mcp_servers.b.transport: expected one of http, sse, stdio, got \"streamable_http\"",
        "mcp_servers.c.url: required for transport http (an http:// or https:// URL)",
        "mcp_servers.d.url: expected an http:// or https:// URL with a host, got \"ftp://h/mcp\"",
        "mcp_servers.e.command: required key is missing (expected a non-empty string)",
        "mcp_servers.e.args: expected a list of strings, got a list",
        "mcp_servers.f.env.A: expected a string, got a list",
        "mcp_servers.g.static_headers.Bad Header: not a header name (letters, digits and !#$%&'*+-.^_`|~)",
        "mcp_servers.g.extra_headers[0]: \"x:y\" is not a header name (letters, digits and !#$%&'*+-.^_`|~)",
        "mcp_servers.h.timeout: expected a number of seconds greater than 0, got 0",
        "mcp_servers.h.urll: unknown key; did you mean \"url\"?",
        "mcp_servers.my-server: the name contains the tool separator \"-\" (MCP_TOOL_PREFIX_SEPARATOR)",
        "mcp_servers.i.alias: the alias \"my-tools\" contains the tool separator \"-\"",
        "mcp_servers.l.server_id: \"files\" is already mcp_servers.k's id",
        "mcp_servers.j.alias: the prefix \"k\" is already mcp_servers.k's: their tools' names would clash",
        "mcp_servers.m.protocol_version: expected one of auto, 2024-11-05",
        "mcp_servers.n: expected a map, got \"not-a-map\"",
    ];
    for want in expected {
        assert!(e.iter().any(|got| got.starts_with(want)), "missing {want:?} in {e:#?}");
    }
    assert_eq!(e.len(), expected.len(), "{e:#?}");
}

#[test]
fn two_servers_with_one_prefix_are_refused() {
    let e = errors_of("mcp_servers:\n  github: {url: 'https://h/a'}\n  other: {url: 'https://h/b'}\nlitellm_settings:\n  mcp_aliases: {github: other}\n");
    assert_eq!(
        e,
        [
            r#"litellm_settings.mcp_aliases.github: the prefix "github" is already mcp_servers.github's: their tools' names would clash"#
        ]
    );
}

#[test]
fn the_corpus_servers_load() {
    // LiteLLM's own proxy_config.yaml: a stdio and an http server, no transport defaults to http.
    let loaded = loads(
        "mcp_servers:\n  wikipedia:\n    transport: \"stdio\"\n    command: \"uvx\"\n    args: [\"mcp-server-fetch\"]\n    description: \"Fetch web pages\"\n  deepwiki:\n    url: \"https://mcp.deepwiki.com/mcp\"\n",
    );
    let mcp = &loaded.config.mcp;
    assert!(matches!(mcp.servers[0].transport, McpTransport::Stdio { .. }));
    assert_eq!(mcp.servers[1].transport, McpTransport::Http { url: "https://mcp.deepwiki.com/mcp".into() });
}

const KEY: &str = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

fn with_key(servers: &str, permissions: &str) -> String {
    format!("{servers}pointwork:\n  auth:\n    virtual_keys:\n      - {{name: k, sha256: {KEY}, mcp_servers: {permissions}}}\n")
}

#[test]
fn a_key_names_servers_by_name_prefix_id_or_access_group() {
    let servers = "mcp_servers:\n  github: {url: 'https://h/a', alias: gh, access_groups: [dev]}\n  wiki: {url: 'https://h/b', server_id: w-1}\n  open: {url: 'https://h/c', allow_all_keys: true}\n";
    for permission in ["github", "gh", "dev", "w-1", "wiki"] {
        let loaded = loads(&with_key(servers, &format!("[{permission}]")));
        let key = &loaded.config.auth.virtual_keys[0];
        let allowed: Vec<&str> = loaded
            .config
            .mcp
            .servers
            .iter()
            .filter(|s| s.allowed_for(key.mcp_servers.as_deref()))
            .map(|s| s.name.as_str())
            .collect();
        let named = if permission == "wiki" || permission == "w-1" { "wiki" } else { "github" };
        assert_eq!(allowed, [named, "open"], "{permission}");
    }
    // No `mcp_servers`: every server.
    let loaded =
        loads(&format!("{servers}pointwork:\n  auth:\n    virtual_keys:\n      - {{name: k, sha256: {KEY}}}\n"));
    assert!(loaded
        .config
        .mcp
        .servers
        .iter()
        .all(|s| s.allowed_for(loaded.config.auth.virtual_keys[0].mcp_servers.as_deref())));
}

#[test]
fn a_key_naming_no_server_is_refused_and_one_naming_a_left_out_server_warned() {
    let servers = "mcp_servers:\n  github: {url: 'https://h/a'}\n  gmail: {url: 'https://h/g', auth_type: oauth2, access_groups: [mail]}\n";
    let e = errors_of(&with_key(servers, "[github, githib]"));
    assert_eq!(
        e,
        [
            r#"pointwork.auth.virtual_keys[0].mcp_servers[1]: "githib" names no MCP server (name, prefix or server_id) and no access group (servers: github)"#
        ]
    );
    let loaded = loads(&with_key(servers, "[gmail, mail]"));
    assert_eq!(
        warnings(&loaded)[1..],
        [
            r#"pointwork.auth.virtual_keys[0].mcp_servers[0]: "gmail" names only mcp_servers.gmail, which is left out (see its warning)"#,
            r#"pointwork.auth.virtual_keys[0].mcp_servers[1]: "mail" names only mcp_servers.gmail, which is left out (see its warning)"#,
        ]
    );
}

#[test]
fn a_keys_tool_lists_are_read_and_their_servers_checked() {
    let servers = "mcp_servers:\n  github: {url: 'https://h/a'}\n  wiki: {url: 'https://h/b'}\n";
    let key = |lists: &str| {
        format!("{servers}pointwork:\n  auth:\n    virtual_keys:\n      - {{name: k, sha256: {KEY}, mcp_tool_permissions: {lists}}}\n")
    };
    let loaded = loads(&key("{github: [create_issue, list_issues], wiki: ['*']}"));
    let tools = &loaded.config.auth.virtual_keys[0].mcp_tools;
    assert_eq!(
        tools,
        &[
            ("github".to_string(), vec!["create_issue".to_string(), "list_issues".to_string()]),
            ("wiki".to_string(), vec!["*".to_string()]),
        ]
    );
    let granted = loaded.config.auth.virtual_keys[0].mcp_servers.clone();
    assert_eq!(
        granted,
        Some(vec!["github".to_string(), "wiki".to_string()]),
        "the servers of the tool lists are granted"
    );
    assert_eq!(
        errors_of(&key("{githib: [x]}")),
        [
            r#"pointwork.auth.virtual_keys[0].mcp_tool_permissions.githib: "githib" names no MCP server (name, prefix or server_id) and no access group (servers: github, wiki)"#
        ]
    );
    assert_eq!(
        errors_of(&key("{github: create_issue}")),
        [
            r#"pointwork.auth.virtual_keys[0].mcp_tool_permissions.github: expected a list of strings, got "create_issue""#
        ]
    );
}

#[test]
fn the_summary_names_the_servers() {
    let loaded = loads(&with_key(FULL, "[dev-tools]"));
    let summary = loaded.config.summary();
    assert!(
        summary.contains("mcp servers: 3 (github http, deepwiki sse, local files stdio as local_files)\n"),
        "{summary}"
    );
    assert!(summary.contains("  key k, every model, mcp servers [dev-tools]\n"), "{summary}");
    assert!(summary.ends_with("warnings: 0\n"), "{summary}");
}
