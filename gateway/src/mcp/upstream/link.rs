//! How a session's messages travel: one of the three transports, behind one set of calls.

use std::rc::Rc;
use std::time::Duration;

use serde_json::Value;

use super::http::HttpLink;
use super::sse::SseLink;
use super::stdio::StdioLink;
use super::transport::{Inbound, SendError};

pub enum Link {
    Http(HttpLink),
    Sse(SseLink),
    Stdio(StdioLink),
}

impl Link {
    /// `http`, `sse` or `stdio`.
    pub fn transport(&self) -> &'static str {
        match self {
            Link::Http(_) => "http",
            Link::Sse(_) => "sse",
            Link::Stdio(_) => "stdio",
        }
    }

    /// Whether a supervisor opens the session (a stdio child), not the first call.
    pub fn is_supervised(&self) -> bool {
        matches!(self, Link::Stdio(_))
    }

    /// Sends one message. `id`: the request's, whose answer (on Streamable HTTP) comes back on
    /// this exchange; `forwarded`: the caller's headers for the server.
    pub async fn send<S: Inbound>(
        &self,
        session: &Rc<S>,
        message: &Value,
        id: Option<u64>,
        forwarded: &[(String, String)],
    ) -> Result<(), SendError> {
        match self {
            Link::Http(link) => link.send(session, message, id, forwarded).await,
            Link::Sse(link) => link.send(session, message, forwarded).await,
            Link::Stdio(link) => link.send(session.name(), message),
        }
    }

    /// What comes before `initialize`: the SSE transport's event stream.
    pub async fn before_initialize<S: Inbound>(&self, session: &Rc<S>) -> Result<(), String> {
        match self {
            Link::Sse(link) => link.connect(session).await,
            Link::Http(link) => {
                link.forget_session();
                Ok(())
            }
            Link::Stdio(_) => Ok(()),
        }
    }

    /// The server forgot the session: the next one starts without its id.
    pub fn forget_session(&self) {
        if let Link::Http(link) = self {
            link.forget_session();
        }
    }

    /// Ends the session: `DELETE` for Streamable HTTP, the stream closed, the child stopped.
    pub async fn close<S: Inbound>(&self, session: &Rc<S>, within: Duration) {
        match self {
            Link::Http(link) => link.close(session).await,
            Link::Sse(link) => link.close(),
            Link::Stdio(link) => link.stop(within).await,
        }
    }
}
