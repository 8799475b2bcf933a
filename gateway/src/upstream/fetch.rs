//! One whole exchange off the proxy path (the telemetry poller's GETs, the complexity router's
//! classifier call): an HTTP/1.1 request on a fresh connection, the whole body read
//! (content-length, chunked, or until close) up to a size limit, the configured timeout over
//! all of it (connect, request, answer). Anything but a 2xx answer is an error.

use std::fmt;
use std::io;
use std::time::Duration;

use monoio_rustls::TlsConnector;

use crate::http::chunked::ChunkedDecoder;
use crate::http::response::parse_response_head;
use crate::http::{write, BodyFraming};
use crate::upstream::conn::{connect, ConnectError, UpstreamConn};
use crate::upstream::target::Target;

/// The largest telemetry body read (OpenRouter's model list is about a megabyte).
pub const MAX_BODY: usize = 16 << 20;
/// The largest response head read.
const MAX_HEAD: usize = 64 << 10;

/// What the fetches share: the TLS connector (or why there is none) and the timeout.
pub struct Client {
    pub tls: Result<TlsConnector, String>,
    pub timeout: Duration,
    pub max_body: usize,
}

/// Why a fetch gave no body.
#[derive(Debug, PartialEq)]
pub enum FetchError {
    /// The whole fetch took longer than the timeout.
    Timeout(Duration),
    /// The server answered with a status other than 2xx.
    Status(u16),
    TooLarge(usize),
    /// Connecting, TLS, the framing or the connection itself.
    Failed(String),
}

impl fmt::Display for FetchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FetchError::Timeout(after) => write!(f, "no complete answer within {}s", after.as_secs_f64()),
            FetchError::Status(status) => write!(f, "HTTP {status}"),
            FetchError::TooLarge(limit) => write!(f, "body larger than {limit} bytes"),
            FetchError::Failed(why) => f.write_str(why),
        }
    }
}

/// `GET {target}{path_and_query}`: the body of a 2xx answer.
pub async fn get(client: &Client, target: &Target, path_and_query: &str) -> Result<Vec<u8>, FetchError> {
    send(client, target, request(target, path_and_query)).await
}

/// Sends `request` (a whole HTTP/1.1 request, `connection: close`) to `target`: the body of a
/// 2xx answer.
pub async fn send(client: &Client, target: &Target, request: Vec<u8>) -> Result<Vec<u8>, FetchError> {
    let attempt = async {
        let tls = match &client.tls {
            Ok(tls) => tls,
            Err(why) => return Err(FetchError::Failed(why.clone())),
        };
        let mut conn = connect(target, tls, client.timeout).await.map_err(|e| match e {
            ConnectError::Timeout => FetchError::Timeout(client.timeout),
            ConnectError::Failed(why) => FetchError::Failed(why),
        })?;
        let (res, _) = conn.write_all(request).await;
        res.map_err(|e| FetchError::Failed(format!("sending the request failed: {e}")))?;
        read_body(&mut conn, client.max_body).await
    };
    match monoio::time::timeout(client.timeout, attempt).await {
        Ok(result) => result,
        Err(_) => Err(FetchError::Timeout(client.timeout)),
    }
}

fn request(target: &Target, path_and_query: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(b"GET ");
    out.extend_from_slice(target.path_prefix.as_bytes());
    out.extend_from_slice(path_and_query.as_bytes());
    out.extend_from_slice(b" HTTP/1.1\r\n");
    write::header(&mut out, "host", target.authority.as_bytes());
    write::header(&mut out, "user-agent", concat!("pointwork/", env!("CARGO_PKG_VERSION")).as_bytes());
    write::header(&mut out, "accept", b"application/json");
    write::header(&mut out, "connection", b"close");
    write::end_head(&mut out);
    out
}

fn failed(why: impl fmt::Display) -> FetchError {
    FetchError::Failed(why.to_string())
}

/// Reads the answer's head and its whole body.
async fn read_body(conn: &mut UpstreamConn, limit: usize) -> Result<Vec<u8>, FetchError> {
    let mut buf = Vec::with_capacity(16 * 1024);
    let (status, framing) = loop {
        let parsed = parse_response_head(&buf, MAX_HEAD).map_err(failed)?;
        match parsed {
            Some(head) if (100..200).contains(&head.status) => {
                let n = head.head_len;
                buf.drain(..n);
            }
            Some(head) => {
                let (status, framing, n) = (head.status, head.framing, head.head_len);
                buf.drain(..n);
                break (status, framing);
            }
            None => {
                let (res, back) = conn.read_more(buf).await;
                buf = back;
                if res.map_err(|e| failed(format!("reading the answer failed: {e}")))? == 0 {
                    return Err(failed("the connection closed before the answer's head"));
                }
            }
        }
    };
    if !(200..300).contains(&status) {
        return Err(FetchError::Status(status));
    }
    match framing {
        BodyFraming::Length(n) => {
            let n = usize::try_from(n).ok().filter(|&n| n <= limit).ok_or(FetchError::TooLarge(limit))?;
            while buf.len() < n {
                let (res, back) = conn.read_more(buf).await;
                buf = back;
                if res.map_err(|e| failed(format!("reading the body failed: {e}")))? == 0 {
                    return Err(failed(format!("the body ended after {} of {n} bytes", buf.len())));
                }
            }
            buf.truncate(n);
            Ok(buf)
        }
        BodyFraming::Chunked => {
            let (mut decoder, mut body) = (ChunkedDecoder::new(), Vec::new());
            decoder.feed(&buf, &mut body).map_err(failed)?;
            while !decoder.is_done() {
                if body.len() > limit {
                    return Err(FetchError::TooLarge(limit));
                }
                buf.clear();
                let (res, back) = conn.read_more(buf).await;
                buf = back;
                if res.map_err(|e| failed(format!("reading the body failed: {e}")))? == 0 {
                    return Err(failed("the chunked body ended before its last chunk"));
                }
                decoder.feed(&buf, &mut body).map_err(failed)?;
            }
            if body.len() > limit {
                return Err(FetchError::TooLarge(limit));
            }
            Ok(body)
        }
        BodyFraming::UntilClose => loop {
            if buf.len() > limit {
                return Err(FetchError::TooLarge(limit));
            }
            let (res, back) = conn.read_more(buf).await;
            buf = back;
            match res {
                Ok(0) => return Ok(buf),
                Ok(_) => {}
                // A TLS peer that closes without close_notify still ended the body.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(buf),
                Err(e) => return Err(failed(format!("reading the body failed: {e}"))),
            }
        },
    }
}

#[cfg(test)]
#[path = "fetch_tests.rs"]
mod tests;
