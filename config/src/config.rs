//! The compiled config: what the gateway runs with, and how it becomes a routing [`Snapshot`].

use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;

use pointwork_core::pareto::ParetoSettings;
use pointwork_core::policy::Policy;
use pointwork_core::{Deployment, RouterSettings, Snapshot, SnapshotError};

use crate::{Auth, ConfigError, ConfigErrors, ConfigWarning, GatewaySettings};
use pointwork_core::redact;

/// A config that compiled, and what in it Pointwork ignores.
#[derive(Clone, Debug, PartialEq)]
pub struct Loaded {
    pub config: Config,
    pub warnings: Vec<ConfigWarning>,
}

/// Everything a LiteLLM `config.yaml` (and its includes) says that Pointwork uses.
#[derive(Clone, PartialEq)]
pub struct Config {
    /// One per `model_list` entry: the main file's first, then each include's.
    pub deployments: Vec<Deployment>,
    /// Parallel to `deployments`: where each entry is and the rest of its `model_info`.
    pub deployment_info: Vec<DeploymentInfo>,
    /// The entries that do not serve here, each with why (a warning each, too).
    pub left_out: Vec<LeftOut>,
    pub router: RouterSettings,
    pub gateway: GatewaySettings,
    /// `general_settings.master_key`, for client authentication.
    pub master_key: Option<String>,
    /// `pointwork.auth`: virtual keys, admin keys, whether metrics need a key.
    pub auth: Auth,
    /// LiteLLM's database (`DATABASE_URL` or `general_settings.database_url`): keys, teams,
    /// users and spend at run time.
    pub database: Option<Database>,
    /// `pointwork.policies`, in the order written; each one's `id` is its name.
    pub policies: Vec<Policy>,
    /// `pointwork.default_policy`: the policy of requests whose key names none (it names one of
    /// `policies`). `None`, and no key with a policy: routing as without the policy router.
    pub default_policy: Option<String>,
    /// The auto models (`model_list` entries of `pointwork/policy_router`), pools resolved.
    pub policy_routers: Vec<PolicyRouterEntry>,
    /// The complexity auto-routers (`model_list` entries of `auto_router/complexity_router`),
    /// their groups checked against the model list.
    pub complexity_routers: Vec<pointwork_core::complexity::RouterConfig>,
    /// The OpenRouter best-value walk: `Some` when `litellm_settings.callbacks` names the
    /// plugin's callback (`litellm_plugin_openrouter_pareto.plugin.openrouter_pareto_callback`).
    pub pareto: Option<ParetoSettings>,
    /// Where traces and request logs go (OTLP, Langfuse), and LiteLLM's metric names.
    pub export: crate::ExportSettings,
    /// LiteLLM's `mcp_servers`: the MCP servers behind `/mcp`.
    pub mcp: crate::McpSettings,
    /// `litellm_settings.cache: true` and its `cache_params`: the response cache. `None`: no
    /// cache (off, or of a type Pointwork does not serve, which a warning names).
    pub cache: Option<crate::CacheSettings>,
    /// Why Redis is off although the config may name it: `pointwork.cluster.enabled: false`,
    /// and the section that names Redis, e.g. `pointwork.cluster.enabled: false; router_settings
    /// names Redis`. `None` when `enabled` is not false (Redis is then in
    /// `gateway.cluster`, or named nowhere).
    pub cluster_off: Option<String>,
    /// Addresses outside `model_list` that are placeholders and so are not used (Redis's
    /// `redis_host`), each with its key path: `pointwork check --strict` refuses them as it does
    /// left-out entries.
    pub placeholders: Vec<String>,
    /// The config file (when read from disk) and every file it includes.
    pub files: Vec<PathBuf>,
    /// How many warnings loading produced (the summary reports it).
    pub warning_count: usize,
}

/// Where LiteLLM's database is, and how to use it.
#[derive(Clone, PartialEq)]
pub struct Database {
    /// A PostgreSQL URL (never printed whole: see `pointwork_db::DbSettings::redacted_url`).
    pub url: String,
    /// `general_settings.allow_requests_on_db_unavailable`.
    pub allow_requests_on_db_unavailable: bool,
    /// `general_settings.store_model_in_db`.
    pub store_model_in_db: bool,
    /// `general_settings.user_api_key_cache_ttl` (seconds): how long a cached key may go
    /// unchecked against its row; `None` = Pointwork's default.
    pub key_cache_ttl: Option<std::time::Duration>,
    /// How often the stored models are read again besides the changes announced
    /// (`general_settings.proxy_config_reload_interval_seconds`, else
    /// `PROXY_CONFIG_RELOAD_INTERVAL_SECONDS`, else 30 s: LiteLLM's poll), so that models a
    /// LiteLLM proxy on the same database adds are served too.
    pub models_poll_interval: std::time::Duration,
    /// `general_settings.encryption_algorithm: aes-256-gcm`: secrets are written as LiteLLM's
    /// `v2:gcm:` values (else as its default, NaCl SecretBox).
    pub encrypt_with_aes_gcm: bool,
}

impl fmt::Debug for Database {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Database")
            .field("allow_requests_on_db_unavailable", &self.allow_requests_on_db_unavailable)
            .field("store_model_in_db", &self.store_model_in_db)
            .finish_non_exhaustive()
    }
}

/// What the config says about one deployment beyond the router's view of it.
#[derive(Clone, Debug, PartialEq)]
pub struct DeploymentInfo {
    pub source: EntrySource,
    /// Whether the id was derived from the entry's content (no `model_info.id`).
    pub derived_id: bool,
    /// `model_info` without `id` (e.g. `mode`, `base_model`, prices), `os.environ/` substituted.
    pub model_info: serde_json::Map<String, serde_json::Value>,
    /// `model_info.access_groups`.
    pub access_groups: Vec<String>,
    /// `litellm_params.model` as written (after `os.environ/`), e.g. `openai/gpt-4o`.
    pub model: String,
}

/// An auto model: a name clients ask for (`model_name`, e.g. `llmeu-auto`) that the policy
/// router serves from the deployments of `pool`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyRouterEntry {
    pub model_name: String,
    /// Model groups, each with a deployment here: `policy_router_config.pool` as written, else
    /// every group with a deployment that has policy attributes (in model-list order).
    pub pool: Vec<String>,
}

/// A `model_list` entry that does not serve in this process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeftOut {
    pub source: EntrySource,
    pub model_name: String,
    /// `litellm_params.model` as written.
    pub model: String,
    pub because: LeftOutBecause,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LeftOutBecause {
    /// A provider LiteLLM knows (by its name) that Pointwork does not serve yet.
    ProviderNotServed(String),
    /// `model_info.supported_environments` does not include this `LITELLM_ENVIRONMENT`.
    Environment(String),
    /// `model: "*"` passes names through to their providers, and no provider's key or base URL
    /// is in the environment.
    NoPassThroughKey,
    /// `model` names no provider Pointwork can place (an unknown prefix or bare name): why.
    ProviderUnknown(String),
    /// An address (`api_base`) that is a placeholder or no URL at all, e.g. a documentation
    /// example's `<your-azure-endpoint>`: LiteLLM starts and fails each request to it.
    Placeholder { key: &'static str, value: String },
}

impl fmt::Display for LeftOutBecause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LeftOutBecause::ProviderNotServed(provider) => {
                write!(f, "Pointwork does not serve provider {provider} yet")
            }
            LeftOutBecause::Environment(env) => write!(f, "supported_environments exclude LITELLM_ENVIRONMENT={env}"),
            LeftOutBecause::NoPassThroughKey => write!(
                f,
                "model \"*\" passes names through to their providers and no provider's key is set ({})",
                crate::pass_through::key_names()
            ),
            LeftOutBecause::ProviderUnknown(why) => f.write_str(why),
            LeftOutBecause::Placeholder { key, value } => {
                write!(f, "{key} {value:?} is a placeholder, not an http:// or https:// URL with a host")
            }
        }
    }
}

/// Where a `model_list` entry is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntrySource {
    /// The included file as messages name it; `None` = the main file.
    pub file: Option<String>,
    /// The entry's position in that file's `model_list`.
    pub index: usize,
    /// For a model stored in the database: its row, `LiteLLM_ProxyModelTable[model_id=…]`
    /// (then `file` and `index` say nothing).
    pub stored: Option<String>,
}

impl EntrySource {
    /// The key path of something inside the entry, e.g. `models.yaml: model_list[0].model_info.id`.
    pub fn key_path(&self, keys: &str) -> String {
        format!("{self}.{keys}")
    }
}

impl fmt::Display for EntrySource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(row) = &self.stored {
            return f.write_str(row);
        }
        match &self.file {
            Some(file) => write!(f, "{file}: model_list[{}]", self.index),
            None => write!(f, "model_list[{}]", self.index),
        }
    }
}

impl Config {
    /// Builds the routing snapshot the gateway publishes.
    pub fn snapshot(&self) -> Result<Snapshot, ConfigErrors> {
        Snapshot::build(self.deployments.clone(), self.router.clone()).map_err(|e| {
            #[allow(unreachable_patterns)] // core may add variants; they keep their own message
            let error = match &e {
                SnapshotError::DuplicateId { id, first, second } => {
                    match (self.deployment_info.get(*first), self.deployment_info.get(*second)) {
                        (Some(first), Some(second)) => duplicate_id_error(id, first, second),
                        _ => other_snapshot_error(&e),
                    }
                }
                _ => other_snapshot_error(&e),
            };
            ConfigErrors(vec![error])
        })
    }
}

fn other_snapshot_error(e: &SnapshotError) -> ConfigError {
    ConfigError { path: "model_list".to_string(), message: e.to_string() }
}

/// Every second use of an id, as an error at the later entry.
pub(crate) fn duplicate_ids(deployments: &[Deployment], info: &[DeploymentInfo]) -> Vec<ConfigError> {
    let mut first_use: HashMap<&str, usize> = HashMap::with_capacity(deployments.len());
    let mut errors = Vec::new();
    for (i, d) in deployments.iter().enumerate() {
        if let Some(&first) = first_use.get(d.id.as_str()) {
            errors.push(duplicate_id_error(&d.id, &info[first], &info[i]));
        } else {
            first_use.insert(&d.id, i);
        }
    }
    errors
}

fn duplicate_id_error(id: &str, first: &DeploymentInfo, second: &DeploymentInfo) -> ConfigError {
    let hint = if second.derived_id {
        "; entries with the same model_name and litellm_params need distinct model_info.id values"
    } else {
        ""
    };
    ConfigError {
        path: second.source.key_path("model_info.id"),
        message: format!("duplicate deployment id {id:?} (first used by {}){hint}", first.source),
    }
}

/// Debug output never shows a key: api keys and the master key are redacted.
impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `Deployment`'s own Debug redacts its api key.
        f.debug_struct("Config")
            .field("deployments", &self.deployments)
            .field("deployment_info", &self.deployment_info)
            .field("left_out", &self.left_out)
            .field("router", &self.router)
            .field("gateway", &self.gateway)
            .field("master_key", &self.master_key.as_deref().map(redact))
            .field("auth", &self.auth)
            .field("policies", &self.policies)
            .field("default_policy", &self.default_policy)
            .field("policy_routers", &self.policy_routers)
            .field("complexity_routers", &self.complexity_routers)
            .field("pareto", &self.pareto)
            .field("cluster_off", &self.cluster_off)
            .field("placeholders", &self.placeholders)
            .field("files", &self.files)
            .field("warning_count", &self.warning_count)
            .finish()
    }
}
