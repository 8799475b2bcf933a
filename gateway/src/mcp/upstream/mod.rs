//! The gateway's side of every MCP server: one session per server, held by the `mcp` thread
//! (Streamable HTTP and SSE servers over the client side's connections, stdio servers as
//! supervised child processes). A shard never waits on it: it sends a call and awaits the
//! answers on a channel.
//!
//! Ids are the gateway's own: every request gets an id unique on its server's session, and a
//! call's progress token is replaced by one unique there too, restored in the notifications
//! that come back. A client never sees an upstream's session id.

mod events;
mod http;
mod link;
mod process;
mod session;
mod sse;
mod stdio;
mod supervisor;
mod thread;
mod transport;
mod wire;

#[cfg(test)]
mod tests;

use std::sync::{mpsc, Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::Duration;

use futures_channel::mpsc::{unbounded, UnboundedReceiver, UnboundedSender};
use pointwork_config::{McpSettings, McpTransport};
use serde_json::Value;

use thread::{Command, Statuses};

/// What comes back for one call: any number of notifications, then exactly one of the others.
#[derive(Debug)]
pub enum Answer {
    /// A notification about this call (`notifications/progress`, `notifications/message`), the
    /// whole JSON-RPC message as the server sent it, its progress token the caller's again.
    Notification(Value),
    /// The call's `result`.
    Result(Value),
    /// The server's JSON-RPC `error` object (`code`, `message`, `data`).
    Error(Value),
    /// No answer: the server could not be reached, died, or took longer than its `timeout`
    /// (the call is then cancelled upstream). The reason, for the caller and the log.
    Failed(String),
}

/// One call to a server.
pub struct Call {
    /// The server's name (`mcp_servers.NAME`).
    pub server: String,
    /// `tools/call`, `tools/list`, `prompts/get`, `resources/read`, ….
    pub method: String,
    /// As the caller sent them, the tool's own name already in place.
    pub params: Option<Value>,
    /// The caller's headers the server's `extra_headers` names, name and value.
    pub forwarded: Vec<(String, String)>,
}

/// How one server is doing, for `/metrics` and `/health`.
#[derive(Clone, Debug)]
pub struct ServerStatus {
    pub name: String,
    /// `http`, `sse` or `stdio`.
    pub transport: &'static str,
    /// A session is open (a stdio child runs and answered `initialize`).
    pub up: bool,
    /// Times a stdio child was started again after it died.
    pub restarts: u64,
    /// Why it is down, when it is.
    pub last_error: Option<String>,
}

/// Every MCP server's session, behind the `mcp` thread.
pub struct Upstreams {
    commands: UnboundedSender<Command>,
    statuses: Statuses,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Upstreams {
    /// Starts the `mcp` thread with these servers: stdio children at once, HTTP and SSE
    /// sessions on first use.
    pub fn start(settings: &McpSettings) -> Result<Arc<Upstreams>, String> {
        Upstreams::check(settings)?;
        let (commands, received) = unbounded();
        let statuses = Statuses::default();
        let (settings, shared) = (settings.clone(), statuses.clone());
        let thread = std::thread::Builder::new()
            .name("mcp".into())
            .spawn(move || thread::run(settings, received, shared))
            .map_err(|e| format!("the mcp thread could not be started: {e}"))?;
        Ok(Arc::new(Upstreams { commands, statuses, thread: Mutex::new(Some(thread)) }))
    }

    /// Whether every server's URL can be used; the error names the key (`mcp_servers.NAME.url`).
    pub fn check(settings: &McpSettings) -> Result<(), String> {
        for server in &settings.servers {
            if let McpTransport::Http { url } | McpTransport::Sse { url } = &server.transport {
                wire::Url::parse(url).map_err(|why| format!("{}.url: {why}", server.path))?;
            }
        }
        Ok(())
    }

    /// The servers of a config (at start or on a reload) in `slot`: started the first time
    /// there are any, reconfigured after.
    pub fn serve(slot: &OnceLock<Arc<Upstreams>>, settings: &McpSettings) -> Result<(), String> {
        match slot.get() {
            Some(upstreams) => upstreams.reconfigure(settings),
            None if settings.servers.is_empty() => {}
            None => {
                let _ = slot.set(Upstreams::start(settings)?);
            }
        }
        Ok(())
    }

    /// A reload: new and changed servers start, gone ones stop once their open calls finish.
    pub fn reconfigure(&self, settings: &McpSettings) {
        let _ = self.commands.unbounded_send(Command::Reconfigure(settings.clone()));
    }

    /// Sends one request; its answers come on the channel. Dropping the receiver before the
    /// last answer cancels the call upstream (`notifications/cancelled`).
    pub fn request(&self, call: Call) -> UnboundedReceiver<Answer> {
        let (tx, rx) = unbounded();
        if let Err(e) = self.commands.unbounded_send(Command::Call(call, tx)) {
            if let Command::Call(call, tx) = e.into_inner() {
                let _ = tx.unbounded_send(Answer::Failed(format!("MCP server {} was stopped", call.server)));
            }
        }
        rx
    }

    /// Sends a notification to a server, without an answer.
    pub fn notify(&self, server: &str, method: &str, params: Option<Value>) {
        let notify = Command::Notify { server: server.to_string(), method: method.to_string(), params };
        let _ = self.commands.unbounded_send(notify);
    }

    pub fn status(&self) -> Vec<ServerStatus> {
        let list = self.statuses.lock().unwrap_or_else(|e| e.into_inner());
        list.iter().map(|s| s.lock().unwrap_or_else(|e| e.into_inner()).clone()).collect()
    }

    /// Stops every child process (stdin closed, then SIGTERM, then SIGKILL, each reaped) and
    /// ends the sessions (`DELETE` for Streamable HTTP); returns when done or after `within`.
    pub fn stop(&self, within: Duration) {
        let (done, stopped) = mpsc::channel();
        if self.commands.unbounded_send(Command::Stop(within, done)).is_err() {
            return;
        }
        if stopped.recv_timeout(within + Duration::from_millis(500)).is_ok() {
            if let Some(thread) = self.thread.lock().unwrap_or_else(|e| e.into_inner()).take() {
                let _ = thread.join();
            }
        }
    }
}
