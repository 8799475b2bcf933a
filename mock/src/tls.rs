//! HTTPS: the server TLS configuration built once from PEM files (the handshake and the
//! connection over it are in `conn/tls.rs`).

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use monoio_rustls::TlsAcceptor;
use rustls::pki_types::pem::{self, PemObject};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// The PEM files a mock serves HTTPS with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// The server certificate, followed by any intermediates up to (not including) the root.
    pub cert: PathBuf,
    /// The certificate's private key (PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
}

/// What the mock offers in ALPN: it speaks HTTP/1.1 only.
const ALPN_HTTP11: &[u8] = b"http/1.1";

/// Reads the files and builds the server configuration (ring as the provider), naming the file
/// in every error.
pub(crate) fn acceptor(files: &TlsFiles) -> io::Result<TlsAcceptor> {
    let certs = read_certificates(&files.cert)?;
    let key = PrivateKeyDer::from_pem_file(&files.key).map_err(|error| pem_error("TLS key", &files.key, error))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let invalid = |error: rustls::Error| {
        let (cert, key) = (files.cert.display(), files.key.display());
        io::Error::new(io::ErrorKind::InvalidData, format!("TLS certificate {cert} with key {key}: {error}"))
    };
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(invalid)?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(invalid)?;
    config.alpn_protocols = vec![ALPN_HTTP11.to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

fn read_certificates(path: &Path) -> io::Result<Vec<CertificateDer<'static>>> {
    let certs = CertificateDer::pem_file_iter(path)
        .and_then(Iterator::collect::<Result<Vec<_>, _>>)
        .map_err(|error| pem_error("TLS certificate", path, error))?;
    if certs.is_empty() {
        let message = format!("TLS certificate {}: no PEM certificate in the file", path.display());
        return Err(io::Error::new(io::ErrorKind::InvalidData, message));
    }
    Ok(certs)
}

/// Keeps the kind of an IO error (a missing file stays `NotFound`); bad contents are `InvalidData`.
fn pem_error(what: &str, path: &Path, error: pem::Error) -> io::Error {
    let (kind, shown) = match error {
        pem::Error::Io(io) => (io.kind(), io.to_string()),
        pem::Error::NoItemsFound => (io::ErrorKind::InvalidData, "no PEM section of that kind in the file".to_owned()),
        other => (io::ErrorKind::InvalidData, other.to_string()),
    };
    io::Error::new(kind, format!("{what} {}: {shown}", path.display()))
}
