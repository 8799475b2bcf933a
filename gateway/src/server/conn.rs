//! One client connection: read a request (head, then body), dispatch it, repeat while keep-alive.
//! Pipelined requests are answered in order because each is handled to completion before the
//! next head is parsed from the buffer.

use std::rc::Rc;

use monoio::net::TcpStream;
use monoio::time::Instant;

use crate::errors::openai_error;
use crate::http::chunked::ChunkedDecoder;
use crate::http::request::{parse_request_head, HeadLimits, RequestHead};
use crate::http::BodyFraming;
use crate::request::{Anthropic, Request, TraceContext};
use crate::respond::{self, Reply};
use crate::server::{endpoints, handshake};
use crate::shard::Shard;
use crate::tcp_or_tls::ClientConn;

/// Serves an accepted connection until it closes: over TLS, once the handshake is done, when
/// the listener terminates TLS (the handshake's connection counts as open, against the cap).
pub async fn serve_connection(shard: Rc<Shard>, stream: TcpStream) {
    shard.hub.connection_opened();
    shard.open_connections.set(shard.open_connections.get() + 1);
    let accepted = match shard.hub.tls.get() {
        None => Some((ClientConn::Plain(stream), None)),
        Some(tls) => Box::pin(handshake::accept(&shard, stream, tls)).await,
    };
    if let Some((mut conn, head_deadline)) = accepted {
        serve_requests(&shard, &mut conn, head_deadline).await;
        conn.close().await;
    }
    shard.open_connections.set(shard.open_connections.get() - 1);
    shard.hub.connection_closed();
}

/// `head_deadline`: when the first request's head must have arrived (a TLS connection's
/// handshake counts toward it); later heads get their own from their first byte.
async fn serve_requests(shard: &Shard, stream: &mut ClientConn, mut head_deadline: Option<Instant>) {
    let limits = HeadLimits {
        max_header_bytes: shard.settings.limits.max_header_bytes,
        max_headers: shard.settings.limits.max_headers,
        max_uri_bytes: shard.settings.limits.max_uri_bytes,
    };
    let mut buf: Vec<u8> = Vec::with_capacity(8 * 1024);
    loop {
        let head = match read_head(shard, stream, buf, limits, head_deadline.take()).await {
            HeadRead::Head(head, b) => {
                buf = b;
                head
            }
            HeadRead::Closed => return,
            HeadRead::Refused(status, message) => {
                let reply = Reply::json(status, openai_error(status, &message, None));
                respond::send(stream, reply, false).await;
                return;
            }
        };
        let active = ActiveRequest::new(shard);
        let (body, consumed, b) = match read_body(shard, stream, buf, &head).await {
            BodyRead::Body(body, consumed, b) => (body, consumed, b),
            BodyRead::Closed => return,
            BodyRead::Refused(status, message) => {
                let reply = Reply::json(status, openai_error(status, &message, None));
                respond::send(stream, reply, false).await;
                return;
            }
        };
        buf = b;
        let body_bytes: &[u8] = match &body {
            Body::InBuffer(range) => &buf[range.clone()],
            Body::Decoded(v) => v,
        };
        let authorization = head.authorization.clone().map(|r| &buf[r]);
        let tags = head.tags.clone().map(|r| &buf[r]);
        let llmeu: Vec<(&[u8], &[u8])> = head.llmeu.iter().map(|(n, v)| (&buf[n.clone()], &buf[v.clone()])).collect();
        let anthropic = Anthropic {
            api_key: head.anthropic.api_key.clone().map(|r| &buf[r]),
            version: head.anthropic.version.clone().map(|r| &buf[r]),
            beta: head.anthropic.beta.clone().map(|r| &buf[r]),
        };
        let trace = TraceContext {
            parent: head.trace.parent.clone().map(|r| &buf[r]),
            state: head.trace.state.clone().map(|r| &buf[r]),
        };
        let raw_head = &buf[..head.head_len.min(buf.len())];
        let request =
            Request { head: &head, authorization, tags, llmeu: &llmeu, anthropic, trace, raw_head, body: body_bytes };
        let keep = endpoints::dispatch(shard, request, stream).await;
        drop(active);
        if !keep {
            return;
        }
        buf.drain(..consumed);
    }
}

/// Counts a request as in flight (a drain waits for none) while alive.
struct ActiveRequest<'s>(&'s Shard);

impl<'s> ActiveRequest<'s> {
    fn new(shard: &'s Shard) -> ActiveRequest<'s> {
        shard.active_requests.set(shard.active_requests.get() + 1);
        ActiveRequest(shard)
    }
}

impl Drop for ActiveRequest<'_> {
    fn drop(&mut self) {
        self.0.active_requests.set(self.0.active_requests.get() - 1);
    }
}

// The head is read once per request and matched at once: boxing it would allocate per request.
#[allow(clippy::large_enum_variant)]
enum HeadRead {
    Head(RequestHead, Vec<u8>),
    Closed,
    Refused(u16, String),
}

async fn read_head(
    shard: &Shard,
    stream: &mut ClientConn,
    mut buf: Vec<u8>,
    limits: HeadLimits,
    mut deadline: Option<Instant>,
) -> HeadRead {
    // The whole head must arrive within `timeouts.request_head` of its first byte, however the
    // client spreads its bytes (a slowloris gains nothing by trickling). The clock is read only
    // for a head that is still partial: most heads come whole in their first read.
    loop {
        match parse_request_head(&buf, limits) {
            Ok(Some(head)) => return HeadRead::Head(head, buf),
            Ok(None) => {}
            Err(e) => return HeadRead::Refused(e.status(), e.message()),
        }
        let idle = buf.is_empty();
        if !idle && deadline.is_none() {
            deadline = Some(Instant::now() + shard.settings.timeouts.request_head);
        }
        let read = stream.read_more(buf);
        let outcome = match deadline {
            None => monoio::time::timeout(shard.settings.timeouts.keepalive_idle, read).await,
            Some(d) => monoio::time::timeout_at(d, read).await,
        };
        match outcome {
            Err(_) if idle => return HeadRead::Closed,
            Err(_) => return HeadRead::Refused(408, "timed out reading the request head".to_string()),
            Ok((Ok(0), _)) | Ok((Err(_), _)) => return HeadRead::Closed,
            Ok((Ok(_), b)) => buf = b,
        }
    }
}

enum Body {
    /// The body sits in the read buffer at this range.
    InBuffer(std::ops::Range<usize>),
    /// A chunked body, decoded.
    Decoded(Vec<u8>),
}

enum BodyRead {
    /// The body, how many buffer bytes the request used, and the buffer.
    Body(Body, usize, Vec<u8>),
    Closed,
    Refused(u16, String),
}

async fn read_body(shard: &Shard, stream: &mut ClientConn, mut buf: Vec<u8>, head: &RequestHead) -> BodyRead {
    let max = shard.settings.limits.max_body_bytes;
    let start = head.head_len;
    // A body refused by its announced length is refused before the client is invited to send
    // it (RFC 9110 §10.1.1).
    if matches!(head.framing, BodyFraming::Length(n) if n > max as u64) {
        return BodyRead::Refused(413, format!("request body larger than {max} bytes"));
    }
    if head.expect_continue && buf.len() == start && head.framing != BodyFraming::Length(0) {
        let (res, _) = stream.write_all(b"HTTP/1.1 100 Continue\r\n\r\n".to_vec()).await;
        if res.is_err() {
            return BodyRead::Closed;
        }
    }
    match head.framing {
        BodyFraming::Length(n) => {
            let end = start + n as usize;
            if buf.capacity() < end {
                buf.reserve(end - buf.len());
            }
            while buf.len() < end {
                match monoio::time::timeout(shard.settings.timeouts.request_body_idle, stream.read_more(buf)).await {
                    Err(_) => return BodyRead::Refused(408, "timed out reading the request body".to_string()),
                    Ok((Ok(0), _)) | Ok((Err(_), _)) => return BodyRead::Closed,
                    Ok((Ok(_), b)) => buf = b,
                }
            }
            BodyRead::Body(Body::InBuffer(start..end), end, buf)
        }
        BodyFraming::Chunked => {
            let mut decoder = ChunkedDecoder::new();
            let mut body = Vec::new();
            let mut pos = start;
            loop {
                match decoder.feed(&buf[pos..], &mut body) {
                    Ok(n) => pos += n,
                    Err(e) => return BodyRead::Refused(400, format!("malformed request: {e}")),
                }
                if body.len() > max {
                    return BodyRead::Refused(413, format!("request body larger than {max} bytes"));
                }
                if decoder.is_done() {
                    return BodyRead::Body(Body::Decoded(body), pos, buf);
                }
                // Keep the buffer small: decoded bytes are no longer needed.
                buf.drain(start..pos);
                pos = start;
                match monoio::time::timeout(shard.settings.timeouts.request_body_idle, stream.read_more(buf)).await {
                    Err(_) => return BodyRead::Refused(408, "timed out reading the request body".to_string()),
                    Ok((Ok(0), _)) | Ok((Err(_), _)) => return BodyRead::Closed,
                    Ok((Ok(_), b)) => buf = b,
                }
            }
        }
        BodyFraming::UntilClose => BodyRead::Refused(400, "malformed request: body without a length".to_string()),
    }
}
