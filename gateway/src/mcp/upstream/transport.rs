//! What every transport shares: the error of a send, and the session as a transport sees it —
//! the server's settings, and where the messages the server sends and the loss of its stream
//! are reported.

use std::rc::Rc;

use pointwork_config::McpServer;
use serde_json::Value;

/// Why a message was not delivered.
#[derive(Debug)]
pub enum SendError {
    /// The server no longer knows the session (HTTP 404 on it): open a new one and try again.
    Lost(String),
    Failed(String),
}

/// The session's side a transport reports to: the messages that arrive, the stream or the
/// process lost. The session implements it; a transport never holds the session itself.
pub trait Inbound: 'static {
    /// The server's settings (`mcp_servers.NAME`).
    fn server(&self) -> &McpServer;

    /// The protocol version the server chose in answer to `initialize`.
    fn protocol(&self) -> String;

    /// Which session (counting those opened) is the current one.
    fn epoch(&self) -> u64;

    /// Whether request `id` still waits for its final answer.
    fn is_pending(&self, id: u64) -> bool;

    /// A message from the server. `call`: the request whose response stream it came on.
    fn on_message(self: &Rc<Self>, message: Value, call: Option<u64>);

    /// The session `epoch` was found lost: the next request opens a new one.
    fn lost(&self, epoch: u64, why: &str);

    /// Answers every request in flight with `Failed(why)` (the stream or the process is gone).
    fn fail_all(&self, why: &str);

    /// The server's name (`mcp_servers.NAME`).
    fn name(&self) -> &str {
        &self.server().name
    }
}

/// The headers that carry the server's credential and its `static_headers`.
pub fn credentials(server: &McpServer) -> Vec<(String, String)> {
    let mut headers = Vec::new();
    if let Some((name, value)) = server.auth.header() {
        headers.push((name.to_string(), value));
    }
    headers.extend(server.static_headers.iter().cloned());
    headers
}
