//! One connection to PostgreSQL: TLS through rustls when the URL asks for it (`sslmode=require`
//! or `prefer`), plain otherwise.

use std::sync::Arc;

use tokio_postgres::config::SslMode;
use tokio_postgres::tls::MakeTlsConnect;
use tokio_postgres::{Client, Config, Connection, Socket};
use tokio_postgres_rustls::MakeRustlsConnect;

pub(crate) type TlsConnection = Connection<Socket, <MakeRustlsConnect as MakeTlsConnect<Socket>>::Stream>;

/// Parses the URL once (its errors name what is wrong, never the password).
pub(crate) fn parse(url: &str) -> Result<Config, String> {
    // LiteLLM's URLs say `postgresql://` or `postgres://`; tokio-postgres reads both.
    url.parse::<Config>().map_err(|e| format!("DATABASE_URL is not a PostgreSQL connection string: {e}"))
}

/// Connects; the caller drives the returned connection (spawned, or polled for notifications).
pub(crate) async fn connect(config: &Config) -> Result<(Client, TlsConnection), tokio_postgres::Error> {
    let tls = MakeRustlsConnect::new(tls_config());
    let mut config = config.clone();
    if config.get_ssl_mode() == SslMode::Prefer {
        // A local server without TLS is the common case; rustls would fail its handshake
        // against a self-signed certificate anyway. `sslmode=require` asks for TLS.
        config.ssl_mode(SslMode::Disable);
    }
    config.connect(tls).await
}

fn tls_config() -> rustls::ClientConfig {
    let roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("ring supports the default protocol versions")
        .with_root_certificates(roots)
        .with_no_client_auth()
}
