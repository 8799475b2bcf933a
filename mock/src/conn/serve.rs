//! One accepted connection: reads requests in order (keep-alive, pipelining), lets
//! [`dispatch`](crate::dispatch::decide) decide each answer, and carries it out on the stream.
//!
//! The code is generic over the [`Transport`]: plain TCP and TLS (see [`tls`](crate::tls)) run
//! the same HTTP handling, and the plain path stays direct calls on the socket.

use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;

use monoio::net::TcpStream;

use crate::conn::link::{pause, tune, Connection, Ending, Transport};
use crate::dispatch::decide;
use crate::dispatch::plan::{Action, Plan, Request};
use crate::state::Shared;
use crate::wire::head::MAX_BODY_BYTES;
use crate::wire::head::{decode_chunked, parse_head, BodyFraming, ChunkedBody, HeadParse, RequestHead};
use crate::wire::response::{write_openai_error, Head};

/// The interim answer to `Expect: 100-continue`.
const CONTINUE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";

/// Serves an accepted socket as plain HTTP.
pub(crate) async fn serve_plain(stream: TcpStream, shared: Arc<Shared>) {
    tune(&stream);
    let fd = stream.as_raw_fd();
    serve(stream, fd, shared).await;
}

/// Serves `stream` until the peer leaves, a request ends the connection, or IO fails. `socket`
/// is the descriptor of the TCP socket under it, owned by `stream`.
pub(crate) async fn serve<S: Transport>(stream: S, socket: RawFd, shared: Arc<Shared>) {
    let mut connection = Connection::new(stream, socket, shared);
    match connection.serve_requests().await {
        Ending::Close => connection.stream.finish().await,
        Ending::Reset => {
            // Best effort: if the option cannot be set the peer sees a FIN instead.
            let _ = connection.set_linger_zero();
        }
    }
}

/// Where the body of the current request is.
enum BodyBytes {
    /// In `input`, from the end of the head up to `end`.
    InInput { end: usize },
    /// De-chunked into its own buffer; the chunked form took `input[..end]`.
    Decoded { body: Vec<u8>, end: usize },
}

impl BodyBytes {
    fn end(&self) -> usize {
        match self {
            BodyBytes::InInput { end } | BodyBytes::Decoded { end, .. } => *end,
        }
    }
}

enum BodyError {
    PeerLeft,
    Refused { status: u16, reason: &'static str },
}

impl<S: Transport> Connection<S> {
    async fn serve_requests(&mut self) -> Ending {
        loop {
            let head = match parse_head(&self.input) {
                HeadParse::Complete(head) => head,
                HeadParse::Partial => {
                    if self.read_more().await {
                        continue;
                    }
                    return Ending::Close;
                }
                HeadParse::Invalid(reason) => return self.refuse(400, reason).await,
            };
            let body = match self.read_body(&head).await {
                Ok(body) => body,
                Err(BodyError::PeerLeft) => return Ending::Close,
                Err(BodyError::Refused { status, reason }) => return self.refuse(status, reason).await,
            };
            let plan = self.plan(&head, &body);
            self.input.drain(..body.end());
            if let Some(ending) = self.carry_out(plan).await {
                return ending;
            }
        }
    }

    fn plan(&mut self, head: &RequestHead, body: &BodyBytes) -> Plan {
        let body_bytes = match body {
            BodyBytes::InInput { end } => &self.input[head.head_len..*end],
            BodyBytes::Decoded { body, .. } => body.as_slice(),
        };
        let request = Request { head, head_bytes: &self.input[..head.head_len], body: body_bytes };
        self.output.clear();
        decide::plan(&self.shared, &request, &mut self.facts, &mut self.output, &mut self.scratch)
    }

    async fn read_body(&mut self, head: &RequestHead) -> Result<BodyBytes, BodyError> {
        let body_pending = self.input.len() == head.head_len && head.framing != BodyFraming::Empty;
        if head.expects_continue && body_pending {
            self.output.clear();
            self.output.extend_from_slice(CONTINUE);
            if !self.send(CONTINUE.len()).await {
                return Err(BodyError::PeerLeft);
            }
        }
        match head.framing {
            BodyFraming::Empty => Ok(BodyBytes::InInput { end: head.head_len }),
            BodyFraming::Length(length) if length > MAX_BODY_BYTES => {
                Err(BodyError::Refused { status: 413, reason: "request body too large" })
            }
            BodyFraming::Length(length) => {
                let end = head.head_len + length;
                self.input.reserve(end.saturating_sub(self.input.len()));
                while self.input.len() < end {
                    if !self.read_more().await {
                        return Err(BodyError::PeerLeft);
                    }
                }
                Ok(BodyBytes::InInput { end })
            }
            BodyFraming::Chunked => loop {
                match decode_chunked(&self.input[head.head_len..]) {
                    ChunkedBody::Complete { body, consumed } => {
                        return Ok(BodyBytes::Decoded { body, end: head.head_len + consumed })
                    }
                    ChunkedBody::Partial => {
                        if !self.read_more().await {
                            return Err(BodyError::PeerLeft);
                        }
                    }
                    ChunkedBody::Invalid(reason) => return Err(BodyError::Refused { status: 400, reason }),
                }
            },
        }
    }

    /// `None` to go on with the next request.
    async fn carry_out(&mut self, plan: Plan) -> Option<Ending> {
        pause(plan.latency).await;
        match plan.action {
            Action::Send { close } => {
                let sent = self.send(self.output.len()).await;
                (close || !sent).then_some(Ending::Close)
            }
            Action::SendPartThenClose { len } => {
                self.send(len).await;
                Some(Ending::Close)
            }
            Action::Stream(stream) => self.send_stream(stream).await,
            Action::AnthropicStream(stream) => self.send_anthropic_stream(stream).await,
            Action::AzureStream(stream) => self.send_azure_stream(stream).await,
            Action::Chunked(stream) => self.send_chunked(stream).await,
            Action::Reset => Some(Ending::Reset),
            Action::Hang => Some(self.hang().await),
        }
    }

    /// Answers a request whose framing cannot be trusted, and ends the connection.
    async fn refuse(&mut self, status: u16, reason: &str) -> Ending {
        self.output.clear();
        let message = format!("mock {}: {reason}", self.shared.name);
        write_openai_error(&mut self.output, &Head::json(status, &self.shared.name, true), &message);
        self.send(self.output.len()).await;
        Ending::Close
    }

    /// Never answers; reads and drops whatever comes until the peer closes.
    async fn hang(&mut self) -> Ending {
        loop {
            self.input.clear();
            if !self.read_more().await {
                return Ending::Close;
            }
        }
    }
}
