//! A stdio server: a supervised child, restarted when it dies, reaped when stopped.

use std::time::Duration;

use serde_json::json;

use super::super::{Answer, Upstreams};
use super::{answers, call, python, result, script, server, settings, text};
use pointwork_config::McpTransport;

fn stdio_settings(name: &str) -> pointwork_config::McpSettings {
    let transport = McpTransport::Stdio {
        command: python(),
        args: vec![script("stdio_server.py")],
        env: vec![("POINTWORK_TEST_VALUE".into(), "given".into())],
    };
    settings(vec![server(name, transport)])
}

fn pid(up: &Upstreams, name: &str) -> u32 {
    text(&result(up, call(name, "tools/call", json!({"name": "pid", "arguments": {}})))).parse().unwrap()
}

#[test]
fn a_stdio_server_calls_dies_restarts_and_is_reaped_on_stop() {
    let up = Upstreams::start(&stdio_settings("local")).unwrap();
    let upper = result(&up, call("local", "tools/call", json!({"name": "upper", "arguments": {"text": "quiet"}})));
    assert_eq!(text(&upper), "QUIET");
    let env = |name: &str| {
        text(&result(&up, call("local", "tools/call", json!({"name": "env", "arguments": {"name": name}}))))
    };
    assert_eq!(env("POINTWORK_TEST_VALUE"), "given");
    assert!(!env("PATH").is_empty(), "PATH is inherited");
    assert_eq!(env("CARGO_MANIFEST_DIR"), "", "nothing else of the gateway's environment is");
    let first = pid(&up, "local");
    assert_eq!((up.status()[0].up, up.status()[0].restarts, up.status()[0].transport), (true, 0, "stdio"));

    let last = answers(up.request(call("local", "tools/call", json!({"name": "crash", "arguments": {}})))).pop();
    let Some(Answer::Failed(why)) = last else { panic!("{last:?}") };
    assert_eq!(why, "MCP server local's process exited (exit status: 3)");
    assert!(!std::path::Path::new(&format!("/proc/{first}")).exists(), "the dead child was reaped");

    // The next call waits for the new child.
    let second = pid(&up, "local");
    assert_ne!(first, second);
    assert_eq!((up.status()[0].up, up.status()[0].restarts), (true, 1));

    up.stop(Duration::from_secs(5));
    assert!(!std::path::Path::new(&format!("/proc/{second}")).exists(), "stop leaves no child, not even a zombie");
    let after = answers(up.request(call("local", "tools/call", json!({"name": "pid", "arguments": {}})))).pop();
    assert!(matches!(after, Some(Answer::Failed(_))), "{after:?}");
}

#[test]
fn a_reload_keeps_a_same_server_replaces_a_changed_one_and_stops_a_gone_one() {
    let up = Upstreams::start(&stdio_settings("local")).unwrap();
    let first = pid(&up, "local");
    // A reload with the same settings keeps the child.
    up.reconfigure(&stdio_settings("local"));
    assert_eq!(pid(&up, "local"), first);
    // A changed server gets a new child; the old one is stopped once its calls end.
    let mut changed = stdio_settings("local");
    changed.servers[0].timeout = Duration::from_secs(30);
    up.reconfigure(&changed);
    let second = pid(&up, "local");
    assert_ne!(first, second);
    // A server gone from the config stops.
    up.reconfigure(&settings(Vec::new()));
    let gone = answers(up.request(call("local", "tools/list", json!({})))).pop();
    assert!(matches!(&gone, Some(Answer::Failed(why)) if why == "no MCP server is named local"), "{gone:?}");
    assert!(up.status().is_empty());
    up.stop(Duration::from_secs(5));
    for pid in [first, second] {
        assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists(), "{pid} was stopped and reaped");
    }
}
