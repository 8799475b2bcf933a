//! The gateway's own HTTPS port, for tests: a throwaway CA issuing server and client
//! certificates as PEM files, a gateway started with TLS on, and a small blocking HTTPS client.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use rcgen::{
    date_time_ymd, BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};

use super::{serve_command, GatewayOptions, Process, TempDir, READY_DEADLINE};

/// A CA that signs server certificates for `localhost` / `127.0.0.1` and client certificates.
pub struct Ca {
    issuer: CertifiedIssuer<'static, KeyPair>,
    pub der: CertificateDer<'static>,
    pub pem: PathBuf,
}

/// A certificate and its key, as files and as DER.
pub struct Issued {
    pub cert_pem: PathBuf,
    pub key_pem: PathBuf,
    pub der: CertificateDer<'static>,
    pub key: PrivateKeyDer<'static>,
}

impl Ca {
    pub fn new(dir: &TempDir, name: &str) -> Ca {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, format!("pointwork tests CA {name}"));
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let issuer = CertifiedIssuer::self_signed(params, KeyPair::generate().expect("CA key")).expect("CA cert");
        Ca { pem: dir.write(&format!("{name}-ca.pem"), &issuer.pem()), der: issuer.der().clone(), issuer }
    }

    /// A server certificate for `localhost` and `127.0.0.1`, valid from yesterday until an hour
    /// short of `days` days from now (so that it shows as `days - 1` however long a test takes),
    /// else for years.
    pub fn server(&self, dir: &TempDir, name: &str, days: Option<u64>) -> Issued {
        let mut params =
            CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()]).expect("server params");
        params.distinguished_name.push(DnType::CommonName, name);
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        if let Some(days) = days {
            let now = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).expect("after 1970").as_secs();
            let epoch = date_time_ymd(1970, 1, 1);
            params.not_before = epoch + Duration::from_secs(now - DAY);
            params.not_after = epoch + Duration::from_secs(now + days * DAY - 3_600);
        }
        self.issue(dir, name, params)
    }

    pub fn client(&self, dir: &TempDir, name: &str) -> Issued {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("client params");
        params.distinguished_name.push(DnType::CommonName, name);
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        self.issue(dir, name, params)
    }

    fn issue(&self, dir: &TempDir, name: &str, params: CertificateParams) -> Issued {
        let key = KeyPair::generate().expect("key");
        let cert = params.signed_by(&key, &self.issuer).expect("sign");
        Issued {
            cert_pem: dir.write(&format!("{name}.pem"), &cert.pem()),
            key_pem: dir.write(&format!("{name}.key"), &key.serialize_pem()),
            der: cert.der().clone(),
            key: PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
        }
    }
}

const DAY: u64 = 86_400;

/// A client trusting `ca`, offering ALPN `http/1.1`, with a client certificate if given.
pub fn client_config(ca: &CertificateDer<'static>, identity: Option<&Issued>) -> Arc<ClientConfig> {
    let mut roots = RootCertStore::empty();
    roots.add(ca.clone()).expect("trust the CA");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("protocol versions")
        .with_root_certificates(roots);
    let mut config = match identity {
        Some(id) => builder.with_client_auth_cert(vec![id.der.clone()], id.key.clone_key()).expect("client cert"),
        None => builder.with_no_client_auth(),
    };
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Arc::new(config)
}

/// `pointwork serve` with TLS on (the config names the files, or `extra_args` / `env` do).
pub struct TlsGateway {
    pub process: Process,
    pub addr: SocketAddr,
    pub config_path: PathBuf,
}

impl TlsGateway {
    pub fn start(dir: &TempDir, yaml: &str, extra_args: &[&str], env: Vec<(&str, &str)>) -> TlsGateway {
        let config_path = dir.write("config.yaml", yaml);
        let mut command: Command = serve_command(&config_path, &GatewayOptions { env, ..GatewayOptions::default() });
        command.args(extra_args);
        let mut process = Process::spawn("pointwork serve (tls)", command);
        let line = process.wait_for_line("listening on https://", READY_DEADLINE);
        let addr = line[line.find("https://").expect("https URL") + "https://".len()..]
            .trim()
            .parse()
            .unwrap_or_else(|e| panic!("bad address in {line:?}: {e}"));
        TlsGateway { process, addr, config_path }
    }

    pub fn connect(&self, config: &Arc<ClientConfig>) -> io::Result<Https> {
        Https::connect(self.addr, config)
    }
}

/// One HTTPS connection to the gateway, handshake done.
pub struct Https {
    pub tls: StreamOwned<ClientConnection, TcpStream>,
}

/// A response: status, head (lower-cased), body (de-chunked).
pub struct Answer {
    pub status: u16,
    pub head: String,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

impl Https {
    pub fn connect(addr: SocketAddr, config: &Arc<ClientConfig>) -> io::Result<Https> {
        let tcp = TcpStream::connect(addr)?;
        tcp.set_read_timeout(Some(Duration::from_secs(10)))?;
        let name = ServerName::try_from("localhost").expect("server name");
        let connection = ClientConnection::new(config.clone(), name).map_err(io::Error::other)?;
        let mut tls = StreamOwned::new(connection, tcp);
        while tls.conn.is_handshaking() {
            tls.conn.complete_io(&mut tls.sock)?;
        }
        Ok(Https { tls })
    }

    pub fn peer_certificate(&self) -> CertificateDer<'static> {
        self.tls.conn.peer_certificates().expect("a server certificate")[0].clone().into_owned()
    }

    pub fn alpn(&self) -> Option<&[u8]> {
        self.tls.conn.alpn_protocol()
    }

    pub fn request(&mut self, method: &str, path: &str, body: &str) -> io::Result<Answer> {
        let request = format!(
            "{method} {path} HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
        self.tls.write_all(request.as_bytes())?;
        self.tls.flush()?;
        read_answer(&mut self.tls)
    }
}

/// Reads one response: the head, then a `content-length` or chunked body.
fn read_answer(r: &mut impl Read) -> io::Result<Answer> {
    let mut raw = Vec::new();
    let mut byte = [0u8; 1];
    while !raw.ends_with(b"\r\n\r\n") {
        if r.read(&mut byte)? == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "closed before the head ended"));
        }
        raw.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&raw).to_ascii_lowercase();
    let status = head.get(9..12).and_then(|s| s.parse().ok()).unwrap_or(0);
    let header = |name: &str| {
        head.lines().find_map(|l| l.strip_prefix(name).and_then(|v| v.strip_prefix(':'))).map(|v| v.trim().to_owned())
    };
    let mut body = Vec::new();
    if let Some(len) = header("content-length") {
        body.resize(len.parse().expect("content-length"), 0);
        r.read_exact(&mut body)?;
    } else if header("transfer-encoding").as_deref() == Some("chunked") {
        loop {
            let mut line = Vec::new();
            while !line.ends_with(b"\r\n") {
                r.read_exact(&mut byte)?;
                line.push(byte[0]);
            }
            let size = usize::from_str_radix(String::from_utf8_lossy(&line).trim(), 16).expect("chunk size");
            let mut chunk = vec![0; size + 2];
            r.read_exact(&mut chunk)?;
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    }
    Ok(Answer { status, head, body })
}
