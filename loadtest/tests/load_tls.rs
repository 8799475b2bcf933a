//! `pointwork-load` over HTTPS against the mock's TLS mode, with a throwaway CA made here
//! (rcgen): keep-alive runs, a handshake per request with and without session resumption, the
//! trust flags (`--cacert`, `--insecure`) and what a refused certificate looks like in the report.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::Command as Process;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use pointwork_loadtest::load::{parse_args, run, Command, Report};
use pointwork_mock::{spawn, MockOptions, MockServer, TlsFiles};
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};
use serde_json::Value;

/// A throwaway CA and a server certificate it signed for `localhost` and `127.0.0.1`, as PEM
/// files in a temp dir removed on drop.
struct Pki {
    dir: PathBuf,
    /// The CA's certificate: what `--cacert` names.
    ca_file: PathBuf,
    files: TlsFiles,
}

impl Pki {
    fn new() -> Pki {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let label = format!("{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
        let dir = std::env::temp_dir().join(format!("pointwork-load-tls-{label}"));
        std::fs::create_dir_all(&dir).expect("create temp dir");

        let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params.distinguished_name.push(DnType::CommonName, format!("pointwork-load test CA {label}"));
        ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().expect("CA key")).expect("CA cert");

        let server_key = KeyPair::generate().expect("server key");
        let mut params =
            CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()]).expect("server params");
        params.distinguished_name.push(DnType::CommonName, "localhost");
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let server_cert = params.signed_by(&server_key, &ca).expect("server cert");

        let ca_file = dir.join("ca.pem");
        std::fs::write(&ca_file, ca.pem()).expect("write CA");
        let files = TlsFiles { cert: dir.join("server.pem"), key: dir.join("server.key") };
        std::fs::write(&files.cert, server_cert.pem()).expect("write cert");
        std::fs::write(&files.key, server_key.serialize_pem()).expect("write key");
        Pki { dir, ca_file, files }
    }

    fn mock(&self) -> MockServer {
        spawn(MockOptions { tls: Some(self.files.clone()), record: false, ..MockOptions::default() })
            .expect("mock starts")
    }

    fn cacert(&self) -> String {
        format!("--cacert {}", self.ca_file.display())
    }

    /// A rustls client trusting this CA.
    fn client_config(&self) -> Arc<ClientConfig> {
        let mut roots = RootCertStore::empty();
        for cert in CertificateDer::pem_file_iter(&self.ca_file).expect("CA file") {
            roots.add(cert.expect("CA PEM")).expect("trust the CA");
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("protocol versions")
            .with_root_certificates(roots)
            .with_no_client_auth();
        Arc::new(config)
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn url(server: &MockServer) -> String {
    format!("{}/v1/chat/completions", server.url())
}

/// Runs the generator in-process with `args` (whitespace separated) after `--url URL`.
fn load(url: &str, args: &str) -> Report {
    let line = format!("--url {url} --no-progress {args}");
    match parse_args(line.split_whitespace().map(str::to_owned)) {
        Ok(Command::Run(options)) => run(&options).expect("the run starts"),
        Ok(Command::Help) => panic!("help"),
        Err(message) => panic!("bad options {line:?}: {message}"),
    }
}

/// The mock's `GET /mock/stats`, over TLS.
fn mock_stats(pki: &Pki, addr: SocketAddr) -> Value {
    let name = ServerName::try_from("localhost").expect("a name");
    let session = ClientConnection::new(pki.client_config(), name).expect("a session");
    let mut stream = StreamOwned::new(session, TcpStream::connect(addr).expect("connect"));
    stream.write_all(b"GET /mock/stats HTTP/1.1\r\nhost: mock\r\nconnection: close\r\n\r\n").expect("write");
    let mut answer = Vec::new();
    // The mock ends with close_notify; whatever came before it is the answer.
    let _ = stream.read_to_end(&mut answer);
    let answer = String::from_utf8(answer).expect("UTF-8");
    let (_, body) = answer.split_once("\r\n\r\n").expect("a head");
    serde_json::from_str(body).expect("JSON stats")
}

fn kind(report: &Report, name: &str) -> u64 {
    report.errors.by_kind[name]
}

#[test]
fn https_keep_alive_runs_all_ok() {
    let pki = Pki::new();
    let server = pki.mock();
    let report = load(&url(&server), &format!("--requests 400 --concurrency 4 --threads 2 {}", pki.cacert()));
    assert_eq!(report.requests.ok, 400, "{report:?}");
    assert_eq!(report.requests.errors, 0, "{report:?}");
    assert_eq!(report.url, url(&server), "the URL keeps its https://");
    assert_eq!(report.connections.opened, 4, "keep-alive: one connection each, opened before the start");
    let tls = report.tls.as_ref().expect("an https run reports its handshakes");
    assert_eq!(tls.handshakes, 4, "{tls:?}");
    assert!(tls.resumption);
    assert_eq!(tls.handshake_us.as_ref().map(|p| p.count), Some(4));
    let stats = mock_stats(&pki, server.addr());
    assert_eq!(stats["requests"], 400);
    assert_eq!(stats["provider_connections"], 4, "the run's 4 (the stats request is not a provider request)");

    // Streams over TLS: every event read through rustls.
    let report = load(&url(&server), &format!("--requests 40 --concurrency 4 --stream {}", pki.cacert()));
    assert_eq!(report.requests.ok, 40, "{report:?}");
    assert_eq!(report.events, Some(40 * 8), "the mock's 8 events per stream");
}

#[test]
fn a_new_connection_per_request_resumes_sessions() {
    let pki = Pki::new();
    let server = pki.mock();
    let report =
        load(&url(&server), &format!("--requests 300 --concurrency 2 --threads 1 --new-connection {}", pki.cacert()));
    assert_eq!(report.requests.ok, 300, "{report:?}");
    assert!(report.new_connection);
    assert_eq!(report.connections.opened, 300, "a connection per request, none opened ahead");
    let tls = report.tls.as_ref().expect("tls");
    assert_eq!(tls.handshakes, 300, "{tls:?}");
    // The first handshakes have no session to resume yet; after them nearly all resume.
    assert!(tls.resumed >= 290, "{tls:?}");
    assert!(tls.resumed < tls.handshakes, "the first ones are full: {tls:?}");
    assert_eq!(tls.handshake_us.as_ref().map(|p| p.count), Some(300));
    let latency = report.latency_us.as_ref().expect("latency");
    let handshake = tls.handshake_us.as_ref().expect("handshake");
    assert!(latency.p50 > handshake.p50, "the handshake counts in the latency: {latency:?} {handshake:?}");
    // The server saw a connection per request.
    let stats = mock_stats(&pki, server.addr());
    assert_eq!(stats["requests"], 300);
    assert_eq!(stats["provider_connections"], 300);

    // Many connections at once: each takes a ticket as it starts and gets new ones only after its
    // handshake, so the pool must hold more than rustls's 8 per server for them all to resume.
    let report =
        load(&url(&server), &format!("--requests 600 --concurrency 32 --threads 1 --new-connection {}", pki.cacert()));
    assert_eq!(report.requests.ok, 600, "{report:?}");
    let tls = report.tls.as_ref().expect("tls");
    assert!(tls.resumed >= 600 - 2 * 32, "only the first wave goes full: {tls:?}");
}

#[test]
fn no_resume_makes_every_handshake_a_full_one() {
    let pki = Pki::new();
    let server = pki.mock();
    let report = load(
        &url(&server),
        &format!("--requests 100 --concurrency 2 --threads 1 --new-connection --no-resume {}", pki.cacert()),
    );
    assert_eq!(report.requests.ok, 100, "{report:?}");
    let tls = report.tls.as_ref().expect("tls");
    assert_eq!((tls.handshakes, tls.resumed, tls.resumption), (100, 0, false), "{tls:?}");
    assert!(report.to_text().contains("100 handshakes, 0 resumed (resumption off)"));
}

#[test]
fn a_certificate_from_another_ca_is_refused() {
    let pki = Pki::new();
    let server = pki.mock();
    let stranger = Pki::new();
    let report = load(&url(&server), &format!("--requests 6 --concurrency 2 {}", stranger.cacert()));
    assert_eq!(report.requests.ok, 0);
    assert_eq!(kind(&report, "certificate"), 6, "{report:?}");
    assert_eq!(report.requests.errors, 6);
    let first = report.errors.first_tls_error.as_deref().expect("the TLS error in rustls's words");
    assert!(first.contains("certificate") && first.contains("UnknownIssuer"), "{first}");
    assert_eq!(report.tls.as_ref().map(|tls| tls.handshakes), Some(0));
    let text = report.to_text();
    assert!(text.contains("certificate: 6 (first TLS error: "), "{text}");
    // The connections opened ahead failed too, but quietly: only the requests count.
    assert_eq!(mock_stats(&pki, server.addr())["requests"], 0);
}

#[test]
fn insecure_accepts_any_certificate() {
    let pki = Pki::new();
    let server = pki.mock();
    let report = load(&url(&server), "--requests 50 --concurrency 2 --insecure --new-connection");
    assert_eq!(report.requests.ok, 50, "{report:?}");
    assert_eq!(report.tls.as_ref().map(|tls| tls.handshakes), Some(50));
    assert!(report.tls.as_ref().is_some_and(|tls| tls.resumed > 0));
}

#[test]
fn https_to_a_plain_http_server_is_a_tls_error() {
    let server = spawn(MockOptions { record: false, ..MockOptions::default() }).expect("mock starts");
    let plain = url(&server);
    let https = plain.replacen("http://", "https://", 1);
    let report = load(&https, "--requests 3 --concurrency 1 --insecure");
    assert_eq!(kind(&report, "tls"), 3, "{report:?}");
    assert!(report.errors.first_tls_error.is_some());
}

#[test]
fn plain_http_is_unchanged() {
    let server = spawn(MockOptions { record: false, ..MockOptions::default() }).expect("mock starts");
    let report = load(&url(&server), "--requests 200 --concurrency 4 --threads 2");
    assert_eq!(report.requests.ok, 200);
    assert_eq!(report.connections.opened, 4);
    assert!(report.tls.is_none() && !report.new_connection);
    assert!(report.errors.first_tls_error.is_none());
    let json: Value = serde_json::from_str(&report.to_json()).expect("JSON");
    assert!(json["tls"].is_null());
    assert_eq!(json["errors"]["by_kind"]["certificate"], 0);
    assert_eq!(json["errors"]["by_kind"]["tls"], 0);

    // A connection per request works over plain HTTP too.
    let report = load(&url(&server), "--requests 100 --concurrency 2 --new-connection");
    assert_eq!(report.requests.ok, 100, "{report:?}");
    assert_eq!(report.connections.opened, 100);
    assert!(report.tls.is_none());
}

#[test]
fn the_binary_reports_tls_as_json_and_refuses_https_without_trust() {
    let pki = Pki::new();
    let server = pki.mock();
    let out = pki.dir.join("report.json");
    let status = Process::new(env!("CARGO_BIN_EXE_pointwork-load"))
        .args(["--url", &url(&server), "--requests", "30", "-c", "2", "--new-connection", "--json"])
        .arg(&out)
        .arg("--cacert")
        .arg(&pki.ca_file)
        .output()
        .expect("pointwork-load runs");
    assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stderr));
    let text = String::from_utf8(status.stdout).expect("UTF-8");
    assert!(text.contains("30 handshakes"), "{text}");
    assert!(text.contains("\nhandshake   p50 "), "{text}");
    let json: Value = serde_json::from_str(&std::fs::read_to_string(&out).expect("the report")).expect("JSON");
    assert_eq!(json["new_connection"], true);
    assert_eq!(json["connections"]["opened"], 30);
    assert_eq!(json["tls"]["handshakes"], 30);
    assert_eq!(json["tls"]["resumption"], true);
    assert!(json["tls"]["resumed"].as_u64().is_some_and(|resumed| resumed > 0), "{json}");
    for field in ["count", "p50", "p99", "max"] {
        assert!(json["tls"]["handshake_us"][field].is_number(), "{field}: {json}");
    }
    assert!(json["errors"]["first_tls_error"].is_null());

    let refused = Process::new(env!("CARGO_BIN_EXE_pointwork-load"))
        .args(["--url", &url(&server), "--requests", "1"])
        .output()
        .expect("pointwork-load runs");
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("--cacert FILE") && stderr.contains("--insecure"), "{stderr}");

    let missing = Process::new(env!("CARGO_BIN_EXE_pointwork-load"))
        .args(["--url", &url(&server), "--requests", "1", "--cacert", "/nonexistent/ca.pem"])
        .output()
        .expect("pointwork-load runs");
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("--cacert /nonexistent/ca.pem"));
}
