//! The top-level sections of a LiteLLM config that need no module of their own:
//! `environment_variables`, `general_settings`, and the warning for sections Pointwork ignores.

use crate::check::{Checker, IGNORED};
use crate::include::{Document, INCLUDE_KEY, MODEL_LIST_KEY};
use crate::kinds::{self, Kind};
use crate::node::Node;
use crate::HealthChecks;
use std::time::Duration;

pub(crate) const ROUTER_SETTINGS: &str = "router_settings";
pub(crate) const LITELLM_SETTINGS: &str = "litellm_settings";
pub(crate) const GENERAL_SETTINGS: &str = "general_settings";
pub(crate) const ENVIRONMENT_VARIABLES: &str = "environment_variables";
pub(crate) const POINTWORK: &str = "pointwork";

const READ_SECTIONS: [&str; 8] = [
    crate::mcp_read::MCP_SERVERS,
    MODEL_LIST_KEY,
    ROUTER_SETTINGS,
    LITELLM_SETTINGS,
    GENERAL_SETTINGS,
    ENVIRONMENT_VARIABLES,
    INCLUDE_KEY,
    POINTWORK,
];

/// An environment variable's value: YAML readers often leave numbers and booleans unquoted.
const ENV_VALUE: Kind<String> = Kind {
    expected: "a string",
    parse: |n| match n {
        Node::Str(s) => Some(s.clone()),
        Node::Int(i) => Some(i.to_string()),
        Node::Float(x) => Some(x.to_string()),
        Node::Bool(b) => Some(if *b { "True" } else { "False" }.to_string()),
        _ => None,
    },
    // Often secrets (that is why they are variables).
    secret: true,
};

/// Makes `environment_variables` visible to `os.environ/` lookups. Its values are taken as
/// written (not substituted); a null value leaves the variable to the process environment.
pub(crate) fn read_environment_variables(c: &mut Checker, doc: &Document) {
    let Some(section) = doc.section(ENVIRONMENT_VARIABLES) else {
        return;
    };
    if matches!(section.node, Node::Null) {
        return;
    }
    let Some(vars) = c.map(&section.node, section.path.clone()) else {
        return;
    };
    for (name, value, path) in vars.untaken() {
        let value = match value {
            // Not substituted: a variable is defined here, not referred to.
            Node::Str(s) => Some(s.clone()),
            // `NAME:` with no value (templates leave them so): the config does not define it;
            // `os.environ/NAME` sees the process environment.
            Node::Null => None,
            other => (ENV_VALUE.parse)(other).or_else(|| {
                c.error(&path, format!("expected {}, got {}", ENV_VALUE.expected, other.describe_kind()));
                None
            }),
        };
        if let Some(value) = value {
            c.env.define(name.to_string(), value);
        }
    }
}

/// The general settings Pointwork reads; `None` = not set.
#[derive(Default)]
pub(crate) struct GeneralSettings {
    pub(crate) master_key: Option<String>,
    pub(crate) background_health_checks: Option<bool>,
    pub(crate) health_check_interval: Option<Duration>,
    pub(crate) background_health_check_model_groups: Option<Vec<String>>,
    pub(crate) database_url: Option<String>,
    pub(crate) allow_requests_on_db_unavailable: Option<bool>,
    pub(crate) user_api_key_cache_ttl: Option<Duration>,
    pub(crate) store_model_in_db: Option<bool>,
    pub(crate) proxy_config_reload_interval: Option<Duration>,
    pub(crate) encryption_algorithm: Option<String>,
}

/// LiteLLM's environment switch for `general_settings.store_model_in_db`.
const STORE_MODEL_IN_DB_ENV: &str = "STORE_MODEL_IN_DB";
/// LiteLLM's environment default of `general_settings.proxy_config_reload_interval_seconds`.
const RELOAD_INTERVAL_ENV: &str = "PROXY_CONFIG_RELOAD_INTERVAL_SECONDS";

/// `general_settings.master_key` and the background health-check keys; every other general
/// setting is warned about.
pub(crate) fn read_general_settings(c: &mut Checker, doc: &Document) -> GeneralSettings {
    let Some(section) = doc.section(GENERAL_SETTINGS) else {
        return GeneralSettings::default();
    };
    if matches!(section.node, Node::Null) {
        return GeneralSettings::default();
    }
    let Some(mut fields) = c.map(&section.node, section.path.clone()) else {
        return GeneralSettings::default();
    };
    let general = GeneralSettings {
        master_key: c.optional(&mut fields, "master_key", &kinds::SECRET),
        background_health_checks: c.optional(&mut fields, "background_health_checks", &kinds::BOOL),
        health_check_interval: c.optional(&mut fields, "health_check_interval", &kinds::POSITIVE_SECONDS),
        background_health_check_model_groups: c.optional(
            &mut fields,
            "background_health_check_model_groups",
            &kinds::STRING_LIST,
        ),
        database_url: read_database_url(c, &mut fields),
        allow_requests_on_db_unavailable: c.optional(&mut fields, "allow_requests_on_db_unavailable", &kinds::BOOL),
        user_api_key_cache_ttl: c.optional(&mut fields, "user_api_key_cache_ttl", &kinds::POSITIVE_SECONDS),
        store_model_in_db: c.optional(&mut fields, "store_model_in_db", &kinds::BOOL),
        proxy_config_reload_interval: c.optional(
            &mut fields,
            "proxy_config_reload_interval_seconds",
            &kinds::POSITIVE_SECONDS,
        ),
        encryption_algorithm: read_encryption_algorithm(c, &mut fields),
    };
    if general.store_model_in_db == Some(true)
        && general.database_url.is_none()
        && c.env.lookup("DATABASE_URL").is_none()
    {
        let path = fields.path.key("store_model_in_db");
        c.warn(path, "no database (DATABASE_URL or general_settings.database_url): no model is read from one");
    }
    c.warn_ignored(&fields);
    general
}

/// LiteLLM's `encryption_algorithm` values (`ALGO_AES_GCM`, `_ALGO_XSALSA20`).
const AES_GCM: &str = "aes-256-gcm";
const XSALSA20: &str = "xsalsa20-poly1305";

/// `encryption_algorithm`, lower-cased; a value LiteLLM does not know is its default, with a
/// warning.
fn read_encryption_algorithm(c: &mut Checker, fields: &mut crate::check::Fields) -> Option<String> {
    let path = fields.path.key("encryption_algorithm");
    let value = c.optional(fields, "encryption_algorithm", &kinds::STRING)?.to_ascii_lowercase();
    if value != AES_GCM && value != XSALSA20 {
        c.warn(path, format!("unknown algorithm {value:?} ({AES_GCM}, {XSALSA20}): secrets are written as {XSALSA20}"));
    }
    Some(value)
}

/// `database_url`, where an unset `os.environ/` variable means no database (as LiteLLM reads it:
/// real configs name `os.environ/DATABASE_URL` on machines without one), with a warning.
fn read_database_url(c: &mut Checker, fields: &mut crate::check::Fields) -> Option<String> {
    let (node, path) = fields.take("database_url")?;
    if let Node::Str(text) = node {
        if let Some(name) = crate::env::env_reference(text).filter(|n| !n.is_empty() && c.env.lookup(n).is_none()) {
            c.warn(&path, format!("environment variable {name} is not set: no database (keys come from the config)"));
            return None;
        }
    }
    match node {
        Node::Null => None,
        node => c.read(node, &path, &kinds::SECRET),
    }
}

impl GeneralSettings {
    /// The database: `general_settings.database_url`, else the environment's `DATABASE_URL`
    /// (LiteLLM's names); `None` = none.
    pub(crate) fn database(&self, c: &Checker) -> Option<crate::config::Database> {
        let url = self.database_url.clone().or_else(|| c.env.lookup("DATABASE_URL")).filter(|u| !u.is_empty())?;
        Some(crate::config::Database {
            url,
            allow_requests_on_db_unavailable: self.allow_requests_on_db_unavailable.unwrap_or(false),
            key_cache_ttl: self.user_api_key_cache_ttl,
            store_model_in_db: self.store_model_in_db(c),
            models_poll_interval: self.models_poll_interval(c),
            encrypt_with_aes_gcm: self.encryption_algorithm.as_deref() == Some(AES_GCM),
        })
    }

    /// `general_settings.store_model_in_db`, or `STORE_MODEL_IN_DB` set true in the environment
    /// (LiteLLM's `get_secret_bool("STORE_MODEL_IN_DB", …) or store_model_in_db`).
    pub(crate) fn store_model_in_db(&self, c: &Checker) -> bool {
        let env = c.env.lookup(STORE_MODEL_IN_DB_ENV).is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
        self.store_model_in_db.unwrap_or(false) || env
    }

    /// LiteLLM's poll of the stored models: `proxy_config_reload_interval_seconds`, else
    /// `PROXY_CONFIG_RELOAD_INTERVAL_SECONDS` (a positive whole number), else 30 s.
    fn models_poll_interval(&self, c: &Checker) -> Duration {
        let env = c.env.lookup(RELOAD_INTERVAL_ENV).and_then(|v| v.trim().parse::<u64>().ok()).filter(|&s| s > 0);
        self.proxy_config_reload_interval.or(env.map(Duration::from_secs)).unwrap_or(Duration::from_secs(30))
    }

    /// Moves the health-check keys into the gateway's settings.
    pub(crate) fn apply_health_checks(&mut self, health: &mut HealthChecks) {
        if let Some(on) = self.background_health_checks {
            health.background = on;
        }
        if let Some(interval) = self.health_check_interval {
            health.interval = interval;
        }
        if let Some(groups) = self.background_health_check_model_groups.take() {
            health.model_groups = Some(groups);
        }
    }
}

/// Warns about every top-level section Pointwork does not read (`guardrails`, `vector_store_registry`…).
pub(crate) fn warn_ignored_sections(c: &mut Checker, doc: &Document) {
    for section in &doc.sections {
        if !READ_SECTIONS.contains(&section.key.as_str()) {
            c.warn(&section.path, IGNORED);
        }
    }
}
