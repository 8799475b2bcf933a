//! What the poller's tests share: a scratch directory, a runtime to drive one fetch, and a tiny
//! HTTP server on 127.0.0.1 (plain or TLS) answering from a handler, one request per connection.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The frontend stats and the endpoints of the glm fixture (`tests/fixtures/`).
pub const STATS: &str = "openrouter_frontend_stats_glm_composed.json";
pub const ENDPOINTS: &str = "openrouter_endpoints_glm.json";

pub fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/../tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A directory removed when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("pointwork-pareto-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("create a scratch directory");
        TempDir(path)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs one future on a fresh runtime like the poller's.
pub fn block_on<F: std::future::Future>(future: F) -> F::Output {
    let mut rt = monoio::RuntimeBuilder::<monoio::LegacyDriver>::new().enable_timer().build().expect("runtime");
    rt.block_on(future)
}

/// How the server frames an answer's body.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Framing {
    Length,
    Chunked,
    UntilClose,
    /// Reads the request and never answers.
    Stall,
}

pub struct Reply {
    pub status: u16,
    pub body: Vec<u8>,
    pub framing: Framing,
}

impl Reply {
    pub fn ok(body: impl Into<Vec<u8>>) -> Reply {
        Reply { status: 200, body: body.into(), framing: Framing::Length }
    }

    pub fn status(status: u16) -> Reply {
        Reply { status, body: b"{\"error\":\"unavailable\"}".to_vec(), framing: Framing::Length }
    }
}

type Handler = dyn Fn(&str) -> Reply + Send + Sync;

/// The server: its base URL and the request targets it was asked for, in order.
pub struct Server {
    pub base_url: String,
    pub requests: Arc<Mutex<Vec<String>>>,
}

impl Server {
    pub fn start(handler: impl Fn(&str) -> Reply + Send + Sync + 'static) -> Server {
        Server::start_with(None, Arc::new(handler))
    }

    /// An https server presenting `tls`'s certificate.
    pub fn start_tls(
        tls: Arc<rustls::ServerConfig>,
        handler: impl Fn(&str) -> Reply + Send + Sync + 'static,
    ) -> Server {
        Server::start_with(Some(tls), Arc::new(handler))
    }

    fn start_with(tls: Option<Arc<rustls::ServerConfig>>, handler: Arc<Handler>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("local addr");
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = requests.clone();
        let scheme = if tls.is_some() { "https" } else { "http" };
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let (handler, seen, tls) = (handler.clone(), seen.clone(), tls.clone());
                std::thread::spawn(move || match tls {
                    None => serve(stream, &*handler, &seen),
                    Some(config) => {
                        let Ok(conn) = rustls::ServerConnection::new(config) else { return };
                        serve(rustls::StreamOwned::new(conn, stream), &*handler, &seen);
                    }
                });
            }
        });
        Server { base_url: format!("{scheme}://{addr}"), requests }
    }

    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().expect("requests").clone()
    }
}

fn serve<S: Read + Write>(mut stream: S, handler: &Handler, seen: &Mutex<Vec<String>>) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return,
        }
    }
    let head = String::from_utf8_lossy(&head).to_string();
    let target = head.split(' ').nth(1).unwrap_or_default().to_string();
    seen.lock().expect("requests").push(target.clone());
    let reply = handler(&target);
    let mut out = format!("HTTP/1.1 {} X\r\ncontent-type: application/json\r\n", reply.status).into_bytes();
    match reply.framing {
        Framing::Length => {
            out.extend_from_slice(format!("content-length: {}\r\n\r\n", reply.body.len()).as_bytes());
            out.extend_from_slice(&reply.body);
        }
        Framing::Chunked => {
            out.extend_from_slice(b"transfer-encoding: chunked\r\n\r\n");
            for piece in reply.body.chunks(1000) {
                out.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
                out.extend_from_slice(piece);
                out.extend_from_slice(b"\r\n");
            }
            out.extend_from_slice(b"0\r\n\r\n");
        }
        Framing::UntilClose => {
            out.extend_from_slice(b"connection: close\r\n\r\n");
            out.extend_from_slice(&reply.body);
        }
        Framing::Stall => {
            let _ = stream.read(&mut byte);
            return;
        }
    }
    let _ = stream.write_all(&out);
    let _ = stream.flush();
}

/// A throwaway CA and a server certificate for `127.0.0.1` signed by it.
pub struct Pki {
    pub ca_pem: String,
    pub server: Arc<rustls::ServerConfig>,
}

impl Pki {
    pub fn new() -> Pki {
        use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair, KeyUsagePurpose};
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params.distinguished_name.push(DnType::CommonName, "pointwork poller tests CA");
        ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().expect("CA key")).expect("CA cert");
        let key = KeyPair::generate().expect("server key");
        let params = CertificateParams::new(vec!["127.0.0.1".to_owned()]).expect("server params");
        let cert = params.signed_by(&key, &ca).expect("server cert");
        let key_der = rustls::pki_types::PrivatePkcs8KeyDer::from(key.serialize_der());
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let server = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("versions")
            .with_no_client_auth()
            .with_single_cert(vec![cert.der().clone()], key_der.into())
            .expect("server config");
        Pki { ca_pem: ca.pem(), server: Arc::new(server) }
    }
}
