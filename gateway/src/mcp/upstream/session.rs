//! One server's session on the `mcp` thread, whatever its transport: the ids of the requests in
//! flight, their progress tokens, the session opened (`initialize`) when first needed and again
//! after it is lost, and the messages the server sends routed to their calls.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_channel::mpsc::UnboundedSender;
use futures_channel::oneshot;
use pointwork_config::McpServer;
use serde_json::{json, Value};

use super::link::Link;
use super::transport::{Inbound, SendError};
use super::{Answer, ServerStatus};

/// The protocol version the gateway offers in `initialize`.
pub const PROTOCOL_VERSION: &str = "2025-06-18";
/// How often a call checks whether its caller is still waiting.
const CALLER_CHECK: Duration = Duration::from_millis(200);

/// A request in flight.
struct Pending {
    /// Where its notifications go (none for the gateway's own `initialize`).
    notify: Option<UnboundedSender<Answer>>,
    /// The caller's `_meta.progressToken`, replaced upstream by the request's id.
    caller_token: Option<Value>,
    /// Its final answer.
    done: oneshot::Sender<Answer>,
}

/// Whether the session is open.
enum Ready {
    Down,
    /// Being opened (or, for stdio, the child being started): these wait for the outcome.
    Opening(Vec<oneshot::Sender<Result<(), String>>>),
    Up,
}

pub struct Session {
    pub server: McpServer,
    pub status: Arc<Mutex<ServerStatus>>,
    pub link: Link,
    next_id: Cell<u64>,
    pending: RefCell<HashMap<u64, Pending>>,
    ready: RefCell<Ready>,
    /// Counts the sessions opened: a loss seen on an older one is already dealt with.
    epoch: Cell<u64>,
    /// The protocol version the server chose.
    protocol: RefCell<String>,
    open_calls: Cell<usize>,
    idle_waiters: RefCell<Vec<oneshot::Sender<()>>>,
    /// Set once the session is being closed: no new session opens.
    pub closing: Cell<bool>,
}

impl Session {
    pub fn new(server: McpServer, status: Arc<Mutex<ServerStatus>>, link: Link) -> Rc<Session> {
        Rc::new(Session {
            server,
            status,
            link,
            next_id: Cell::new(1),
            pending: RefCell::new(HashMap::new()),
            ready: RefCell::new(Ready::Down),
            epoch: Cell::new(0),
            protocol: RefCell::new(PROTOCOL_VERSION.to_string()),
            open_calls: Cell::new(0),
            idle_waiters: RefCell::new(Vec::new()),
            closing: Cell::new(false),
        })
    }

    fn next_id(&self) -> u64 {
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        id
    }

    /// One call, its answers sent to `tx` until the final one; cancelled upstream when it takes
    /// longer than the server's timeout or the caller stops listening.
    pub async fn call(
        self: Rc<Self>,
        method: String,
        params: Option<Value>,
        forwarded: Vec<(String, String)>,
        tx: UnboundedSender<Answer>,
    ) {
        self.open_calls.set(self.open_calls.get() + 1);
        let in_flight = Cell::new(None);
        let timeout = self.server.timeout;
        let outcome = monoio::select! {
            answer = self.exchange(&method, params, &forwarded, &tx, &in_flight) => Some(answer),
            _ = monoio::time::sleep(timeout) => {
                let secs = timeout.as_secs_f64();
                Some(Answer::Failed(format!("no answer from MCP server {} within {secs}s (the call was cancelled)", self.name())))
            }
            _ = caller_gone(&tx) => None,
        };
        let finished = matches!(outcome, Some(Answer::Result(_) | Answer::Error(_)));
        if let (false, Some(id)) = (finished, in_flight.get()) {
            if self.pending.borrow_mut().remove(&id).is_some() {
                let reason = if outcome.is_some() { "timeout" } else { "the client cancelled the call" };
                self.clone().spawn_notify("notifications/cancelled", Some(json!({"requestId": id, "reason": reason})));
            }
        }
        if let Some(answer) = outcome {
            let _ = tx.unbounded_send(answer);
        }
        self.open_calls.set(self.open_calls.get() - 1);
        if self.open_calls.get() == 0 {
            for waiter in self.idle_waiters.borrow_mut().drain(..) {
                let _ = waiter.send(());
            }
        }
    }

    /// Sends the request (opening the session first when needed; once more on a session found
    /// lost) and waits for its final answer.
    async fn exchange(
        self: &Rc<Self>,
        method: &str,
        params: Option<Value>,
        forwarded: &[(String, String)],
        tx: &UnboundedSender<Answer>,
        in_flight: &Cell<Option<u64>>,
    ) -> Answer {
        for attempt in 0..2 {
            if let Err(why) = self.ensure_up().await {
                return Answer::Failed(why);
            }
            let epoch = self.epoch.get();
            let id = self.next_id();
            let mut params = params.clone();
            let caller_token = take_progress_token(&mut params, id);
            let (done, answer) = oneshot::channel();
            self.pending.borrow_mut().insert(id, Pending { notify: Some(tx.clone()), caller_token, done });
            in_flight.set(Some(id));
            let mut message = json!({"jsonrpc": "2.0", "id": id, "method": method});
            if let Some(params) = params {
                message["params"] = params;
            }
            match self.link.send(self, &message, Some(id), forwarded).await {
                Ok(()) => {}
                Err(SendError::Lost(why)) if attempt == 0 => {
                    self.pending.borrow_mut().remove(&id);
                    in_flight.set(None);
                    self.lost(epoch, &why);
                    continue;
                }
                Err(SendError::Lost(why) | SendError::Failed(why)) => {
                    self.pending.borrow_mut().remove(&id);
                    in_flight.set(None);
                    return Answer::Failed(why);
                }
            }
            return answer
                .await
                .unwrap_or_else(|_| Answer::Failed(format!("MCP server {} gave no answer", self.name())));
        }
        unreachable!("the second attempt returns")
    }

    /// Waits until the session is open, opening it when nobody is.
    pub async fn ensure_up(self: &Rc<Self>) -> Result<(), String> {
        let waiter = {
            let mut ready = self.ready.borrow_mut();
            match &mut *ready {
                Ready::Up => return Ok(()),
                Ready::Opening(waiters) => {
                    let (tx, rx) = oneshot::channel();
                    waiters.push(tx);
                    Some(rx)
                }
                Ready::Down if self.closing.get() || self.link.is_supervised() => {
                    return Err(format!("MCP server {} is stopped", self.name()));
                }
                Ready::Down => {
                    *ready = Ready::Opening(Vec::new());
                    None
                }
            }
        };
        if let Some(rx) = waiter {
            return rx.await.unwrap_or_else(|_| Err(format!("MCP server {} is stopped", self.name())));
        }
        let outcome = self.open().await;
        self.opened(outcome.clone());
        outcome
    }

    /// Marks the session as being opened (a stdio child starting): callers wait for it.
    pub fn opening(&self) {
        let mut ready = self.ready.borrow_mut();
        if !matches!(*ready, Ready::Opening(_)) {
            *ready = Ready::Opening(Vec::new());
        }
    }

    /// The outcome of opening the session, to the callers waiting for it. A stdio child that
    /// failed stays `Opening` (its next start is coming) unless the session closes.
    pub fn opened(&self, outcome: Result<(), String>) {
        let waiters = {
            let mut ready = self.ready.borrow_mut();
            let waiters = match &mut *ready {
                Ready::Opening(waiters) => std::mem::take(waiters),
                _ => Vec::new(),
            };
            match &outcome {
                Ok(()) => *ready = Ready::Up,
                Err(_) if self.link.is_supervised() && !self.closing.get() => {}
                Err(_) => *ready = Ready::Down,
            }
            waiters
        };
        {
            let mut status = self.status.lock().unwrap_or_else(|e| e.into_inner());
            status.up = outcome.is_ok();
            status.last_error = outcome.as_ref().err().cloned();
        }
        for waiter in waiters {
            let _ = waiter.send(outcome.clone());
        }
    }

    /// Opens the session: the transport's own step, `initialize`, then `notifications/initialized`.
    pub async fn open(self: &Rc<Self>) -> Result<(), String> {
        self.epoch.set(self.epoch.get() + 1);
        self.link.before_initialize(self).await?;
        let id = self.next_id();
        let (done, answer) = oneshot::channel();
        self.pending.borrow_mut().insert(id, Pending { notify: None, caller_token: None, done });
        let message = json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "pointwork", "version": env!("CARGO_PKG_VERSION")},
        }});
        let name = self.name().to_string();
        let sent = self.link.send(self, &message, Some(id), &[]).await;
        if let Err(SendError::Lost(why) | SendError::Failed(why)) = sent {
            self.pending.borrow_mut().remove(&id);
            return Err(why);
        }
        let answer = monoio::time::timeout(self.server.timeout, answer).await;
        self.pending.borrow_mut().remove(&id);
        let result = match answer {
            Ok(Ok(Answer::Result(result))) => result,
            Ok(Ok(Answer::Error(error))) => return Err(format!("MCP server {name} refused initialize: {error}")),
            Ok(Ok(Answer::Failed(why))) => return Err(why),
            Ok(Ok(Answer::Notification(_)) | Err(_)) => {
                return Err(format!("MCP server {name} gave no answer to initialize"))
            }
            Err(_) => {
                return Err(format!(
                    "MCP server {name} did not answer initialize within {}s",
                    self.server.timeout.as_secs_f64()
                ))
            }
        };
        if let Some(version) = result.get("protocolVersion").and_then(Value::as_str) {
            *self.protocol.borrow_mut() = version.to_string();
        }
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        match self.link.send(self, &initialized, None, &[]).await {
            Ok(()) => Ok(()),
            Err(SendError::Lost(why) | SendError::Failed(why)) => Err(why),
        }
    }

    /// Sends a notification (`notifications/cancelled`, a client's notification) in the
    /// background, the session opened first if need be.
    pub fn spawn_notify(self: Rc<Self>, method: &str, params: Option<Value>) {
        let mut message = json!({"jsonrpc": "2.0", "method": method});
        if let Some(params) = params {
            message["params"] = params;
        }
        monoio::spawn(async move {
            if self.ensure_up().await.is_ok() {
                let _ = self.link.send(&self, &message, None, &[]).await;
            }
        });
    }

    /// A notification from the server, to the call it is about: a progress notification to the
    /// call its token names, any other to the call whose response stream it came on.
    fn on_notification(&self, method: &str, mut message: Value, call: Option<u64>) {
        let pending = self.pending.borrow();
        if method == "notifications/progress" {
            let token = message.pointer("/params/progressToken").and_then(Value::as_u64);
            let Some(p) = token.and_then(|t| pending.get(&t)) else { return };
            if let (Some(notify), Some(caller)) = (&p.notify, &p.caller_token) {
                message["params"]["progressToken"] = caller.clone();
                let _ = notify.unbounded_send(Answer::Notification(message));
            }
            return;
        }
        if let Some(notify) = call.and_then(|id| pending.get(&id)).and_then(|p| p.notify.as_ref()) {
            let _ = notify.unbounded_send(Answer::Notification(message));
        }
    }

    /// Waits until no call is open on this session.
    pub async fn idle(&self) {
        if self.open_calls.get() == 0 {
            return;
        }
        let (tx, rx) = oneshot::channel();
        self.idle_waiters.borrow_mut().push(tx);
        let _ = rx.await;
    }

    /// Closes the session for good: the transport's goodbye (`DELETE`, the child stopped), calls
    /// still in flight failed.
    pub async fn close(self: &Rc<Self>, within: Duration) {
        self.closing.set(true);
        let _ = monoio::time::timeout(within, self.link.close(self, within)).await;
        self.fail_all(&format!("MCP server {} was stopped", self.name()));
        self.opened(Err(format!("MCP server {} was stopped", self.name())));
        *self.ready.borrow_mut() = Ready::Down;
    }
}

/// What the transports report: the server's messages routed to their calls, the session lost.
impl Inbound for Session {
    fn server(&self) -> &McpServer {
        &self.server
    }

    fn protocol(&self) -> String {
        self.protocol.borrow().clone()
    }

    fn epoch(&self) -> u64 {
        self.epoch.get()
    }

    fn is_pending(&self, id: u64) -> bool {
        self.pending.borrow().contains_key(&id)
    }

    fn on_message(self: &Rc<Self>, message: Value, call: Option<u64>) {
        if let Value::Array(batch) = message {
            for one in batch {
                self.on_message(one, call);
            }
            return;
        }
        let method = message.get("method").and_then(Value::as_str).map(str::to_string);
        match (method, message.get("id").cloned()) {
            (Some(method), Some(id)) => {
                let answer = if method == "ping" {
                    json!({"jsonrpc": "2.0", "id": id, "result": {}})
                } else {
                    let text = format!("the gateway does not serve {method}");
                    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": text}})
                };
                let session = self.clone();
                monoio::spawn(async move {
                    let _ = session.link.send(&session, &answer, None, &[]).await;
                });
            }
            (Some(method), None) => self.on_notification(&method, message, call),
            (None, Some(id)) => {
                let Some(pending) = id.as_u64().and_then(|id| self.pending.borrow_mut().remove(&id)) else { return };
                let answer = match (message.get("result"), message.get("error")) {
                    (Some(result), _) => Answer::Result(result.clone()),
                    (None, Some(error)) => Answer::Error(error.clone()),
                    (None, None) => {
                        Answer::Failed(format!("MCP server {} answered with neither result nor error", self.name()))
                    }
                };
                let _ = pending.done.send(answer);
            }
            (None, None) => {}
        }
    }

    fn lost(&self, epoch: u64, why: &str) {
        if epoch != self.epoch.get() {
            return;
        }
        let mut ready = self.ready.borrow_mut();
        if matches!(*ready, Ready::Up) {
            *ready = Ready::Down;
            self.link.forget_session();
            let mut status = self.status.lock().unwrap_or_else(|e| e.into_inner());
            status.up = false;
            status.last_error = Some(why.to_string());
        }
    }

    fn fail_all(&self, why: &str) {
        let all: Vec<Pending> = self.pending.borrow_mut().drain().map(|(_, p)| p).collect();
        for pending in all {
            let _ = pending.done.send(Answer::Failed(why.to_string()));
        }
    }
}

/// The caller's `_meta.progressToken`, replaced by `id`.
fn take_progress_token(params: &mut Option<Value>, id: u64) -> Option<Value> {
    let meta = params.as_mut()?.get_mut("_meta")?.as_object_mut()?;
    let token = meta.get_mut("progressToken")?;
    Some(std::mem::replace(token, Value::from(id)))
}

/// Resolves once the caller dropped its receiver.
async fn caller_gone(tx: &UnboundedSender<Answer>) {
    while !tx.is_closed() {
        monoio::time::sleep(CALLER_CHECK).await;
    }
}
