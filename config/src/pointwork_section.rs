//! Reads Pointwork's own `pointwork:` section. Unlike the LiteLLM sections it is strict: an
//! unknown key is an error naming the valid ones, since a typo would otherwise silently keep a
//! default.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::Path;

use pointwork_core::policy::Policy;

use crate::auth::{read_auth, Auth};
use crate::cache_read::{read_cache_bounds, CacheBounds};
use crate::check::{Checker, Fields, KeyPath};
use crate::cluster_read::{read_cluster_section, ClusterSection};
use crate::duration::DURATION;
use crate::export::TELEMETRY;
use crate::kinds::{self, Kind};
use crate::node::Node;
use crate::policies::{check_policy_ref, read_policies};
use crate::tls::{read_tls, TlsSaid, TLS};
use crate::{AccessLogTarget, CostMapSource, GatewaySettings, IoDriver};

const KEYS: [&str; 16] = [
    "listen",
    "shards",
    "io_driver",
    "limits",
    "timeouts",
    "model_cost_map",
    "drain_timeout",
    "access_log",
    "health_checks",
    "auth",
    "policies",
    "default_policy",
    "cluster",
    "cache",
    TLS,
    TELEMETRY,
];
const HEALTH_CHECK_KEYS: [&str; 3] = ["timeout", "prompt", "max_tokens"];
const LIMIT_KEYS: [&str; 5] =
    ["max_header_bytes", "max_headers", "max_body_bytes", "max_uri_bytes", "max_connections_per_shard"];
const TIMEOUT_KEYS: [&str; 5] = ["connect", "keepalive_idle", "upstream_idle", "request_head", "request_body_idle"];

/// `model_cost_map`: a file, or `false` / `off` for none (`None`).
const COST_MAP: Kind<Option<String>> = Kind {
    expected: "a file path, or false for no map",
    parse: |n| match n {
        Node::Bool(false) => Some(None),
        Node::Str(s) if s.trim() == "off" || s.trim() == "false" => Some(None),
        Node::Str(s) if !s.trim().is_empty() => Some(Some(s.clone())),
        _ => None,
    },
    secret: false,
};

/// What the `pointwork:` section says.
#[derive(Default)]
pub(crate) struct PointworkSection {
    pub(crate) gateway: GatewaySettings,
    /// On its own: unlike the gateway settings, a reload applies it.
    pub(crate) auth: Auth,
    pub(crate) policies: Vec<Policy>,
    pub(crate) default_policy: Option<String>,
    /// `pointwork.cluster`, resolved with the Redis server keys of the LiteLLM sections.
    pub(crate) cluster: Option<ClusterSection>,
    /// `pointwork.cache`, settled with `litellm_settings.cache`.
    pub(crate) cache: Option<CacheBounds>,
    /// `pointwork.tls`, resolved with LiteLLM's `SSL_*FILE_PATH` variables.
    pub(crate) tls: TlsSaid,
}

/// `dir` is the folder of the file that sets the section: relative paths are relative to it.
pub(crate) fn read_pointwork(c: &mut Checker, node: &Node, path: KeyPath, dir: &Path) -> PointworkSection {
    let mut section = PointworkSection::default();
    if matches!(node, Node::Null) {
        return section;
    }
    let Some(mut fields) = c.map(node, path) else {
        return section;
    };
    let settings = &mut section.gateway;
    if let Some(listen) = c.optional(&mut fields, "listen", &kinds::STRING) {
        match parse_listen(&listen) {
            Some(addr) => settings.listen = addr,
            None => c.error(
                fields.path.key("listen"),
                format!(r#"expected host:port with an IP address or localhost, like "0.0.0.0:4000", got {listen:?}"#),
            ),
        }
    }
    if let Some(shards) = c.optional(&mut fields, "shards", &kinds::POSITIVE_USIZE) {
        settings.shards = Some(shards);
    }
    if let Some(driver) = c.optional(&mut fields, "io_driver", &IO_DRIVER) {
        settings.io_driver = driver;
    }
    if let Some(mut limits) = c.optional_map(&mut fields, "limits") {
        let l = &mut settings.limits;
        set(c, &mut limits, "max_header_bytes", &kinds::POSITIVE_USIZE, &mut l.max_header_bytes);
        set(c, &mut limits, "max_headers", &kinds::POSITIVE_USIZE, &mut l.max_headers);
        set(c, &mut limits, "max_body_bytes", &kinds::POSITIVE_USIZE, &mut l.max_body_bytes);
        set(c, &mut limits, "max_uri_bytes", &kinds::POSITIVE_USIZE, &mut l.max_uri_bytes);
        set(c, &mut limits, "max_connections_per_shard", &kinds::POSITIVE_USIZE, &mut l.max_connections_per_shard);
        c.refuse_unknown(&limits, &LIMIT_KEYS);
    }
    if let Some(mut timeouts) = c.optional_map(&mut fields, "timeouts") {
        let t = &mut settings.timeouts;
        set(c, &mut timeouts, "connect", &DURATION, &mut t.connect);
        set(c, &mut timeouts, "keepalive_idle", &DURATION, &mut t.keepalive_idle);
        set(c, &mut timeouts, "upstream_idle", &DURATION, &mut t.upstream_idle);
        set(c, &mut timeouts, "request_head", &DURATION, &mut t.request_head);
        set(c, &mut timeouts, "request_body_idle", &DURATION, &mut t.request_body_idle);
        c.refuse_unknown(&timeouts, &TIMEOUT_KEYS);
    }
    if let Some(map) = c.optional(&mut fields, "model_cost_map", &COST_MAP) {
        settings.model_cost_map = match map {
            Some(file) => CostMapSource::File(dir.join(file.trim())),
            None => CostMapSource::Off,
        };
    }
    set(c, &mut fields, "drain_timeout", &DURATION, &mut settings.drain_timeout);
    if let Some(target) = c.optional(&mut fields, "access_log", &kinds::NON_EMPTY_STRING) {
        settings.access_log = match target.trim() {
            "off" => AccessLogTarget::Off,
            "stdout" | "-" => AccessLogTarget::Stdout,
            path => AccessLogTarget::File(dir.join(path)),
        };
    }
    if let Some(mut health) = c.optional_map(&mut fields, "health_checks") {
        let h = &mut settings.health_checks;
        set(c, &mut health, "timeout", &DURATION, &mut h.timeout);
        set(c, &mut health, "prompt", &kinds::NON_EMPTY_STRING, &mut h.prompt);
        set(c, &mut health, "max_tokens", &kinds::POSITIVE_U32, &mut h.max_tokens);
        c.refuse_unknown(&health, &HEALTH_CHECK_KEYS);
    }
    // Before `auth`, whose keys may name a policy.
    let policies = read_policies(c, &mut fields);
    let default_path = fields.path.key("default_policy");
    if let Some(name) = c.optional(&mut fields, "default_policy", &kinds::NON_EMPTY_STRING) {
        check_policy_ref(c, &policies.names, &name, &default_path);
        section.default_policy = Some(name);
    }
    if let Some(auth) = c.optional_map(&mut fields, "auth") {
        section.auth = read_auth(c, auth, dir, &policies.names);
    }
    if let Some(cluster) = c.optional_map(&mut fields, "cluster") {
        section.cluster = Some(read_cluster_section(c, cluster));
    }
    if let Some(cache) = c.optional_map(&mut fields, "cache") {
        section.cache = Some(read_cache_bounds(c, cache));
    }
    let tls_set = fields.is_set(TLS);
    match c.optional_map(&mut fields, TLS) {
        Some(tls) => section.tls = read_tls(c, tls, dir),
        // Not a map (refused): the variables must not stand in for it.
        None if tls_set => section.tls = TlsSaid::Section(None),
        None => {}
    }
    section.policies = policies.list;
    // `telemetry` is the exporters' (`export.rs`).
    fields.take(TELEMETRY);
    c.refuse_unknown(&fields, &KEYS);
    section
}

/// Overwrites `target` when the key is set and valid.
fn set<T>(c: &mut Checker, fields: &mut Fields, key: &str, kind: &Kind<T>, target: &mut T) {
    if let Some(value) = c.optional(fields, key, kind) {
        *target = value;
    }
}

const IO_DRIVER: Kind<IoDriver> = Kind {
    expected: "one of auto, uring, legacy",
    parse: |n| match n {
        Node::Str(s) => IoDriver::from_name(s.trim()),
        _ => None,
    },
    secret: false,
};

/// `0.0.0.0:4000`, `[::]:4000`, or `localhost:4000`; names are not resolved (no DNS in config).
fn parse_listen(text: &str) -> Option<SocketAddr> {
    let text = text.trim();
    if let Ok(addr) = text.parse() {
        return Some(addr);
    }
    let port = text.strip_prefix("localhost:")?.parse().ok()?;
    Some(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_addresses() {
        assert_eq!(parse_listen("127.0.0.1:8080"), Some("127.0.0.1:8080".parse().unwrap()));
        assert_eq!(parse_listen("[::]:4000"), Some("[::]:4000".parse().unwrap()));
        assert_eq!(parse_listen("localhost:9"), Some("127.0.0.1:9".parse().unwrap()));
        assert_eq!(parse_listen("example.com:80"), None);
        assert_eq!(parse_listen("4000"), None);
    }
}
