//! How Pointwork reaches its database (`DATABASE_URL` or `general_settings.database_url`).

use std::path::PathBuf;
use std::time::Duration;

#[derive(Clone)]
pub struct DbSettings {
    /// `postgresql://user:password@host:port/dbname?sslmode=…` (`sslmode=require` speaks TLS
    /// through rustls, checked against the web PKI roots).
    pub url: String,
    /// `general_settings.allow_requests_on_db_unavailable`: a key never seen, while the
    /// database is away, is let through (as LiteLLM does) instead of refused with 503.
    pub allow_requests_on_db_unavailable: bool,
    /// Where spend not yet written waits across a restart (`pointwork.auth.spend_file` +
    /// `.pending`); `None` = in memory only.
    pub pending_file: Option<PathBuf>,
    /// How long start-up waits for the first connection and the schema check.
    pub connect_timeout: Duration,
    /// How often buffered spend is written.
    pub flush_interval: Duration,
    /// The master key: management calls from it are the proxy admin's, and it encrypts the
    /// secrets of models stored in the database when `LITELLM_SALT_KEY` is not set.
    pub master_key: Option<String>,
    /// `LITELLM_SALT_KEY`.
    pub salt_key: Option<String>,
    /// How many wrong key digests the thread remembers (a flood of them costs the database
    /// nothing while they are remembered).
    pub negative_cache: usize,
    /// How often the keys the thread holds are read again, for changes made by a writer that
    /// does not notify (a LiteLLM proxy on the same database): `user_api_key_cache_ttl`.
    pub refresh_interval: Duration,
    /// `general_settings.store_model_in_db`: `/model/*` write models, and the stored models
    /// are read at start and after every change.
    pub store_model_in_db: bool,
    /// Given the stored models (with `store_model_in_db`), at start and whenever they changed.
    pub on_models: Option<crate::ModelsSink>,
    /// How often the stored models are read again besides the changes announced (LiteLLM's
    /// own proxies write rows without Pointwork's notification).
    pub models_poll_interval: Duration,
    /// How `/model/*` seal new secrets (`general_settings.encryption_algorithm`).
    pub encryption: crate::crypto::Algorithm,
}

impl DbSettings {
    pub fn new(url: String) -> DbSettings {
        DbSettings {
            url,
            allow_requests_on_db_unavailable: false,
            pending_file: None,
            connect_timeout: Duration::from_secs(5),
            flush_interval: Duration::from_millis(500),
            master_key: None,
            salt_key: None,
            negative_cache: 100_000,
            refresh_interval: Duration::from_secs(10),
            store_model_in_db: false,
            on_models: None,
            models_poll_interval: Duration::from_secs(30),
            encryption: crate::crypto::Algorithm::SecretBox,
        }
    }

    /// The URL with its password replaced by `****`, for logs.
    pub fn redacted_url(&self) -> String {
        redact_url(&self.url)
    }

    /// The key LiteLLM encrypts stored secrets with: `LITELLM_SALT_KEY`, else the master key.
    pub fn secret_key(&self) -> Option<crate::crypto::SecretKey> {
        crate::crypto::SecretKey::choose(self.salt_key.as_deref(), self.master_key.as_deref())
    }
}

/// `postgresql://user:secret@host/db` → `postgresql://user:****@host/db`.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return "****".to_string() };
    let Some((credentials, host)) = rest.rsplit_once('@') else { return url.to_string() };
    match credentials.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:****@{host}"),
        None => url.to_string(),
    }
}

impl std::fmt::Debug for DbSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DbSettings")
            .field("url", &self.redacted_url())
            .field("allow_requests_on_db_unavailable", &self.allow_requests_on_db_unavailable)
            .field("pending_file", &self.pending_file)
            .field("store_model_in_db", &self.store_model_in_db)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn urls_lose_their_password_in_logs() {
        assert_eq!(super::redact_url("postgresql://u:p%40ss@h:5432/d"), "postgresql://u:****@h:5432/d");
        assert_eq!(super::redact_url("postgresql://h/d"), "postgresql://h/d");
    }
}
