//! The stdio transport: the server is a child process speaking newline-delimited JSON-RPC on its
//! stdin and stdout. Its pipes block, so each child has threads of its own (`process.rs`); the
//! supervisor here, on the `mcp` thread, starts it, opens the session, routes what it prints,
//! and starts it again with a growing delay when it dies.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::{Duration, Instant};

use futures_channel::oneshot;
use serde_json::Value;

use super::link::SendError;
use super::process::{Child, ChildEvent};
use super::session::Session;

/// The first delay before a dead child is started again; it doubles up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// A child that ran this long starts again after [`FIRST_BACKOFF`].
const RAN_LONG: Duration = Duration::from_secs(60);

pub struct StdioLink {
    pub command: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    child: RefCell<Option<Child>>,
    /// Cuts the wait before the next start short (the session is closing).
    wake: RefCell<Option<oneshot::Sender<()>>>,
    /// Told when the supervisor has ended (its last child reaped).
    finished: RefCell<Vec<oneshot::Sender<()>>>,
    ended: Cell<bool>,
    restarts: Cell<u64>,
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
            restarts: Cell::new(0),
        }
    }

    pub fn send(&self, session: &Session, message: &Value) -> Result<(), SendError> {
        let mut line = serde_json::to_vec(message).unwrap_or_default();
        line.push(b'\n');
        match self.child.borrow().as_ref() {
            Some(child) if child.write(line) => Ok(()),
            _ => Err(SendError::Failed(format!("MCP server {}'s process is not running", session.name()))),
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

/// Runs a stdio server for the session's life: starts the child, opens the session, routes its
/// messages; when it dies, fails the calls in flight and starts it again after the backoff.
pub async fn supervise(session: Rc<Session>) {
    let super::link::Link::Stdio(link) = &session.link else { return };
    let name = session.name().to_string();
    let mut backoff = FIRST_BACKOFF;
    loop {
        session.opening();
        let started = Instant::now();
        match Child::spawn(&name, &link.command, &link.args, &link.env) {
            Err(why) => session.opened(Err(why)),
            Ok((child, events)) => {
                *link.child.borrow_mut() = Some(child);
                let why = run(&session, link, events).await;
                link.child.borrow_mut().take();
                session.opening();
                {
                    let mut status = session.status.lock().unwrap_or_else(|e| e.into_inner());
                    status.up = false;
                    status.last_error = Some(why.clone());
                }
                session.fail_all(&why);
            }
        }
        if session.closing.get() {
            break;
        }
        if started.elapsed() >= RAN_LONG {
            backoff = FIRST_BACKOFF;
        }
        let (wake, woken) = oneshot::channel();
        *link.wake.borrow_mut() = Some(wake);
        let _ = monoio::time::timeout(backoff, woken).await;
        if session.closing.get() {
            break;
        }
        backoff = (backoff * 2).min(MAX_BACKOFF);
        link.restarts.set(link.restarts.get() + 1);
        session.status.lock().unwrap_or_else(|e| e.into_inner()).restarts = link.restarts.get();
    }
    session.opened(Err(format!("MCP server {name} was stopped")));
    link.ended.set(true);
    for finished in link.finished.borrow_mut().drain(..) {
        let _ = finished.send(());
    }
}

/// One child's life: the session opened in the background while its messages are routed;
/// returns why it ended.
async fn run(
    session: &Rc<Session>,
    link: &StdioLink,
    mut events: futures_channel::mpsc::UnboundedReceiver<ChildEvent>,
) -> String {
    let opener = session.clone();
    monoio::spawn(async move {
        let outcome = opener.open().await;
        if outcome.is_err() {
            // A child that cannot open a session is of no use: it is started again.
            if let super::link::Link::Stdio(link) = &opener.link {
                if let Some(child) = link.child.borrow().as_ref() {
                    child.signal(libc::SIGTERM);
                }
            }
        }
        opener.opened(outcome);
    });
    let name = session.name();
    while let Ok(event) = events.recv().await {
        match event {
            ChildEvent::Line(line) => match serde_json::from_slice::<Value>(&line) {
                Ok(message) => session.on_message(message, None),
                Err(_) => eprintln!("mcp server {name}: stdout line is not JSON-RPC: {}", shorten(&line)),
            },
            ChildEvent::Exited(status) => return format!("MCP server {name}'s process exited ({status})"),
        }
    }
    let _ = link;
    format!("MCP server {name}'s process was lost")
}

/// A line for the log: at most 300 characters.
pub fn shorten(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    let text = text.trim_end();
    match text.char_indices().nth(300) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}
