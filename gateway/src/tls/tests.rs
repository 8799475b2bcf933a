//! The server side of TLS, handshakes run in memory: a client and a server connection pumping
//! bytes to each other, no sockets. Keys are generated (ECDSA P-256, Ed25519) or, for RSA,
//! read from `tests/fixtures/tls/`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use base64::Engine;
use pointwork_config::{TlsOrigin, TlsSettings};
use rcgen::{
    date_time_ymd, BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair, KeyUsagePurpose,
    SignatureAlgorithm, PKCS_ECDSA_P256_SHA256, PKCS_ED25519,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use rustls::{ClientConfig, ClientConnection, Connection, HandshakeKind, ProtocolVersion, ServerConnection};

use super::*;

/// A throwaway folder and CA; the folder goes when the value does.
struct Pki {
    dir: PathBuf,
    ca: CertifiedIssuer<'static, KeyPair>,
}

/// A certificate and its key.
struct Leaf {
    cert: rcgen::Certificate,
    key: KeyPair,
}

impl Pki {
    fn new() -> Pki {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("pointwork-tls-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Pki { dir, ca: ca("pointwork tls tests CA") }
    }

    fn file(&self, name: &str, contents: &str) -> PathBuf {
        let path = self.dir.join(name);
        std::fs::write(&path, contents).unwrap();
        path
    }

    /// A certificate for `localhost` signed by the CA, valid from 1975 to 4096 (rcgen's default).
    fn leaf(&self, alg: &'static SignatureAlgorithm) -> Leaf {
        self.leaf_with(alg, CertificateParams::new(vec!["localhost".to_string()]).unwrap())
    }

    fn leaf_with(&self, alg: &'static SignatureAlgorithm, params: CertificateParams) -> Leaf {
        let key = KeyPair::generate_for(alg).unwrap();
        Leaf { cert: params.signed_by(&key, &self.ca).unwrap(), key }
    }

    /// Writes the leaf's certificate and key: settings from the config, without a client CA.
    fn settings(&self, name: &str, leaf: &Leaf) -> TlsSettings {
        TlsSettings {
            cert: self.file(&format!("{name}.crt"), &leaf.cert.pem()),
            key: self.file(&format!("{name}.key"), &leaf.key.serialize_pem()),
            client_ca: None,
            origin: TlsOrigin::Config,
        }
    }

    /// A client trusting the CA, speaking `versions`, offering `http/1.1`, with a client
    /// certificate when `identity` is given.
    fn client(
        &self,
        versions: &[&'static rustls::SupportedProtocolVersion],
        identity: Option<&Leaf>,
    ) -> Arc<ClientConfig> {
        client_trusting(self.ca.der(), versions, identity)
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn ca(name: &str) -> CertifiedIssuer<'static, KeyPair> {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap()
}

fn client_trusting(
    root: &CertificateDer<'static>,
    versions: &[&'static rustls::SupportedProtocolVersion],
    identity: Option<&Leaf>,
) -> Arc<ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(root.clone()).unwrap();
    let builder = ClientConfig::builder_with_provider(provider())
        .with_protocol_versions(versions)
        .unwrap()
        .with_root_certificates(roots);
    let mut config = match identity {
        Some(leaf) => {
            let key = PrivateKeyDer::from(PrivatePkcs8KeyDer::from(leaf.key.serialize_der()));
            builder.with_client_auth_cert(vec![leaf.cert.der().clone()], key).unwrap()
        }
        None => builder.with_no_client_auth(),
    };
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Arc::new(config)
}

const BOTH: &[&rustls::SupportedProtocolVersion] = &[&rustls::version::TLS13, &rustls::version::TLS12];
const TLS12_ONLY: &[&rustls::SupportedProtocolVersion] = &[&rustls::version::TLS12];

/// Which side refused a handshake, and why.
#[derive(Debug)]
struct Refused {
    by: &'static str,
    error: rustls::Error,
}

/// Runs a whole handshake (and the tickets sent after it) between the two.
fn handshake(client: Arc<ClientConfig>, server: Arc<ServerConfig>) -> Result<(Connection, Connection), Refused> {
    let name = ServerName::try_from("localhost").unwrap();
    let mut client = Connection::Client(ClientConnection::new(client, name).unwrap());
    let mut server = Connection::Server(ServerConnection::new(server).unwrap());
    for _ in 0..10 {
        transfer(&mut client, &mut server).map_err(|error| Refused { by: "server", error })?;
        transfer(&mut server, &mut client).map_err(|error| Refused { by: "client", error })?;
        if !client.is_handshaking() && !server.is_handshaking() && !server.wants_write() {
            return Ok((client, server));
        }
    }
    panic!("the handshake did not finish");
}

fn transfer(from: &mut Connection, to: &mut Connection) -> Result<(), rustls::Error> {
    let mut bytes = Vec::new();
    while from.wants_write() {
        from.write_tls(&mut bytes).unwrap();
    }
    let mut rest = &bytes[..];
    while !rest.is_empty() {
        to.read_tls(&mut rest).unwrap();
        to.process_new_packets()?;
    }
    Ok(())
}

/// The certificate the client was shown.
fn served(client: &Connection) -> CertificateDer<'static> {
    client.peer_certificates().unwrap()[0].clone()
}

fn pem(label: &str, der: &[u8]) -> String {
    let b64 = base64::engine::general_purpose::STANDARD.encode(der);
    let lines: Vec<&str> = b64.as_bytes().chunks(64).map(|c| std::str::from_utf8(c).unwrap()).collect();
    format!("-----BEGIN {label}-----\n{}\n-----END {label}-----\n", lines.join("\n"))
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tls").join(name)
}

#[test]
fn an_ecdsa_certificate_serves_tls13_with_http_1_1_negotiated() {
    let pki = Pki::new();
    let leaf = pki.leaf(&PKCS_ECDSA_P256_SHA256);
    let config = server_config(&pki.settings("ecdsa", &leaf)).unwrap();
    let (client, server) = handshake(pki.client(BOTH, None), config).unwrap();
    assert_eq!(server.protocol_version(), Some(ProtocolVersion::TLSv1_3));
    assert_eq!(server.alpn_protocol(), Some(ALPN_HTTP_1_1));
    assert_eq!(client.alpn_protocol(), Some(ALPN_HTTP_1_1));
    assert_eq!(served(&client), *leaf.cert.der());
}

#[test]
fn a_client_without_alpn_is_served_and_one_offering_only_h2_refused() {
    let pki = Pki::new();
    let config = server_config(&pki.settings("alpn", &pki.leaf(&PKCS_ECDSA_P256_SHA256))).unwrap();
    let with = |protocols: Vec<Vec<u8>>| {
        let mut client = (*pki.client(BOTH, None)).clone();
        client.alpn_protocols = protocols;
        handshake(Arc::new(client), config.clone())
    };
    let (_, server) = with(Vec::new()).unwrap();
    assert_eq!(server.alpn_protocol(), None);
    let refused = with(vec![b"h2".to_vec()]).unwrap_err();
    assert_eq!(refused.by, "server");
    assert!(matches!(refused.error, rustls::Error::NoApplicationProtocol), "{:?}", refused.error);
    let (_, server) = with(vec![b"h2".to_vec(), b"http/1.1".to_vec()]).unwrap();
    assert_eq!(server.alpn_protocol(), Some(ALPN_HTTP_1_1));
}

#[test]
fn an_ed25519_certificate_serves_tls12_too() {
    let pki = Pki::new();
    let leaf = pki.leaf(&PKCS_ED25519);
    let config = server_config(&pki.settings("ed25519", &leaf)).unwrap();
    let (_, server) = handshake(pki.client(BOTH, None), config.clone()).unwrap();
    assert_eq!(server.protocol_version(), Some(ProtocolVersion::TLSv1_3));
    let (_, server) = handshake(pki.client(TLS12_ONLY, None), config).unwrap();
    assert_eq!(server.protocol_version(), Some(ProtocolVersion::TLSv1_2));
    assert_eq!(server.alpn_protocol(), Some(ALPN_HTTP_1_1));
}

#[test]
fn an_rsa_certificate_with_a_pkcs1_key() {
    let settings = TlsSettings {
        cert: fixture("rsa-leaf.pem"),
        key: fixture("rsa-pkcs1.key"),
        client_ca: None,
        origin: TlsOrigin::Config,
    };
    let certs = TlsCerts::load(&settings).unwrap();
    let root = CertificateDer::from_pem_file(fixture("rsa-ca.pem")).unwrap();
    for versions in [BOTH, TLS12_ONLY] {
        let (client, _) = handshake(client_trusting(&root, versions, None), certs.current()).unwrap();
        assert_eq!(client.alpn_protocol(), Some(ALPN_HTTP_1_1));
    }
    // 2126-11-08 13:13:04 UTC, a GeneralizedTime (openssl's, not rcgen's).
    assert_eq!(certs.not_after(), 4_949_817_184);
}

#[test]
fn an_ec_key_in_sec1_form() {
    let pki = Pki::new();
    let leaf = pki.leaf(&PKCS_ECDSA_P256_SHA256);
    // PKCS#8 wraps the SEC1 `ECPrivateKey` in its third field, an OCTET STRING.
    let pkcs8 = leaf.key.serialize_der();
    let (_, fields, _) = expiry::tlv(&pkcs8).unwrap();
    let (_, _, fields) = expiry::tlv(fields).unwrap();
    let (_, _, fields) = expiry::tlv(fields).unwrap();
    let (tag, sec1, _) = expiry::tlv(fields).unwrap();
    assert_eq!(tag, 0x04);
    let mut settings = pki.settings("sec1", &leaf);
    settings.key = pki.file("sec1.key", &pem("EC PRIVATE KEY", sec1));
    let (client, _) = handshake(pki.client(BOTH, None), server_config(&settings).unwrap()).unwrap();
    assert_eq!(served(&client), *leaf.cert.der());
}

#[test]
fn the_chain_is_sent_after_the_leaf() {
    let pki = Pki::new();
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, "pointwork tls tests intermediate");
    let intermediate = CertifiedIssuer::signed_by(params, KeyPair::generate().unwrap(), &pki.ca).unwrap();
    let key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(vec!["localhost".to_string()]).unwrap().signed_by(&key, &intermediate).unwrap();
    let settings = TlsSettings {
        cert: pki.file("chain.crt", &format!("{}{}", leaf.pem(), intermediate.pem())),
        key: pki.file("chain.key", &key.serialize_pem()),
        client_ca: None,
        origin: TlsOrigin::Config,
    };
    let (client, _) = handshake(pki.client(BOTH, None), server_config(&settings).unwrap()).unwrap();
    assert_eq!(client.peer_certificates().unwrap(), [leaf.der().clone(), intermediate.der().clone()]);
}

#[test]
fn sessions_resume_with_tickets_on_both_versions() {
    let pki = Pki::new();
    let config = server_config(&pki.settings("resume", &pki.leaf(&PKCS_ECDSA_P256_SHA256))).unwrap();
    assert!(config.ticketer.enabled());
    assert_eq!(config.max_early_data_size, 0);
    for versions in [BOTH, TLS12_ONLY] {
        let client = pki.client(versions, None);
        let (_, first) = handshake(client.clone(), config.clone()).unwrap();
        assert_eq!(first.handshake_kind(), Some(HandshakeKind::Full));
        let (_, second) = handshake(client, config.clone()).unwrap();
        assert_eq!(second.handshake_kind(), Some(HandshakeKind::Resumed), "{versions:?}");
    }
}

#[test]
fn a_client_ca_refuses_clients_without_a_certificate_and_accepts_the_cas_own() {
    let pki = Pki::new();
    let mut settings = pki.settings("mtls", &pki.leaf(&PKCS_ECDSA_P256_SHA256));
    settings.client_ca = Some(pki.file("clients.crt", &pki.ca.pem()));
    let config = server_config(&settings).unwrap();

    let refused = handshake(pki.client(BOTH, None), config.clone()).unwrap_err();
    assert_eq!(refused.by, "server");
    assert!(matches!(refused.error, rustls::Error::NoCertificatesPresented), "{:?}", refused.error);

    let member = pki.leaf(&PKCS_ED25519);
    let (_, server) = handshake(pki.client(BOTH, Some(&member)), config.clone()).unwrap();
    assert_eq!(server.peer_certificates().unwrap()[0], *member.cert.der());

    // A certificate from another CA is refused as well, on both versions.
    let stranger_ca = ca("another CA");
    let key = KeyPair::generate().unwrap();
    let stranger = Leaf { cert: CertificateParams::new(vec![]).unwrap().signed_by(&key, &stranger_ca).unwrap(), key };
    for versions in [BOTH, TLS12_ONLY] {
        let refused = handshake(pki.client(versions, Some(&stranger)), config.clone()).unwrap_err();
        assert_eq!(refused.by, "server");
        assert!(matches!(refused.error, rustls::Error::InvalidCertificate(_)), "{:?}", refused.error);
    }
}

#[test]
fn a_key_that_is_not_the_certificates_is_refused_clearly() {
    let pki = Pki::new();
    let mut settings = pki.settings("mismatch", &pki.leaf(&PKCS_ECDSA_P256_SHA256));
    settings.key = pki.file("other.key", &KeyPair::generate().unwrap().serialize_pem());
    let error = server_config(&settings).unwrap_err();
    let expected = format!(
        "pointwork.tls.key: {}: the private key does not match the certificate in {}",
        settings.key.display(),
        settings.cert.display()
    );
    assert!(error.starts_with(&expected), "{error}");
    // An Ed25519 key for an ECDSA certificate: a mismatch too, not a parse error.
    settings.key = pki.file("ed.key", &KeyPair::generate_for(&PKCS_ED25519).unwrap().serialize_pem());
    assert!(server_config(&settings).unwrap_err().contains("does not match the certificate"));
}

#[test]
fn file_errors_name_the_setting_and_the_file() {
    let pki = Pki::new();
    let leaf = pki.leaf(&PKCS_ECDSA_P256_SHA256);
    let good = pki.settings("good", &leaf);
    let error = |settings: &TlsSettings| server_config(settings).unwrap_err();

    let missing = TlsSettings { cert: pki.dir.join("nope.crt"), origin: TlsOrigin::CommandLine, ..good.clone() };
    let e = error(&missing);
    assert!(e.starts_with(&format!("--tls-cert: {}: cannot read the file: ", missing.cert.display())), "{e}");

    let keys_only = TlsSettings { cert: good.key.clone(), origin: TlsOrigin::Environment, ..good.clone() };
    assert_eq!(
        error(&keys_only),
        format!(
            r#"SSL_CERTFILE_PATH: {}: no certificate in the file (expected a PEM "BEGIN CERTIFICATE" block)"#,
            good.key.display()
        )
    );

    let certs_only = TlsSettings { key: good.cert.clone(), ..good.clone() };
    let e = error(&certs_only);
    assert!(e.starts_with(&format!("pointwork.tls.key: {}: no private key in the file", good.cert.display())), "{e}");

    let encrypted = "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIB\n-----END ENCRYPTED PRIVATE KEY-----\n";
    let e = error(&TlsSettings { key: pki.file("enc.key", encrypted), ..good.clone() });
    assert!(e.contains("the private key is encrypted"), "{e}");

    let cut = leaf.cert.pem().replace("-----END CERTIFICATE-----", "");
    let e = error(&TlsSettings { cert: pki.file("cut.crt", &cut), ..good.clone() });
    assert!(e.contains(r#"not a valid PEM file: a block has no "-----END CERTIFICATE-----" line"#), "{e}");

    let garbage = pem("CERTIFICATE", b"not DER at all");
    let e = error(&TlsSettings { cert: pki.file("garbage.crt", &garbage), ..good.clone() });
    assert!(e.contains("the certificate cannot be read"), "{e}");

    let bad_key = pem("PRIVATE KEY", b"not a key");
    let e = error(&TlsSettings { key: pki.file("bad.key", &bad_key), ..good.clone() });
    assert!(e.contains("pointwork.tls.key") && e.contains("the private key cannot be used"), "{e}");
}

#[test]
fn client_ca_errors_name_it() {
    let pki = Pki::new();
    let good = pki.settings("ca-errors", &pki.leaf(&PKCS_ECDSA_P256_SHA256));
    let empty = pki.file("empty.crt", "");
    let e = server_config(&TlsSettings { client_ca: Some(empty.clone()), ..good.clone() }).unwrap_err();
    assert!(e.starts_with(&format!("pointwork.tls.client_ca: {}: no certificate in the file", empty.display())));
    let garbage = pki.file("garbage-ca.crt", &pem("CERTIFICATE", b"not DER"));
    let e = server_config(&TlsSettings { client_ca: Some(garbage), ..good.clone() }).unwrap_err();
    assert!(e.contains("pointwork.tls.client_ca") && e.contains("not a usable CA certificate"), "{e}");
    let missing = pki.dir.join("missing-ca.crt");
    let e = server_config(&TlsSettings { client_ca: Some(missing), ..good }).unwrap_err();
    assert!(e.contains("pointwork.tls.client_ca") && e.contains("cannot read the file"), "{e}");
}

#[test]
fn a_reload_swaps_the_certificate_for_new_handshakes_and_keeps_the_old_one_on_a_broken_file() {
    let pki = Pki::new();
    let first = pki.leaf(&PKCS_ECDSA_P256_SHA256);
    let settings = pki.settings("rotate", &first);
    let certs = TlsCerts::load(&settings).unwrap();
    let before = certs.current();

    // A broken key file: refused, the old configuration stays.
    std::fs::write(&settings.key, "-----BEGIN PRIVATE KEY-----\n").unwrap();
    assert!(certs.reload(&settings).unwrap_err().starts_with("pointwork.tls.key: "));
    assert!(Arc::ptr_eq(&before, &certs.current()));
    let (client, _) = handshake(pki.client(BOTH, None), certs.current()).unwrap();
    assert_eq!(served(&client), *first.cert.der());

    // A handshake that began before the rotation finishes with the certificate it began with.
    let name = ServerName::try_from("localhost").unwrap();
    let mut open_client = Connection::Client(ClientConnection::new(pki.client(BOTH, None), name).unwrap());
    let mut open_server = Connection::Server(ServerConnection::new(certs.current()).unwrap());
    transfer(&mut open_client, &mut open_server).unwrap();

    let mut params = CertificateParams::new(vec!["localhost".to_string()]).unwrap();
    params.not_after = date_time_ymd(3000, 1, 1);
    let second = pki.leaf_with(&PKCS_ED25519, params);
    let renewed = pki.settings("rotate", &second);
    certs.reload(&renewed).unwrap();
    assert!(!Arc::ptr_eq(&before, &certs.current()));
    assert_eq!(certs.not_after(), not_after(second.cert.der()).unwrap());
    let (client, _) = handshake(pki.client(BOTH, None), certs.current()).unwrap();
    assert_eq!(served(&client), *second.cert.der());

    for _ in 0..3 {
        transfer(&mut open_server, &mut open_client).unwrap();
        transfer(&mut open_client, &mut open_server).unwrap();
    }
    assert!(!open_client.is_handshaking() && !open_server.is_handshaking());
    assert_eq!(served(&open_client), *first.cert.der());
}

#[test]
fn expiry_of_a_certificate_valid_for_ten_days() {
    let pki = Pki::new();
    let mut params = CertificateParams::new(vec!["localhost".to_string()]).unwrap();
    params.not_before = date_time_ymd(2030, 1, 1);
    params.not_after = date_time_ymd(2030, 1, 11);
    let leaf = pki.leaf_with(&PKCS_ECDSA_P256_SHA256, params);
    let start = UNIX_EPOCH + Duration::from_secs(1_893_456_000); // 2030-01-01 00:00:00 UTC
    assert_eq!(seconds_until_expiry(leaf.cert.der(), start), Ok(10 * 86_400));
    let certs = TlsCerts::load(&pki.settings("ten-days", &leaf)).unwrap();
    assert_eq!(certs.seconds_until_expiry(start), 10 * 86_400);
    assert_eq!(certs.seconds_until_expiry(start + Duration::from_secs(11 * 86_400)), -86_400);

    // rcgen writes years from 2050 on as GeneralizedTime.
    let mut params = CertificateParams::new(vec!["localhost".to_string()]).unwrap();
    params.not_after = date_time_ymd(2051, 3, 1);
    let later = pki.leaf_with(&PKCS_ED25519, params);
    assert_eq!(not_after(later.cert.der()), Ok(2_561_241_600));
}

#[test]
fn the_expiry_warning_starts_at_fourteen_days() {
    assert_eq!(expiry_warning("c.pem", EXPIRY_WARNING_SECONDS), None);
    assert_eq!(
        expiry_warning("c.pem", EXPIRY_WARNING_SECONDS - 1).as_deref(),
        Some("the TLS certificate c.pem expires in 13 days: renew it")
    );
    assert_eq!(
        expiry_warning("c.pem", 10 * 86_400).as_deref(),
        Some("the TLS certificate c.pem expires in 10 days: renew it")
    );
    assert_eq!(
        expiry_warning("c.pem", 7_200).as_deref(),
        Some("the TLS certificate c.pem expires in 2 hours: renew it")
    );
    assert_eq!(
        expiry_warning("c.pem", -3 * 86_400).as_deref(),
        Some("the TLS certificate c.pem expired 3 days ago: clients will refuse it")
    );
}
