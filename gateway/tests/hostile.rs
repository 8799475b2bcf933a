//! Hostile and malformed requests over raw sockets: the corpus in `hostile/corpus.json` (its
//! `about` says how a case is written). Each case gets its expected answers and connection
//! fate, and after each a well-formed request on a fresh connection is still served. One
//! gateway for the whole table, so that every case also proves the previous ones left it
//! healthy. tests/sdk/test_h11_differential.py runs the same corpus through h11.

mod common;

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::Duration;

use common::{config, deployment, Gateway, Mock};
use serde::Deserialize;

const CORPUS: &str = include_str!("hostile/corpus.json");
/// How long any read may block before the case fails instead of hanging: well past the
/// corpus's own timeouts (2 s for a head, 1 s of body idleness).
const READ_TIMEOUT: Duration = Duration::from_secs(15);
/// How long a `pause_before_body` case waits for an interim response before sending its body.
const CONTINUE_WAIT: Duration = Duration::from_millis(500);

#[derive(Deserialize)]
struct Corpus {
    model: String,
    pointwork: String,
    cases: Vec<Case>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    #[allow(dead_code)] // read by the h11 differential
    layer: Layer,
    raw: Bytes,
    body: Option<Bytes>,
    #[serde(default)]
    send: Send,
    expect: Vec<Outcome>,
    /// Requests that reach the provider.
    #[serde(default)]
    forwarded: u64,
    #[allow(dead_code)] // documentation
    why: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum Layer {
    Framing,
    Head,
    Limits,
    Connection,
    Body,
}

/// Bytes as written in the corpus: a string of code points below 256, a repeated string, or
/// a list of those.
#[derive(Deserialize)]
#[serde(untagged)]
enum Bytes {
    Text(String),
    Repeat { repeat: String, times: usize },
    Parts(Vec<Bytes>),
}

impl Bytes {
    fn to_vec(&self) -> Vec<u8> {
        let latin1 = |s: &str| -> Vec<u8> {
            s.chars().map(|c| u8::try_from(u32::from(c)).expect("corpus bytes are code points below 256")).collect()
        };
        match self {
            Bytes::Text(s) => latin1(s),
            Bytes::Repeat { repeat, times } => latin1(repeat).repeat(*times),
            Bytes::Parts(parts) => parts.iter().flat_map(Bytes::to_vec).collect(),
        }
    }
}

#[derive(Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum Send {
    /// Everything in one write.
    #[default]
    All,
    /// One byte per write.
    Trickle,
    /// Everything, then a half-close.
    Shutdown,
    /// The head, then (after any interim response) the body.
    PauseBeforeBody,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(untagged)]
enum Outcome {
    Status(u16),
    End(End),
}

/// What becomes of the connection after the expected responses.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum End {
    /// The gateway closes it.
    Close,
    /// It serves another request.
    Open,
}

impl Case {
    /// The head bytes (with `{body_len}` filled in) and the body bytes.
    fn bytes(&self) -> (Vec<u8>, Vec<u8>) {
        let body = self.body.as_ref().map(Bytes::to_vec).unwrap_or_default();
        let raw = self.raw.to_vec();
        let len = body.len().to_string();
        let mut head = Vec::with_capacity(raw.len());
        let mut rest = &raw[..];
        while let Some(i) = rest.windows(10).position(|w| w == b"{body_len}") {
            head.extend_from_slice(&rest[..i]);
            head.extend_from_slice(len.as_bytes());
            rest = &rest[i + 10..];
        }
        head.extend_from_slice(rest);
        (head, body)
    }

    /// The expected statuses and the connection's end.
    fn outcome(&self) -> (Vec<u16>, End) {
        let Some((Outcome::End(end), statuses)) = self.expect.split_last() else {
            panic!("{}: expect must end with \"close\" or \"open\"", self.name)
        };
        let statuses = statuses
            .iter()
            .map(|o| match o {
                Outcome::Status(s) => *s,
                Outcome::End(_) => panic!("{}: \"close\"/\"open\" only at the end of expect", self.name),
            })
            .collect();
        (statuses, *end)
    }
}

/// One response as read off the socket.
struct Answer {
    status: u16,
    body: Vec<u8>,
}

/// A raw connection and the bytes read but not consumed yet.
struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Conn {
    fn open(gateway: &Gateway) -> Conn {
        let stream = TcpStream::connect(gateway.addr).expect("connect");
        stream.set_nodelay(true).unwrap();
        stream.set_read_timeout(Some(READ_TIMEOUT)).unwrap();
        Conn { stream, buf: Vec::new() }
    }

    /// Writes, ignoring a failure: the gateway may answer and close before it read everything.
    fn write(&mut self, bytes: &[u8]) {
        let _ = self.stream.write_all(bytes);
    }

    /// Reads more; `Ok(false)` at the end of the stream (a reset counts as one: a gateway
    /// closing with unread input resets the connection).
    fn fill(&mut self) -> Result<bool, String> {
        let mut chunk = [0u8; 16 * 1024];
        match self.stream.read(&mut chunk) {
            Ok(0) => Ok(false),
            Ok(n) => {
                self.buf.extend_from_slice(&chunk[..n]);
                Ok(true)
            }
            Err(e) if e.kind() == ErrorKind::ConnectionReset => Ok(false),
            Err(e) => Err(format!("reading: {e} (have {:?})", String::from_utf8_lossy(&self.buf))),
        }
    }

    /// Waits up to [`CONTINUE_WAIT`] for an interim response (what a client sending
    /// `Expect: 100-continue` waits for; none may come, as for HTTP/1.0).
    fn await_interim(&mut self) -> Result<(), String> {
        self.stream.set_read_timeout(Some(CONTINUE_WAIT)).unwrap();
        let mut chunk = [0u8; 1024];
        let read = self.stream.read(&mut chunk);
        self.stream.set_read_timeout(Some(READ_TIMEOUT)).unwrap();
        match read {
            Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(e) => return Err(format!("waiting for an interim response: {e}")),
        }
        Ok(())
    }

    /// The next response (interim ones included); `None` if the connection ended first.
    fn response(&mut self, head_request: bool) -> Result<Option<Answer>, String> {
        let (status, head_len, length, chunked) = loop {
            let mut headers = [httparse::EMPTY_HEADER; 32];
            let mut parsed = httparse::Response::new(&mut headers);
            match parsed.parse(&self.buf) {
                Ok(httparse::Status::Complete(n)) => {
                    let value =
                        |name: &str| parsed.headers.iter().find(|h| h.name.eq_ignore_ascii_case(name)).map(|h| h.value);
                    let length = value("content-length")
                        .map(|v| std::str::from_utf8(v).ok().and_then(|v| v.trim().parse::<usize>().ok()));
                    let chunked = value("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case(b"chunked"));
                    let status = parsed.code.expect("a complete head has a status");
                    break (status, n, length, chunked);
                }
                Ok(httparse::Status::Partial) => {}
                Err(e) => return Err(format!("a bad response head ({e}): {:?}", String::from_utf8_lossy(&self.buf))),
            }
            if !self.fill()? {
                if self.buf.is_empty() {
                    return Ok(None);
                }
                return Err(format!("the connection ended inside a head: {:?}", String::from_utf8_lossy(&self.buf)));
            }
        };
        self.buf.drain(..head_len);
        let body = if status < 200 || head_request || status == 204 || status == 304 {
            Vec::new()
        } else if chunked {
            self.chunked_body()?
        } else {
            let Some(Some(n)) = length else { return Err(format!("a {status} without a valid content-length")) };
            while self.buf.len() < n {
                if !self.fill()? {
                    return Err(format!("a body cut at {} of {n} bytes", self.buf.len()));
                }
            }
            self.buf.drain(..n).collect()
        };
        Ok(Some(Answer { status, body }))
    }

    fn chunked_body(&mut self) -> Result<Vec<u8>, String> {
        let mut body = Vec::new();
        loop {
            let line_end = loop {
                if let Some(i) = self.buf.windows(2).position(|w| w == b"\r\n") {
                    break i;
                }
                if !self.fill()? {
                    return Err("the connection ended inside a chunked body".to_string());
                }
            };
            let line = String::from_utf8_lossy(&self.buf[..line_end]).into_owned();
            let size = usize::from_str_radix(line.split(';').next().unwrap_or("").trim(), 16)
                .map_err(|_| format!("a bad chunk size {line:?}"))?;
            // The data and its CRLF (for the last chunk: the empty line; no trailers here).
            let need = line_end + 2 + size + 2;
            while self.buf.len() < need {
                if !self.fill()? {
                    return Err("the connection ended inside a chunk".to_string());
                }
            }
            body.extend_from_slice(&self.buf[line_end + 2..need - 2]);
            self.buf.drain(..need);
            if size == 0 {
                return Ok(body);
            }
        }
    }
}

/// Sends a case and checks everything it expects; `Err` says what went wrong.
fn run(gateway: &Gateway, case: &Case) -> Result<(), String> {
    let (head, body) = case.bytes();
    let (statuses, end) = case.outcome();
    let head_request = head.starts_with(b"HEAD ");
    let mut conn = Conn::open(gateway);
    match case.send {
        Send::All => conn.write(&[head, body].concat()),
        Send::Trickle => {
            for byte in head.iter().chain(&body) {
                conn.write(std::slice::from_ref(byte));
                // Long enough for each byte to be its own read on the gateway's side.
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        Send::Shutdown => {
            conn.write(&[head, body].concat());
            let _ = conn.stream.shutdown(Shutdown::Write);
        }
        Send::PauseBeforeBody => {
            conn.write(&head);
            conn.await_interim()?;
            conn.write(&body);
        }
    }
    let mut got = Vec::new();
    for &want in &statuses {
        let Some(answer) = conn.response(head_request)? else {
            return Err(format!("closed after {got:?}, expected {statuses:?}"));
        };
        got.push(answer.status);
        if answer.status != want {
            let body = String::from_utf8_lossy(&answer.body);
            let cut = body.char_indices().nth(120).map_or(body.len(), |(i, _)| i);
            return Err(format!("statuses {got:?}, expected {statuses:?}: {:?}", &body[..cut]));
        }
        check_body(&answer, head_request)?;
    }
    match end {
        End::Close => {
            if let Some(extra) = conn.response(head_request)? {
                return Err(format!("after {got:?}, a {} instead of a close", extra.status));
            }
        }
        End::Open => {
            conn.write(b"GET /v1/models HTTP/1.1\r\nhost: x\r\n\r\n");
            match conn.response(false)? {
                Some(a) if a.status == 200 => {}
                Some(a) => return Err(format!("the connection, kept open, answered {} to a good request", a.status)),
                None => return Err(format!("closed after {got:?}, expected it kept open")),
            }
        }
    }
    Ok(())
}

/// An error is in the OpenAI shape; a success is JSON without an error; a HEAD's has no content.
fn check_body(answer: &Answer, head_request: bool) -> Result<(), String> {
    if head_request || answer.status < 200 {
        return if answer.body.is_empty() { Ok(()) } else { Err("content in a HEAD or interim response".into()) };
    }
    let text = String::from_utf8_lossy(&answer.body);
    let v: serde_json::Value = serde_json::from_slice(&answer.body).map_err(|e| format!("body {text:?}: {e}"))?;
    match answer.status {
        400.. if !v["error"]["message"].is_string() => Err(format!("not the OpenAI error shape: {text}")),
        200..=299 if !v["error"].is_null() => Err(format!("a {} with an error: {text}", answer.status)),
        _ => Ok(()),
    }
}

#[test]
fn every_hostile_input_gets_its_answer_and_the_gateway_keeps_serving() {
    let corpus: Corpus = serde_json::from_str(CORPUS).expect("hostile/corpus.json");
    let cases = &corpus.cases;
    assert!(cases.len() >= 60, "{} cases", cases.len());
    let mut names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), cases.len(), "case names are unique");

    let a = Mock::start("a", &[]);
    let yaml = config(
        &[deployment(&corpus.model, "dep-a", "openai/gpt-4o-mini", &a, "")],
        &format!("pointwork: {}\n", corpus.pointwork),
    );
    let gateway = Gateway::start(&yaml);
    let mut failures = Vec::new();
    let mut forwarded = 0;
    for case in cases {
        let before = a.request_count();
        let outcome = run(&gateway, case);
        let ok = gateway.chat(&corpus.model);
        assert_eq!(ok.status, 200, "after {}: {}", case.name, ok.text());
        let reached = a.request_count() - before - 1;
        match outcome {
            Err(why) => failures.push(format!("{}: {why}", case.name)),
            Ok(()) if reached != case.forwarded => failures
                .push(format!("{}: {reached} requests reached the provider, expected {}", case.name, case.forwarded)),
            Ok(()) => {}
        }
        forwarded += case.forwarded;
    }
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), cases.len(), failures.join("\n"));
    assert_eq!(a.request_count(), cases.len() as u64 + forwarded);
}
