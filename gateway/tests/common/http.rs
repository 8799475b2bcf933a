//! A tiny blocking HTTP/1.1 client over `std::net::TcpStream`: keep-alive, content-length and
//! chunked responses, and a streamed response read chunk by chunk or event by event.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use serde_json::Value;

/// How long any single read may block before the test fails instead of hanging.
pub const READ_TIMEOUT: Duration = Duration::from_secs(30);

/// A response head.
#[derive(Clone, Debug)]
pub struct Head {
    pub status: u16,
    pub headers: Vec<(String, String)>,
}

impl Head {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    pub fn headers_named(&self, name: &str) -> Vec<&str> {
        self.headers.iter().filter(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str()).collect()
    }

    fn is_chunked(&self) -> bool {
        self.header("transfer-encoding").is_some_and(|v| v.to_ascii_lowercase().contains("chunked"))
    }

    fn content_length(&self) -> Option<usize> {
        self.header("content-length").map(|v| v.trim().parse().expect("numeric content-length"))
    }
}

/// A whole response.
#[derive(Clone, Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text()))
    }

    /// `x-pointwork-deployment`.
    pub fn deployment(&self) -> &str {
        self.header("x-pointwork-deployment").unwrap_or_else(|| panic!("no x-pointwork-deployment in {self:?}"))
    }

    /// `x-pointwork-attempts` as a number.
    pub fn attempts(&self) -> u32 {
        self.header("x-pointwork-attempts")
            .unwrap_or_else(|| panic!("no x-pointwork-attempts in {self:?}"))
            .parse()
            .expect("numeric attempts")
    }
}

/// One client connection.
pub struct Client {
    stream: TcpStream,
    /// Received bytes not consumed yet.
    buf: Vec<u8>,
}

impl Client {
    pub fn connect(addr: SocketAddr) -> Client {
        let stream = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect to {addr}: {e}"));
        stream.set_nodelay(true).expect("nodelay");
        stream.set_read_timeout(Some(READ_TIMEOUT)).expect("read timeout");
        Client { stream, buf: Vec::new() }
    }

    pub fn set_read_timeout(&self, timeout: Duration) {
        self.stream.set_read_timeout(Some(timeout)).expect("read timeout");
    }

    /// Writes raw bytes.
    /// The socket itself, for tests that write byte by byte.
    pub fn stream_mut(&mut self) -> &mut TcpStream {
        &mut self.stream
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).expect("write request");
    }

    /// Sends a request with a content-length body (keep-alive).
    pub fn send(&mut self, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) {
        let mut out = format!("{method} {path} HTTP/1.1\r\nhost: pointwork.test\r\n");
        for (name, value) in headers {
            out.push_str(&format!("{name}: {value}\r\n"));
        }
        if !body.is_empty() || method == "POST" {
            out.push_str(&format!("content-length: {}\r\n", body.len()));
        }
        out.push_str("\r\n");
        let mut bytes = out.into_bytes();
        bytes.extend_from_slice(body);
        self.send_raw(&bytes);
    }

    /// Sends a request and reads its whole response.
    pub fn request(&mut self, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Response {
        self.send(method, path, headers, body);
        self.read_response()
    }

    pub fn post_json(&mut self, path: &str, body: &str) -> Response {
        self.request("POST", path, &[("content-type", "application/json")], body.as_bytes())
    }

    /// Reads one whole response (head and body).
    pub fn read_response(&mut self) -> Response {
        let head = self.read_head().expect("response head");
        let body = self.read_body(&head).expect("response body");
        Response { status: head.status, headers: head.headers, body }
    }

    /// Reads more bytes into the buffer; `Ok(0)` at end of stream.
    fn fill(&mut self) -> io::Result<usize> {
        let mut chunk = [0u8; 16 * 1024];
        let n = loop {
            match self.stream.read(&mut chunk) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                other => break other?,
            }
        };
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(n)
    }

    /// Reads a response head (1xx interim responses skipped).
    pub fn read_head(&mut self) -> io::Result<Head> {
        loop {
            let mut headers = [httparse::EMPTY_HEADER; 64];
            let mut parsed = httparse::Response::new(&mut headers);
            match parsed.parse(&self.buf) {
                Ok(httparse::Status::Complete(len)) => {
                    let head = Head {
                        status: parsed.code.expect("status"),
                        headers: parsed
                            .headers
                            .iter()
                            .map(|h| (h.name.to_string(), String::from_utf8_lossy(h.value).into_owned()))
                            .collect(),
                    };
                    self.buf.drain(..len);
                    if (100..200).contains(&head.status) {
                        continue;
                    }
                    return Ok(head);
                }
                Ok(httparse::Status::Partial) => {}
                Err(e) => {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("bad response head ({e}): {:?}", String::from_utf8_lossy(&self.buf)),
                    ))
                }
            }
            if self.fill()? == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("connection closed before a complete head: {:?}", String::from_utf8_lossy(&self.buf)),
                ));
            }
        }
    }

    /// Reads a body as its head frames it.
    pub fn read_body(&mut self, head: &Head) -> io::Result<Vec<u8>> {
        if head.is_chunked() {
            let mut body = Vec::new();
            while let Some(chunk) = self.next_chunk()? {
                body.extend_from_slice(&chunk);
            }
            return Ok(body);
        }
        if let Some(len) = head.content_length() {
            while self.buf.len() < len {
                if self.fill()? == 0 {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        format!("body cut at {} of {len} bytes", self.buf.len()),
                    ));
                }
            }
            return Ok(self.buf.drain(..len).collect());
        }
        if head.status == 204 || head.status == 304 {
            return Ok(Vec::new());
        }
        while self.fill()? > 0 {}
        Ok(std::mem::take(&mut self.buf))
    }

    /// The next chunk of a chunked body; `None` after the last chunk (and trailers).
    pub fn next_chunk(&mut self) -> io::Result<Option<Vec<u8>>> {
        loop {
            if let Some(line_end) = find(&self.buf, b"\r\n") {
                let line = String::from_utf8_lossy(&self.buf[..line_end]).into_owned();
                let size_text = line.split(';').next().unwrap_or("").trim();
                let size = usize::from_str_radix(size_text, 16)
                    .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, format!("bad chunk size {line:?}")))?;
                if size == 0 {
                    // Trailers end with an empty line.
                    loop {
                        if let Some(end) = find(&self.buf[line_end + 2..], b"\r\n") {
                            let at = line_end + 2;
                            if end == 0 {
                                self.buf.drain(..at + 2);
                                return Ok(None);
                            }
                            self.buf.drain(at..at + end + 2);
                            continue;
                        }
                        self.fill_or_eof("the end of a chunked body")?;
                    }
                }
                let need = line_end + 2 + size + 2;
                while self.buf.len() < need {
                    self.fill_or_eof("a chunk")?;
                }
                if &self.buf[need - 2..need] != b"\r\n" {
                    return Err(io::Error::new(io::ErrorKind::InvalidData, "chunk data not followed by CRLF"));
                }
                let data = self.buf[line_end + 2..need - 2].to_vec();
                self.buf.drain(..need);
                return Ok(Some(data));
            }
            self.fill_or_eof("a chunk size line")?;
        }
    }

    fn fill_or_eof(&mut self, what: &str) -> io::Result<()> {
        if self.fill()? == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("connection closed in the middle of {what}"),
            ));
        }
        Ok(())
    }

    /// Whether the server closed the connection: reads until EOF (error if data arrives).
    pub fn is_closed_by_peer(&mut self) -> bool {
        match self.fill() {
            Ok(0) => true,
            Err(e) if e.kind() == io::ErrorKind::ConnectionReset => true,
            _ => false,
        }
    }

    /// Reads a streamed (chunked) body as server-sent events, each with its arrival time.
    pub fn events(&mut self) -> Events<'_> {
        Events { client: self, pending: Vec::new(), ended: false }
    }
}

/// Server-sent events of a chunked body, one at a time, as they arrive.
pub struct Events<'a> {
    client: &'a mut Client,
    /// Decoded body bytes not yet returned as an event.
    pending: Vec<u8>,
    ended: bool,
}

/// One event (`data: …` without the blank line) and when its last byte arrived.
#[derive(Clone, Debug)]
pub struct Event {
    pub text: String,
    pub at: Instant,
}

impl Events<'_> {
    /// The next complete event; `Ok(None)` once the body ended cleanly.
    pub fn next_event(&mut self) -> io::Result<Option<Event>> {
        loop {
            if let Some(end) = find(&self.pending, b"\n\n") {
                let text = String::from_utf8_lossy(&self.pending[..end]).into_owned();
                self.pending.drain(..end + 2);
                return Ok(Some(Event { text, at: Instant::now() }));
            }
            if self.ended {
                if self.pending.is_empty() {
                    return Ok(None);
                }
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("body ended inside an event: {:?}", String::from_utf8_lossy(&self.pending)),
                ));
            }
            match self.client.next_chunk()? {
                Some(chunk) => self.pending.extend_from_slice(&chunk),
                None => self.ended = true,
            }
        }
    }

    /// Every remaining event, until the body ends cleanly.
    pub fn collect_all(&mut self) -> io::Result<Vec<Event>> {
        let mut all = Vec::new();
        while let Some(e) = self.next_event()? {
            all.push(e);
        }
        Ok(all)
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}
