//! The stdio transport: the server is a child process speaking newline-delimited JSON-RPC on its
//! stdin and stdout. Its pipes block, so each child has threads of its own (`process.rs`); the
//! link holds the running child, and the supervisor (`supervisor.rs`) starts it, opens the
//! session, routes what it prints, and starts it again when it dies.

use std::cell::{Cell, RefCell};
use std::time::Duration;

use futures_channel::mpsc::UnboundedReceiver;
use futures_channel::oneshot;
use serde_json::Value;

use super::process::{Child, ChildEvent};
use super::transport::SendError;

pub struct StdioLink {
    command: String,
    args: Vec<String>,
    env: Vec<(String, String)>,
    child: RefCell<Option<Child>>,
    /// Cuts the wait before the next start short (the session is closing).
    wake: RefCell<Option<oneshot::Sender<()>>>,
    /// Told when the supervisor has ended (its last child reaped).
    finished: RefCell<Vec<oneshot::Sender<()>>>,
    ended: Cell<bool>,
}

impl StdioLink {
    pub fn new(command: String, args: Vec<String>, env: Vec<(String, String)>) -> StdioLink {
        StdioLink {
            command,
            args,
            env,
            child: RefCell::new(None),
            wake: RefCell::new(None),
            finished: RefCell::new(Vec::new()),
            ended: Cell::new(false),
        }
    }

    /// `name`: the server's, for the log and the errors.
    pub fn send(&self, name: &str, message: &Value) -> Result<(), SendError> {
        let mut line = serde_json::to_vec(message).unwrap_or_default();
        line.push(b'\n');
        match self.child.borrow().as_ref() {
            Some(child) if child.write(line) => Ok(()),
            _ => Err(SendError::Failed(format!("MCP server {name}'s process is not running"))),
        }
    }

    /// Starts the child; what its threads report comes on the channel.
    pub fn start(&self, name: &str) -> Result<UnboundedReceiver<ChildEvent>, String> {
        let (child, events) = Child::spawn(name, &self.command, &self.args, &self.env)?;
        *self.child.borrow_mut() = Some(child);
        Ok(events)
    }

    /// The child exited (and was reaped): no message goes to it any more.
    pub fn exited(&self) {
        self.child.borrow_mut().take();
    }

    /// Asks the running child to end (SIGTERM).
    pub fn terminate(&self) {
        if let Some(child) = self.child.borrow().as_ref() {
            child.signal(libc::SIGTERM);
        }
    }

    /// Waits `delay` before the next start, less once the link is being stopped.
    pub async fn pause(&self, delay: Duration) {
        let (wake, woken) = oneshot::channel();
        *self.wake.borrow_mut() = Some(wake);
        let _ = monoio::time::timeout(delay, woken).await;
    }

    /// The supervisor has ended: no child runs and none starts again.
    pub fn ended(&self) {
        self.ended.set(true);
        for finished in self.finished.borrow_mut().drain(..) {
            let _ = finished.send(());
        }
    }

    /// Stops the child: stdin closed, then SIGTERM, then SIGKILL, a third of `within` apart;
    /// returns once the supervisor has reaped it (or `within` passed).
    pub async fn stop(&self, within: Duration) {
        if self.ended.get() {
            return;
        }
        let (tx, mut finished) = oneshot::channel();
        self.finished.borrow_mut().push(tx);
        if let Some(wake) = self.wake.borrow_mut().take() {
            let _ = wake.send(());
        }
        let step = within / 3;
        if let Some(child) = self.child.borrow().as_ref() {
            child.close_stdin();
        }
        for signal in [Some(libc::SIGTERM), Some(libc::SIGKILL), None] {
            if monoio::time::timeout(step, &mut finished).await.is_ok() {
                return;
            }
            if let (Some(signal), Some(child)) = (signal, self.child.borrow().as_ref()) {
                child.signal(signal);
            }
        }
    }
}
