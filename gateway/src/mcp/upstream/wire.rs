//! HTTP/1.1 for the MCP servers: a server's URL, a request written whole, a response head read,
//! and its body read as it comes (`content-length`, chunked, or until close) — an event stream
//! is read event by event, so the body is handed out in pieces.

use std::time::Duration;

use monoio_rustls::TlsConnector;

use crate::http::chunked::ChunkedDecoder;
use crate::http::response::parse_response_head;
use crate::http::{write, BodyFraming};
use crate::upstream::conn::{connect, ConnectError, UpstreamConn};
use crate::upstream::target::Target;

/// The largest response head read.
const MAX_HEAD: usize = 64 << 10;
/// The largest JSON body (or one event) read from a server.
pub const MAX_MESSAGE: usize = 16 << 20;

/// A server's URL: where to connect, and the path (with its query) to ask for.
#[derive(Clone, Debug)]
pub struct Url {
    pub target: Target,
    /// The URL's path and query as written (`/` when it has none).
    pub path: String,
}

impl Url {
    pub fn parse(url: &str) -> Result<Url, String> {
        let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
        let (authority, path) = after_scheme.split_at(after_scheme.find(['/', '?']).unwrap_or(after_scheme.len()));
        let base = &url[..url.len() - after_scheme.len()];
        let target = Target::parse(&format!("{base}{authority}"))
            .map_err(|e| e.0.replace(&format!("{base}{authority}"), url))?;
        let path = if path.is_empty() { "/" } else { path };
        let path = if path.starts_with('?') { format!("/{path}") } else { path.to_string() };
        Ok(Url { target, path })
    }

    /// `reference` (an SSE server's `endpoint` event) resolved against this URL: an absolute
    /// URL as it is, an absolute path on this server, else relative to this URL's directory.
    pub fn join(&self, reference: &str) -> Result<Url, String> {
        if reference.starts_with("http://") || reference.starts_with("https://") {
            return Url::parse(reference);
        }
        let path = if reference.starts_with('/') {
            reference.to_string()
        } else {
            let base = self.path.split('?').next().unwrap_or("/");
            let dir = &base[..base.rfind('/').map_or(0, |i| i + 1)];
            format!("{dir}{reference}")
        };
        Ok(Url { target: self.target.clone(), path })
    }
}

/// Opens a connection to the URL's server.
pub async fn open(url: &Url, tls: &Result<TlsConnector, String>, timeout: Duration) -> Result<UpstreamConn, String> {
    let tls = tls.as_ref().map_err(Clone::clone)?;
    connect(&url.target, tls, timeout).await.map_err(|e| match e {
        ConnectError::Timeout => {
            format!("connecting to {} took longer than {}s", url.target.authority, timeout.as_secs())
        }
        ConnectError::Failed(why) => why,
    })
}

/// A request's head: the method, the URL's path, `host`, the headers given, and the body's length.
pub fn request(method: &str, url: &Url, headers: &[(String, String)], body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(512 + body.len());
    out.extend_from_slice(method.as_bytes());
    out.push(b' ');
    out.extend_from_slice(url.path.as_bytes());
    out.extend_from_slice(b" HTTP/1.1\r\n");
    write::header(&mut out, "host", url.target.authority.as_bytes());
    write::header(&mut out, "user-agent", concat!("pointwork/", env!("CARGO_PKG_VERSION")).as_bytes());
    for (name, value) in headers {
        write::header(&mut out, name, value.as_bytes());
    }
    if method != "GET" {
        write::header_decimal(&mut out, "content-length", body.len() as u64);
    }
    write::end_head(&mut out);
    out.extend_from_slice(body);
    out
}

/// A response head, what the MCP side needs of it.
#[derive(Debug)]
pub struct Head {
    pub status: u16,
    pub keep_alive: bool,
    pub content_type: String,
    pub session_id: Option<String>,
}

impl Head {
    pub fn is_event_stream(&self) -> bool {
        self.content_type.to_ascii_lowercase().starts_with("text/event-stream")
    }
}

/// Reads a response head (skipping `1xx` ones); the body follows in the returned [`Body`].
/// `Ok(None)`: the connection closed before the first byte (a pooled connection the server
/// had closed).
pub async fn read_head(conn: &mut UpstreamConn) -> Result<Option<(Head, Body)>, String> {
    let mut buf = Vec::with_capacity(8 * 1024);
    loop {
        if let Some(head) = parse_response_head(&buf, MAX_HEAD).map_err(|e| e.to_string())? {
            let n = head.head_len;
            if (100..200).contains(&head.status) {
                buf.drain(..n);
                continue;
            }
            let text = |name| head.header(name).map(|v| String::from_utf8_lossy(v).into_owned());
            let out = Head {
                status: head.status,
                keep_alive: head.keep_alive,
                content_type: text("content-type").unwrap_or_default(),
                session_id: text("mcp-session-id"),
            };
            let framing = head.framing;
            buf.drain(..n);
            return Ok(Some((out, Body::new(framing, buf))));
        }
        conn.quick_ack();
        let (res, back) = conn.read_more(buf).await;
        buf = back;
        match res {
            Ok(0) if buf.is_empty() => return Ok(None),
            Ok(0) => return Err("the connection closed inside the response head".into()),
            Ok(_) => {}
            Err(e) => return Err(format!("reading the response failed: {e}")),
        }
    }
}

/// A response body being read.
pub struct Body {
    framing: BodyFraming,
    /// Bytes read but not handed out yet (still chunk-encoded for a chunked body).
    raw: Vec<u8>,
    /// What a `content-length` body has left.
    left: u64,
    chunked: ChunkedDecoder,
    done: bool,
}

impl Body {
    fn new(framing: BodyFraming, raw: Vec<u8>) -> Body {
        let left = match framing {
            BodyFraming::Length(n) => n,
            _ => 0,
        };
        Body { framing, raw, left, chunked: ChunkedDecoder::new(), done: framing == BodyFraming::Length(0) }
    }

    /// Whether the whole body was read (the connection can carry another request).
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// The next piece of the body; `None` once it ended.
    pub async fn next(&mut self, conn: &mut UpstreamConn) -> Result<Option<Vec<u8>>, String> {
        loop {
            if self.done {
                return Ok(None);
            }
            if !self.raw.is_empty() {
                let raw = std::mem::take(&mut self.raw);
                let mut out = Vec::new();
                match self.framing {
                    BodyFraming::Length(_) => {
                        let n = raw.len().min(usize::try_from(self.left).unwrap_or(usize::MAX));
                        self.left -= n as u64;
                        self.done = self.left == 0;
                        out.extend_from_slice(&raw[..n]);
                    }
                    BodyFraming::Chunked => {
                        self.chunked.feed(&raw, &mut out).map_err(|e| format!("bad chunked body: {e:?}"))?;
                        self.done = self.chunked.is_done();
                    }
                    BodyFraming::UntilClose => out = raw,
                }
                if !out.is_empty() || self.done {
                    return Ok(Some(out));
                }
                continue;
            }
            conn.quick_ack();
            let (res, back) = conn.read_more(std::mem::take(&mut self.raw)).await;
            self.raw = back;
            match res {
                Ok(0) if self.framing == BodyFraming::UntilClose => {
                    self.done = true;
                    return Ok(None);
                }
                Ok(0) => return Err("the connection closed before the body ended".into()),
                Ok(_) => {}
                Err(e) if self.framing == BodyFraming::UntilClose && e.kind() == std::io::ErrorKind::UnexpectedEof => {
                    self.done = true;
                    return Ok(None);
                }
                Err(e) => return Err(format!("reading the body failed: {e}")),
            }
        }
    }

    /// The rest of the body, whole, up to `limit` bytes.
    pub async fn read_all(&mut self, conn: &mut UpstreamConn, limit: usize) -> Result<Vec<u8>, String> {
        let mut all = Vec::new();
        while let Some(piece) = self.next(conn).await? {
            all.extend_from_slice(&piece);
            if all.len() > limit {
                return Err(format!("the body is larger than {limit} bytes"));
            }
        }
        Ok(all)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_keep_their_path_and_join_references() {
        let url = Url::parse("http://127.0.0.1:9/a/sse?x=1").unwrap();
        assert_eq!(url.path, "/a/sse?x=1");
        assert_eq!(url.join("/messages/?session_id=9").unwrap().path, "/messages/?session_id=9");
        assert_eq!(url.join("messages?s=1").unwrap().path, "/a/messages?s=1");
        assert_eq!(Url::parse("http://h:1").unwrap().path, "/");
        assert_eq!(Url::parse("http://h:1?q").unwrap().path, "/?q");
        assert!(Url::parse("ftp://h").is_err());
    }
}
