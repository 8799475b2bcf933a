//! The upstream side against real MCP servers written with the official Python SDK
//! (tests/mcp/): Streamable HTTP, SSE and stdio.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use pointwork_config::{McpAuth, McpServer, McpSettings, McpTransport};
use serde_json::{json, Value};

use super::{Answer, Call, Upstreams};

mod stdio;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

pub fn python() -> String {
    repo().join(".venv/bin/python").display().to_string()
}

pub fn script(name: &str) -> String {
    repo().join("tests/mcp").join(name).display().to_string()
}

/// A Python test server, killed and reaped when dropped.
pub struct PyServer {
    child: Child,
    pub port: u16,
}

impl PyServer {
    /// Starts `http_server.py` with these arguments and waits for its `ready PORT` line.
    pub fn start(args: &[&str]) -> PyServer {
        let mut child = Command::new(python())
            .arg(script("http_server.py"))
            .args(args)
            .stdout(Stdio::piped())
            .spawn()
            .expect("the Python MCP server starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let port = line
            .trim()
            .strip_prefix("ready ")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no ready line: {line:?}"));
        PyServer { child, port }
    }
}

impl Drop for PyServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn server(name: &str, transport: McpTransport) -> McpServer {
    McpServer {
        name: name.into(),
        prefix: name.into(),
        server_id: name.into(),
        description: None,
        transport,
        auth: McpAuth::None,
        static_headers: Vec::new(),
        forwarded_headers: Vec::new(),
        allowed_tools: None,
        disallowed_tools: Vec::new(),
        access_groups: Vec::new(),
        allow_all_keys: false,
        timeout: Duration::from_secs(20),
        path: format!("mcp_servers.{name}"),
    }
}

pub fn settings(servers: Vec<McpServer>) -> McpSettings {
    McpSettings { servers, separator: "-".into() }
}

pub fn call(server: &str, method: &str, params: Value) -> Call {
    Call { server: server.into(), method: method.into(), params: Some(params), forwarded: Vec::new() }
}

/// Every answer to one call, the final one last (read on a monoio runtime, as a shard would).
pub fn answers(mut rx: futures_channel::mpsc::UnboundedReceiver<Answer>) -> Vec<Answer> {
    let mut runtime = monoio::RuntimeBuilder::<monoio::LegacyDriver>::new().enable_timer().build().unwrap();
    runtime.block_on(async move {
        let mut all = Vec::new();
        loop {
            let next = monoio::time::timeout(Duration::from_secs(30), rx.recv()).await;
            let answer = next.expect("an answer within 30 s").expect("a final answer before the channel closes");
            let last = !matches!(answer, Answer::Notification(_));
            all.push(answer);
            if last {
                return all;
            }
        }
    })
}

/// The final answer's result.
pub fn result(up: &Upstreams, call: Call) -> Value {
    match answers(up.request(call)).pop() {
        Some(Answer::Result(result)) => result,
        other => panic!("expected a result, got {other:?}"),
    }
}

/// The text of a tool call's first content item.
pub fn text(result: &Value) -> String {
    result["content"][0]["text"].as_str().unwrap_or_default().to_string()
}

/// The requests a server recorded, one JSON value each.
fn recorded(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path).unwrap_or_default().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// Waits until the record holds a request `found` accepts (the server writes as it receives).
fn await_recorded(path: &std::path::Path, found: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(hit) = recorded(path).into_iter().find(|r| found(r)) {
            return hit;
        }
        assert!(Instant::now() < deadline, "never recorded: {:#?}", recorded(path));
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn record_file(name: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("pointwork-mcp-{name}-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}

fn method(record: &Value) -> &str {
    record["body"]["method"].as_str().unwrap_or_default()
}

#[test]
fn streamable_http_initializes_lists_and_calls_with_only_the_servers_credential() {
    let record = record_file("http");
    let py = PyServer::start(&["--record", record.to_str().unwrap()]);
    let mut s = server("web", McpTransport::Http { url: format!("http://127.0.0.1:{}/mcp", py.port) });
    s.auth = McpAuth::Bearer("upstream-secret".into());
    s.static_headers = vec![("x-static".into(), "fixed".into())];
    let up = Upstreams::start(&settings(vec![s])).unwrap();

    let tools = result(&up, call("web", "tools/list", json!({})));
    let names: Vec<&str> = tools["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    for want in ["echo", "add", "whoami", "slow", "fail"] {
        assert!(names.contains(&want), "{names:?}");
    }
    assert_eq!(
        text(&result(&up, call("web", "tools/call", json!({"name": "echo", "arguments": {"text": "hi"}})))),
        "hi"
    );
    assert_eq!(
        text(&result(&up, call("web", "tools/call", json!({"name": "add", "arguments": {"a": 2, "b": 3}})))),
        "5.0"
    );
    let failed = result(&up, call("web", "tools/call", json!({"name": "fail", "arguments": {}})));
    assert_eq!(failed["isError"], true);
    let prompt = result(&up, call("web", "prompts/get", json!({"name": "greet", "arguments": {"name": "Ada"}})));
    assert!(prompt["messages"][0]["content"]["text"].as_str().unwrap().contains("Ada"));
    let note = result(&up, call("web", "resources/read", json!({"uri": "note://hello"})));
    assert_eq!(note["contents"][0]["text"], "hello from the note");
    let unknown = answers(up.request(call("web", "tools/nonexistent", json!({})))).pop();
    assert!(matches!(&unknown, Some(Answer::Error(e)) if e["code"] == -32601), "{unknown:?}");

    let mut who = call("web", "tools/call", json!({"name": "whoami", "arguments": {}}));
    who.forwarded = vec![("x-trace".into(), "t-1".into())];
    let seen: Value = serde_json::from_str(&text(&result(&up, who))).unwrap();
    assert_eq!(seen, json!({"authorization": "Bearer upstream-secret", "x-static": "fixed", "x-trace": "t-1"}));
    assert_eq!(up.status()[0].transport, "http");
    assert!(up.status()[0].up);

    up.stop(Duration::from_secs(5));
    let all = recorded(&record);
    assert_eq!(method(&all[0]), "initialize");
    assert_eq!(all[0]["body"]["params"]["protocolVersion"], "2025-06-18");
    assert_eq!(all[0]["body"]["params"]["clientInfo"]["name"], "pointwork");
    assert_eq!(method(&all[1]), "notifications/initialized");
    assert_eq!(all.iter().filter(|r| method(r) == "initialize").count(), 1, "one session for every call");
    let session = all[1]["headers"]["mcp-session-id"].as_str().expect("the session id on every later request");
    let mut ids = Vec::new();
    for r in &all {
        let h = &r["headers"];
        assert_eq!(h["authorization"], "Bearer upstream-secret", "{r}");
        assert_eq!(h["x-static"], "fixed");
        assert!(h.get("x-api-key").is_none());
        if method(r) != "initialize" {
            assert_eq!(h["mcp-session-id"], session, "{r}");
            assert_eq!(h["mcp-protocol-version"], "2025-06-18");
        }
        if let Some(id) = r["body"]["id"].as_u64() {
            assert!(!ids.contains(&id), "ids are unique on the session: {id}");
            ids.push(id);
        }
    }
    let delete = all.last().unwrap();
    assert_eq!(
        (delete["method"].as_str(), delete["headers"]["mcp-session-id"].as_str()),
        (Some("DELETE"), Some(session))
    );
}

#[test]
fn progress_comes_back_with_the_callers_token() {
    let record = record_file("progress");
    let py = PyServer::start(&["--record", record.to_str().unwrap()]);
    let up = Upstreams::start(&settings(vec![server(
        "web",
        McpTransport::Http { url: format!("http://127.0.0.1:{}/mcp", py.port) },
    )]))
    .unwrap();
    let slow =
        json!({"name": "slow", "arguments": {"seconds": 0.3, "steps": 3}, "_meta": {"progressToken": "caller-7"}});
    let all = answers(up.request(call("web", "tools/call", slow)));
    assert_eq!(all.len(), 4, "{all:?}");
    for (i, answer) in all[..3].iter().enumerate() {
        let Answer::Notification(n) = answer else { panic!("{answer:?}") };
        assert_eq!(n["method"], "notifications/progress");
        assert_eq!(n["params"]["progressToken"], "caller-7");
        assert_eq!(n["params"]["progress"], i as u64 + 1);
    }
    assert!(matches!(&all[3], Answer::Result(r) if text(r) == "done after 3 steps"));
    let sent = recorded(&record).into_iter().find(|r| r["body"]["params"]["name"] == "slow").unwrap();
    let token = &sent["body"]["params"]["_meta"]["progressToken"];
    assert_eq!(token, &sent["body"]["id"], "the server saw the gateway's token, not the caller's");
    up.stop(Duration::from_secs(5));
}

#[test]
fn the_gateway_answers_a_servers_ping_and_refuses_its_other_requests() {
    let py = PyServer::start(&[]);
    let up = Upstreams::start(&settings(vec![server(
        "web",
        McpTransport::Http { url: format!("http://127.0.0.1:{}/mcp", py.port) },
    )]))
    .unwrap();
    let asked: Value = serde_json::from_str(&text(&result(
        &up,
        call("web", "tools/call", json!({"name": "ask_client", "arguments": {}})),
    )))
    .unwrap();
    assert_eq!(asked["ping"], "answered");
    assert!(asked["roots"].as_str().unwrap().contains("the gateway does not serve roots/list"), "{asked}");
    up.stop(Duration::from_secs(5));
}

#[test]
fn a_call_past_its_timeout_fails_and_is_cancelled_upstream() {
    let record = record_file("timeout");
    let py = PyServer::start(&["--record", record.to_str().unwrap()]);
    let mut s = server("web", McpTransport::Http { url: format!("http://127.0.0.1:{}/mcp", py.port) });
    s.timeout = Duration::from_millis(1500);
    let up = Upstreams::start(&settings(vec![s])).unwrap();
    let slow = json!({"name": "slow", "arguments": {"seconds": 10, "steps": 1}});
    let last = answers(up.request(call("web", "tools/call", slow))).pop();
    let Some(Answer::Failed(why)) = last else { panic!("{last:?}") };
    assert_eq!(why, "no answer from MCP server web within 1.5s (the call was cancelled)");
    let sent = recorded(&record).into_iter().find(|r| r["body"]["params"]["name"] == "slow").unwrap();
    let cancelled = await_recorded(&record, |r| method(r) == "notifications/cancelled");
    assert_eq!(cancelled["body"]["params"]["requestId"], sent["body"]["id"]);
    assert_eq!(cancelled["body"]["params"]["reason"], "timeout");
    // The session still serves.
    assert_eq!(
        text(&result(&up, call("web", "tools/call", json!({"name": "echo", "arguments": {"text": "after"}})))),
        "after"
    );
    up.stop(Duration::from_secs(5));
}

#[test]
fn a_caller_that_stops_listening_cancels_the_call_upstream() {
    let record = record_file("dropped");
    let py = PyServer::start(&["--record", record.to_str().unwrap()]);
    let up = Upstreams::start(&settings(vec![server(
        "web",
        McpTransport::Http { url: format!("http://127.0.0.1:{}/mcp", py.port) },
    )]))
    .unwrap();
    let slow = json!({"name": "slow", "arguments": {"seconds": 10, "steps": 2}, "_meta": {"progressToken": 1}});
    let mut rx = up.request(call("web", "tools/call", slow));
    let mut runtime = monoio::RuntimeBuilder::<monoio::LegacyDriver>::new().enable_timer().build().unwrap();
    let first = runtime.block_on(async { monoio::time::timeout(Duration::from_secs(20), rx.recv()).await });
    assert!(matches!(first, Ok(Ok(Answer::Notification(_)))), "{first:?}");
    drop(rx);
    let cancelled = await_recorded(&record, |r| method(r) == "notifications/cancelled");
    assert_eq!(cancelled["body"]["params"]["reason"], "the client cancelled the call");
    up.stop(Duration::from_secs(5));
}

#[test]
fn a_session_the_server_lost_is_opened_again_and_the_call_retried() {
    let record = record_file("lost");
    let py = PyServer::start(&["--record", record.to_str().unwrap()]);
    let port = py.port.to_string();
    let up = Upstreams::start(&settings(vec![server(
        "web",
        McpTransport::Http { url: format!("http://127.0.0.1:{port}/mcp") },
    )]))
    .unwrap();
    assert_eq!(
        text(&result(&up, call("web", "tools/call", json!({"name": "echo", "arguments": {"text": "one"}})))),
        "one"
    );
    drop(py);
    // The same port, a new process: it knows none of the old sessions.
    let _py = PyServer::start(&["--port", &port, "--record", record.to_str().unwrap()]);
    assert_eq!(
        text(&result(&up, call("web", "tools/call", json!({"name": "echo", "arguments": {"text": "two"}})))),
        "two"
    );
    let all = recorded(&record);
    assert_eq!(all.iter().filter(|r| method(r) == "initialize").count(), 2);
    let echoes: Vec<_> = all.iter().filter(|r| r["body"]["params"]["arguments"]["text"] == "two").collect();
    assert_eq!(echoes.len(), 2, "sent on the lost session, then once more on the new one");
    assert_ne!(echoes[0]["headers"]["mcp-session-id"], echoes[1]["headers"]["mcp-session-id"]);
    up.stop(Duration::from_secs(5));
}

#[test]
fn the_sse_transport_lists_and_calls() {
    let record = record_file("sse");
    let py = PyServer::start(&["--transport", "sse", "--record", record.to_str().unwrap()]);
    let mut s = server("old", McpTransport::Sse { url: format!("http://127.0.0.1:{}/sse", py.port) });
    s.auth = McpAuth::ApiKey("k-1".into());
    let up = Upstreams::start(&settings(vec![s])).unwrap();
    let tools = result(&up, call("old", "tools/list", json!({})));
    assert!(tools["tools"].as_array().unwrap().iter().any(|t| t["name"] == "echo"));
    assert_eq!(
        text(&result(&up, call("old", "tools/call", json!({"name": "echo", "arguments": {"text": "via sse"}})))),
        "via sse"
    );
    let slow = json!({"name": "slow", "arguments": {"seconds": 0.2, "steps": 2}, "_meta": {"progressToken": "p"}});
    let all = answers(up.request(call("old", "tools/call", slow)));
    assert_eq!(all.len(), 3, "{all:?}");
    assert!(matches!(&all[0], Answer::Notification(n) if n["params"]["progressToken"] == "p"));
    assert_eq!(up.status()[0].transport, "sse");
    up.stop(Duration::from_secs(5));
    let all = recorded(&record);
    assert_eq!(all[0]["method"], "GET");
    assert!(all.iter().all(|r| r["headers"]["x-api-key"] == "k-1" && r["headers"].get("authorization").is_none()));
}

#[test]
fn an_unknown_server_or_an_unreachable_one_fails_with_its_name() {
    let s = server("gone", McpTransport::Http { url: "http://127.0.0.1:1/mcp".into() });
    let up = Upstreams::start(&settings(vec![s])).unwrap();
    let last = answers(up.request(call("nope", "tools/list", json!({})))).pop();
    assert!(matches!(&last, Some(Answer::Failed(why)) if why == "no MCP server is named nope"), "{last:?}");
    let last = answers(up.request(call("gone", "tools/list", json!({})))).pop();
    let Some(Answer::Failed(why)) = last else { panic!("{last:?}") };
    assert!(why.starts_with("MCP server gone could not be reached: connect to 127.0.0.1:1 failed"), "{why}");
    assert_eq!(up.status()[0].last_error.as_deref(), Some(why.as_str()));
    up.stop(Duration::from_secs(5));
    let bad = settings(vec![server("bad", McpTransport::Http { url: "ftp://x".into() })]);
    let err = Upstreams::start(&bad).err().unwrap();
    assert!(err.starts_with("mcp_servers.bad.url: "), "{err}");
}
