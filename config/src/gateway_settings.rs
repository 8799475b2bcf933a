//! The `pointwork:` section's settings: how the gateway listens, how many shards it runs, which
//! IO driver it uses, and its limits and timeouts. LiteLLM has no such section.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use crate::{ClusterSettings, TlsSettings};

/// LiteLLM proxy's port, so clients switch without changing their base URL.
pub const DEFAULT_PORT: u16 = 4000;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GatewaySettings {
    pub listen: SocketAddr,
    /// Shard threads; `None` = one per available core.
    pub shards: Option<usize>,
    pub io_driver: IoDriver,
    pub limits: Limits,
    pub timeouts: Timeouts,
    /// `pointwork.model_cost_map`: where the deployments' prices, context windows and
    /// capabilities come from when they do not set them.
    pub model_cost_map: CostMapSource,
    /// `pointwork.drain_timeout`: how long requests in flight may take to finish after
    /// SIGTERM/SIGINT before the process exits anyway.
    pub drain_timeout: Duration,
    /// `pointwork.access_log`.
    pub access_log: AccessLogTarget,
    /// Background health checks: `general_settings.background_health_checks`,
    /// `health_check_interval`, `background_health_check_model_groups`, and the probe itself
    /// under `pointwork.health_checks`.
    pub health_checks: HealthChecks,
    /// Several instances sharing routing state through Redis: `router_settings.redis_*`,
    /// `litellm_settings.cache_params` of a Redis cache, `pointwork.cluster`, the `REDIS_*`
    /// variables. `None` = no Redis: this instance keeps its state to itself.
    pub cluster: Option<ClusterSettings>,
    /// HTTPS on the listening side: `pointwork.tls`, else LiteLLM's `SSL_CERTFILE_PATH` /
    /// `SSL_KEYFILE_PATH`. `None` = plain HTTP.
    pub tls: Option<TlsSettings>,
}

/// Where the access log goes: `off` (the default), `stdout`, or a file path (relative to the
/// config file's folder; created owner-only, appended to).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum AccessLogTarget {
    #[default]
    Off,
    Stdout,
    File(PathBuf),
}

/// How deployments are probed in the background.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HealthChecks {
    /// `general_settings.background_health_checks`. Probes also run whenever
    /// `router_settings.enable_health_check_routing` is on.
    pub background: bool,
    /// `general_settings.health_check_interval` (LiteLLM's default: 300 s).
    pub interval: Duration,
    /// `general_settings.background_health_check_model_groups`: probe only these groups.
    pub model_groups: Option<Vec<String>>,
    /// `pointwork.health_checks.timeout`: a probe that takes longer marks the deployment unhealthy.
    pub timeout: Duration,
    /// `pointwork.health_checks.prompt`: the user message of a chat probe.
    pub prompt: String,
    /// `pointwork.health_checks.max_tokens` of a chat probe.
    pub max_tokens: u32,
}

impl Default for HealthChecks {
    fn default() -> Self {
        HealthChecks {
            background: false,
            interval: Duration::from_secs(300),
            model_groups: None,
            timeout: Duration::from_secs(10),
            prompt: "ping".to_string(),
            max_tokens: 1,
        }
    }
}

impl Default for GatewaySettings {
    fn default() -> Self {
        GatewaySettings {
            listen: SocketAddr::from((Ipv4Addr::UNSPECIFIED, DEFAULT_PORT)),
            shards: None,
            io_driver: IoDriver::Auto,
            limits: Limits::default(),
            timeouts: Timeouts::default(),
            model_cost_map: CostMapSource::Bundled,
            drain_timeout: Duration::from_secs(30),
            access_log: AccessLogTarget::Off,
            health_checks: HealthChecks::default(),
            cluster: None,
            tls: None,
        }
    }
}

/// `pointwork.model_cost_map`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum CostMapSource {
    /// The copy of LiteLLM's map that ships with Pointwork.
    #[default]
    Bundled,
    /// A LiteLLM `model_prices_and_context_window.json`, resolved against the folder of the file
    /// that names it; read at every (re)load.
    File(PathBuf),
    /// `false` / `off`: no map; deployments have only what they set themselves.
    Off,
}

/// `pointwork.io_driver`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum IoDriver {
    /// io_uring where the kernel allows it, else epoll.
    #[default]
    Auto,
    Uring,
    Legacy,
}

impl IoDriver {
    pub const ALL: [IoDriver; 3] = [IoDriver::Auto, IoDriver::Uring, IoDriver::Legacy];

    /// The config spelling.
    pub fn name(self) -> &'static str {
        match self {
            IoDriver::Auto => "auto",
            IoDriver::Uring => "uring",
            IoDriver::Legacy => "legacy",
        }
    }

    pub fn from_name(name: &str) -> Option<IoDriver> {
        IoDriver::ALL.into_iter().find(|d| d.name() == name)
    }
}

/// `pointwork.limits`: what one client request may send.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    pub max_header_bytes: usize,
    pub max_headers: usize,
    pub max_body_bytes: usize,
    /// The request target (path and query), 414 beyond.
    pub max_uri_bytes: usize,
    /// Client connections one shard keeps open; new ones beyond it are closed at once while
    /// the open ones keep being served.
    pub max_connections_per_shard: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_header_bytes: 64 * 1024,
            max_headers: 100,
            max_body_bytes: 32 * 1024 * 1024,
            max_uri_bytes: 8 * 1024,
            max_connections_per_shard: 50_000,
        }
    }
}

/// `pointwork.timeouts`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timeouts {
    /// Connecting to an upstream.
    pub connect: Duration,
    /// How long an idle client connection is kept open.
    pub keepalive_idle: Duration,
    /// How long an idle pooled upstream connection is kept.
    pub upstream_idle: Duration,
    /// How long a client may take to send a whole request head once it started (408 — a
    /// slowloris trickling bytes gets no more time by trickling).
    pub request_head: Duration,
    /// How long a client may pause while sending a request body (408).
    pub request_body_idle: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: Duration::from_secs(5),
            keepalive_idle: Duration::from_secs(60),
            upstream_idle: Duration::from_secs(90),
            request_head: Duration::from_secs(10),
            request_body_idle: Duration::from_secs(30),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults() {
        let g = GatewaySettings::default();
        assert_eq!(g.listen.to_string(), "0.0.0.0:4000");
        assert_eq!(g.limits.max_header_bytes, 65536);
        assert_eq!(g.limits.max_body_bytes, 33554432);
        assert_eq!(g.timeouts.upstream_idle, Duration::from_secs(90));
    }

    #[test]
    fn io_driver_names_round_trip() {
        for d in IoDriver::ALL {
            assert_eq!(IoDriver::from_name(d.name()), Some(d));
        }
    }
}
