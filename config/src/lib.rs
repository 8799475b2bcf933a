//! Reads LiteLLM proxy `config.yaml` files unchanged (plus Pointwork's own `pointwork:`
//! section) and compiles them into a [`Config`], whose [`Config::snapshot`] is the routing
//! [`pointwork_core::Snapshot`].
//!
//! Loading walks the whole file and its includes and reports every problem at once, each with
//! its key path: `model_list[3].litellm_params.weight: expected a positive integer, got "high"`.
//! LiteLLM settings Pointwork does not implement yet are warnings, not errors.

mod api_base;
mod auth;
mod aws;
mod aws_credentials;
mod aws_profile;
mod azure;
mod cache;
mod cache_read;
mod check;
mod cluster;
mod cluster_read;
mod complexity_router;
mod complexity_settings;
mod config;
mod cost_map;
mod deployment_id;
mod duration;
mod env;
mod error;
mod export;
mod extra_body;
mod fallbacks;
mod gateway_settings;
mod google;
mod google_adc;
mod include;
mod kinds;
mod litellm_providers;
mod load;
mod mcp;
mod mcp_read;
mod mcp_values;
mod model_list;
mod model_ref;
mod node;
mod pareto;
mod pareto_groups;
mod pareto_rule;
mod pareto_tuning;
mod pass_through;
mod pointwork_section;
mod policies;
mod policy_attrs;
mod policy_router;
mod provider_env;
mod provider_params;
mod references;
mod request_defaults;
mod router;
mod sections;
mod stored_models;
mod summary;
mod tls;
mod yaml;

pub use auth::{AdminKey, Auth, VirtualKey};
pub use aws::DEFAULT_REGION as BEDROCK_DEFAULT_REGION;
pub use azure::DEFAULT_API_VERSION as AZURE_DEFAULT_API_VERSION;
pub use cache::{CacheMode, CacheSettings, CacheStore, CacheSurfaces};
pub use cluster::{
    ClusterSettings, HealthCheckSharing, RedisServer, DEFAULT_KEY_PREFIX, DEFAULT_REDIS_PORT, DEFAULT_SYNC_INTERVAL,
    SYNC_INTERVAL_RANGE,
};
pub use config::{Config, Database, DeploymentInfo, EntrySource, LeftOut, LeftOutBecause, Loaded, PolicyRouterEntry};
pub use error::{ConfigError, ConfigErrors, ConfigWarning};
pub use export::{
    parse_headers, traces_url, ExportSettings, LangfuseSettings, OtlpSettings, DEFAULT_BATCH, DEFAULT_QUEUE,
};
pub use gateway_settings::{
    AccessLogTarget, CostMapSource, GatewaySettings, HealthChecks, IoDriver, Limits, Timeouts, DEFAULT_PORT,
};
pub use google::DEFAULT_VERTEX_LOCATION;
pub use load::{load_file, load_str};
pub use mcp::{McpAuth, McpServer, McpSettings, McpTransport};
pub use pointwork_core::redact;
pub use stored_models::{StoredModel, WithStoredModels};
pub use tls::{
    TlsOrigin, TlsSettings, CERT_ENV as TLS_CERT_ENV, CLIENT_CA_NAME as TLS_CLIENT_CA_NAME, KEY_ENV as TLS_KEY_ENV,
};
