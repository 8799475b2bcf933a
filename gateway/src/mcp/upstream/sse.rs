//! The HTTP+SSE transport (protocol 2024-11-05): a GET opens the server's event stream, whose
//! first `endpoint` event names where to POST; every answer comes on the stream. The stream
//! lost is the session lost: the calls in flight fail, the next call opens a new one.

use std::cell::RefCell;
use std::rc::Rc;

use futures_channel::oneshot;
use monoio_rustls::TlsConnector;
use serde_json::Value;

use super::events::Events;
use super::transport::{credentials, Inbound, SendError};
use super::wire::{self, Body, Url, MAX_MESSAGE};
use crate::upstream::conn::UpstreamConn;

pub struct SseLink {
    url: Url,
    tls: Rc<Result<TlsConnector, String>>,
    /// Where messages are POSTed, from the stream's `endpoint` event; shared with the task
    /// reading the stream, which clears it when the stream is lost.
    endpoint: Rc<RefCell<Option<Url>>>,
    /// Ends the task reading the stream.
    stop: RefCell<Option<oneshot::Sender<()>>>,
}

impl SseLink {
    pub fn new(url: Url, tls: Rc<Result<TlsConnector, String>>) -> SseLink {
        SseLink { url, tls, endpoint: Rc::default(), stop: RefCell::new(None) }
    }

    /// Opens the event stream and waits for its `endpoint` event; a task then reads the rest.
    pub async fn connect<S: Inbound>(&self, session: &Rc<S>) -> Result<(), String> {
        self.close();
        let name = session.name();
        let failed = |why: String| format!("MCP server {name}'s event stream could not be opened: {why}");
        let mut headers = vec![("accept".to_string(), "text/event-stream".to_string())];
        headers.extend(credentials(session.server()));
        let request = wire::request("GET", &self.url, &headers, &[]);
        let mut conn = wire::open(&self.url, &self.tls, session.server().timeout).await.map_err(failed)?;
        let (res, _) = conn.write_all(request).await;
        res.map_err(|e| failed(format!("sending the request failed: {e}")))?;
        let (head, mut body) =
            wire::read_head(&mut conn).await.map_err(failed)?.ok_or_else(|| failed("no answer".into()))?;
        if !(200..300).contains(&head.status) || !head.is_event_stream() {
            return Err(failed(format!("HTTP {} ({})", head.status, head.content_type)));
        }
        let mut events = Events::default();
        let endpoint = 'found: loop {
            let piece = body
                .next(&mut conn)
                .await
                .map_err(failed)?
                .ok_or_else(|| failed("it ended before its endpoint event".into()))?;
            for event in events.feed(&piece, MAX_MESSAGE).map_err(failed)? {
                if event.name == "endpoint" {
                    break 'found event.data;
                }
            }
        };
        *self.endpoint.borrow_mut() = Some(self.url.join(endpoint.trim()).map_err(failed)?);
        let (stop, stopped) = oneshot::channel();
        *self.stop.borrow_mut() = Some(stop);
        let endpoint = self.endpoint.clone();
        monoio::spawn(read_stream(session.clone(), session.epoch(), conn, body, events, endpoint, stopped));
        Ok(())
    }

    pub async fn send<S: Inbound>(
        &self,
        session: &Rc<S>,
        message: &Value,
        forwarded: &[(String, String)],
    ) -> Result<(), SendError> {
        let name = session.name();
        let Some(endpoint) = self.endpoint.borrow().clone() else {
            return Err(SendError::Lost(format!("MCP server {name}'s event stream is closed")));
        };
        let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
        headers.extend(credentials(session.server()));
        headers.extend(forwarded.iter().cloned());
        let request = wire::request("POST", &endpoint, &headers, &serde_json::to_vec(message).unwrap_or_default());
        let failed = |why: String| SendError::Failed(format!("MCP server {name} could not be reached: {why}"));
        let mut conn = wire::open(&endpoint, &self.tls, session.server().timeout).await.map_err(failed)?;
        let (res, _) = conn.write_all(request).await;
        res.map_err(|e| failed(format!("sending the request failed: {e}")))?;
        let (head, mut body) =
            wire::read_head(&mut conn).await.map_err(failed)?.ok_or_else(|| failed("no answer".into()))?;
        let text = body.read_all(&mut conn, 4096).await.unwrap_or_default();
        match head.status {
            200..=299 => Ok(()),
            404 => Err(SendError::Lost(format!("MCP server {name} no longer knows the gateway's session (HTTP 404)"))),
            status => {
                let text = String::from_utf8_lossy(&text).trim().chars().take(300).collect::<String>();
                Err(SendError::Failed(format!("MCP server {name} answered HTTP {status}: {text}")))
            }
        }
    }

    /// Closes the event stream.
    pub fn close(&self) {
        self.endpoint.borrow_mut().take();
        if let Some(stop) = self.stop.borrow_mut().take() {
            let _ = stop.send(());
        }
    }
}

/// Reads the event stream's messages until it ends, is closed, or fails; then the session is
/// lost (the link's `endpoint` cleared, when the stream was the current session's) and its
/// calls in flight fail.
async fn read_stream<S: Inbound>(
    session: Rc<S>,
    epoch: u64,
    mut conn: UpstreamConn,
    mut body: Body,
    mut events: Events,
    endpoint: Rc<RefCell<Option<Url>>>,
    stopped: oneshot::Receiver<()>,
) {
    let name = session.name().to_string();
    let read = async {
        loop {
            let piece = match body.next(&mut conn).await {
                Ok(Some(piece)) => piece,
                Ok(None) => return format!("MCP server {name}'s event stream ended"),
                Err(why) => return format!("MCP server {name}'s event stream failed: {why}"),
            };
            let Ok(list) = events.feed(&piece, MAX_MESSAGE) else {
                return format!("MCP server {name}'s event stream sent an event too large");
            };
            for event in list {
                if event.name == "message" {
                    if let Ok(message) = serde_json::from_str::<Value>(&event.data) {
                        session.on_message(message, None);
                    }
                }
            }
        }
    };
    let why = monoio::select! {
        why = read => why,
        _ = stopped => return,
    };
    if session.epoch() == epoch {
        endpoint.borrow_mut().take();
    }
    session.lost(epoch, &why);
    session.fail_all(&why);
}
