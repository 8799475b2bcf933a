//! HTTPS for the generator: the client configuration (whom to trust, session resumption, ALPN
//! `http/1.1`, ring as the provider) and one connection's TLS state — a sans-IO
//! `rustls::ClientConnection` that the connection drives over its nonblocking socket (see
//! `conn/tls.rs`). Plain connections carry none of it.

use std::io;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::Resumption;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, ClientConnection, DigitallySignedStruct, HandshakeKind, RootCertStore, SignatureScheme};
use socket2::Socket;

use super::options::{TlsOptions, Trust};
use super::stats::ErrorKind;
use super::tickets::TicketPool;

/// What the generator offers in ALPN: it speaks HTTP/1.1 only.
const ALPN_HTTP11: &[u8] = b"http/1.1";

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The run's client configuration, built once (the `--cacert` file read here); each thread
/// takes its own copy per target ([`ClientSetup::for_thread`]).
pub struct ClientSetup {
    base: ClientConfig,
    resume: bool,
}

impl ClientSetup {
    pub fn new(options: &TlsOptions) -> Result<ClientSetup, String> {
        let builder = ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(|error| format!("TLS: {error}"))?;
        let mut base = match &options.trust {
            Trust::CaFile(path) => builder.with_root_certificates(read_roots(path)?).with_no_client_auth(),
            Trust::AnyCertificate => builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(InsecureAcceptAnyCertificate::new()))
                .with_no_client_auth(),
        };
        base.alpn_protocols = vec![ALPN_HTTP11.to_vec()];
        Ok(ClientSetup { base, resume: options.resume })
    }

    /// The configuration for one thread's `connections` to one target, with a session store of
    /// their own (none when resumption is off): a ticket goes back to the server that issued
    /// it, and threads never contend for the store's lock.
    pub fn for_thread(&self, connections: usize) -> Arc<ClientConfig> {
        let mut config = self.base.clone();
        config.resumption = if self.resume {
            Resumption::store(Arc::new(TicketPool::new(connections)))
        } else {
            Resumption::disabled()
        };
        Arc::new(config)
    }
}

/// The certificates of a `--cacert` PEM bundle as trust anchors.
fn read_roots(path: &Path) -> Result<RootCertStore, String> {
    let shown = path.display();
    let certs = CertificateDer::pem_file_iter(path)
        .and_then(Iterator::collect::<Result<Vec<_>, _>>)
        .map_err(|error| format!("--cacert {shown}: {error}"))?;
    if certs.is_empty() {
        return Err(format!("--cacert {shown}: no PEM certificate in the file"));
    }
    let mut roots = RootCertStore::empty();
    for cert in certs {
        roots.add(cert).map_err(|error| format!("--cacert {shown}: {error}"))?;
    }
    Ok(roots)
}

/// The name a target's certificate must carry (and the SNI sent, unless it is an IP address).
pub fn server_name(host: &str) -> Result<ServerName<'static>, String> {
    ServerName::try_from(host.to_owned()).map_err(|_| format!("https://{host}: not a valid TLS server name"))
}

/// How a TLS failure counts: a refused certificate apart from every other failure.
pub fn error_kind(error: &rustls::Error) -> ErrorKind {
    match error {
        rustls::Error::InvalidCertificate(_) | rustls::Error::NoCertificatesPresented => ErrorKind::Certificate,
        _ => ErrorKind::Tls,
    }
}

/// `--insecure`: accepts whatever certificate the server shows, for benchmarks against a server
/// whose CA is not at hand. The handshake's signature is still verified with the certificate's
/// key (so a handshake costs the client what a real one does), but nothing ties that key to the
/// name: anyone in the path could be the server. Never use it for anything but load tests.
#[derive(Debug)]
pub struct InsecureAcceptAnyCertificate {
    algorithms: WebPkiSupportedAlgorithms,
}

impl InsecureAcceptAnyCertificate {
    fn new() -> Self {
        InsecureAcceptAnyCertificate { algorithms: provider().signature_verification_algorithms }
    }
}

impl ServerCertVerifier for InsecureAcceptAnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// The TLS side of one connection to an `https://` target: what each of its sessions is made
/// from, and the session of the socket open now.
pub struct TlsLink {
    config: Arc<ClientConfig>,
    name: ServerName<'static>,
    session: Option<ClientConnection>,
    /// When the current handshake began: the TCP connection had just been established.
    pub started: Instant,
    /// The socket is watched for writability because rustls holds records the socket would not
    /// take yet.
    pub write_interest: bool,
}

/// What one read from the socket into rustls gave.
#[derive(Debug, PartialEq, Eq)]
pub enum Pumped {
    /// Records read and processed (maybe nothing new for the application).
    Records,
    /// The peer closed its side (what it sent before is processed).
    Eof,
    /// Nothing to read now.
    WouldBlock,
}

/// Why the TLS side of a connection failed.
#[derive(Debug)]
pub enum TlsFailure {
    /// The socket failed (a reset, usually).
    Socket,
    /// rustls refused what the peer sent (its certificate, an alert, a bad record).
    Tls(rustls::Error),
}

impl TlsLink {
    pub fn new(config: Arc<ClientConfig>, name: ServerName<'static>) -> TlsLink {
        TlsLink { config, name, session: None, started: Instant::now(), write_interest: false }
    }

    /// Starts a session (the ClientHello is queued) on a socket just connected at `now`.
    pub fn begin(&mut self, now: Instant) -> Result<(), rustls::Error> {
        self.session = Some(ClientConnection::new(self.config.clone(), self.name.clone())?);
        self.started = now;
        self.write_interest = false;
        Ok(())
    }

    /// Forgets the session of a socket that is closed.
    pub fn end(&mut self) {
        self.session = None;
        self.write_interest = false;
    }

    /// The session is still handshaking (or there is none).
    pub fn handshaking(&self) -> bool {
        self.session.as_ref().is_none_or(|session| session.is_handshaking())
    }

    /// The completed handshake resumed a session.
    pub fn resumed(&self) -> bool {
        self.session.as_ref().and_then(|session| session.handshake_kind()) == Some(HandshakeKind::Resumed)
    }

    /// Writes the records rustls has queued. `Ok(true)`: all of them are out; `Ok(false)`: the
    /// socket is full.
    pub fn flush(&mut self, socket: &Socket) -> io::Result<bool> {
        let Some(session) = &mut self.session else { return Ok(true) };
        while session.wants_write() {
            let mut writer = socket;
            match session.write_tls(&mut writer) {
                Ok(_) => {}
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => return Err(error),
            }
        }
        Ok(true)
    }

    /// One read from the socket into rustls, and the records it completed processed. On a TLS
    /// error the alert rustls queued for the peer is sent if the socket takes it.
    pub fn pump(&mut self, socket: &Socket) -> Result<Pumped, TlsFailure> {
        let Some(session) = &mut self.session else { return Ok(Pumped::Eof) };
        let mut reader = socket;
        let pumped = loop {
            match session.read_tls(&mut reader) {
                Ok(0) => break Pumped::Eof,
                Ok(_) => break Pumped::Records,
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => return Ok(Pumped::WouldBlock),
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return Err(TlsFailure::Socket),
            }
        };
        if let Err(error) = session.process_new_packets() {
            // Best effort: tell the server why, as a browser would.
            let _ = self.flush(socket);
            return Err(TlsFailure::Tls(error));
        }
        Ok(pumped)
    }

    /// Plaintext the server sent: `Ok(0)` after its `close_notify`, `WouldBlock` when there is
    /// none now, `UnexpectedEof` when the socket closed without `close_notify`.
    pub fn read_plaintext(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        match &mut self.session {
            Some(session) => io::Read::read(&mut session.reader(), buffer),
            None => Ok(0),
        }
    }

    /// Takes as much of `plaintext` as rustls buffers (all of it unless the request is large).
    pub fn write_plaintext(&mut self, plaintext: &[u8]) -> io::Result<usize> {
        match &mut self.session {
            Some(session) => io::Write::write(&mut session.writer(), plaintext),
            None => Err(io::ErrorKind::NotConnected.into()),
        }
    }
}
