//! The command line of `pointwork-load`, parsed into [`LoadOptions`] (no IO here: the `--body`
//! and `--cacert` files are read when the run starts).

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::time::Duration;

/// How a target is spoken to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    Http,
    /// TLS (rustls), ALPN `http/1.1`, SNI from the URL's host; trusted as [`TlsOptions`] say.
    Https,
}

impl Scheme {
    pub fn name(self) -> &'static str {
        match self {
            Scheme::Http => "http",
            Scheme::Https => "https",
        }
    }

    fn default_port(self) -> u16 {
        match self {
            Scheme::Http => 80,
            Scheme::Https => 443,
        }
    }
}

/// Where the requests go: `http://HOST[:PORT][/PATH]` or `https://…`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub scheme: Scheme,
    /// The `Host` header value: the URL's authority as written.
    pub authority: String,
    pub host: String,
    pub port: u16,
    /// The request target: the URL's path and query, `/` when it has none.
    pub path: String,
}

impl Target {
    /// Parses an `http://` or `https://` URL (default ports 80 and 443).
    pub fn parse(url: &str) -> Result<Target, String> {
        let (scheme, rest) = match url.split_once("://") {
            Some(("http", rest)) => (Scheme::Http, rest),
            Some(("https", rest)) => (Scheme::Https, rest),
            _ => return Err(format!("{url:?}: expected http://HOST[:PORT][/PATH] or https://…")),
        };
        let (authority, path) = match rest.find(['/', '?']) {
            Some(at) if rest.as_bytes()[at] == b'/' => (&rest[..at], rest[at..].to_owned()),
            Some(at) => (&rest[..at], format!("/{}", &rest[at..])),
            None => (rest, "/".to_owned()),
        };
        if authority.is_empty() || authority.contains('@') {
            return Err(format!("{url:?}: expected http://HOST[:PORT][/PATH] or https://…"));
        }
        let (host, port) =
            split_host_port(authority, scheme.default_port()).ok_or_else(|| format!("{url:?}: bad host or port"))?;
        Ok(Target { scheme, authority: authority.to_owned(), host, port, path })
    }

    /// The URL again: scheme, authority as written, path.
    pub fn url(&self) -> String {
        format!("{}://{}{}", self.scheme.name(), self.authority, self.path)
    }

    /// Resolves the host once; the first address is used for every connection.
    pub fn resolve(&self) -> Result<SocketAddr, String> {
        (self.host.as_str(), self.port)
            .to_socket_addrs()
            .map_err(|error| format!("cannot resolve {}: {error}", self.host))?
            .next()
            .ok_or_else(|| format!("{} resolves to no address", self.host))
    }
}

fn split_host_port(authority: &str, default_port: u16) -> Option<(String, u16)> {
    if let Some(rest) = authority.strip_prefix('[') {
        // [v6]:port
        let (host, after) = rest.split_once(']')?;
        let port = match after {
            "" => default_port,
            _ => after.strip_prefix(':')?.parse().ok()?,
        };
        return Some((host.to_owned(), port));
    }
    match authority.rsplit_once(':') {
        Some((host, port)) if !host.is_empty() => Some((host.to_owned(), port.parse().ok()?)),
        Some(_) => None,
        None => Some((authority.to_owned(), default_port)),
    }
}

/// When a run stops sending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    After(Duration),
    Requests(u64),
}

/// What is sent as the body of every request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BodySource {
    /// The bytes of `--body FILE`, sent as they are.
    File(PathBuf),
    /// A chat completion for `model` with one user message of `prompt_bytes` bytes.
    Chat { model: String, prompt_bytes: usize },
}

/// Whom an `https://` target must prove itself to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trust {
    /// `--cacert FILE`: the CAs in this PEM bundle, and only them.
    CaFile(PathBuf),
    /// `--insecure`: any certificate at all (the handshake's signature is still checked). For
    /// benchmarks against a server whose CA is not at hand; never for anything that matters.
    AnyCertificate,
}

/// How `https://` targets are spoken to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsOptions {
    pub trust: Trust,
    /// Resume sessions (tickets, or TLS 1.2 session ids) on new connections; `--no-resume` makes
    /// every handshake a full one.
    pub resume: bool,
}

/// Everything one load run needs.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadOptions {
    /// Where the requests go, in the order given (`--url`, repeatable): connection `i` of the run
    /// talks to `targets[i % targets.len()]` ([`spread`](super::spread)). Never empty.
    pub targets: Vec<Target>,
    pub concurrency: usize,
    pub stop: Stop,
    /// Open loop: requests per second over all connections. `None`: closed loop.
    pub rate: Option<f64>,
    pub stream: bool,
    pub body: BodySource,
    pub headers: Vec<(String, String)>,
    /// `--keys FILE`: bearer keys, one per line; request `i` of the run sends key `i mod n`
    /// (read when the run starts, each key's request built once).
    pub keys: Option<PathBuf>,
    pub json: Option<PathBuf>,
    pub threads: usize,
    /// A request that has not completed this long after it was sent is a timeout error.
    pub timeout: Duration,
    /// Open loop: the last stretch before an intended start that the sending thread busy-polls
    /// instead of sleeping in the kernel (see README: pacing).
    pub spin: Duration,
    /// `--idle-connections N`: the idle-connection mode instead of a load run.
    pub idle_connections: Option<usize>,
    /// Print the live progress line (only when stdout is a terminal).
    pub progress: bool,
    /// `--new-connection`: every request on a fresh connection, closed after its answer; the
    /// connect (and TLS handshake) counts in its latency.
    pub new_connection: bool,
    /// How `https://` targets are trusted; `None` when no target is https.
    pub tls: Option<TlsOptions>,
}

pub const DEFAULT_DURATION: Duration = Duration::from_secs(10);
pub const DEFAULT_MODEL: &str = "mock-chat";
pub const DEFAULT_PROMPT_BYTES: usize = 1024;

/// `30s`, `500ms`, `250us`, `2m`, `1h`, or plain seconds (`10`, `0.5`).
pub fn parse_duration(value: &str) -> Option<Duration> {
    let split = value.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(value.len());
    let (number, unit) = value.split_at(split);
    let number: f64 = number.parse().ok()?;
    let seconds = match unit {
        "" | "s" => number,
        "ms" => number / 1e3,
        "us" | "µs" => number / 1e6,
        "m" => number * 60.0,
        "h" => number * 3600.0,
        _ => return None,
    };
    Duration::try_from_secs_f64(seconds).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let target = Target::parse("http://127.0.0.1:4000/v1/chat/completions").unwrap();
        assert_eq!(target.authority, "127.0.0.1:4000");
        assert_eq!((target.host.as_str(), target.port), ("127.0.0.1", 4000));
        assert_eq!(target.path, "/v1/chat/completions");
        assert_eq!(Target::parse("http://localhost").unwrap().path, "/");
        assert_eq!(Target::parse("http://localhost").unwrap().port, 80);
        assert_eq!(Target::parse("http://h:1?x=1").unwrap().path, "/?x=1");
        assert_eq!(Target::parse("http://[::1]:8080/a").unwrap().host, "::1");
        let secure = Target::parse("https://h/v1").unwrap();
        assert_eq!((secure.scheme, secure.port, secure.url().as_str()), (Scheme::Https, 443, "https://h/v1"));
        assert_eq!(Target::parse("https://[::1]/").unwrap().port, 443);
        assert_eq!(Target::parse("http://h:1/a").unwrap().url(), "http://h:1/a");
        assert!(Target::parse("ftp://h/").is_err());
        assert!(Target::parse("http://h:x/").is_err());
        assert!(Target::parse("http:///a").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30s"), Some(Duration::from_secs(30)));
        assert_eq!(parse_duration("10"), Some(Duration::from_secs(10)));
        assert_eq!(parse_duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Some(Duration::from_secs(120)));
        assert_eq!(parse_duration("1.5s"), Some(Duration::from_millis(1500)));
        assert_eq!(parse_duration("s"), None);
        assert_eq!(parse_duration("3d"), None);
    }
}
