//! The database on the command line: the settings `serve` starts its thread with, the line
//! `pointwork check` prints about it, and `pointwork db init`.

use std::path::Path;
use std::process::ExitCode;

use pointwork_config::Config;
use pointwork_db::probe::{self, Probe};
use pointwork_db::DbSettings;

use crate::output::{answer, fail};

/// The database thread's settings for a config: the URL and LiteLLM's flags, how often keys and
/// stored models are read again, the master key and `LITELLM_SALT_KEY` (which encrypt stored
/// secrets) and how, and the pending spend kept beside `pointwork.auth.spend_file` when there is
/// one. (`on_models`, where stored models go, is the caller's.)
pub fn settings(database: &pointwork_config::Database, config: &Config) -> DbSettings {
    let mut settings = DbSettings::new(database.url.clone());
    settings.allow_requests_on_db_unavailable = database.allow_requests_on_db_unavailable;
    settings.store_model_in_db = database.store_model_in_db;
    settings.models_poll_interval = database.models_poll_interval;
    if database.encrypt_with_aes_gcm {
        settings.encryption = pointwork_db::crypto::Algorithm::AesGcm;
    }
    if let Some(ttl) = database.key_cache_ttl {
        settings.refresh_interval = ttl;
    }
    settings.master_key = config.master_key.clone();
    settings.salt_key = std::env::var("LITELLM_SALT_KEY").ok().filter(|k| !k.is_empty());
    settings.pending_file = config.auth.spend_file.as_ref().map(|p| {
        let mut path = p.as_os_str().to_owned();
        path.push(".database-pending");
        std::path::PathBuf::from(path)
    });
    settings
}

/// `pointwork check`'s line about the database, or its error: a schema that lacks what
/// Pointwork needs fails the check (the gateway would not start); a database out of reach is
/// said, not failed (the gateway starts and keeps trying).
pub fn check_line(database: &pointwork_config::Database) -> Result<String, String> {
    let settings = DbSettings::new(database.url.clone());
    let url = settings.redacted_url();
    match probe::probe(&settings) {
        Probe::Ready(contents) => Ok(format!("database: {url}: LiteLLM's schema complete; {contents}")),
        Probe::Away(e) => Ok(format!("database: {url}: away ({e}); the gateway would start and keep trying")),
        Probe::Incomplete(e) => Err(e),
    }
}

/// `pointwork db init`: LiteLLM's tables on the database the config names (else
/// `DATABASE_URL`).
pub fn init(config: Option<&Path>) -> ExitCode {
    let url = match config {
        Some(path) => match pointwork_config::load_file(path) {
            Ok(loaded) => loaded.config.database.map(|d| d.url),
            Err(errors) => return fail(&format!("{}: invalid config:\n{errors}", path.display())),
        },
        None => std::env::var("DATABASE_URL").ok().filter(|u| !u.is_empty()),
    };
    let Some(url) = url else {
        return fail("db init: no database: set DATABASE_URL (or general_settings.database_url in --config's file)");
    };
    let settings = DbSettings::new(url);
    match probe::init(&settings) {
        Ok(contents) => {
            answer(format_args!("database: {}: LiteLLM's tables are there ({contents})", settings.redacted_url()))
        }
        Err(e) => fail(&format!("db init: {e}")),
    }
}
