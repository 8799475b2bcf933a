//! An upstream connection (plain TCP or TLS, `tcp_or_tls.rs`): connecting, the client TLS
//! configuration, and the liveness check of a pooled one.

use std::io;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::time::Duration;

use monoio::net::TcpStream;
use monoio_rustls::{ClientTlsStream, TlsConnector};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};

use super::target::Target;
use crate::tcp_or_tls::TcpOrTls;

pub type UpstreamConn = TcpOrTls<ClientTlsStream<TcpStream>>;

/// Why a connection could not be made.
#[derive(Debug)]
pub enum ConnectError {
    Timeout,
    Failed(String),
}

/// The environment variable naming an extra PEM bundle of trusted CAs (a site or corporate CA),
/// trusted in addition to the bundled roots — the convention OpenSSL and Python clients follow.
pub const EXTRA_CA_ENV: &str = "SSL_CERT_FILE";

/// Builds the client TLS configuration once: the bundled Mozilla roots plus the CAs in
/// `$SSL_CERT_FILE` if set, ring as the provider.
pub fn tls_connector() -> Result<TlsConnector, String> {
    let mut roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
    if let Some(path) = std::env::var_os(EXTRA_CA_ENV) {
        let shown = std::path::Path::new(&path).display().to_string();
        let certs = CertificateDer::pem_file_iter(&path).map_err(|e| format!("{EXTRA_CA_ENV}={shown}: {e}"))?;
        let mut added = 0;
        for cert in certs {
            let cert = cert.map_err(|e| format!("{EXTRA_CA_ENV}={shown}: {e}"))?;
            roots.add(cert).map_err(|e| format!("{EXTRA_CA_ENV}={shown}: {e}"))?;
            added += 1;
        }
        if added == 0 {
            return Err(format!("{EXTRA_CA_ENV}={shown}: no PEM certificate in the file"));
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS configuration: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(TlsConnector::from(Arc::new(config)))
}

/// Opens a connection to `target` (TCP_NODELAY on; TLS when the target says https).
pub async fn connect(target: &Target, tls: &TlsConnector, timeout: Duration) -> Result<UpstreamConn, ConnectError> {
    let attempt = async {
        let mut last = format!("could not resolve host {}", target.host);
        for addr in &target.addrs {
            match TcpStream::connect_addr(*addr).await {
                Ok(tcp) => {
                    let _ = tcp.set_nodelay(true);
                    if !target.tls {
                        return Ok(TcpOrTls::Plain(tcp));
                    }
                    let name = ServerName::try_from(target.host.clone())
                        .map_err(|e| ConnectError::Failed(format!("invalid TLS server name {}: {e}", target.host)))?;
                    let fd = tcp.as_raw_fd();
                    return tls.connect(name, tcp).await.map(|s| TcpOrTls::Tls(Box::new(s), fd)).map_err(|e| {
                        // monoio-rustls's Display says only "io error": show the cause.
                        let cause = match e {
                            monoio_rustls::TlsError::Io(io) => io.to_string(),
                            monoio_rustls::TlsError::Rustls(tls) => tls.to_string(),
                        };
                        ConnectError::Failed(format!("TLS handshake with {} failed: {cause}", target.authority))
                    });
                }
                Err(e) => last = format!("connect to {addr} failed: {e}"),
            }
        }
        Err(ConnectError::Failed(last))
    };
    match monoio::time::timeout(timeout, attempt).await {
        Ok(result) => result,
        Err(_) => Err(ConnectError::Timeout),
    }
}

impl UpstreamConn {
    /// Whether an idle pooled connection is still usable: nothing to read and not closed.
    /// An idle HTTP/1.1 connection must be silent; EOF, an error, or stray bytes (a late
    /// response, a TLS close_notify) all mean it must not carry another request.
    pub fn is_idle_and_open(&self) -> bool {
        matches!(self.peek_byte(), Err(e) if e.kind() == io::ErrorKind::WouldBlock)
    }
}
