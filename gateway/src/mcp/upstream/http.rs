//! The Streamable HTTP transport: every message a POST to the server's URL, a request's answer
//! in the POST's response — one JSON body, or an event stream carrying the call's
//! notifications and then its response. Keep-alive connections are reused.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use monoio_rustls::TlsConnector;
use serde_json::Value;

use super::events::Events;
use super::transport::{credentials, Inbound, SendError};
use super::wire::{self, Body, Head, Url, MAX_MESSAGE};
use crate::upstream::conn::UpstreamConn;

/// Most idle connections kept per server.
const MAX_IDLE: usize = 4;
/// How long the rest of an event stream may take, after the response came, for its
/// connection to be reused.
const DRAIN_TIME: Duration = Duration::from_secs(5);

pub struct HttpLink {
    url: Url,
    tls: Rc<Result<TlsConnector, String>>,
    /// `Mcp-Session-Id` the server gave in answer to `initialize`.
    session_id: RefCell<Option<String>>,
    /// Idle keep-alive connections, shared with the tasks that read an event stream's rest.
    idle: Rc<RefCell<Vec<UpstreamConn>>>,
}

impl HttpLink {
    pub fn new(url: Url, tls: Rc<Result<TlsConnector, String>>) -> HttpLink {
        HttpLink { url, tls, session_id: RefCell::new(None), idle: Rc::default() }
    }

    pub fn forget_session(&self) {
        self.session_id.borrow_mut().take();
    }

    /// The headers every message carries: the session's, the credential, `static_headers`.
    fn headers<S: Inbound>(&self, session: &Rc<S>, initialize: bool) -> Vec<(String, String)> {
        let mut headers = Vec::new();
        if let Some(id) = self.session_id.borrow().as_ref() {
            headers.push(("mcp-session-id".to_string(), id.clone()));
        }
        if !initialize {
            headers.push(("mcp-protocol-version".to_string(), session.protocol()));
        }
        headers.extend(credentials(session.server()));
        headers
    }

    pub async fn send<S: Inbound>(
        &self,
        session: &Rc<S>,
        message: &Value,
        id: Option<u64>,
        forwarded: &[(String, String)],
    ) -> Result<(), SendError> {
        let name = session.name();
        let initialize = message.get("method").and_then(Value::as_str) == Some("initialize");
        let had_session = self.session_id.borrow().is_some();
        let mut headers = vec![
            ("content-type".to_string(), "application/json".to_string()),
            ("accept".to_string(), "application/json, text/event-stream".to_string()),
        ];
        headers.extend(self.headers(session, initialize));
        headers.extend(forwarded.iter().cloned());
        let body = serde_json::to_vec(message).unwrap_or_default();
        let request = wire::request("POST", &self.url, &headers, &body);
        let failed = |why: String| SendError::Failed(format!("MCP server {name} could not be reached: {why}"));
        let (mut conn, head, mut body) = self.exchange(request, session.server().timeout).await.map_err(failed)?;
        if head.status == 404 && had_session {
            return Err(SendError::Lost(format!("MCP server {name} no longer knows the gateway's session (HTTP 404)")));
        }
        if !(200..300).contains(&head.status) {
            let text = body.read_all(&mut conn, 4096).await.unwrap_or_default();
            let text = String::from_utf8_lossy(&text);
            let text = text.trim();
            let shown = if text.is_empty() {
                String::new()
            } else {
                format!(": {}", text.chars().take(300).collect::<String>())
            };
            return Err(SendError::Failed(format!("MCP server {name} answered HTTP {}{shown}", head.status)));
        }
        if initialize {
            *self.session_id.borrow_mut() = head.session_id.clone();
        }
        let bad = |why: String| SendError::Failed(format!("MCP server {name}'s answer could not be read: {why}"));
        if head.is_event_stream() {
            let mut events = Events::default();
            while let Some(piece) = body.next(&mut conn).await.map_err(bad)? {
                for event in events.feed(&piece, MAX_MESSAGE).map_err(bad)? {
                    if event.name == "message" && !event.data.trim().is_empty() {
                        let message =
                            serde_json::from_str(&event.data).map_err(|e| bad(format!("an event is not JSON: {e}")))?;
                        session.on_message(message, id);
                    }
                }
                if id.is_some_and(|id| !session.is_pending(id)) {
                    break;
                }
            }
        } else {
            let all = body.read_all(&mut conn, MAX_MESSAGE).await.map_err(bad)?;
            if !all.trim_ascii().is_empty() {
                let message = serde_json::from_slice(&all).map_err(|e| bad(format!("the body is not JSON: {e}")))?;
                session.on_message(message, id);
            }
        }
        self.reuse(conn, head, body);
        match id {
            Some(id) if session.is_pending(id) => Err(SendError::Failed(format!(
                "MCP server {name}'s answer to a {} request held no response",
                method_of(message)
            ))),
            _ => Ok(()),
        }
    }

    /// Keeps the connection for the next message once its body has ended (an event stream's
    /// rest is read in the background).
    fn reuse(&self, mut conn: UpstreamConn, head: Head, mut body: Body) {
        if !head.keep_alive {
            return;
        }
        if body.is_done() {
            put(&self.idle, conn);
            return;
        }
        let idle = self.idle.clone();
        monoio::spawn(async move {
            let drained = monoio::time::timeout(DRAIN_TIME, async {
                while body.next(&mut conn).await.ok().flatten().is_some() {}
                body.is_done()
            });
            if drained.await == Ok(true) {
                put(&idle, conn);
            }
        });
    }

    /// Writes the request and reads the answer's head, on an idle connection if one is open
    /// (again on a new one when the server had closed it), else on a new one.
    async fn exchange(&self, request: Vec<u8>, timeout: Duration) -> Result<(UpstreamConn, Head, Body), String> {
        loop {
            let pooled = self.idle.borrow_mut().pop();
            let Some(mut conn) = pooled else { break };
            if !conn.is_idle_and_open() {
                continue;
            }
            let (res, _) = conn.write_all(request.clone()).await;
            if res.is_err() {
                continue;
            }
            if let Ok(Some((head, body))) = wire::read_head(&mut conn).await {
                return Ok((conn, head, body));
            }
        }
        let mut conn = wire::open(&self.url, &self.tls, timeout).await?;
        let (res, _) = conn.write_all(request).await;
        res.map_err(|e| format!("sending the request failed: {e}"))?;
        match wire::read_head(&mut conn).await? {
            Some((head, body)) => Ok((conn, head, body)),
            None => Err("the server closed the connection without answering".into()),
        }
    }

    /// Ends the session: `DELETE` with its id (the answer does not matter).
    pub async fn close<S: Inbound>(&self, session: &Rc<S>) {
        self.idle.borrow_mut().clear();
        if self.session_id.borrow().is_none() {
            return;
        }
        let headers = self.headers(session, false);
        let request = wire::request("DELETE", &self.url, &headers, &[]);
        if let Ok((conn, _, _)) = self.exchange(request, session.server().timeout).await {
            conn.close().await;
        }
        self.forget_session();
    }
}

/// Keeps an idle connection, up to [`MAX_IDLE`].
fn put(idle: &RefCell<Vec<UpstreamConn>>, conn: UpstreamConn) {
    let mut idle = idle.borrow_mut();
    if idle.len() < MAX_IDLE {
        idle.push(conn);
    }
}

fn method_of(message: &Value) -> &str {
    message.get("method").and_then(Value::as_str).unwrap_or("")
}
