//! Hostile upstreams: a provider that answers garbage, oversized or contradictory heads, or a
//! body shorter than it announced. Each becomes a 502 with a clear message in OpenAI's shape (or,
//! once bytes reached the client, an error event or a closed connection — never a silent
//! truncation) and counts as a failure of that deployment, so that a retry goes elsewhere.
//!
//! The provider here is a raw socket that answers every request with fixed bytes: the real mock
//! cannot be made to break HTTP.

mod common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{chat_body, config, deployment, Gateway, Mock};

/// A provider that reads each request and answers `answer`, then closes the connection.
struct RawProvider {
    port: u16,
    requests: Arc<AtomicUsize>,
}

impl RawProvider {
    fn start(answer: Vec<u8>) -> RawProvider {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(AtomicUsize::new(0));
        let counter = requests.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let answer = answer.clone();
                let counter = counter.clone();
                std::thread::spawn(move || serve(stream, &answer, &counter));
            }
        });
        RawProvider { port, requests }
    }

    fn entry(&self, id: &str) -> String {
        format!(
            "  - model_name: gpt\n    litellm_params: {{model: openai/gpt-4o-mini, api_base: \"http://127.0.0.1:{}/v1\", api_key: sk-raw}}\n    model_info: {{id: {id}}}\n",
            self.port
        )
    }
}

fn serve(mut stream: TcpStream, answer: &[u8], counter: &AtomicUsize) {
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    // The head, then content-length bytes of body.
    let body_start = loop {
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..body_start]).to_ascii_lowercase();
    let length: usize =
        head.lines().find_map(|l| l.strip_prefix("content-length:")).and_then(|v| v.trim().parse().ok()).unwrap_or(0);
    while buf.len() < body_start + length {
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    counter.fetch_add(1, Ordering::SeqCst);
    let _ = stream.write_all(answer);
    let _ = stream.flush();
}

const JSON_BODY: &str = r#"{"id":"x","object":"chat.completion","choices":[]}"#;

fn cases() -> Vec<(&'static str, Vec<u8>, &'static str)> {
    let many_headers: String = (0..200).map(|i| format!("x-h{i}: v\r\n")).collect();
    vec![
        ("garbage instead of a status line", b"SSH-2.0-OpenSSH_9.6\r\n\r\n".to_vec(), "malformed upstream response"),
        ("a status code of 1000", b"HTTP/1.1 1000 Odd\r\ncontent-length: 0\r\n\r\n".to_vec(), "malformed"),
        (
            "a head over 64 KiB",
            format!("HTTP/1.1 200 OK\r\nx-big: {}\r\n\r\n", "a".repeat(70_000)).into_bytes(),
            "upstream response head too large",
        ),
        (
            "200 headers",
            format!("HTTP/1.1 200 OK\r\n{many_headers}content-length: 2\r\n\r\n{{}}").into_bytes(),
            "malformed upstream response: too many headers",
        ),
        (
            "two different Content-Lengths",
            b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-length: 3\r\n\r\n{}".to_vec(),
            "malformed",
        ),
        ("closed before any byte", Vec::new(), "closed the connection before responding"),
        (
            "closed in the middle of the head",
            b"HTTP/1.1 200 OK\r\ncontent-le".to_vec(),
            "closed the connection before responding",
        ),
    ]
}

#[test]
fn a_malformed_upstream_response_is_a_502_naming_the_problem() {
    for (name, answer, message) in cases() {
        let raw = RawProvider::start(answer);
        let yaml = config(&[raw.entry("dep-raw")], "router_settings: {num_retries: 0}\n");
        let gateway = Gateway::start(&yaml);
        let r = gateway.chat("gpt");
        assert_eq!(r.status, 502, "{name}: {}", r.text());
        let error = &r.json()["error"];
        assert!(error["message"].as_str().unwrap().contains(message), "{name}: {error}");
        assert_eq!(raw.requests.load(Ordering::SeqCst), 1, "{name}: the request was sent once");
        // The gateway is still healthy.
        assert_eq!(gateway.get("/health/liveliness").status, 200, "{name}");
    }
}

/// RFC 9112 §6.3: Transfer-Encoding overrides Content-Length in a response; the client gets the
/// decoded body under one framing of the gateway's own, never the upstream's Content-Length.
#[test]
fn a_response_with_both_framings_is_read_as_chunked_and_reframed() {
    let answer = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 5\r\ntransfer-encoding: chunked\r\n\r\n{:x}\r\n{JSON_BODY}\r\n0\r\n\r\n",
        JSON_BODY.len()
    );
    let raw = RawProvider::start(answer.into_bytes());
    let gateway = Gateway::start(&config(&[raw.entry("dep-raw")], "router_settings: {num_retries: 0}\n"));
    let r = gateway.chat("gpt");
    assert_eq!((r.status, r.text()), (200, JSON_BODY.to_string()));
    let framings = r.headers.iter().filter(|(n, _)| n == "content-length" || n == "transfer-encoding").count();
    assert_eq!(framings, 1, "{:?}", r.headers);
    assert_ne!(r.header("content-length"), Some("5"));
}

/// The relay writes a 200's status line before it has read the head; any other success keeps
/// its own, with the upstream's headers after it.
#[test]
fn a_success_other_than_200_keeps_its_status_line_and_headers() {
    for status in [201, 202, 203] {
        let answer = format!(
            "HTTP/1.1 {status} Whatever\r\ncontent-type: application/json\r\nx-upstream: kept\r\ncontent-length: {}\r\n\r\n{JSON_BODY}",
            JSON_BODY.len()
        );
        let raw = RawProvider::start(answer.into_bytes());
        let gateway = Gateway::start(&config(&[raw.entry("dep-raw")], "router_settings: {num_retries: 0}\n"));
        let r = gateway.chat("gpt");
        assert_eq!((r.status, r.text()), (status, JSON_BODY.to_string()));
        assert_eq!(r.header("x-upstream"), Some("kept"), "{:?}", r.headers);
        assert_eq!(r.header("x-pointwork-deployment"), Some("dep-raw"), "{:?}", r.headers);
    }
}

#[test]
fn a_malformed_response_is_a_failure_of_that_deployment_and_the_retry_goes_elsewhere() {
    let raw = RawProvider::start(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-length: 3\r\n\r\n{}".to_vec());
    let good = Mock::start("good", &[]);
    let yaml = config(
        &[raw.entry("dep-raw"), deployment("gpt", "dep-good", "openai/gpt-4o-mini", &good, "")],
        "router_settings: {num_retries: 1, allowed_fails: 0, cooldown_time: 60}\n",
    );
    let gateway = Gateway::start(&yaml);
    for i in 0..20 {
        let r = gateway.chat("gpt");
        assert_eq!((r.status, r.deployment()), (200, "dep-good"), "request {i}: {}", r.text());
    }
    assert_eq!(raw.requests.load(Ordering::SeqCst), 1, "after one failure the deployment cools down");
}

#[test]
fn a_body_shorter_than_announced_never_reaches_the_client_as_complete() {
    let answer = format!("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 500\r\n\r\n{JSON_BODY}");
    let raw = RawProvider::start(answer.into_bytes());
    let gateway = Gateway::start(&config(&[raw.entry("dep-raw")], "router_settings: {num_retries: 0}\n"));
    let mut client = TcpStream::connect(gateway.addr).unwrap();
    client.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let body = chat_body("gpt", false);
    let request = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    client.write_all(request.as_bytes()).unwrap();
    let mut got = Vec::new();
    let _ = client.read_to_end(&mut got); // ends: the gateway closes, it does not hang
    let text = String::from_utf8_lossy(&got);
    let complete_200 = text.starts_with("HTTP/1.1 200") && {
        let (head, rest) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
        let announced = head
            .lines()
            .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().to_string()))
            .and_then(|v| v.parse::<usize>().ok());
        announced == Some(rest.len())
    };
    assert!(!complete_200, "a truncated body was passed off as complete: {text}");
    assert!(
        text.starts_with("HTTP/1.1 502") || text.starts_with("HTTP/1.1 200"),
        "a 502, or the announced length and then a close: {text}"
    );
    // And the gateway serves on.
    assert_eq!(gateway.get("/health/readiness").status, 200);
}

#[test]
fn a_stream_that_breaks_its_chunking_ends_with_an_error_event() {
    let event = "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n";
    let answer = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n{:x}\r\n{event}\r\nzz-not-a-size\r\n",
        event.len()
    );
    let raw = RawProvider::start(answer.into_bytes());
    let gateway = Gateway::start(&config(&[raw.entry("dep-raw")], "router_settings: {num_retries: 0}\n"));
    let r = gateway.post("/v1/chat/completions", &chat_body("gpt", true));
    let text = r.text();
    assert_eq!(r.status, 200, "{text}");
    assert!(text.contains(r#""content":"hi""#), "what came before reached the client: {text}");
    let last = text.trim_end().rsplit("\n\n").next().unwrap_or_default();
    assert!(last.starts_with("data: {\"error\""), "the stream ends with an error event: {text}");
}
