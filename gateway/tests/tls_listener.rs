//! TLS on the gateway's own port, over real processes: a throwaway CA (rcgen) signs the
//! gateway's certificate, `pointwork serve` terminates HTTPS in front of a plain mock, and a
//! rustls client talks to it. Chats pass with ALPN `http/1.1` and keep-alive; plain HTTP on the
//! port gets a 400; garbage and truncated handshakes are refused without holding up anyone else;
//! mTLS refuses and accepts; the command line and LiteLLM's variables turn TLS on; a broken key
//! stops the start naming the file.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::https::{client_config, Ca, Issued, TlsGateway};
use common::{chat_body, deployment, Mock, Process, TempDir, EXIT_DEADLINE};
use rustls::pki_types::ServerName;
use rustls::ClientConnection;

fn gateway_yaml(mock: &Mock, tls: &str) -> String {
    let model_list = deployment("chat", "a", "openai/gpt-4o-mini", mock, "");
    format!("model_list:\n{model_list}pointwork:\n  timeouts: {{request_head: 1s}}\n{tls}")
}

fn tls_section(cert: &std::path::Path, key: &std::path::Path, client_ca: Option<&std::path::Path>) -> String {
    let ca = client_ca.map(|p| format!(", client_ca: \"{}\"", p.display())).unwrap_or_default();
    format!("  tls: {{cert: \"{}\", key: \"{}\"{ca}}}\n", cert.display(), key.display())
}

/// A CA, a plain mock, and a gateway serving HTTPS in front of it with a certificate of the CA.
struct Setup {
    ca: Ca,
    server: Issued,
    mock: Mock,
    gateway: TlsGateway,
    _dir: TempDir,
}

impl Setup {
    fn start(label: &str) -> Setup {
        let dir = TempDir::new(label);
        let ca = Ca::new(&dir, "root");
        let server = ca.server(&dir, "server", None);
        let mock = Mock::start("plain", &[]);
        let tls = tls_section(&server.cert_pem, &server.key_pem, None);
        let gateway = TlsGateway::start(&dir, &gateway_yaml(&mock, &tls), &[], Vec::new());
        Setup { ca, server, mock, gateway, _dir: dir }
    }
}

/// The gateway's count of handshakes with `outcome`, from `/metrics` over HTTPS.
fn handshakes(gateway: &TlsGateway, ca: &Ca, outcome: &str) -> u64 {
    let mut conn = gateway.connect(&client_config(&ca.der, None)).expect("connect for /metrics");
    let metrics = conn.request("GET", "/metrics", "").expect("GET /metrics").text();
    let needle = format!("pointwork_tls_handshakes_total{{outcome=\"{outcome}\"}} ");
    let line = metrics.lines().find(|l| l.starts_with(&needle)).unwrap_or_else(|| panic!("{needle} in\n{metrics}"));
    line[needle.len()..].parse().expect("a count")
}

#[test]
fn chats_over_https_with_alpn_and_keep_alive() {
    let setup = Setup::start("tls-listener");
    let (ca, server, mock, gateway) = (&setup.ca, &setup.server, &setup.mock, &setup.gateway);

    let mut conn = gateway.connect(&client_config(&ca.der, None)).expect("handshake");
    assert_eq!(conn.alpn(), Some(&b"http/1.1"[..]));
    assert_eq!(conn.peer_certificate(), server.der);
    for _ in 0..3 {
        let answer = conn.request("POST", "/v1/chat/completions", &chat_body("chat", false)).expect("chat");
        assert_eq!(answer.status, 200, "{}", answer.text());
        assert!(answer.head.contains("x-pointwork-deployment: a"), "{}", answer.head);
        assert!(answer.text().contains("chat.completion"), "{}", answer.text());
    }
    let answer = conn.request("POST", "/v1/chat/completions", &chat_body("chat", true)).expect("stream");
    assert_eq!(answer.status, 200);
    assert!(answer.text().ends_with("data: [DONE]\n\n"), "{}", answer.text());
    assert_eq!(mock.request_count(), 4);
    // One connection carried all four: one handshake (and this one for /metrics).
    assert_eq!(handshakes(gateway, ca, "ok"), 2);
}

#[test]
fn plain_http_on_the_https_port_gets_a_400_and_a_close() {
    let setup = Setup::start("tls-plain");
    let (ca, gateway) = (&setup.ca, &setup.gateway);

    let mut tcp = TcpStream::connect(gateway.addr).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    tcp.write_all(b"GET /v1/models HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
    let mut answer = String::new();
    tcp.read_to_string(&mut answer).expect("answer, then the close");
    assert!(answer.starts_with("HTTP/1.1 400 "), "{answer}");
    assert!(answer.contains("connection: close"), "{answer}");
    assert!(answer.contains("the plain HTTP request was sent to the HTTPS port"), "{answer}");
    assert!(answer.contains("\"type\":\"invalid_request_error\""), "{answer}");
    // With a body larger than anything read before answering: the answer still arrives whole.
    let mut tcp = TcpStream::connect(gateway.addr).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let body = "x".repeat(200_000);
    let head =
        format!("POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Length: {}\r\n\r\n", body.len());
    tcp.write_all(head.as_bytes()).unwrap();
    let _ = tcp.write_all(body.as_bytes());
    let mut answer = String::new();
    tcp.read_to_string(&mut answer).expect("answer, then the close");
    assert!(answer.starts_with("HTTP/1.1 400 "), "{answer}");
    assert_eq!(handshakes(gateway, ca, "plain_http"), 2);
}

#[test]
fn a_closing_connection_says_close_notify_and_the_handshake_counts_toward_the_head_deadline() {
    let setup = Setup::start("tls-close");
    let (ca, gateway) = (&setup.ca, &setup.gateway);
    let config = client_config(&ca.der, None);

    // `connection: close`: the answer, then a clean TLS end (rustls reports a close without
    // close_notify as an error).
    let mut conn = gateway.connect(&config).unwrap();
    let request = "GET /v1/models HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n";
    conn.tls.write_all(request.as_bytes()).unwrap();
    let mut answer = Vec::new();
    conn.tls.read_to_end(&mut answer).expect("a close_notify after the answer");
    assert!(answer.starts_with(b"HTTP/1.1 200 "), "{}", String::from_utf8_lossy(&answer));

    // Handshaken, then silent: closed when the head deadline (1 s from the hello) passes,
    // not after keepalive_idle (60 s).
    let started = Instant::now();
    let mut conn = gateway.connect(&config).unwrap();
    let mut rest = Vec::new();
    conn.tls.read_to_end(&mut rest).expect("a clean close");
    let waited = started.elapsed();
    assert!(rest.is_empty() && waited >= Duration::from_millis(900) && waited < Duration::from_secs(5), "{waited:?}");
}

#[test]
fn garbage_and_truncated_handshakes_do_not_hold_up_others() {
    let setup = Setup::start("tls-hostile");
    let (ca, gateway) = (&setup.ca, &setup.gateway);
    let config = client_config(&ca.der, None);

    // Garbage that starts like a handshake record: refused by TLS, closed.
    let mut garbage = TcpStream::connect(gateway.addr).unwrap();
    garbage.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    garbage.write_all(b"\x16\x03\x01\x00\x10this is no hello").unwrap();
    let mut rest = Vec::new();
    let _ = garbage.read_to_end(&mut rest);
    assert!(rest.len() < 64, "at most an alert before the close: {rest:?}");

    // The first half of a real ClientHello, then nothing: closed at the head deadline (1 s).
    let mut hello = Vec::new();
    let mut client = ClientConnection::new(config.clone(), ServerName::try_from("localhost").unwrap()).unwrap();
    client.write_tls(&mut hello).unwrap();
    let mut truncated = TcpStream::connect(gateway.addr).unwrap();
    truncated.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    truncated.write_all(&hello[..hello.len() / 2]).unwrap();
    let started = Instant::now();

    // Meanwhile a whole handshake and a chat go through at once.
    let mut conn = gateway.connect(&config).expect("handshake beside the stalled one");
    let answer = conn.request("POST", "/v1/chat/completions", &chat_body("chat", false)).unwrap();
    assert_eq!(answer.status, 200);
    assert!(started.elapsed() < Duration::from_millis(900), "served while the other handshake stalled");

    let mut rest = Vec::new();
    let read = truncated.read_to_end(&mut rest);
    let waited = started.elapsed();
    assert!(read.is_ok() && rest.is_empty(), "closed without an answer: {read:?} {rest:?}");
    assert!(waited >= Duration::from_millis(900) && waited < Duration::from_secs(5), "closed after {waited:?}");
    assert_eq!(handshakes(gateway, ca, "failed"), 1);
    assert_eq!(handshakes(gateway, ca, "timeout"), 1);
}

#[test]
fn client_certificates_are_required_with_client_ca() {
    let dir = TempDir::new("tls-mtls");
    let ca = Ca::new(&dir, "root");
    let server = ca.server(&dir, "server", None);
    let callers = Ca::new(&dir, "callers");
    let caller = callers.client(&dir, "caller");
    let stranger = Ca::new(&dir, "stranger").client(&dir, "stranger");
    let mock = Mock::start("plain", &[]);
    let tls = tls_section(&server.cert_pem, &server.key_pem, Some(&callers.pem));
    let gateway = TlsGateway::start(&dir, &gateway_yaml(&mock, &tls), &[], Vec::new());
    let chat = chat_body("chat", false);

    // Without a certificate, or with one the CA did not sign: refused at the handshake (TLS 1.3
    // reports it with the first read).
    for (identity, alert) in [(None, "CertificateRequired"), (Some(&stranger), "UnknownCA")] {
        let refused = gateway
            .connect(&client_config(&ca.der, identity))
            .and_then(|mut conn| conn.request("POST", "/v1/chat/completions", &chat));
        let error = refused.err().expect("refused without a valid client certificate").to_string();
        assert!(error.contains(&format!("received fatal alert: {alert}")), "{error}");
    }
    assert_eq!(mock.request_count(), 0);

    let mut conn = gateway.connect(&client_config(&ca.der, Some(&caller))).expect("handshake with a certificate");
    let answer = conn.request("POST", "/v1/chat/completions", &chat).expect("chat");
    assert_eq!(answer.status, 200, "{}", answer.text());
    assert_eq!(mock.request_count(), 1);
}

#[test]
fn the_command_line_and_litellm_variables_turn_tls_on() {
    let dir = TempDir::new("tls-flags");
    let ca = Ca::new(&dir, "root");
    let server = ca.server(&dir, "server", None);
    let mock = Mock::start("plain", &[]);
    let yaml = gateway_yaml(&mock, "");
    let (cert, key) = (server.cert_pem.to_str().unwrap(), server.key_pem.to_str().unwrap());
    let by_flags = TlsGateway::start(&dir, &yaml, &["--tls-cert", cert, "--tls-key", key], Vec::new());
    let by_env = TlsGateway::start(&dir, &yaml, &[], vec![("SSL_CERTFILE_PATH", cert), ("SSL_KEYFILE_PATH", key)]);
    for gateway in [&by_flags, &by_env] {
        let mut conn = gateway.connect(&client_config(&ca.der, None)).expect("handshake");
        let answer = conn.request("POST", "/v1/chat/completions", &chat_body("chat", false)).unwrap();
        assert_eq!(answer.status, 200);
    }
}

#[test]
fn a_key_that_does_not_fit_stops_the_start_naming_the_file() {
    let dir = TempDir::new("tls-broken");
    let ca = Ca::new(&dir, "root");
    let server = ca.server(&dir, "server", None);
    let other = ca.server(&dir, "other", None);
    let mock = Mock::start("plain", &[]);
    let tls = tls_section(&server.cert_pem, &other.key_pem, None);
    let config_path = dir.write("config.yaml", &gateway_yaml(&mock, &tls));
    let command = common::serve_command(&config_path, &common::GatewayOptions::default());
    let mut process = Process::spawn("pointwork serve (broken tls)", command);
    assert!(!process.wait_exit(EXIT_DEADLINE).success());
    let stderr = process.stderr();
    assert!(stderr.contains("pointwork.tls.key") && stderr.contains("other.key"), "{stderr}");
    assert!(stderr.contains("does not match"), "{stderr}");
}
