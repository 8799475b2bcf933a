//! Hostile and malformed requests over raw sockets (issue 6's corpus, growing): each gets its
//! expected answer (or a close), and after each a well-formed request on a fresh connection is
//! still served. One gateway for the whole table, so that every case also proves the previous
//! ones left it healthy.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use common::{config, deployment, Gateway, Mock};

/// What a case expects back.
enum Expect {
    /// A response with this status in the OpenAI error shape.
    Status(u16),
}

struct Case {
    name: &'static str,
    raw: Vec<u8>,
    expect: Expect,
}

fn case(name: &'static str, raw: &[u8], expect: Expect) -> Case {
    Case { name, raw: raw.to_vec(), expect }
}

const CHAT: &[u8] = b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\n";

fn cases() -> Vec<Case> {
    use Expect::Status;
    let with = |headers: &str, body: &str| [CHAT, headers.as_bytes(), b"\r\n", body.as_bytes()].concat();
    // A chat request with exactly this body (any bytes) and its length.
    let body = |bytes: &[u8]| [CHAT, format!("content-length: {}\r\n\r\n", bytes.len()).as_bytes(), bytes].concat();
    vec![
        // Framing (RFC 9112 §6).
        case(
            "Transfer-Encoding with Content-Length",
            &with("content-length: 3\r\ntransfer-encoding: chunked\r\n", "0\r\n\r\n"),
            Status(400),
        ),
        case("two different Content-Lengths", &with("content-length: 2\r\ncontent-length: 3\r\n", "{}"), Status(400)),
        case("Content-Length with a sign", &with("content-length: +3\r\n", "abc"), Status(400)),
        case("negative Content-Length", &with("content-length: -1\r\n", ""), Status(400)),
        case("Content-Length with spaces inside", &with("content-length: 1 2\r\n", ""), Status(400)),
        case("Content-Length overflowing u64", &with("content-length: 99999999999999999999999\r\n", ""), Status(400)),
        case("a coding other than chunked", &with("transfer-encoding: gzip\r\n", ""), Status(400)),
        case("chunked not last", &with("transfer-encoding: chunked, gzip\r\n", ""), Status(400)),
        case("gzip before chunked", &with("transfer-encoding: gzip, chunked\r\n", "0\r\n\r\n"), Status(400)),
        case(
            "Transfer-Encoding in HTTP/1.0",
            b"POST /v1/chat/completions HTTP/1.0\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n",
            Status(400),
        ),
        case(
            "a chunk size that is not hex",
            &with("transfer-encoding: chunked\r\n", "zz\r\n{}\r\n0\r\n\r\n"),
            Status(400),
        ),
        case("a chunk size past u64", &with("transfer-encoding: chunked\r\n", "ffffffffffffffffff\r\n"), Status(400)),
        case(
            "a chunk extension of 5 000 bytes",
            &[with("transfer-encoding: chunked\r\n", "2;"), vec![b'a'; 5000], b"\r\n{}\r\n0\r\n\r\n".to_vec()].concat(),
            Status(400),
        ),
        case("a chunk without its CRLF", &with("transfer-encoding: chunked\r\n", "2\r\n{}XX0\r\n\r\n"), Status(400)),
        case("obsolete line folding", b"GET /v1/models HTTP/1.1\r\nhost: x\r\nfoo: a\r\n b\r\n\r\n", Status(400)),
        case("a bare LF ending the request line", b"GET /v1/models HTTP/1.1\nhost: x\r\n\r\n", Status(400)),
        case("bare LFs everywhere", b"GET /v1/models HTTP/1.1\nhost: x\n\n", Status(400)),
        case("a bare CR", b"GET /v1/models HTTP/1.1\rhost: x\r\n\r\n", Status(400)),
        case("whitespace before the colon", b"GET /v1/models HTTP/1.1\r\nhost : x\r\n\r\n", Status(400)),
        case("a header name with a parenthesis", b"GET /v1/models HTTP/1.1\r\nhost: x\r\nfo(o: y\r\n\r\n", Status(400)),
        case("HTTP/1.1 without Host", b"GET /v1/models HTTP/1.1\r\n\r\n", Status(400)),
        case("garbage instead of a request line", b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03\r\n\r\n", Status(400)),
        case("an HTTP/2 preface", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", Status(400)),
        // Limits.
        case(
            "a request target of 20 000 bytes",
            &[b"GET /v1/models?".to_vec(), vec![b'q'; 20_000], b" HTTP/1.1\r\nhost: x\r\n\r\n".to_vec()].concat(),
            Status(414),
        ),
        case(
            "a head of 100 000 bytes",
            &[b"GET /v1/models HTTP/1.1\r\nhost: x\r\nx-big: ".to_vec(), vec![b'a'; 100_000], b"\r\n\r\n".to_vec()]
                .concat(),
            Status(431),
        ),
        case(
            "200 header fields",
            &[
                b"GET /v1/models HTTP/1.1\r\nhost: x\r\n".to_vec(),
                (0..200).flat_map(|i| format!("x-h{i}: v\r\n").into_bytes()).collect(),
                b"\r\n".to_vec(),
            ]
            .concat(),
            Status(431),
        ),
        case("a body past max_body_bytes", &with("content-length: 99999999999\r\n", ""), Status(413)),
        // Bodies the pick cannot read.
        case("a body that is not JSON", &with("content-length: 5\r\n", "hello"), Status(400)),
        case("a JSON array body", &with("content-length: 2\r\n", "[]"), Status(400)),
        case("a body without model", &with("content-length: 2\r\n", "{}"), Status(400)),
        case("a model that is a number", &with("content-length: 11\r\n", "{\"model\":1}"), Status(400)),
        case(
            "stream that is a string",
            &with("content-length: 30\r\n", "{\"model\":\"gpt\",\"stream\":\"yes\"}"),
            Status(400),
        ),
        case("an unknown model", &with("content-length: 16\r\n", "{\"model\":\"nope\"}"), Status(400)),
        case(
            "invalid UTF-8 inside a message",
            &body(b"{\"model\":\"gpt\",\"messages\":[{\"role\":\"user\",\"content\":\"\xff\xfe\"}]}"),
            Status(400),
        ),
        case("a model name that is not UTF-8", &body(b"{\"model\":\"\xc3\x28\"}"), Status(400)),
        case("JSON nested 10 000 deep", &body(&[vec![b'['; 10_000], vec![b']'; 10_000]].concat()), Status(400)),
        case(
            "a model nested 10 000 deep",
            &body(&[b"{\"model\":".to_vec(), vec![b'['; 10_000], vec![b']'; 10_000], b"}".to_vec()].concat()),
            Status(400),
        ),
        case("an HTTP/1.2 request", b"GET /v1/models HTTP/1.2\r\nhost: x\r\n\r\n", Status(400)),
        case("a NUL in a header value", b"GET /v1/models HTTP/1.1\r\nhost: x\r\nfoo: a\x00b\r\n\r\n", Status(400)),
        case("a DELETE on chat completions", b"DELETE /v1/chat/completions HTTP/1.1\r\nhost: x\r\n\r\n", Status(405)),
        case("a path nobody serves", b"GET /v1/../../etc/passwd HTTP/1.1\r\nhost: x\r\n\r\n", Status(404)),
    ]
}

fn answer(gateway: &Gateway, raw: &[u8]) -> Vec<u8> {
    let mut s = TcpStream::connect(gateway.addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
    // The gateway may answer and close before it read everything (a refused head): ignore a
    // failed write, read what came back.
    let _ = s.write_all(raw);
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        if complete(&out) {
            break;
        }
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
            Err(e) => panic!("reading the answer: {e} (got {:?})", String::from_utf8_lossy(&out)),
        }
    }
    out
}

/// Whether `out` holds a whole response (head and its `content-length` body): a refused body
/// keeps a well-framed connection open, a refused head closes it.
fn complete(out: &[u8]) -> bool {
    let text = String::from_utf8_lossy(out);
    let Some((head, body)) = text.split_once("\r\n\r\n") else { return false };
    let length = head
        .lines()
        .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().to_string()))
        .and_then(|v| v.parse::<usize>().ok());
    length.is_some_and(|n| body.len() >= n)
}

#[test]
fn every_hostile_input_gets_its_answer_and_the_gateway_keeps_serving() {
    let a = Mock::start("a", &[]);
    let yaml = config(
        &[deployment("gpt", "dep-a", "openai/gpt-4o-mini", &a, "")],
        "switchyard: {limits: {max_body_bytes: 1000000}}\n",
    );
    let gateway = Gateway::start(&yaml);
    let cases = cases();
    assert!(cases.len() >= 30, "{} cases", cases.len());
    for c in &cases {
        let out = answer(&gateway, &c.raw);
        let text = String::from_utf8_lossy(&out);
        match c.expect {
            Expect::Status(status) => {
                let first = text.lines().next().unwrap_or_default();
                assert!(first.starts_with(&format!("HTTP/1.1 {status} ")), "{}: got {text:?}", c.name);
                let body = text.split("\r\n\r\n").nth(1).unwrap_or_default();
                let v: serde_json::Value =
                    serde_json::from_str(body).unwrap_or_else(|e| panic!("{}: body {body:?}: {e}", c.name));
                assert!(v["error"]["message"].is_string(), "{}: not the OpenAI error shape: {body}", c.name);
            }
        }
        let ok = gateway.chat("gpt");
        assert_eq!(ok.status, 200, "after {}: {}", c.name, ok.text());
    }
    assert_eq!(a.request_count(), cases.len() as u64, "no hostile input reached the provider");
}
