//! The mock over HTTPS: a throwaway CA signs a certificate for `localhost` and `127.0.0.1`, the
//! mock serves with it, and a rustls client that trusts the CA sees the same provider as over
//! plain HTTP — endpoints, keep-alive, faults, recording — while a client that does not trust
//! it is refused in the handshake.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use pointwork_mock::{spawn, MockOptions, MockServer, TlsFiles};
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose,
};
use rustls::pki_types::CertificateDer;
use rustls::{ClientConfig, RootCertStore};
use serde_json::json;

use crate::binary::{KillOnDrop, BINARY};
use crate::client::{self, Broken, Client, TlsWire};
use crate::{chat_body, start};

/// A throwaway CA and a server certificate it signed, as PEM files in a temp dir removed on drop.
struct Pki {
    dir: PathBuf,
    ca: CertificateDer<'static>,
    files: TlsFiles,
}

/// The names the server certificate is valid for.
const SERVER_NAMES: [&str; 2] = ["localhost", "127.0.0.1"];

impl Pki {
    fn new() -> Pki {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let label = format!("{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
        let dir = std::env::temp_dir().join(format!("pointwork-loadtest-tls-{label}"));
        std::fs::create_dir_all(&dir).expect("create temp dir");

        let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        // A name of its own: a client that trusts another test CA must not mistake it for this one.
        ca_params.distinguished_name.push(DnType::CommonName, format!("pointwork-loadtest test CA {label}"));
        ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().expect("CA key")).expect("CA cert");

        let server_key = KeyPair::generate().expect("server key");
        let mut params = CertificateParams::new(SERVER_NAMES.map(str::to_owned).to_vec()).expect("server cert params");
        params.distinguished_name.push(DnType::CommonName, "localhost");
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let server_cert = params.signed_by(&server_key, &ca).expect("server cert");

        let files = TlsFiles { cert: dir.join("server.pem"), key: dir.join("server.key") };
        std::fs::write(&files.cert, server_cert.pem()).expect("write cert");
        std::fs::write(&files.key, server_key.serialize_pem()).expect("write key");
        Pki { dir, ca: ca.der().clone(), files }
    }

    /// A client configuration trusting only this CA.
    fn client_config(&self) -> Arc<ClientConfig> {
        client_config_trusting(&self.ca)
    }

    fn write(&self, name: &str, contents: &str) -> PathBuf {
        let path = self.dir.join(name);
        std::fs::write(&path, contents).expect("write temp file");
        path
    }

    fn start(&self, options: MockOptions) -> MockServer {
        start(MockOptions { tls: Some(self.files.clone()), ..options })
    }

    fn start_named(&self, name: &str) -> MockServer {
        self.start(MockOptions { name: name.to_owned(), ..MockOptions::default() })
    }

    fn connect(&self, server: &MockServer) -> Client<TlsWire> {
        Client::connect_tls(server.addr(), "localhost", self.client_config())
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn client_config_trusting(ca: &CertificateDer<'static>) -> Arc<ClientConfig> {
    let mut roots = RootCertStore::empty();
    roots.add(ca.clone()).expect("trust the test CA");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("protocol versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    Arc::new(config)
}

#[test]
fn serves_chat_streams_and_embeddings_over_https() {
    let pki = Pki::new();
    let server = pki.start(MockOptions { name: "secure".into(), chunks: 3, ..MockOptions::default() });
    assert_eq!(server.url(), format!("https://{}", server.addr()));

    let mut client = pki.connect(&server);
    let answer = client.post_json("/v1/chat/completions", &chat_body("tls-model", false));
    assert_eq!(answer.status, 200);
    assert_eq!(answer.header("x-mock-name"), Some("secure"));
    assert_eq!(answer.json()["model"], "tls-model");
    assert_eq!(answer.json()["choices"][0]["message"]["content"], "Hello from mock secure");

    let stream = client.post_json("/v1/chat/completions", &chat_body("tls-model", true));
    assert_eq!(stream.header("content-type"), Some("text/event-stream"));
    let events = stream.events();
    assert_eq!(events.len(), 3 + 1, "{events:?}");
    assert_eq!(events.last().map(String::as_str), Some("[DONE]"));
    assert!(stream.last_chunk_at.is_some(), "the stream ends with its last chunk");

    let embeddings = client.post_json("/v1/embeddings", &json!({"model": "e", "input": ["a", "b"]}));
    assert_eq!(embeddings.json()["data"].as_array().map(Vec::len), Some(2));
    assert_eq!(client.get("/health").json(), json!({"status": "ok"}));
}

#[test]
fn the_certificate_is_checked_for_the_ip_address_too() {
    let pki = Pki::new();
    let server = pki.start_named("by-ip");
    let mut client = Client::connect_tls(server.addr(), "127.0.0.1", pki.client_config());
    assert_eq!(client.get("/health").status, 200);
}

#[test]
fn keep_alive_pipelining_and_connection_close_over_tls() {
    let pki = Pki::new();
    let server = pki.start_named("ka-tls");
    let mut client = pki.connect(&server);
    for _ in 0..5 {
        assert_eq!(client.post_json("/v1/chat/completions", &chat_body("m", false)).status, 200);
    }
    let mut burst = Vec::new();
    for model in ["first", "second", "third"] {
        let body = chat_body(model, false).to_string();
        burst.extend(client::request_bytes("POST", "/v1/chat/completions", &[], body.as_bytes()));
    }
    client.send_raw(&burst);
    for model in ["first", "second", "third"] {
        assert_eq!(client.read_response().json()["model"], model);
    }
    let stats = client.get("/mock/stats").json();
    assert_eq!(stats, json!({"requests": 8, "connections": 1, "provider_connections": 1}));

    let last = client.request("GET", "/health", &[("Connection", "close")], b"");
    assert_eq!(last.header("connection"), Some("close"));
    let (rest, ended) = client.read_to_end();
    assert!(rest.is_empty(), "nothing after the last response");
    ended.expect("an orderly close: close_notify, then the end of the stream");
}

#[test]
fn large_and_chunked_request_bodies_cross_tls_intact() {
    let pki = Pki::new();
    let server = pki.start_named("big");
    let mut client = pki.connect(&server);
    let big = json!({"model": "m", "messages": [{"role": "user", "content": "x".repeat(3 << 20)}]}).to_string();
    let answer = client.request("POST", "/v1/chat/completions", &[], big.as_bytes());
    assert_eq!(answer.status, 200);
    assert_eq!(answer.json()["usage"]["prompt_tokens"], big.len() / 4);

    let small = chat_body("chunked", false).to_string();
    let (front, back) = small.split_at(10);
    let chunked = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: mock\r\nTransfer-Encoding: chunked\r\n\r\n\
         {:x}\r\n{front}\r\n{:x}\r\n{back}\r\n0\r\n\r\n",
        front.len(),
        back.len()
    );
    client.send_raw(chunked.as_bytes());
    assert_eq!(client.read_response().json()["model"], "chunked");

    let recorded = client.get("/mock/requests").json();
    assert_eq!(recorded[0]["body"].as_str().map(str::len), Some(big.len()));
    assert_eq!(recorded[1]["body"], small, "de-chunked");
}

#[test]
fn recording_control_and_faults_work_over_tls() {
    let pki = Pki::new();
    let server = pki.start_named("steer");
    let mut client = pki.connect(&server);
    let body = chat_body("upstream-model", false).to_string();
    client.request("POST", "/v1/chat/completions", &[("Authorization", "Bearer sk-tls")], body.as_bytes());
    let recorded = client.get("/mock/requests").json();
    assert_eq!(recorded[0]["body"], body);
    assert!(recorded[0]["headers"].as_array().expect("headers").contains(&json!(["Authorization", "Bearer sk-tls"])));

    let control = client.post_json("/mock/control", &json!({"fault": "status:429:retry-after=2"}));
    assert_eq!(control.status, 200);
    let limited = client.post_json("/v1/chat/completions", &chat_body("m", false));
    assert_eq!(limited.status, 429);
    assert_eq!(limited.header("retry-after"), Some("2"));
    assert_eq!(limited.json()["error"]["type"], "rate_limit_error");
    client.post_json("/mock/control", &json!({"fault": null}));

    let mut cut = pki.connect(&server);
    cut.send(
        "POST",
        "/v1/chat/completions",
        &[("x-mock-fault", "abort-after:2")],
        chat_body("m", true).to_string().as_bytes(),
    );
    let Err(Broken::Closed(partial)) = cut.try_read_response() else {
        panic!("the stream must end without its last chunk");
    };
    assert_eq!(partial.events().len(), 2);

    let mut reset = pki.connect(&server);
    reset.send("POST", "/v1/chat/completions", &[("x-mock-fault", "reset")], body.as_bytes());
    let (received, ended) = reset.read_to_end();
    assert!(received.is_empty(), "no response bytes before the reset");
    assert_eq!(ended.expect_err("a reset").kind(), ErrorKind::ConnectionReset);
}

#[test]
fn a_client_that_does_not_trust_the_ca_is_refused_and_others_are_served() {
    let pki = Pki::new();
    let server = pki.start_named("picky");
    let stranger = Pki::new();
    let mut untrusting = Client::connect_tls(server.addr(), "localhost", stranger.client_config());
    let refused = untrusting.handshake().expect_err("the server's CA is unknown to this client");
    assert!(refused.to_string().contains("UnknownIssuer"), "{refused}");

    let mut wrong_name = Client::connect_tls(server.addr(), "other.example", pki.client_config());
    let refused = wrong_name.handshake().expect_err("the certificate is not for this name");
    assert!(refused.to_string().contains("not valid for name"), "{refused}");

    let mut trusting = pki.connect(&server);
    assert_eq!(trusting.get("/health").status, 200);
    let stats = trusting.get("/mock/stats").json();
    assert_eq!(stats["connections"], 3, "every accepted socket counts: {stats}");
    assert_eq!(stats["provider_connections"], 1, "/health is a provider request, the refused are not");
}

#[test]
fn plain_http_to_the_https_port_gets_no_http_answer() {
    let pki = Pki::new();
    let server = pki.start_named("strict");
    let mut plain = Client::connect(server.addr());
    plain.send("GET", "/health", &[], b"");
    let (received, _) = plain.read_to_end();
    assert!(!received.starts_with(b"HTTP/"), "{:?}", String::from_utf8_lossy(&received));

    let mut client = pki.connect(&server);
    assert_eq!(client.get("/mock/stats").json()["requests"], 0);
}

#[test]
fn unusable_tls_files_are_refused_naming_the_file() {
    let pki = Pki::new();
    let other = Pki::new();
    let missing = pki.dir.join("missing.pem");
    let empty = pki.write("empty.pem", "");
    let cases = [
        (TlsFiles { cert: missing.clone(), key: pki.files.key.clone() }, ErrorKind::NotFound, &missing),
        (TlsFiles { cert: pki.files.cert.clone(), key: missing.clone() }, ErrorKind::NotFound, &missing),
        (TlsFiles { cert: empty.clone(), key: pki.files.key.clone() }, ErrorKind::InvalidData, &empty),
        (TlsFiles { cert: pki.files.cert.clone(), key: empty.clone() }, ErrorKind::InvalidData, &empty),
        (TlsFiles { cert: pki.files.key.clone(), key: pki.files.key.clone() }, ErrorKind::InvalidData, &pki.files.key),
        // A key that is not the certificate's.
        (
            TlsFiles { cert: pki.files.cert.clone(), key: other.files.key.clone() },
            ErrorKind::InvalidData,
            &other.files.key,
        ),
    ];
    for (files, kind, named) in cases {
        let options = MockOptions { tls: Some(files.clone()), ..MockOptions::default() };
        let error = spawn(options).expect_err(&format!("{files:?} must be refused"));
        assert_eq!(error.kind(), kind, "{files:?}: {error}");
        assert!(error.to_string().contains(&named.display().to_string()), "{files:?}: {error}");
    }
}

#[test]
fn the_binary_announces_https_and_serves_it() {
    let pki = Pki::new();
    let child = Command::new(BINARY)
        .args(["--name", "bin-tls", "--threads", "2"])
        .arg("--tls-cert")
        .arg(&pki.files.cert)
        .arg("--tls-key")
        .arg(&pki.files.key)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run pointwork-mock");
    let mut child = KillOnDrop(child);
    let line = crate::binary::first_line(&mut child);
    let addr = line
        .trim_end()
        .strip_prefix("pointwork-mock bin-tls listening on https://")
        .unwrap_or_else(|| panic!("unexpected announcement {line:?}"))
        .parse()
        .expect("address");
    let mut client = Client::connect_tls(addr, "localhost", pki.client_config());
    assert_eq!(client.get("/health").header("x-mock-name"), Some("bin-tls"));
}

#[test]
fn the_binary_refuses_half_tls_flags_and_unreadable_files() {
    let pki = Pki::new();
    let cert = pki.files.cert.to_str().expect("utf-8 path");
    for (args, expected) in [
        (&["--tls-cert", cert][..], "--tls-cert needs --tls-key"),
        (&["--tls-key", cert], "--tls-key needs --tls-cert"),
    ] {
        let output = Command::new(BINARY).args(args).output().expect("run");
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let error = String::from_utf8_lossy(&output.stderr);
        assert!(error.starts_with(&format!("pointwork-mock: {expected}")), "{args:?}: {error}");
    }

    let missing = pki.dir.join("nowhere.pem");
    let output = Command::new(BINARY)
        .args(["--tls-cert", missing.to_str().expect("utf-8 path"), "--tls-key", cert])
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(1));
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(error.starts_with("pointwork-mock: cannot start: TLS certificate "), "{error}");
    assert!(error.contains(&missing.display().to_string()), "{error}");
    assert!(output.stdout.is_empty());
    assert!(!Path::new(&missing).exists());
}
