//! The drain on SIGTERM/SIGINT over real processes: readiness false, listeners closed, requests
//! and streams in flight finished, the grace period, a second signal.

mod common;

use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use common::{
    assert_served_by, chat_body, config, deployment, send_signal, Client, Gateway, GatewayOptions, Mock, LOG_DEADLINE,
};
use serde_json::json;

const MODEL: &str = "openai/gpt-4o-mini";

// ---------------------------------------------------------------------------------------------
// Drain

/// Starts a stream and reads its head and first event.
fn start_stream(gateway: &Gateway) -> Client {
    let mut client = gateway.client();
    client.set_read_timeout(Duration::from_secs(30));
    client.send(
        "POST",
        "/v1/chat/completions",
        &[("content-type", "application/json")],
        chat_body("gpt", true).as_bytes(),
    );
    let head = client.read_head().expect("the stream's head");
    assert_eq!(head.status, 200);
    let first = client.events().next_event().expect("a first event").expect("a first event");
    assert!(first.text.contains("chat.completion.chunk"), "{}", first.text);
    client
}

/// What a new connection to the gateway gets.
#[derive(Debug, PartialEq, Eq)]
enum NewConnection {
    /// Connected and answered (the listener is still open).
    Served,
    /// Connected, then closed or reset without an answer (it raced the listener's close).
    Dropped,
    /// The connect was refused: nobody listens any more.
    Refused,
}

/// Connects to `addr` and asks for readiness; a connection that neither answers nor closes
/// within 5 s fails the test (a client left hanging).
fn new_connection(addr: SocketAddr) -> NewConnection {
    use std::io::{ErrorKind, Read, Write};
    let mut stream = match TcpStream::connect_timeout(&addr, Duration::from_secs(5)) {
        Err(e) if e.kind() == ErrorKind::ConnectionRefused => return NewConnection::Refused,
        Err(e) => panic!("connect to {addr}: {e}"),
        Ok(s) => s,
    };
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    if stream.write_all(b"GET /health/readiness HTTP/1.1\r\nhost: t\r\n\r\n").is_err() {
        return NewConnection::Dropped;
    }
    let mut buf = [0u8; 256];
    match stream.read(&mut buf) {
        Ok(0) => NewConnection::Dropped,
        Ok(_) => NewConnection::Served,
        Err(e) if e.kind() == ErrorKind::ConnectionReset => NewConnection::Dropped,
        Err(e) => panic!("a new connection during the drain got neither an answer nor a close: {e}"),
    }
}

#[test]
fn sigterm_drains_a_stream_in_flight_then_exits_zero() {
    drain_a_stream_in_flight(None);
}

#[test]
fn sigterm_drains_a_stream_in_flight_then_exits_zero_on_the_legacy_driver() {
    drain_a_stream_in_flight(Some("legacy"));
}

/// One shard: the connections opened before the drain live on the shard that holds the stream.
fn drain_a_stream_in_flight(io_driver: Option<&str>) {
    let a = Mock::start("a", &["--chunks", "10", "--chunk-delay-ms", "250"]);
    let options = GatewayOptions { io_driver, ..GatewayOptions::default() };
    let mut gateway = Gateway::start_with(&config(&[deployment("gpt", "dep-a", MODEL, &a, "")], ""), options);
    let addr = gateway.addr;
    // Connections opened before the drain: one for readiness, one for a request.
    let mut probe = gateway.client();
    assert_eq!(probe.request("GET", "/health/readiness", &[], b"").status, 200);
    let mut other = gateway.client();
    assert_served_by(&other.post_json("/v1/chat/completions", &chat_body("gpt", false)), "dep-a");
    assert_eq!(new_connection(addr), NewConnection::Served, "before the drain");
    let mut third = gateway.client();
    assert_eq!(third.request("GET", "/health/liveliness", &[], b"").status, 200);

    let mut stream = start_stream(&gateway);
    let signalled = Instant::now();
    send_signal(&gateway.process, libc::SIGTERM);
    gateway.process.wait_for_stderr("pointwork: SIGTERM: draining", LOG_DEADLINE);

    // Readiness turns false (on a connection opened before), and closes that connection.
    let ready = probe.request("GET", "/health/readiness", &[], b"");
    assert_eq!(ready.status, 503, "{}", ready.text());
    assert_eq!(ready.json(), json!({"status": "draining"}));
    assert_eq!(ready.header("connection"), Some("close"));
    assert!(probe.is_closed_by_peer());
    // A request on an open connection is still served, with `connection: close`.
    let served = other.post_json("/v1/chat/completions", &chat_body("gpt", false));
    assert_served_by(&served, "dep-a");
    assert_eq!(served.header("connection"), Some("close"));
    assert!(other.is_closed_by_peer());
    // New connections are refused once the listener closed (it closes right after the log line).
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        match new_connection(addr) {
            NewConnection::Refused => break,
            other => assert!(Instant::now() < until, "new connections still {other:?} 10 s into the drain"),
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // A stream that starts during the drain (on a connection opened before) completes too.
    third.send("POST", "/v1/chat/completions", &[], chat_body("gpt", true).as_bytes());
    let head = third.read_head().expect("the head of a stream started during the drain");
    assert_eq!(head.status, 200);
    assert_eq!(head.header("connection"), Some("close"));
    assert!(gateway.process.is_running(), "exited with the stream in flight:\n{}", gateway.process.stderr());

    // The stream in flight completes.
    let rest = stream.events().collect_all().expect("the stream ends cleanly");
    assert!(rest.len() >= 5, "most of the stream came after the signal: {} events", rest.len());
    assert_eq!(rest.last().map(|e| e.text.as_str()), Some("data: [DONE]"));
    let late = third.events().collect_all().expect("the late stream ends cleanly");
    assert_eq!(late.last().map(|e| e.text.as_str()), Some("data: [DONE]"));
    assert!(third.is_closed_by_peer());
    let finished = Instant::now();
    let status = gateway.process.wait_exit(common::EXIT_DEADLINE);
    assert_eq!(status.code(), Some(0), "{}", gateway.process.stderr());
    assert!(signalled.elapsed() < Duration::from_secs(20), "exit took {:?}", signalled.elapsed());
    assert!(finished.elapsed() < Duration::from_secs(5), "exit came {:?} after the stream ended", finished.elapsed());
    let stderr = gateway.process.stderr();
    assert!(stderr.contains("pointwork: drain: every request in flight finished; exiting"), "{stderr}");
    assert!(!stderr.contains("grace period"), "{stderr}");
}

#[test]
fn drain_timeout_ends_a_long_stream_and_exits_zero() {
    let a = Mock::start("a", &["--chunks", "10", "--chunk-delay-ms", "1000"]);
    let mut gateway =
        Gateway::start(&config(&[deployment("gpt", "dep-a", MODEL, &a, "")], "pointwork:\n  drain_timeout: 1s\n"));
    let mut stream = start_stream(&gateway);
    let signalled = Instant::now();
    send_signal(&gateway.process, libc::SIGTERM);
    let status = gateway.process.wait_exit(Duration::from_secs(15));
    let took = signalled.elapsed();
    assert_eq!(status.code(), Some(0), "{}", gateway.process.stderr());
    assert!(took >= Duration::from_millis(900), "exited after {took:?}, before the 1s grace period");
    assert!(took < Duration::from_secs(5), "exited after {took:?} with a 1s grace period");
    let stderr = gateway.process.stderr();
    assert!(stderr.contains("pointwork: SIGTERM: draining"), "{stderr}");
    assert!(stderr.contains("up to 1s for requests in flight"), "{stderr}");
    assert!(
        stderr.contains("pointwork: drain: grace period of 1s over with requests still in flight; exiting"),
        "{stderr}"
    );
    // The stream was cut: no [DONE].
    let mut events = stream.events();
    let mut texts = Vec::new();
    while let Ok(Some(e)) = events.next_event() {
        texts.push(e.text);
    }
    assert!(!texts.iter().any(|t| t == "data: [DONE]"), "{texts:?}");
}

#[test]
fn second_signal_exits_at_once_with_code_one() {
    let a = Mock::start("a", &["--chunks", "10", "--chunk-delay-ms", "1000"]);
    let mut gateway = Gateway::start(&config(&[deployment("gpt", "dep-a", MODEL, &a, "")], ""));
    let _stream = start_stream(&gateway);
    send_signal(&gateway.process, libc::SIGTERM);
    gateway.process.wait_for_stderr("pointwork: SIGTERM: draining", LOG_DEADLINE);
    assert!(gateway.process.is_running(), "the default 30s grace period holds the stream");
    let second = Instant::now();
    send_signal(&gateway.process, libc::SIGINT);
    let status = gateway.process.wait_exit(Duration::from_secs(15));
    let took = second.elapsed();
    assert_eq!(status.code(), Some(1), "{}", gateway.process.stderr());
    assert!(took < Duration::from_secs(3), "exited {took:?} after the second signal");
    let stderr = gateway.process.stderr();
    assert!(stderr.contains("pointwork: drain: second signal (SIGINT); exiting at once"), "{stderr}");
}

#[test]
fn sigint_drains_like_sigterm() {
    let a = Mock::start("a", &[]);
    let mut gateway = Gateway::start(&config(&[deployment("gpt", "dep-a", MODEL, &a, "")], ""));
    assert_served_by(&gateway.chat("gpt"), "dep-a");
    send_signal(&gateway.process, libc::SIGINT);
    let status = gateway.process.wait_exit(common::EXIT_DEADLINE);
    assert_eq!(status.code(), Some(0), "{}", gateway.process.stderr());
    let stderr = gateway.process.stderr();
    assert!(stderr.contains("pointwork: SIGINT: draining"), "{stderr}");
    assert!(stderr.contains("pointwork: drain: every request in flight finished; exiting"), "{stderr}");
}

/// Two shards: the one without the stream has nothing to wait for, yet its open connections are
/// still answered; the other holds the process until the stream ends.
#[test]
fn sigterm_over_two_shards_waits_for_the_busy_shard() {
    let a = Mock::start("a", &["--chunks", "10", "--chunk-delay-ms", "250"]);
    let options = GatewayOptions { shards: 2, ..GatewayOptions::default() };
    let mut gateway = Gateway::start_with(&config(&[deployment("gpt", "dep-a", MODEL, &a, "")], ""), options);
    let mut probes: Vec<Client> = (0..8).map(|_| gateway.client()).collect();
    for probe in &mut probes {
        assert_eq!(probe.request("GET", "/health/readiness", &[], b"").status, 200);
    }
    let mut stream = start_stream(&gateway);
    send_signal(&gateway.process, libc::SIGTERM);
    gateway.process.wait_for_stderr("pointwork: SIGTERM: draining", LOG_DEADLINE);
    // Every connection opened before, on either shard, still gets an answer: "draining", and a
    // close. (The idle shard has drained already; its connections must not be left hanging.)
    for (i, probe) in probes.iter_mut().enumerate() {
        probe.set_read_timeout(Duration::from_secs(5));
        let response = probe.request("GET", "/health/readiness", &[], b"");
        assert_eq!(response.status, 503, "probe {i}: {}", response.text());
        assert_eq!(response.json(), json!({"status": "draining"}), "probe {i}");
        assert_eq!(response.header("connection"), Some("close"), "probe {i}");
        assert!(probe.is_closed_by_peer(), "probe {i}");
    }
    let until = Instant::now() + Duration::from_secs(10);
    while new_connection(gateway.addr) != NewConnection::Refused {
        assert!(Instant::now() < until, "new connections still accepted 10 s into the drain");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(gateway.process.is_running(), "exited with the stream in flight:\n{}", gateway.process.stderr());
    let rest = stream.events().collect_all().expect("the stream ends cleanly");
    assert_eq!(rest.last().map(|e| e.text.as_str()), Some("data: [DONE]"));
    assert_eq!(gateway.process.wait_exit(common::EXIT_DEADLINE).code(), Some(0), "{}", gateway.process.stderr());
    gateway.process.wait_for_stderr("pointwork: drain: every request in flight finished; exiting", LOG_DEADLINE);
}
