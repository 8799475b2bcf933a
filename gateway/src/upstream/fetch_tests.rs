use std::time::Duration;

use pointwork_core::pareto::TelemetrySettings;

use super::*;
use crate::pareto_poller::test_support::{block_on, Framing, Pki, Reply, Server, TempDir};

fn client(settings: &TelemetrySettings, timeout_ms: u64) -> Client {
    Client {
        tls: crate::pareto_poller::tls::connector(settings),
        timeout: Duration::from_millis(timeout_ms),
        max_body: 64 * 1024,
    }
}

fn fetch(server: &Server, client: &Client, path: &str) -> Result<Vec<u8>, FetchError> {
    let target = Target::parse(&server.base_url).expect("target");
    block_on(get(client, &target, path))
}

#[test]
fn bodies_by_length_chunks_or_close() {
    let body: Vec<u8> = (0..10_000u32).flat_map(|i| i.to_le_bytes()).collect();
    for framing in [Framing::Length, Framing::Chunked, Framing::UntilClose] {
        let served = body.clone();
        let server = Server::start(move |_| Reply { status: 200, body: served.clone(), framing });
        let got = fetch(&server, &client(&TelemetrySettings::default(), 5_000), "/api/v1/models?x=1");
        assert_eq!(got.as_deref(), Ok(&body[..]), "{framing:?}");
        assert_eq!(server.requests(), ["/api/v1/models?x=1"]);
    }
}

#[test]
fn a_base_url_path_prefixes_the_request() {
    let server = Server::start(|_| Reply::ok("{}"));
    let target = Target::parse(&format!("{}/proxy/", server.base_url)).expect("target");
    let got = block_on(get(&client(&TelemetrySettings::default(), 5_000), &target, "/api/v1/models"));
    assert_eq!(got.as_deref(), Ok(&b"{}"[..]));
    assert_eq!(server.requests(), ["/proxy/api/v1/models"]);
}

#[test]
fn a_status_a_size_or_a_silence_is_an_error() {
    let server = Server::start(|path| match path {
        "/503" => Reply::status(503),
        "/big" => Reply::ok(vec![b' '; 100_000]),
        "/bigchunks" => Reply { status: 200, body: vec![b' '; 100_000], framing: Framing::Chunked },
        "/bigclose" => Reply { status: 200, body: vec![b' '; 100_000], framing: Framing::UntilClose },
        _ => Reply { status: 200, body: Vec::new(), framing: Framing::Stall },
    });
    let c = client(&TelemetrySettings::default(), 300);
    assert_eq!(fetch(&server, &c, "/503"), Err(FetchError::Status(503)));
    for big in ["/big", "/bigchunks", "/bigclose"] {
        assert_eq!(fetch(&server, &c, big), Err(FetchError::TooLarge(64 * 1024)), "{big}");
    }
    assert_eq!(fetch(&server, &c, "/stall"), Err(FetchError::Timeout(Duration::from_millis(300))));
    assert_eq!(FetchError::Status(503).to_string(), "HTTP 503");
}

#[test]
fn a_refused_connection_is_an_error() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let target = Target::parse(&format!("http://127.0.0.1:{port}")).unwrap();
    let got = block_on(get(&client(&TelemetrySettings::default(), 2_000), &target, "/"));
    assert!(matches!(&got, Err(FetchError::Failed(why)) if why.contains("connect")), "{got:?}");
}

#[test]
fn tls_verifies_by_default_and_follows_ssl_ca_cert_and_ssl_verify() {
    let pki = Pki::new();
    let server = Server::start_tls(pki.server.clone(), |_| Reply::ok("{\"data\":[]}"));
    // The built-in roots do not know the test CA.
    let got = fetch(&server, &client(&TelemetrySettings::default(), 5_000), "/");
    assert!(matches!(&got, Err(FetchError::Failed(why)) if why.contains("TLS handshake")), "{got:?}");
    // The CA bundle, instead of the built-in roots.
    let dir = TempDir::new("fetch-tls");
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, &pki.ca_pem).unwrap();
    let with_ca = TelemetrySettings { ssl_ca_cert: Some(ca), ..TelemetrySettings::default() };
    assert_eq!(fetch(&server, &client(&with_ca, 5_000), "/").as_deref(), Ok(&b"{\"data\":[]}"[..]));
    // No verification at all.
    let unverified = TelemetrySettings { ssl_verify: false, ..TelemetrySettings::default() };
    assert_eq!(fetch(&server, &client(&unverified, 5_000), "/").as_deref(), Ok(&b"{\"data\":[]}"[..]));
    // A CA bundle that is not there: the fetch fails and says why.
    let missing = TelemetrySettings { ssl_ca_cert: Some(dir.path().join("nope.pem")), ..TelemetrySettings::default() };
    let got = fetch(&server, &client(&missing, 5_000), "/");
    assert!(matches!(&got, Err(FetchError::Failed(why)) if why.contains("ssl_ca_cert")), "{got:?}");
}
