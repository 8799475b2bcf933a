//! The `switchyard:` section's settings: how the gateway listens, how many shards it runs, which
//! IO driver it uses, and its limits and timeouts. LiteLLM has no such section.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

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
    /// `switchyard.model_cost_map`: a LiteLLM `model_prices_and_context_window.json`, resolved
    /// against the folder of the file that names it. Loading reads it and fills in each
    /// deployment's prices.
    pub model_cost_map: Option<PathBuf>,
}

impl Default for GatewaySettings {
    fn default() -> Self {
        GatewaySettings {
            listen: SocketAddr::from((Ipv4Addr::UNSPECIFIED, DEFAULT_PORT)),
            shards: None,
            io_driver: IoDriver::Auto,
            limits: Limits::default(),
            timeouts: Timeouts::default(),
            model_cost_map: None,
        }
    }
}

/// `switchyard.io_driver`.
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

/// `switchyard.limits`: what one client request may send.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    pub max_header_bytes: usize,
    pub max_headers: usize,
    pub max_body_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_header_bytes: 64 * 1024, max_headers: 100, max_body_bytes: 32 * 1024 * 1024 }
    }
}

/// `switchyard.timeouts`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timeouts {
    /// Connecting to an upstream.
    pub connect: Duration,
    /// How long an idle client connection is kept open.
    pub keepalive_idle: Duration,
    /// How long an idle pooled upstream connection is kept.
    pub upstream_idle: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: Duration::from_secs(5),
            keepalive_idle: Duration::from_secs(60),
            upstream_idle: Duration::from_secs(90),
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
