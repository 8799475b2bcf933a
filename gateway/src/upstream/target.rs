//! Where a deployment's requests go: its `api_base` parsed once, at snapshot time.

use std::fmt;
use std::net::{SocketAddr, ToSocketAddrs};

/// A parsed upstream base URL, shared by the deployments that use it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub tls: bool,
    pub host: String,
    pub port: u16,
    /// The path of `api_base` without a trailing slash, e.g. `/v1` (may be empty).
    pub path_prefix: String,
    /// The `Host` header value.
    pub authority: String,
    /// The pool key: `scheme://host:port`.
    pub pool_key: String,
    /// Resolved addresses (resolved off the hot path; empty when resolution failed).
    pub addrs: Vec<SocketAddr>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TargetError(pub String);

impl fmt::Display for TargetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Target {
    /// Parses `http(s)://host[:port][/path]` and resolves the host.
    pub fn parse(api_base: &str) -> Result<Target, TargetError> {
        let (tls, rest) = if let Some(r) = api_base.strip_prefix("https://") {
            (true, r)
        } else if let Some(r) = api_base.strip_prefix("http://") {
            (false, r)
        } else {
            return Err(TargetError(format!("{api_base}: expected an http:// or https:// URL")));
        };
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        };
        let (host, port) = split_host_port(authority, if tls { 443 } else { 80 })
            .ok_or_else(|| TargetError(format!("{api_base}: invalid host or port")))?;
        if host.is_empty() {
            return Err(TargetError(format!("{api_base}: missing host")));
        }
        let addrs = resolve(&host, port);
        let scheme = if tls { "https" } else { "http" };
        Ok(Target {
            tls,
            pool_key: format!("{scheme}://{authority}"),
            authority: authority.to_string(),
            host,
            port,
            path_prefix: path.trim_end_matches('/').to_string(),
            addrs,
        })
    }
}

fn split_host_port(authority: &str, default_port: u16) -> Option<(String, u16)> {
    if let Some(v6) = authority.strip_prefix('[') {
        let (host, after) = v6.split_once(']')?;
        let port = match after.strip_prefix(':') {
            Some(p) => p.parse().ok()?,
            None if after.is_empty() => default_port,
            None => return None,
        };
        return Some((host.to_string(), port));
    }
    match authority.rsplit_once(':') {
        Some((host, port)) => Some((host.to_string(), port.parse().ok()?)),
        None => Some((authority.to_string(), default_port)),
    }
}

fn resolve(host: &str, port: u16) -> Vec<SocketAddr> {
    if let Ok(ip) = host.parse::<std::net::IpAddr>() {
        return vec![SocketAddr::new(ip, port)];
    }
    (host, port).to_socket_addrs().map(Iterator::collect).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_bases() {
        let t = Target::parse("http://127.0.0.1:9000/v1/").unwrap();
        assert_eq!((t.tls, t.host.as_str(), t.port, t.path_prefix.as_str()), (false, "127.0.0.1", 9000, "/v1"));
        assert_eq!(t.authority, "127.0.0.1:9000");
        assert_eq!(t.addrs, vec!["127.0.0.1:9000".parse().unwrap()]);
        let t = Target::parse("https://api.example.invalid").unwrap();
        assert_eq!((t.tls, t.port, t.path_prefix.as_str()), (true, 443, ""));
        assert_eq!(t.pool_key, "https://api.example.invalid");
        let t = Target::parse("http://[::1]:8080/x").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("::1", 8080));
    }

    #[test]
    fn rejects_bad_bases() {
        assert!(Target::parse("ftp://x").is_err());
        assert!(Target::parse("http://:80").is_err());
        assert!(Target::parse("http://h:notaport").is_err());
    }
}
