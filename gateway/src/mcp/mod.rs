//! The MCP gateway: LiteLLM's `mcp_servers` behind one Streamable HTTP endpoint (`/mcp`), each
//! server's tools, prompts and resources under its own name, its credential kept here.
//! A second pipeline beside the model routes: authenticate, resolve the namespaced name,
//! forward to the server's session, record.

pub mod access;
pub mod endpoint;
pub mod event_stream;
pub(crate) mod headers;
pub mod methods;
pub mod names;
pub mod outcome;
pub mod pushed;
pub mod relay;
pub mod rest;
pub mod rpc;
pub mod session;
pub mod upstream;

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;
use std::sync::Mutex;
use std::time::Duration;

use futures_channel::mpsc::{unbounded, UnboundedReceiver, UnboundedSender};
use futures_channel::oneshot;
use serde_json::Value;

use crate::mcp::outcome::Outcome;
use crate::mcp::pushed::Pushed;
use crate::metrics::render::escape;

/// What a forwarded request is counted by: server, method, tool (tool calls only), outcome.
type CountKey = (String, String, String, Outcome);

/// The most series of counts kept. A tool's name is the client's to choose (the server may
/// not even have it): once this many are counted, a new name is counted as `_other`.
const MAX_SERIES: usize = 2000;
/// The tool label of the names counted beyond [`MAX_SERIES`].
const OTHER_TOOLS: &str = "_other";

/// What every shard shares about the gateway's MCP clients.
#[derive(Default)]
pub struct McpClients {
    pub sessions: session::Sessions,
    /// The calls under way, by session and the client's request id: how a client's
    /// `notifications/cancelled` reaches the shard serving the call.
    calls: Mutex<HashMap<(String, String), oneshot::Sender<()>>>,
    /// Requests sent on to servers: count and seconds by server, method, tool and outcome.
    counts: Mutex<BTreeMap<CountKey, (u64, f64)>>,
    /// The open `GET /mcp` streams.
    streams: Mutex<Vec<UnboundedSender<Pushed>>>,
}

impl McpClients {
    /// A new stream's end of what is pushed to every session.
    pub fn listen(&self) -> UnboundedReceiver<Pushed> {
        let (tx, rx) = unbounded();
        self.streams.lock().unwrap_or_else(|e| e.into_inner()).push(tx);
        rx
    }

    /// Tells every open stream; forgets those whose client is gone.
    pub fn push(&self, what: Pushed) {
        self.streams.lock().unwrap_or_else(|e| e.into_inner()).retain(|tx| tx.unbounded_send(what).is_ok());
    }

    /// Notes a call under way; the receiver fires when the client cancels it.
    pub fn register(&self, session: &str, id: &Value) -> oneshot::Receiver<()> {
        let (tx, rx) = oneshot::channel();
        self.calls.lock().unwrap_or_else(|e| e.into_inner()).insert((session.to_string(), id.to_string()), tx);
        rx
    }

    pub fn unregister(&self, session: &str, id: &Value) {
        self.calls.lock().unwrap_or_else(|e| e.into_inner()).remove(&(session.to_string(), id.to_string()));
    }

    /// The client of `session` cancelled its request `id`.
    pub fn cancel(&self, session: &str, id: &Value) {
        let tx = self.calls.lock().unwrap_or_else(|e| e.into_inner()).remove(&(session.to_string(), id.to_string()));
        if let Some(tx) = tx {
            let _ = tx.send(());
        }
    }

    pub fn count(&self, server: &str, method: &str, target: &str, outcome: Outcome, took: Duration) {
        // Only tool calls are counted per tool: a resource's URI is no label.
        let target = if method == "tools/call" { target } else { "" };
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        let mut key = (server.to_string(), method.to_string(), target.to_string(), outcome);
        if counts.len() >= MAX_SERIES && !counts.contains_key(&key) {
            key.2 = OTHER_TOOLS.to_string();
        }
        let entry = counts.entry(key).or_default();
        entry.0 += 1;
        entry.1 += took.as_secs_f64();
    }

    /// The MCP part of `/metrics`.
    pub fn render(&self, upstreams: Option<&upstream::Upstreams>, out: &mut String) {
        let counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        out.push_str("# HELP pointwork_mcp_requests_total Requests sent on to MCP servers, by server, method, tool and outcome.\n");
        out.push_str("# TYPE pointwork_mcp_requests_total counter\n");
        for (key, (n, _)) in counts.iter() {
            let _ = writeln!(out, "pointwork_mcp_requests_total{{{}}} {n}", labels(key));
        }
        out.push_str(
            "# HELP pointwork_mcp_request_seconds_total Time MCP requests took, by server, method, tool and outcome.\n",
        );
        out.push_str("# TYPE pointwork_mcp_request_seconds_total counter\n");
        for (key, (_, secs)) in counts.iter() {
            let _ = writeln!(out, "pointwork_mcp_request_seconds_total{{{}}} {secs:.6}", labels(key));
        }
        out.push_str("# HELP pointwork_mcp_sessions Open MCP client sessions.\n# TYPE pointwork_mcp_sessions gauge\n");
        let _ = writeln!(out, "pointwork_mcp_sessions {}", self.sessions.count());
        let Some(upstreams) = upstreams else { return };
        let status = upstreams.status();
        out.push_str("# HELP pointwork_mcp_server_up Whether the gateway's session with an MCP server is open.\n# TYPE pointwork_mcp_server_up gauge\n");
        for s in &status {
            let _ = writeln!(
                out,
                "pointwork_mcp_server_up{{server=\"{}\",transport=\"{}\"}} {}",
                escape(&s.name),
                s.transport,
                u8::from(s.up)
            );
        }
        out.push_str("# HELP pointwork_mcp_server_restarts_total Times a stdio MCP server was started again after it died.\n# TYPE pointwork_mcp_server_restarts_total counter\n");
        for s in &status {
            let _ =
                writeln!(out, "pointwork_mcp_server_restarts_total{{server=\"{}\"}} {}", escape(&s.name), s.restarts);
        }
    }
}

/// A series' labels, escaped: a server's name is the config's, a tool's the client's.
fn labels((server, method, tool, outcome): &CountKey) -> String {
    format!(
        "server=\"{}\",method=\"{}\",tool=\"{}\",outcome=\"{}\"",
        escape(server),
        escape(method),
        escape(tool),
        outcome.name()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_escape_the_clients_tool_names_and_stay_bounded() {
        let clients = McpClients::default();
        clients.count("web", "tools/call", "a\"}\nfake_metric 1", Outcome::ToolError, Duration::from_millis(2));
        for n in 0..MAX_SERIES + 50 {
            clients.count("web", "tools/call", &format!("bogus-{n}"), Outcome::ToolError, Duration::ZERO);
        }
        let mut out = String::new();
        clients.render(None, &mut out);
        assert!(out.contains(r#"tool="a\"}\nfake_metric 1""#), "{}", &out[..400]);
        assert!(!out.lines().any(|l| l.starts_with("fake_metric")));
        assert_eq!(out.lines().filter(|l| l.starts_with("pointwork_mcp_requests_total")).count(), MAX_SERIES + 1);
        // The injected name took one of the series: 51 of the bogus names are `_other`.
        assert!(out.contains(r#"tool="_other",outcome="tool_error"} 51"#));
    }
}
