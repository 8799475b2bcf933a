//! HTTPS on the listening side: the rustls server configuration built from `pointwork.tls` (or
//! `--tls-cert`/`--tls-key`, or `SSL_CERTFILE_PATH`/`SSL_KEYFILE_PATH`), and [`TlsCerts`], the
//! current one, which a reload swaps without touching open connections.
//!
//! Every error names the setting and the file, since it is read at start and at reload, when the
//! operator most needs to know which file is wrong.

mod expiry;
pub mod listener;

use std::path::Path;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::SystemTime;

use arc_swap::ArcSwap;
use pointwork_config::{TlsSettings, TLS_CLIENT_CA_NAME};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::{self, PemObject};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ServerSessionMemoryCache, WebPkiClientVerifier};
use rustls::sign::{CertifiedKey, SingleCertAndKey};
use rustls::{InconsistentKeys, ServerConfig};

pub use expiry::{not_after, seconds_until_expiry, unix_seconds};

/// The only application protocol spoken: HTTP/1.1 (a client offering only `h2` is refused at
/// the handshake rather than misunderstood after it).
pub const ALPN_HTTP_1_1: &[u8] = b"http/1.1";

/// TLS 1.2 sessions resumed by id (without a ticket): how many the server remembers, shared
/// by every shard.
const SESSION_CACHE_ENTRIES: usize = 4096;

/// Under this much time left, the start (and every reload) warns about the certificate.
pub const EXPIRY_WARNING_SECONDS: i64 = 14 * 86_400;

/// The same provider as the upstream side (ring).
fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Reads the certificate chain, its key and the client CA (if any) and builds the server
/// configuration: TLS 1.2 and 1.3, ALPN `http/1.1`, session tickets and the session cache on,
/// no 0-RTT data, and with `client_ca` a client certificate required at the handshake.
pub fn server_config(settings: &TlsSettings) -> Result<Arc<ServerConfig>, String> {
    build(settings).map(|built| built.config)
}

/// A configuration and the expiry of the certificate it serves.
struct Built {
    config: Arc<ServerConfig>,
    /// The leaf certificate's `notAfter`, Unix seconds.
    not_after: i64,
}

fn build(settings: &TlsSettings) -> Result<Built, String> {
    let cert_file = Named { setting: settings.origin.cert_name(), path: &settings.cert };
    let key_file = Named { setting: settings.origin.key_name(), path: &settings.key };
    let chain = read_certs(&cert_file)?;
    let not_after = not_after(&chain[0]).map_err(|e| cert_file.problem(e))?;
    let key = read_key(&key_file)?;
    let provider = provider();
    let certified = certified_key(chain, key, &provider, &cert_file, &key_file)?;
    let versions = versions(&provider)?;
    let builder = match &settings.client_ca {
        Some(ca) => {
            let ca_file = Named { setting: TLS_CLIENT_CA_NAME, path: ca };
            versions.with_client_cert_verifier(client_verifier(&ca_file, &provider)?)
        }
        None => versions.with_no_client_auth(),
    };
    let mut config = builder.with_cert_resolver(Arc::new(SingleCertAndKey::from(certified)));
    config.alpn_protocols = vec![ALPN_HTTP_1_1.to_vec()];
    config.session_storage = ServerSessionMemoryCache::new(SESSION_CACHE_ENTRIES);
    config.ticketer =
        rustls::crypto::ring::Ticketer::new().map_err(|e| format!("TLS: cannot set up session tickets: {e}"))?;
    // No 0-RTT: early data can be replayed, and a replayed POST is a second LLM call.
    config.max_early_data_size = 0;
    Ok(Built { config: Arc::new(config), not_after })
}

type VersionsChosen = rustls::ConfigBuilder<ServerConfig, rustls::WantsVerifier>;

/// TLS 1.3 and 1.2, on the given provider.
fn versions(provider: &Arc<CryptoProvider>) -> Result<VersionsChosen, String> {
    ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
        .map_err(|e| format!("TLS configuration: {e}"))
}

/// A file and the setting that named it, for messages: `pointwork.tls.key: /etc/k.pem: …`.
struct Named<'a> {
    setting: &'static str,
    path: &'a Path,
}

impl Named<'_> {
    fn problem(&self, what: impl std::fmt::Display) -> String {
        format!("{}: {}: {what}", self.setting, self.path.display())
    }

    fn read(&self) -> Result<Vec<u8>, String> {
        std::fs::read(self.path).map_err(|e| self.problem(format_args!("cannot read the file: {e}")))
    }
}

/// Every `CERTIFICATE` block of a PEM file (at least one), in order.
fn read_certs(file: &Named) -> Result<Vec<CertificateDer<'static>>, String> {
    let text = file.read()?;
    let certs = CertificateDer::pem_slice_iter(&text)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| file.problem(format_args!("not a valid PEM file: {}", pem_error(&e))))?;
    if certs.is_empty() {
        return Err(file.problem(r#"no certificate in the file (expected a PEM "BEGIN CERTIFICATE" block)"#));
    }
    Ok(certs)
}

/// The first private key of a PEM file: PKCS#8, PKCS#1 (RSA) or SEC1 (EC).
fn read_key(file: &Named) -> Result<PrivateKeyDer<'static>, String> {
    let text = file.read()?;
    match PrivateKeyDer::from_pem_slice(&text) {
        Ok(key) => Ok(key),
        Err(pem::Error::NoItemsFound) if contains(&text, b"ENCRYPTED PRIVATE KEY") => Err(file.problem(
            "the private key is encrypted: Pointwork needs it unencrypted (openssl pkey -in KEY -out PLAIN_KEY)",
        )),
        Err(pem::Error::NoItemsFound) => Err(file.problem(
            r#"no private key in the file (expected a PEM "BEGIN PRIVATE KEY", "BEGIN RSA PRIVATE KEY" or "BEGIN EC PRIVATE KEY" block)"#,
        )),
        Err(e) => Err(file.problem(format_args!("not a valid PEM file: {}", pem_error(&e)))),
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// pki-types' `Debug`-formatted byte strings in its messages help no one: say it in words.
fn pem_error(e: &pem::Error) -> String {
    match e {
        pem::Error::MissingSectionEnd { end_marker } => {
            format!("a block has no \"-----END {}-----\" line", String::from_utf8_lossy(end_marker))
        }
        pem::Error::IllegalSectionStart { line } => {
            format!("a malformed BEGIN line {:?}", String::from_utf8_lossy(line))
        }
        other => other.to_string(),
    }
}

/// The chain with its key, after checking the key is the leaf certificate's.
fn certified_key(
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
    provider: &CryptoProvider,
    cert_file: &Named,
    key_file: &Named,
) -> Result<CertifiedKey, String> {
    let signing_key = provider
        .key_provider
        .load_private_key(key)
        .map_err(|e| key_file.problem(format_args!("the private key cannot be used: {e}")))?;
    let certified = CertifiedKey::new(chain, signing_key);
    match certified.keys_match() {
        // A key type that cannot tell its public key: rustls accepts it too.
        Ok(()) | Err(rustls::Error::InconsistentKeys(InconsistentKeys::Unknown)) => Ok(certified),
        Err(rustls::Error::InconsistentKeys(InconsistentKeys::KeyMismatch)) => Err(key_file.problem(format_args!(
            "the private key does not match the certificate in {} (the first certificate in that file must be \
             the server's own, followed by the ones that chain it to a root)",
            cert_file.path.display()
        ))),
        Err(e) => Err(cert_file.problem(format_args!("the certificate cannot be used: {e}"))),
    }
}

/// Requires every client to present a certificate chaining to one of the CAs in the file.
fn client_verifier(
    file: &Named,
    provider: &Arc<CryptoProvider>,
) -> Result<Arc<dyn rustls::server::danger::ClientCertVerifier>, String> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in read_certs(file)? {
        roots.add(cert).map_err(|e| file.problem(format_args!("not a usable CA certificate: {e}")))?;
    }
    WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .build()
        .map_err(|e| file.problem(format_args!("cannot verify clients with these CAs: {e}")))
}

/// The configuration new handshakes use, swapped whole by a reload: a connection keeps the one
/// it started with, and a broken new file leaves the old one serving.
pub struct TlsCerts {
    config: ArcSwap<ServerConfig>,
    /// The served leaf certificate's `notAfter`, Unix seconds.
    not_after: AtomicI64,
}

impl TlsCerts {
    pub fn load(settings: &TlsSettings) -> Result<TlsCerts, String> {
        let built = build(settings)?;
        Ok(TlsCerts { config: ArcSwap::new(built.config), not_after: AtomicI64::new(built.not_after) })
    }

    /// The configuration for a new handshake.
    pub fn current(&self) -> Arc<ServerConfig> {
        self.config.load_full()
    }

    /// Re-reads the files; on any error the current configuration stays and the error says why.
    pub fn reload(&self, settings: &TlsSettings) -> Result<(), String> {
        let built = build(settings)?;
        self.config.store(built.config);
        self.not_after.store(built.not_after, Ordering::Relaxed);
        Ok(())
    }

    /// The served certificate's `notAfter`, in seconds since the Unix epoch.
    pub fn not_after(&self) -> i64 {
        self.not_after.load(Ordering::Relaxed)
    }

    /// Seconds from `now` until the served certificate expires (negative once it has): the
    /// `/metrics` gauge.
    pub fn seconds_until_expiry(&self, now: SystemTime) -> i64 {
        self.not_after() - unix_seconds(now)
    }
}

/// The warning to print when the certificate expires within [`EXPIRY_WARNING_SECONDS`] (or
/// has expired); `cert` is how to name it, e.g. its path.
pub fn expiry_warning(cert: &str, seconds_left: i64) -> Option<String> {
    const DAY: i64 = 86_400;
    match seconds_left {
        s if s >= EXPIRY_WARNING_SECONDS => None,
        s if s <= 0 => {
            Some(format!("the TLS certificate {cert} expired {} days ago: clients will refuse it", -s / DAY))
        }
        s if s < DAY => Some(format!("the TLS certificate {cert} expires in {} hours: renew it", s / 3_600)),
        s => Some(format!("the TLS certificate {cert} expires in {} days: renew it", s / DAY)),
    }
}

#[cfg(test)]
mod tests;
