//! Forwarding to an https upstream, over real processes: a throwaway CA signs a certificate for
//! `localhost` and `127.0.0.1`, `pointwork-mock` serves HTTPS with it, and `pointwork serve`
//! trusts the CA through `SSL_CERT_FILE`. Answers and streams pass through with the model
//! rewritten and the key injected, one TLS connection carries sequential requests, an unknown
//! CA is a 502 that says so, and an unreadable `SSL_CERT_FILE` stops the gateway at start-up.

mod common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use common::https::{client_config, Ca};
use common::{
    addr_after_http, chat_body, mock_bin, recorded_headers, serve_command, Client, GatewayOptions, Process, Response,
    TempDir, EXIT_DEADLINE, READY_DEADLINE,
};
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, ClientConnection, StreamOwned};
use serde_json::Value;

/// The environment variable the gateway reads extra trusted CAs from.
const EXTRA_CA_ENV: &str = "SSL_CERT_FILE";
/// The model the gateway must send upstream, and the key it must inject.
const UPSTREAM_MODEL: &str = "upstream-model";
const API_KEY: &str = "sk-tls-test";

/// A throwaway CA and a server certificate for `localhost` and `127.0.0.1`, as PEM files.
struct Pki {
    _dir: TempDir,
    ca: CertificateDer<'static>,
    ca_pem: PathBuf,
    cert_pem: PathBuf,
    key_pem: PathBuf,
}

impl Pki {
    fn new() -> Pki {
        let dir = TempDir::new("tls");
        let ca = Ca::new(&dir, "gateway-tests");
        let server = ca.server(&dir, "server", None);
        Pki { ca_pem: ca.pem, cert_pem: server.cert_pem, key_pem: server.key_pem, ca: ca.der, _dir: dir }
    }
}

/// `pointwork-mock` serving HTTPS, and a client configuration that trusts it for its own
/// `/mock/*` requests.
struct TlsMock {
    process: Process,
    addr: SocketAddr,
    client_config: Arc<ClientConfig>,
}

impl TlsMock {
    fn start(name: &str, pki: &Pki) -> TlsMock {
        let mut command = Command::new(mock_bin());
        command
            .args(["--listen", "127.0.0.1:0", "--threads", "1", "--name", name])
            .arg("--tls-cert")
            .arg(&pki.cert_pem)
            .arg("--tls-key")
            .arg(&pki.key_pem);
        let mut process = Process::spawn(&format!("mock {name}"), command);
        let line = process.wait_for_line("listening on https://", READY_DEADLINE);
        let addr = line[line.find("https://").expect("announced URL") + "https://".len()..]
            .parse()
            .unwrap_or_else(|e| panic!("bad address in {line:?}: {e}"));
        TlsMock { process, addr, client_config: client_config(&pki.ca, None) }
    }

    /// `https://HOST:PORT/v1` for a deployment.
    fn api_base(&self, host: &str) -> String {
        format!("https://{host}:{}/v1", self.addr.port())
    }

    /// `GET path` on the mock over TLS (its own connection, closed after), as JSON.
    fn get(&self, path: &str) -> Value {
        let tcp = TcpStream::connect(self.addr).unwrap_or_else(|e| panic!("connect to mock {}: {e}", self.addr));
        tcp.set_read_timeout(Some(common::http::READ_TIMEOUT)).expect("read timeout");
        let name = ServerName::try_from("localhost").expect("server name");
        let connection = ClientConnection::new(self.client_config.clone(), name).expect("TLS client");
        let mut tls = StreamOwned::new(connection, tcp);
        let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
        tls.write_all(request.as_bytes()).and_then(|()| tls.flush()).expect("send to mock");
        let mut raw = Vec::new();
        tls.read_to_end(&mut raw).unwrap_or_else(|e| panic!("mock GET {path}: {e}\n{}", self.process.stderr()));
        let text = String::from_utf8(raw).expect("utf-8 answer");
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or_else(|| panic!("no head in {text:?}"));
        assert!(head.starts_with("HTTP/1.1 200 "), "mock GET {path}: {text}");
        serde_json::from_str(body).unwrap_or_else(|e| panic!("mock GET {path}: not JSON ({e}): {body}"))
    }

    fn requests(&self) -> Vec<Value> {
        match self.get("/mock/requests") {
            Value::Array(list) => list,
            other => panic!("/mock/requests is not a list: {other}"),
        }
    }
}

/// One group `gpt` with one deployment `tls-dep` at `api_base`.
fn config_for(api_base: &str) -> String {
    format!(
        "model_list:\n  - model_name: gpt\n    litellm_params: {{model: openai/{UPSTREAM_MODEL}, \
         api_base: \"{api_base}\", api_key: {API_KEY}}}\n    model_info: {{id: tls-dep}}\n"
    )
}

/// `pointwork serve` on `yaml` with one shard, `SSL_CERT_FILE` set to `extra_ca` or unset
/// (whatever the test's own environment says).
fn serve(yaml: &str, extra_ca: Option<&Path>) -> (Process, TempDir) {
    let dir = TempDir::new("gateway-tls");
    let config_path = dir.write("config.yaml", yaml);
    let mut command = serve_command(&config_path, &GatewayOptions::default());
    match extra_ca {
        Some(path) => command.env(EXTRA_CA_ENV, path),
        None => command.env_remove(EXTRA_CA_ENV),
    };
    (Process::spawn("pointwork serve", command), dir)
}

/// A gateway that is up: its process, its address, and the temp dir holding its config.
struct Gateway {
    process: Process,
    addr: SocketAddr,
    _dir: TempDir,
}

impl Gateway {
    fn start(yaml: &str, extra_ca: Option<&Path>) -> Gateway {
        let (mut process, dir) = serve(yaml, extra_ca);
        let line = process.wait_for_line("listening on http://", READY_DEADLINE);
        Gateway { addr: addr_after_http(&line), process, _dir: dir }
    }

    fn chat(&self, stream: bool) -> Response {
        Client::connect(self.addr).post_json("/v1/chat/completions", &chat_body("gpt", stream))
    }
}

/// A whole answer and a stream go through an https upstream named `host`: the mock saw the
/// rewritten model and the injected key on both.
fn passes_through_https_upstream_named(host: &str) {
    let pki = Pki::new();
    let mock = TlsMock::start("secure", &pki);
    let gateway = Gateway::start(&config_for(&mock.api_base(host)), Some(&pki.ca_pem));

    let answer = gateway.chat(false);
    assert_eq!(answer.status, 200, "{}\ngateway stderr:\n{}", answer.text(), gateway.process.stderr());
    assert_eq!(answer.header("x-mock-name"), Some("secure"));
    assert_eq!(answer.header("x-pointwork-deployment"), Some("tls-dep"));
    let json = answer.json();
    assert_eq!(json["model"], UPSTREAM_MODEL);
    assert_eq!(json["choices"][0]["message"]["content"], "Hello from mock secure");

    let stream = gateway.chat(true);
    assert_eq!(stream.status, 200, "{}", stream.text());
    assert_eq!(stream.header("content-type"), Some("text/event-stream"));
    let text = stream.text();
    let events: Vec<&str> = text.split("\n\n").filter(|event| !event.is_empty()).collect();
    assert_eq!(events.len(), 8 + 1, "8 content events and [DONE]: {events:?}");
    assert_eq!(events.last().copied(), Some("data: [DONE]"));
    let content: String = events[..8]
        .iter()
        .map(|event| {
            let chunk: Value = serde_json::from_str(event.strip_prefix("data: ").expect("a data event"))
                .unwrap_or_else(|e| panic!("event JSON ({e}): {event}"));
            assert_eq!(chunk["model"], UPSTREAM_MODEL);
            chunk["choices"][0]["delta"]["content"].as_str().unwrap_or("").to_owned()
        })
        .collect();
    assert_eq!(content, "Hello from mock secure");

    let sent = mock.requests();
    assert_eq!(sent.len(), 2, "{sent:#?}");
    for request in &sent {
        assert_eq!(request["path"], "/v1/chat/completions");
        let body = request["body"].as_str().expect("recorded body");
        assert!(body.contains(&format!("\"model\":\"{UPSTREAM_MODEL}\"")), "model rewritten: {body}");
        assert_eq!(recorded_headers(request, "authorization"), [format!("Bearer {API_KEY}")], "{request}");
    }
}

#[test]
fn chat_and_stream_pass_through_an_https_upstream_named_localhost() {
    passes_through_https_upstream_named("localhost");
}

#[test]
fn chat_and_stream_pass_through_an_https_upstream_named_by_ip_address() {
    passes_through_https_upstream_named("127.0.0.1");
}

#[test]
fn sequential_requests_reuse_one_tls_connection() {
    let pki = Pki::new();
    let mock = TlsMock::start("reuse", &pki);
    let gateway = Gateway::start(&config_for(&mock.api_base("localhost")), Some(&pki.ca_pem));
    for i in 0..10 {
        let answer = gateway.chat(i % 2 == 1);
        assert_eq!(answer.status, 200, "request {i}: {}", answer.text());
    }
    let stats = mock.get("/mock/stats");
    assert_eq!(stats["requests"], 10, "{stats}");
    assert_eq!(stats["provider_connections"], 1, "one shard, sequential requests: one TLS connection ({stats})");
}

#[test]
fn an_upstream_certificate_from_an_unknown_ca_is_a_502_naming_unknown_issuer() {
    let pki = Pki::new();
    let mock = TlsMock::start("untrusted", &pki);
    let gateway = Gateway::start(&config_for(&mock.api_base("localhost")), None);

    let answer = gateway.chat(false);
    assert_eq!(answer.status, 502, "{}", answer.text());
    assert_eq!(answer.header("content-type"), Some("application/json"));
    let error = answer.json();
    let fields = error["error"].as_object().unwrap_or_else(|| panic!("OpenAI error shape: {error}"));
    for field in ["message", "type", "param", "code"] {
        assert!(fields.contains_key(field), "no {field} in {error}");
    }
    let message = error["error"]["message"].as_str().expect("message");
    assert!(message.contains("UnknownIssuer"), "{message}");

    let stats = mock.get("/mock/stats");
    assert_eq!(stats["requests"], 0, "no request crossed the failed handshake: {stats}");
    assert_eq!(stats["provider_connections"], 0, "{stats}");
}

#[test]
fn an_unusable_ssl_cert_file_stops_serve_with_exit_1_naming_it() {
    let dir = TempDir::new("bad-ca");
    let missing = dir.path.join("no-such-ca.pem");
    let empty = dir.write("empty.pem", "");
    // Any config: the CA bundle is read before the first upstream is needed.
    let yaml = config_for("https://localhost:9/v1");
    for bundle in [&missing, &empty] {
        let (mut process, _dir) = serve(&yaml, Some(bundle));
        let status = process.wait_exit(EXIT_DEADLINE);
        assert_eq!(status.code(), Some(1), "{}: {status}\nstderr:\n{}", bundle.display(), process.stderr());
        let stderr = process.stderr();
        assert!(stderr.contains(EXTRA_CA_ENV), "{stderr}");
        assert!(stderr.contains(&bundle.display().to_string()), "{stderr}");
        assert!(!process.stdout().contains("listening on"), "{}", process.stdout());
    }
}
