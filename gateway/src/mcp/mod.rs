//! The MCP gateway: LiteLLM's `mcp_servers` behind one Streamable HTTP endpoint (`/mcp`), each
//! server's tools, prompts and resources under its own name, its credential kept here.
//! A second pipeline beside the model routes: authenticate, resolve the namespaced name,
//! forward to the server's session, record.

pub mod access;
pub mod endpoint;
mod headers;
pub mod methods;
pub mod names;
pub mod relay;
pub mod rest;
pub mod rpc;
pub mod session;
pub mod upstream;

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;
use std::sync::Mutex;
use std::time::Duration;

use futures_channel::oneshot;
use serde_json::Value;

use crate::mcp::relay::Outcome;

/// What every shard shares about the gateway's MCP clients.
#[derive(Default)]
pub struct McpClients {
    pub sessions: session::Sessions,
    /// The calls under way, by session and the client's request id: how a client's
    /// `notifications/cancelled` reaches the shard serving the call.
    calls: Mutex<HashMap<(String, String), oneshot::Sender<()>>>,
    /// Requests sent on to servers: count and seconds by server, method, tool and outcome.
    counts: Mutex<BTreeMap<Labels, (u64, f64)>>,
}

/// A forwarded request's labels: server, method, tool and outcome.
type Labels = (String, String, String, Outcome);

impl McpClients {
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
        let entry = counts.entry((server.to_string(), method.to_string(), target.to_string(), outcome)).or_default();
        entry.0 += 1;
        entry.1 += took.as_secs_f64();
    }

    /// The MCP part of `/metrics`.
    pub fn render(&self, upstreams: Option<&upstream::Upstreams>, out: &mut String) {
        let counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        out.push_str("# HELP pointwork_mcp_requests_total Requests sent on to MCP servers, by server, method, tool and outcome.\n");
        out.push_str("# TYPE pointwork_mcp_requests_total counter\n");
        for ((server, method, tool, outcome), (n, _)) in counts.iter() {
            let _ = writeln!(out, "pointwork_mcp_requests_total{{server=\"{server}\",method=\"{method}\",tool=\"{tool}\",outcome=\"{}\"}} {n}", outcome.name());
        }
        out.push_str(
            "# HELP pointwork_mcp_request_seconds_total Time MCP requests took, by server, method, tool and outcome.\n",
        );
        out.push_str("# TYPE pointwork_mcp_request_seconds_total counter\n");
        for ((server, method, tool, outcome), (_, secs)) in counts.iter() {
            let _ = writeln!(out, "pointwork_mcp_request_seconds_total{{server=\"{server}\",method=\"{method}\",tool=\"{tool}\",outcome=\"{}\"}} {secs:.6}", outcome.name());
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
                s.name,
                s.transport,
                u8::from(s.up)
            );
        }
        out.push_str("# HELP pointwork_mcp_server_restarts_total Times a stdio MCP server was started again after it died.\n# TYPE pointwork_mcp_server_restarts_total counter\n");
        for s in &status {
            let _ = writeln!(out, "pointwork_mcp_server_restarts_total{{server=\"{}\"}} {}", s.name, s.restarts);
        }
    }
}
