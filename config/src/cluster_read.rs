//! Where Redis is, read as LiteLLM reads it, and `pointwork.cluster`.
//!
//! Three places can name the server: `router_settings.redis_*` (the Router's arguments),
//! `litellm_settings.cache_params` of a Redis response cache (which `cache_read.rs` tells), and — for what those leave out — the
//! `REDIS_*` environment variables LiteLLM's Redis client reads. `router_settings` wins over
//! `cache_params`; within one place a URL wins over host and port; a host or URL in the config
//! wins over `REDIS_URL`, which wins over `REDIS_HOST`. The variables alone turn nothing on
//! (LiteLLM reads them only for a Redis it was told to use); `pointwork.cluster` alone does.
//! The server keys are read only once it is known that Redis is on: with
//! `pointwork.cluster.enabled: false`, a variable they name need not be set.

use std::time::Duration;

use crate::check::{Checker, Fields, KeyPath};
use crate::cluster::{
    check_host, parse_port, parse_redis_url, ClusterSettings, HealthCheckSharing, RedisServer, RedisUrl,
    DEFAULT_KEY_PREFIX, DEFAULT_REDIS_PORT, DEFAULT_SYNC_INTERVAL, SYNC_INTERVAL_RANGE,
};
use crate::duration::DURATION;
use crate::kinds::{self, Kind};
use crate::node::Node;

/// What a server key says, whichever place names it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Url,
    Host,
    Port,
    Password,
    Username,
    Db,
    Ssl,
}

/// `router_settings`' keys for the server (LiteLLM's Router arguments).
const ROUTER_KEYS: [(&str, Role); 5] = [
    ("redis_url", Role::Url),
    ("redis_host", Role::Host),
    ("redis_port", Role::Port),
    ("redis_password", Role::Password),
    ("redis_db", Role::Db),
];
/// A Redis cache's keys for the server (`redis_url` as LiteLLM's Redis client also accepts it).
const CACHE_KEYS: [(&str, Role); 8] = [
    ("url", Role::Url),
    ("redis_url", Role::Url),
    ("host", Role::Host),
    ("port", Role::Port),
    ("password", Role::Password),
    ("username", Role::Username),
    ("db", Role::Db),
    ("ssl", Role::Ssl),
];
const CLUSTER_KEYS: [&str; 5] = ["enabled", "instance", "key_prefix", "sync_interval", "health_checks"];

/// The server keys one place sets, taken from its section (so they are not warned as ignored)
/// and read once Redis is known to be on.
pub(crate) struct ServerKeys<'n> {
    /// The section: `router_settings` or `litellm_settings.cache_params`.
    section: KeyPath,
    /// What turned Redis on: the first key set (`router_settings`) or `cache_params`.
    on: KeyPath,
    keys: Vec<(Role, &'n Node, KeyPath)>,
    /// The keys to set, for the error when nothing names a host.
    hint: &'static str,
}

impl<'n> ServerKeys<'n> {
    /// `router_settings.redis_*`; `None` when none is set.
    pub(crate) fn take_router(fields: &mut Fields<'n>) -> Option<ServerKeys<'n>> {
        let keys = take_keys(fields, &ROUTER_KEYS);
        let on = keys.first()?.2.clone();
        Some(ServerKeys { section: fields.path.clone(), on, keys, hint: "redis_host or redis_url" })
    }

    /// The server keys of a Redis response cache: those of its `cache_params` (`None` when it
    /// has none, e.g. `litellm_settings.cache: true` alone, which names `cache`). Whether the
    /// cache is Redis is `cache_read.rs`'s to decide; its other keys are read there too.
    pub(crate) fn take_cache(params: Option<&mut Fields<'n>>, cache: &KeyPath) -> ServerKeys<'n> {
        let (section, keys) = match params {
            Some(params) => (params.path.clone(), take_keys(params, &CACHE_KEYS)),
            None => (cache.clone(), Vec::new()),
        };
        ServerKeys { on: section.clone(), section, keys, hint: "host or url" }
    }

    /// Whether these keys name a host (a host or a URL), not only a port or a password.
    pub(crate) fn name_a_host(&self) -> bool {
        self.keys.iter().any(|(role, _, _)| matches!(role, Role::Url | Role::Host))
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

/// Whether `key` is one of a Redis cache's server keys (`host`, `url`, …).
pub(crate) fn is_cache_server_key(key: &str) -> bool {
    CACHE_KEYS.iter().any(|(k, _)| *k == key)
}

fn take_keys<'n>(fields: &mut Fields<'n>, names: &[(&str, Role)]) -> Vec<(Role, &'n Node, KeyPath)> {
    let mut keys = Vec::new();
    for &(key, role) in names {
        if let Some((node, path)) = fields.take(key).filter(|(n, _)| !matches!(n, Node::Null)) {
            keys.push((role, node, path));
        }
    }
    keys
}

/// The places in the LiteLLM sections that name a Redis server.
#[derive(Default)]
pub(crate) struct RedisPlaces<'n> {
    /// `router_settings.redis_*`.
    pub(crate) router: Option<ServerKeys<'n>>,
    /// `litellm_settings.cache_params` of a Redis cache.
    pub(crate) cache: Option<ServerKeys<'n>>,
}

/// `pointwork.cluster`, checked.
pub(crate) struct ClusterSection {
    pub(crate) path: KeyPath,
    /// `enabled` and its path.
    enabled: Option<(bool, KeyPath)>,
    instance: Option<String>,
    key_prefix: Option<String>,
    sync_interval: Option<Duration>,
    health_checks: Option<HealthCheckSharing>,
}

impl ClusterSection {
    /// `enabled: false`.
    pub(crate) fn is_disabled(&self) -> bool {
        matches!(self.enabled, Some((false, _)))
    }
}

/// Reads `pointwork.cluster`: its values are checked here, whether Redis is on is decided with
/// the other places in [`resolve_cluster`].
pub(crate) fn read_cluster_section(c: &mut Checker, mut fields: Fields) -> ClusterSection {
    let enabled = c.optional(&mut fields, "enabled", &kinds::BOOL).map(|on| (on, fields.path.key("enabled")));
    let section = ClusterSection {
        path: fields.path.clone(),
        enabled,
        instance: c.optional(&mut fields, "instance", &INSTANCE),
        key_prefix: c.optional(&mut fields, "key_prefix", &KEY_PREFIX),
        sync_interval: c.optional(&mut fields, "sync_interval", &SYNC_INTERVAL),
        health_checks: c.optional(&mut fields, "health_checks", &HEALTH_CHECKS),
    };
    c.refuse_unknown(&fields, &CLUSTER_KEYS);
    section
}

const KEY_PREFIX: Kind<String> = Kind {
    expected: "1 to 64 of the characters A-Z a-z 0-9 _ . : -",
    parse: |n| match n {
        Node::Str(s) if (1..=64).contains(&s.len()) && s.bytes().all(|b| is_name_byte(b, b"_.:-")) => Some(s.clone()),
        _ => None,
    },
    secret: false,
};

const INSTANCE: Kind<String> = Kind {
    expected: "a name of 1 to 128 of the characters A-Z a-z 0-9 _ . : @ -",
    parse: |n| match n {
        Node::Str(s) if (1..=128).contains(&s.len()) && s.bytes().all(|b| is_name_byte(b, b"_.:@-")) => Some(s.clone()),
        Node::Int(i) if *i >= 0 => Some(i.to_string()),
        _ => None,
    },
    secret: false,
};

const SYNC_INTERVAL: Kind<Duration> = Kind {
    expected: r#"a duration from 10ms to 10s, like "100ms""#,
    parse: |n| (DURATION.parse)(n).filter(|d| (SYNC_INTERVAL_RANGE.0..=SYNC_INTERVAL_RANGE.1).contains(d)),
    secret: false,
};

const HEALTH_CHECKS: Kind<HealthCheckSharing> = Kind {
    expected: "one of every_instance, one_instance",
    parse: |n| match n {
        Node::Str(s) => HealthCheckSharing::from_name(s.trim()),
        _ => None,
    },
    secret: false,
};

fn is_name_byte(b: u8, punctuation: &[u8]) -> bool {
    b.is_ascii_alphanumeric() || punctuation.contains(&b)
}

/// A URL's text: a secret (its user information may hold the password).
const URL: Kind<String> = Kind { expected: "a redis:// or rediss:// URL", parse: kinds::SECRET.parse, secret: true };

const HOST: Kind<String> = Kind {
    expected: "a host name or IP address",
    parse: |n| match n {
        Node::Str(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
        _ => None,
    },
    secret: false,
};

/// A string, or digits YAML read as an integer.
const PASSWORD: Kind<String> = Kind {
    expected: "a string",
    parse: |n| match n {
        Node::Int(i) => Some(i.to_string()),
        other => (kinds::SECRET.parse)(other),
    },
    secret: true,
};

/// An integer or a numeric string (a variable's value is a string).
const PORT: Kind<u16> = Kind {
    expected: "a port (an integer from 1 to 65535)",
    parse: |n| match n {
        Node::Int(i) => u16::try_from(*i).ok().filter(|p| *p > 0),
        Node::Str(s) => parse_port(s),
        _ => None,
    },
    secret: false,
};

const DB: Kind<i64> = Kind {
    expected: "a non-negative integer",
    parse: |n| (kinds::NON_NEGATIVE_INT.parse)(n).and_then(|i| i64::try_from(i).ok()),
    secret: false,
};

/// `REDIS_SSL`: LiteLLM's spellings of true and false, and `1` / `0`.
const FLAG: Kind<bool> = Kind {
    expected: "true or false",
    parse: |n| match n {
        Node::Str(s) if s.trim() == "1" => Some(true),
        Node::Str(s) if s.trim() == "0" => Some(false),
        other => (kinds::BOOL.parse)(other),
    },
    secret: false,
};

/// What one place says about the server, read.
#[derive(Default)]
struct Said {
    url: Option<(RedisUrl, KeyPath)>,
    host: Option<(String, KeyPath)>,
    port: Option<(u16, KeyPath)>,
    password: Option<String>,
    username: Option<String>,
    db: Option<i64>,
    ssl: Option<(bool, KeyPath)>,
    /// A host that is a placeholder (a documentation example's `<your redis host>`).
    placeholder: Option<(String, KeyPath)>,
}

impl Said {
    fn read(c: &mut Checker, place: &ServerKeys) -> Said {
        let mut said = Said::default();
        let mut seen: Vec<(Role, &KeyPath)> = Vec::new();
        for (role, node, path) in &place.keys {
            if let Some((_, first)) = seen.iter().find(|(r, _)| r == role) {
                c.warn(path, format!("not read: {first} is set too and wins"));
                continue;
            }
            seen.push((*role, path));
            let p = path.clone();
            match role {
                Role::Url => {
                    if let Some(text) = c.read(node, path, &URL) {
                        match parse_redis_url(&text) {
                            Ok(url) => said.url = Some((url, p)),
                            Err(message) => c.error(path, message),
                        }
                    }
                }
                Role::Host => {
                    if let Some(host) = c.read(node, path, &HOST) {
                        match check_host(&host) {
                            Ok(()) => said.host = Some((unbracket(&host), p)),
                            // Neither a URL nor `host:port`: no address at all, so a placeholder.
                            Err(_) if !host.contains(':') => said.placeholder = Some((host, p)),
                            Err(message) => c.error(path, message),
                        }
                    }
                }
                Role::Port => said.port = c.read(node, path, &PORT).map(|port| (port, p)),
                Role::Password => said.password = c.read(node, path, &PASSWORD).filter(|s| !s.is_empty()),
                Role::Username => said.username = c.read(node, path, &kinds::STRING).filter(|s| !s.is_empty()),
                Role::Db => said.db = c.read(node, path, &DB),
                Role::Ssl => said.ssl = c.read(node, path, &kinds::BOOL).map(|on| (on, p)),
            }
        }
        said
    }

    /// The host (and port, TLS) this place names itself, to compare with the server used.
    fn target(&self) -> Option<(&str, u16, &KeyPath)> {
        match (&self.url, &self.host) {
            (Some((url, path)), _) => Some((&url.host, url.port.or(self.port()).unwrap_or(DEFAULT_REDIS_PORT), path)),
            (None, Some((host, path))) => Some((host, self.port().unwrap_or(DEFAULT_REDIS_PORT), path)),
            (None, None) => None,
        }
    }

    fn port(&self) -> Option<u16> {
        self.port.as_ref().map(|(p, _)| *p)
    }
}

fn unbracket(host: &str) -> String {
    host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host).to_string()
}

/// What `cluster_off` says of a Redis host that is a placeholder (`check --strict` refuses it).
pub(crate) const PLACEHOLDER: &str = "is a placeholder, not a host name or address";

/// The server and cluster settings, or why Redis is off although the config names it (the
/// summary says so); both `None` when nothing names Redis.
pub(crate) fn resolve_cluster(
    c: &mut Checker,
    places: RedisPlaces,
    section: Option<ClusterSection>,
) -> (Option<ClusterSettings>, Option<String>) {
    let places: Vec<ServerKeys> = [places.router, places.cache].into_iter().flatten().collect();
    if let Some(ClusterSection { enabled: Some((false, path)), .. }) = &section {
        let named = places.first().map_or(String::new(), |p| format!("; {} names Redis", p.section));
        return (None, Some(format!("{path}: false{named}")));
    }
    if places.is_empty() && section.is_none() {
        return (None, None);
    }
    let errors = c.error_count();
    let said: Vec<Said> = places.iter().map(|p| Said::read(c, p)).collect();
    if c.error_count() > errors {
        return (None, None);
    }
    // LiteLLM starts and fails to reach it; here Redis is off (`check --strict` refuses).
    if let Some((host, path)) = said.iter().find_map(|s| s.placeholder.as_ref()) {
        let why = format!("{path} {host:?} {PLACEHOLDER}");
        c.warn(path, format!("{host:?} {PLACEHOLDER}: Redis is off, each instance runs on its own state"));
        return (None, Some(why));
    }
    let chosen = said.iter().position(|s| s.target().is_some()).unwrap_or(0);
    let (on, hint) = match places.get(chosen) {
        Some(place) => (place.on.to_string(), place.hint),
        // Only `pointwork.cluster` turned Redis on.
        None => (
            section.as_ref().map_or_else(String::new, |s| s.path.to_string()),
            "router_settings.redis_host or router_settings.redis_url",
        ),
    };
    let empty = Said::default();
    let Some((redis, named_by)) = server(c, said.get(chosen).unwrap_or(&empty), &on, hint) else {
        return (None, None);
    };
    // One Redis serves the cluster: say so where another place names a different one.
    let used = redis.display();
    for (_, (place, other)) in places.iter().zip(&said).enumerate().filter(|(i, _)| *i != chosen) {
        match other.target() {
            Some((host, port, _)) if (host, port) == (redis.host.as_str(), redis.port) => {}
            Some((host, port, path)) => c.warn(
                path,
                format!("not used: Pointwork shares state through one Redis, {used} ({named_by}), not {host}:{port}"),
            ),
            None if !place.keys.is_empty() => {
                c.warn(&place.on, format!("not read: Pointwork shares state through one Redis, {used} ({named_by})"))
            }
            None => {}
        }
    }
    let (instance, key_prefix, sync_interval, health_checks) =
        section.map_or((None, None, None, None), |s| (s.instance, s.key_prefix, s.sync_interval, s.health_checks));
    let settings = ClusterSettings {
        redis,
        instance,
        key_prefix: key_prefix.unwrap_or_else(|| DEFAULT_KEY_PREFIX.to_string()),
        sync_interval: sync_interval.unwrap_or(DEFAULT_SYNC_INTERVAL),
        health_checks: health_checks.unwrap_or_default(),
        named_by,
    };
    (Some(settings), None)
}

/// The server `said` names, what it leaves out filled in from the `REDIS_*` variables, and
/// what named it. `on` is what turned Redis on, for the error when nothing names a host.
fn server(c: &mut Checker, said: &Said, on: &str, hint: &str) -> Option<(RedisServer, String)> {
    let env_url = || KeyPath::root(None).key("REDIS_URL (env)");
    let (url, named_by) = match (&said.url, &said.host) {
        (Some((url, path)), host) => {
            if let Some((_, host_path)) = host {
                c.warn(host_path, format!("not read: {path} is set too, and the URL wins"));
            }
            if let (Some((_, port_path)), Some(_)) = (&said.port, url.port) {
                c.warn(port_path, format!("not read: {path} is set too, and the URL's port wins"));
            }
            (Some(url_parts(c, url, path)), path.to_string())
        }
        (None, Some((_, path))) => (None, path.to_string()),
        (None, None) => match env(c, "REDIS_URL") {
            Some(text) => match parse_redis_url(&text) {
                Ok(url) => (Some(url_parts(c, &url, env_url())), format!("{on} and REDIS_URL")),
                Err(message) => {
                    c.error(env_url(), message);
                    return None;
                }
            },
            None => (None, format!("{on} and REDIS_HOST")),
        },
    };
    if let (Some(_), Some((_, ssl_path))) = (&url, &said.ssl) {
        c.warn(ssl_path, "not read: a URL's scheme (redis:// or rediss://) says whether TLS is used");
    }
    let host = match (&url, &said.host) {
        (Some(u), _) => u.host.clone(),
        (None, Some((host, _))) => host.clone(),
        (None, None) => {
            let Some(host) = env(c, "REDIS_HOST") else {
                c.error(
                    on,
                    format!("Redis is turned on but no server is named: set {hint} (or REDIS_URL / REDIS_HOST)"),
                );
                return None;
            };
            if let Err(message) = check_host(host.trim()) {
                c.error(KeyPath::root(None).key("REDIS_HOST (env)"), message);
                return None;
            }
            unbracket(host.trim())
        }
    };
    // A variable is read (and may be refused) only for what the config leaves out.
    let errors = c.error_count();
    let u = url.as_ref();
    let port = u.and_then(|u| u.port).or(said.port()).or_else(|| env_value(c, "REDIS_PORT", &PORT));
    let db = u.and_then(|u| u.db).or(said.db).or_else(|| env_value(c, "REDIS_DB", &DB));
    let tls = match u {
        Some(u) => u.tls,
        None => said.ssl.as_ref().map(|(on, _)| *on).or_else(|| env_value(c, "REDIS_SSL", &FLAG)).unwrap_or(false),
    };
    if c.error_count() > errors {
        return None;
    }
    let server = RedisServer {
        tls,
        host,
        port: port.unwrap_or(DEFAULT_REDIS_PORT),
        username: u.and_then(|u| u.username.clone()).or(said.username.clone()).or_else(|| env(c, "REDIS_USERNAME")),
        password: u.and_then(|u| u.password.clone()).or(said.password.clone()).or_else(|| env(c, "REDIS_PASSWORD")),
        db: db.unwrap_or(0),
    };
    Some((server, named_by))
}

/// A URL's parts; its query parameters are not read (a warning names them, not their values).
fn url_parts(c: &mut Checker, url: &RedisUrl, path: impl std::fmt::Display) -> RedisUrl {
    if !url.query_names.is_empty() {
        c.warn(path, format!("the URL's query parameters are not read: {}", url.query_names.join(", ")));
    }
    RedisUrl { query_names: Vec::new(), ..url.clone() }
}

/// A variable that is set to something (an empty value counts as unset).
fn env(c: &Checker, name: &str) -> Option<String> {
    c.env.lookup(name).filter(|v| !v.trim().is_empty())
}

/// A variable read as `kind`; an error names it (`REDIS_PORT (env): expected …`).
fn env_value<T>(c: &mut Checker, name: &str, kind: &Kind<T>) -> Option<T> {
    let value = env(c, name)?;
    c.read(&Node::Str(value), &KeyPath::root(None).key(&format!("{name} (env)")), kind)
}
