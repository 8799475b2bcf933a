//! The supervisor of a stdio server, on the `mcp` thread: starts its child, opens the session,
//! routes what the child prints, and starts it again with a growing delay when it dies.

use std::rc::Rc;
use std::time::{Duration, Instant};

use futures_channel::mpsc::UnboundedReceiver;
use serde_json::Value;

use super::link::Link;
use super::process::{shorten, ChildEvent};
use super::session::Session;
use super::transport::Inbound;

/// The first delay before a dead child is started again; it doubles up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// A child that ran this long starts again after [`FIRST_BACKOFF`].
const RAN_LONG: Duration = Duration::from_secs(60);

/// Runs a stdio server for the session's life: starts the child, opens the session, routes its
/// messages; when it dies, fails the calls in flight and starts it again after the backoff.
pub async fn supervise(session: Rc<Session>) {
    let Link::Stdio(link) = &session.link else { return };
    let name = session.name().to_string();
    let mut backoff = FIRST_BACKOFF;
    let mut restarts = 0;
    loop {
        session.opening();
        let started = Instant::now();
        match link.start(&name) {
            Err(why) => session.opened(Err(why)),
            Ok(events) => {
                let why = run(&session, events).await;
                link.exited();
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
        link.pause(backoff).await;
        if session.closing.get() {
            break;
        }
        backoff = (backoff * 2).min(MAX_BACKOFF);
        restarts += 1;
        session.status.lock().unwrap_or_else(|e| e.into_inner()).restarts = restarts;
    }
    session.opened(Err(format!("MCP server {name} was stopped")));
    link.ended();
}

/// One child's life: the session opened in the background while its messages are routed;
/// returns why it ended.
async fn run(session: &Rc<Session>, mut events: UnboundedReceiver<ChildEvent>) -> String {
    let opener = session.clone();
    monoio::spawn(async move {
        let outcome = opener.open().await;
        if outcome.is_err() {
            // A child that cannot open a session is of no use: it is started again.
            if let Link::Stdio(link) = &opener.link {
                link.terminate();
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
    format!("MCP server {name}'s process was lost")
}
