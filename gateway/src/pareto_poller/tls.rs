//! The telemetry client's TLS configuration (`openrouter_pareto_telemetry`): the gateway's own
//! roots by default, a site CA bundle instead of them with `ssl_ca_cert`, or no certificate
//! check at all with `ssl_verify: false`. Only the telemetry fetches use it; model traffic keeps
//! the gateway's connector.

use std::path::Path;
use std::sync::Arc;

use monoio_rustls::TlsConnector;
use pointwork_core::pareto::TelemetrySettings;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};

/// The connector the settings ask for. A CA bundle that cannot be read or holds no certificate
/// is an error naming the file: every https poll then fails with it (the poller keeps running).
pub fn connector(settings: &TelemetrySettings) -> Result<TlsConnector, String> {
    if let Some(path) = &settings.ssl_ca_cert {
        let roots = roots_from(path)?;
        let config = builder()?.with_root_certificates(roots).with_no_client_auth();
        return Ok(TlsConnector::from(Arc::new(config)));
    }
    if !settings.ssl_verify {
        let verifier = Arc::new(AcceptAnyCertificate { provider: provider() });
        let config = builder()?.dangerous().with_custom_certificate_verifier(verifier).with_no_client_auth();
        return Ok(TlsConnector::from(Arc::new(config)));
    }
    crate::upstream::conn::tls_connector()
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn builder() -> Result<rustls::ConfigBuilder<ClientConfig, rustls::WantsVerifier>, String> {
    ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS configuration: {e}"))
}

/// The certificates of a PEM bundle, as the only roots.
fn roots_from(path: &Path) -> Result<RootCertStore, String> {
    let shown = path.display();
    let certs = CertificateDer::pem_file_iter(path).map_err(|e| format!("ssl_ca_cert {shown}: {e}"))?;
    let mut roots = RootCertStore::empty();
    for cert in certs {
        let cert = cert.map_err(|e| format!("ssl_ca_cert {shown}: {e}"))?;
        roots.add(cert).map_err(|e| format!("ssl_ca_cert {shown}: {e}"))?;
    }
    if roots.is_empty() {
        return Err(format!("ssl_ca_cert {shown}: no PEM certificate in the file"));
    }
    Ok(roots)
}

/// `ssl_verify: false`: accepts ANY server certificate, for any name, from anyone — the
/// connection is encrypted but the server is not authenticated, so whoever sits on the path can
/// feed the poller made-up telemetry. Meant for development and self-signed proxies only, and
/// used by this client alone (never for model traffic). The handshake signatures are still
/// checked, so the server must at least hold the key of the certificate it shows.
#[derive(Debug)]
struct AcceptAnyCertificate {
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for AcceptAnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        // Deliberately no check: see the type's comment.
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_ca_bundle_is_an_error_that_names_the_file() {
        let missing = TelemetrySettings {
            ssl_ca_cert: Some("/nonexistent/pointwork-ca.pem".into()),
            ..TelemetrySettings::default()
        };
        let err = connector(&missing).err().unwrap_or_default();
        assert!(err.contains("ssl_ca_cert /nonexistent/pointwork-ca.pem"), "{err}");
        let dir = crate::pareto_poller::test_support::TempDir::new("tls");
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        let err = connector(&TelemetrySettings { ssl_ca_cert: Some(empty), ..TelemetrySettings::default() })
            .err()
            .unwrap_or_default();
        assert!(err.contains("no PEM certificate"), "{err}");
        let off = TelemetrySettings { ssl_verify: false, ..TelemetrySettings::default() };
        assert!(connector(&off).is_ok());
    }
}
