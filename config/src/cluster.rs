//! Several instances sharing routing state through Redis (issue 17): where the Redis server is
//! ([`RedisServer`]) and how this instance uses it ([`ClusterSettings`]). Reading them from the
//! config is `cluster_read.rs`; this file holds the types and the `redis://` URLs.

use std::fmt;
use std::time::Duration;

/// Redis's port when neither the config nor `REDIS_PORT` names one.
pub const DEFAULT_REDIS_PORT: u16 = 6379;
/// `pointwork.cluster.key_prefix` when not set.
pub const DEFAULT_KEY_PREFIX: &str = "pointwork";
/// `pointwork.cluster.sync_interval` when not set.
pub const DEFAULT_SYNC_INTERVAL: Duration = Duration::from_millis(100);
/// The shortest and the longest `pointwork.cluster.sync_interval`.
pub const SYNC_INTERVAL_RANGE: (Duration, Duration) = (Duration::from_millis(10), Duration::from_secs(10));

/// Where Redis is and how this instance uses it; `None` in
/// [`GatewaySettings`](crate::GatewaySettings) = no Redis (each instance on its own state).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterSettings {
    pub redis: RedisServer,
    /// `pointwork.cluster.instance`: this instance's stable name (its counters in Redis are kept
    /// under it, so a restarted instance must keep its name). `None` = the gateway derives one
    /// (hostname and listen port).
    pub instance: Option<String>,
    /// `pointwork.cluster.key_prefix` (default `pointwork`): every Redis key and channel starts
    /// with it and a colon. Only `[A-Za-z0-9_.:-]`, 1 to 64 of them.
    pub key_prefix: String,
    /// `pointwork.cluster.sync_interval` (default 100ms, 10ms to 10s): how often shared counters
    /// are reconciled.
    pub sync_interval: Duration,
    /// `pointwork.cluster.health_checks` (default `every_instance`): whether every instance
    /// probes the deployments itself, or one at a time does (a lease in Redis) and the others
    /// read its results.
    pub health_checks: HealthCheckSharing,
    /// The key path that named the Redis server, e.g. `router_settings.redis_host`,
    /// `litellm_settings.cache_params.url`, or `pointwork.cluster and REDIS_URL` when the
    /// environment named it — for logs and `pointwork check`.
    pub named_by: String,
}

/// `pointwork.cluster.health_checks`: who runs the background health checks of a cluster.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HealthCheckSharing {
    /// Every instance probes every deployment itself (as without Redis); the results are shared
    /// too, so a deployment is probed once per instance and round.
    #[default]
    EveryInstance,
    /// The instance holding the lease `{key_prefix}:lease:health_checks` probes, the others read
    /// its results; with Redis out of reach every instance probes for itself.
    OneInstance,
}

impl HealthCheckSharing {
    pub const ALL: [HealthCheckSharing; 2] = [HealthCheckSharing::EveryInstance, HealthCheckSharing::OneInstance];

    /// The config spelling.
    pub fn name(self) -> &'static str {
        match self {
            HealthCheckSharing::EveryInstance => "every_instance",
            HealthCheckSharing::OneInstance => "one_instance",
        }
    }

    pub fn from_name(name: &str) -> Option<HealthCheckSharing> {
        HealthCheckSharing::ALL.into_iter().find(|h| h.name() == name)
    }
}

/// One Redis server. `Debug` never shows the password.
#[derive(Clone, PartialEq, Eq)]
pub struct RedisServer {
    /// `rediss://`: TLS.
    pub tls: bool,
    /// A host name or an IP address (an IPv6 address without brackets).
    pub host: String,
    pub port: u16,
    pub username: Option<String>,
    pub password: Option<String>,
    /// The logical database (`SELECT`), 0 or more.
    pub db: i64,
}

impl RedisServer {
    /// `redis://[user[:password]@]host:port/db` or `rediss://…`: the URL the client connects
    /// with (user and password percent-encoded).
    pub fn url(&self) -> String {
        self.write_url(true)
    }

    /// The same without the password, for logs.
    pub fn display(&self) -> String {
        self.write_url(false)
    }

    fn write_url(&self, with_password: bool) -> String {
        let scheme = if self.tls { "rediss" } else { "redis" };
        let mut userinfo = String::new();
        if let Some(user) = &self.username {
            userinfo.push_str(&percent_encode(user));
        }
        if let (true, Some(password)) = (with_password, &self.password) {
            userinfo.push(':');
            userinfo.push_str(&percent_encode(password));
        }
        if !userinfo.is_empty() {
            userinfo.push('@');
        }
        let host = if self.host.contains(':') { format!("[{}]", self.host) } else { self.host.clone() };
        format!("{scheme}://{userinfo}{host}:{}/{}", self.port, self.db)
    }
}

impl fmt::Debug for RedisServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisServer")
            .field("tls", &self.tls)
            .field("host", &self.host)
            .field("port", &self.port)
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "***"))
            .field("db", &self.db)
            .finish()
    }
}

/// Every byte but RFC 3986's unreserved characters as `%XX`.
fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `%XX` sequences decoded; `None` when one is malformed or the result is not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// What a `redis://` URL says. Parts it leaves out are `None`, for the other keys to fill in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RedisUrl {
    pub(crate) tls: bool,
    pub(crate) host: String,
    pub(crate) port: Option<u16>,
    pub(crate) username: Option<String>,
    pub(crate) password: Option<String>,
    pub(crate) db: Option<i64>,
    /// The names of query parameters (not read; their values are never shown).
    pub(crate) query_names: Vec<String>,
}

/// Parses `redis[s]://[[user][:password]@]host[:port][/db][?query]`. An error never repeats the
/// user information (it holds the password).
pub(crate) fn parse_redis_url(text: &str) -> Result<RedisUrl, String> {
    let text = text.trim();
    let Some((scheme, rest)) = text.split_once("://") else {
        return Err("expected a redis:// or rediss:// URL (like redis://host:6379/0)".to_string());
    };
    let tls = match scheme.to_ascii_lowercase().as_str() {
        "redis" => false,
        "rediss" => true,
        "unix" | "redis+unix" | "redis+socket" | "rediss+unix" => {
            return Err(format!(
                "a {scheme}:// URL names a Unix socket, which Pointwork does not support: give a redis:// or rediss:// URL with a host"
            ))
        }
        other => return Err(format!("expected a redis:// or rediss:// URL, got a {other}:// URL")),
    };
    let (rest, query) = match rest.split_once('?') {
        Some((rest, query)) => (rest, Some(query)),
        None => (rest, None),
    };
    let rest = rest.split_once('#').map_or(rest, |(r, _)| r);
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, ""),
    };
    let (userinfo, hostport) = match authority.rfind('@') {
        Some(i) => (Some(&authority[..i]), &authority[i + 1..]),
        None => (None, authority),
    };
    let (mut username, mut password) = (None, None);
    if let Some(userinfo) = userinfo {
        let (user, pass) = match userinfo.split_once(':') {
            Some((u, p)) => (u, Some(p)),
            None => (userinfo, None),
        };
        let decode = |part: &str| {
            percent_decode(part)
                .ok_or_else(|| "the user or password in the URL is not valid percent-encoding".to_string())
        };
        username = Some(decode(user)?).filter(|u| !u.is_empty());
        password = pass.map(decode).transpose()?.filter(|p| !p.is_empty());
    }
    let (host, port) = split_host_port(hostport)?;
    let db = match path.trim_end_matches('/') {
        "" => None,
        db => Some(
            db.parse::<i64>()
                .ok()
                .filter(|d| *d >= 0)
                .ok_or_else(|| format!("the database after the host must be a non-negative integer, got {db:?}"))?,
        ),
    };
    let query_names = query
        .into_iter()
        .flat_map(|q| q.split('&'))
        .filter(|p| !p.is_empty())
        .map(|p| p.split_once('=').map_or(p, |(name, _)| name).to_string())
        .collect();
    Ok(RedisUrl { tls, host, port, username, password, db, query_names })
}

/// `host`, `host:port`, `[v6]`, `[v6]:port`.
fn split_host_port(text: &str) -> Result<(String, Option<u16>), String> {
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest.split_once(']').ok_or("the URL's IPv6 address has no closing ]")?;
        match after {
            "" => (host, None),
            _ => (host, Some(after.strip_prefix(':').ok_or("expected :port after the URL's IPv6 address")?)),
        }
    } else {
        match text.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (text, None),
        }
    };
    if host.is_empty() {
        return Err("the URL names no host".to_string());
    }
    check_host(host)?;
    let port = match port {
        None | Some("") => None,
        Some(p) => Some(parse_port(p).ok_or_else(|| format!("the URL's port must be 1 to 65535, got {p:?}"))?),
    };
    Ok((host.to_string(), port))
}

/// A port from 1 to 65535.
pub(crate) fn parse_port(text: &str) -> Option<u16> {
    text.trim().parse::<u16>().ok().filter(|p| *p > 0)
}

/// A host name (letters, digits, `-`, `_`, `.`) or an IP address (IPv6 with or without brackets).
pub(crate) fn check_host(host: &str) -> Result<(), String> {
    if host.contains("://") {
        return Err(format!("expected a host name or address, got a URL ({})", url_scheme_only(host)));
    }
    let bare = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
    if bare.parse::<std::net::IpAddr>().is_ok() {
        return Ok(());
    }
    let is_name = !host.is_empty()
        && host.len() <= 253
        && host.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if is_name {
        Ok(())
    } else if host.contains(':') {
        Err(format!("expected a host name or address without a port, got {host:?}"))
    } else {
        Err(format!("expected a host name or IP address, got {host:?}"))
    }
}

/// `"redis://…"` for a message that must not repeat a URL's user information.
fn url_scheme_only(url: &str) -> String {
    url.split_once("://").map_or_else(|| "…".to_string(), |(scheme, _)| format!("{scheme}://…"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server() -> RedisServer {
        RedisServer { tls: false, host: "h".into(), port: 6379, username: None, password: None, db: 0 }
    }

    #[test]
    fn urls_percent_encode_the_user_and_password() {
        let s = RedisServer {
            tls: true,
            host: "cache.internal".into(),
            port: 6380,
            username: Some("app user".into()),
            password: Some("p@ss:w/rd%".into()),
            db: 2,
        };
        assert_eq!(s.url(), "rediss://app%20user:p%40ss%3Aw%2Frd%25@cache.internal:6380/2");
        assert_eq!(s.display(), "rediss://app%20user@cache.internal:6380/2");
        let only_password = RedisServer { password: Some("pw".into()), ..server() };
        assert_eq!(only_password.url(), "redis://:pw@h:6379/0");
        assert_eq!(only_password.display(), "redis://h:6379/0");
        let v6 = RedisServer { host: "::1".into(), ..server() };
        assert_eq!(v6.url(), "redis://[::1]:6379/0");
    }

    #[test]
    fn a_url_round_trips_through_the_parser() {
        let s = RedisServer { username: Some("ü s".into()), password: Some("a:b@c/d".into()), ..server() };
        let parsed = parse_redis_url(&s.url()).unwrap();
        assert_eq!(parsed.username.as_deref(), Some("ü s"));
        assert_eq!(parsed.password.as_deref(), Some("a:b@c/d"));
        assert_eq!((parsed.host.as_str(), parsed.port, parsed.db), ("h", Some(6379), Some(0)));
    }

    #[test]
    fn debug_hides_the_password() {
        let s = RedisServer { password: Some("hunter2-secret".into()), ..server() };
        let debug = format!("{s:?}");
        assert!(!debug.contains("hunter2"), "{debug}");
        assert!(debug.contains(r#"password: Some("***")"#), "{debug}");
    }

    #[test]
    fn urls_are_parsed() {
        let u = parse_redis_url("rediss://default:pw@cache:6380/3?ssl_cert_reqs=none").unwrap();
        assert_eq!(
            u,
            RedisUrl {
                tls: true,
                host: "cache".into(),
                port: Some(6380),
                username: Some("default".into()),
                password: Some("pw".into()),
                db: Some(3),
                query_names: vec!["ssl_cert_reqs".into()],
            }
        );
        let bare = parse_redis_url("redis://localhost").unwrap();
        assert_eq!((bare.port, bare.db, bare.username, bare.password), (None, None, None, None));
        assert_eq!(parse_redis_url("redis://[::1]:7000/").unwrap().host, "::1");
        assert_eq!(parse_redis_url("redis://:pw@h").unwrap().password.as_deref(), Some("pw"));
    }

    #[test]
    fn bad_urls_say_why_without_the_password() {
        let err = |url: &str| parse_redis_url(url).unwrap_err();
        assert_eq!(err("http://h:1"), "expected a redis:// or rediss:// URL, got a http:// URL");
        assert!(err("unix:///tmp/redis.sock").contains("Unix socket"));
        assert!(err("redis+unix:///tmp/redis.sock").contains("Unix socket"));
        assert_eq!(err("redis://:pw@/0"), "the URL names no host");
        assert_eq!(err("redis://:pw@h:0"), r#"the URL's port must be 1 to 65535, got "0""#);
        assert_eq!(err("redis://:pw@h:70000"), r#"the URL's port must be 1 to 65535, got "70000""#);
        assert_eq!(err("redis://:pw@h/x"), r#"the database after the host must be a non-negative integer, got "x""#);
        assert_eq!(err("redis://:pw@h/-1"), r#"the database after the host must be a non-negative integer, got "-1""#);
        assert_eq!(err("cache:6379"), "expected a redis:// or rediss:// URL (like redis://host:6379/0)");
        assert!(!err("redis://:s3cret%zz@h").contains("s3cret"));
    }

    #[test]
    fn hosts() {
        assert_eq!(check_host("cache-1.internal"), Ok(()));
        assert_eq!(check_host("10.0.0.7"), Ok(()));
        assert_eq!(check_host("::1"), Ok(()));
        assert_eq!(check_host("[::1]"), Ok(()));
        assert_eq!(
            check_host("cache:6379"),
            Err(r#"expected a host name or address without a port, got "cache:6379""#.into())
        );
        assert_eq!(check_host("redis://u:pw@h"), Err("expected a host name or address, got a URL (redis://…)".into()));
        assert_eq!(check_host("a b"), Err(r#"expected a host name or IP address, got "a b""#.into()));
    }
}
