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

#[allow(clippy::large_enum_variant)] // built once per process
pub enum Command {
    Run(LoadOptions),
    Help,
}

/// Parses the arguments after the program name.
pub fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Command, String> {
    let mut urls = Vec::new();
    let mut concurrency = 64usize;
    let mut duration = None;
    let mut requests = None;
    let mut rate = None;
    let mut stream = false;
    let mut body_file = None;
    let mut model = None;
    let mut prompt_bytes = None;
    let mut headers = Vec::new();
    let mut json = None;
    let mut threads = None;
    let mut timeout = Duration::from_secs(30);
    let mut spin = Duration::from_micros(50);
    let mut idle_connections = None;
    let mut progress = true;
    let mut new_connection = false;
    let mut cacert = None;
    let mut insecure = false;
    let mut resume = true;

    while let Some(arg) = args.next() {
        let switch = match arg.as_str() {
            "-h" | "--help" => return Ok(Command::Help),
            "--stream" => Some(&mut stream),
            "--new-connection" => Some(&mut new_connection),
            "--insecure" => Some(&mut insecure),
            _ => None,
        };
        if let Some(switch) = switch {
            *switch = true;
            continue;
        }
        match arg.as_str() {
            "--no-progress" => {
                progress = false;
                continue;
            }
            "--no-resume" => {
                resume = false;
                continue;
            }
            _ => {}
        }
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => (flag.to_owned(), Some(value.to_owned())),
            _ => (arg, None),
        };
        const VALUED: [&str; 16] = [
            "--url",
            "--concurrency",
            "--duration",
            "--requests",
            "--rate",
            "--body",
            "--model",
            "--prompt-bytes",
            "--header",
            "--json",
            "--threads",
            "--timeout",
            "--spin-us",
            "--idle-connections",
            "--cacert",
            "-c",
        ];
        if !VALUED.contains(&flag.as_str()) {
            return Err(format!("unknown option {flag:?}"));
        }
        let value = inline.or_else(|| args.next()).ok_or_else(|| format!("{flag} needs a value"))?;
        let bad = |what: &str| format!("{flag} {value:?}: expected {what}");
        match flag.as_str() {
            "--url" => urls.push(value),
            "--concurrency" | "-c" => {
                concurrency = positive(&value).ok_or_else(|| bad("a connection count of at least 1"))?
            }
            "--duration" => duration = Some(parse_duration(&value).ok_or_else(|| bad("a duration like 30s"))?),
            "--requests" => {
                requests = Some(positive(&value).ok_or_else(|| bad("a request count of at least 1"))? as u64)
            }
            "--rate" => {
                rate = Some(
                    value
                        .parse::<f64>()
                        .ok()
                        .filter(|rate| rate.is_finite() && *rate > 0.0)
                        .ok_or_else(|| bad("requests per second above 0"))?,
                )
            }
            "--body" => body_file = Some(PathBuf::from(value)),
            "--model" => model = Some(value),
            "--prompt-bytes" => prompt_bytes = Some(value.parse().map_err(|_| bad("a byte count"))?),
            "--header" => {
                let (name, header_value) = value.split_once(':').ok_or_else(|| bad("NAME:VALUE"))?;
                let name = name.trim();
                if name.is_empty() || !name.bytes().all(is_token_byte) {
                    return Err(bad("NAME:VALUE with a valid header name"));
                }
                let header_value = header_value.trim();
                if header_value.bytes().any(|byte| byte == b'\r' || byte == b'\n') {
                    return Err(bad("a header value without line breaks"));
                }
                headers.push((name.to_owned(), header_value.to_owned()));
            }
            "--json" => json = Some(PathBuf::from(value)),
            "--threads" => threads = Some(positive(&value).ok_or_else(|| bad("a thread count of at least 1"))?),
            "--timeout" => {
                timeout = parse_duration(&value)
                    .filter(|timeout| !timeout.is_zero())
                    .ok_or_else(|| bad("a duration like 30s"))?
            }
            "--spin-us" => spin = Duration::from_micros(value.parse().map_err(|_| bad("microseconds"))?),
            "--idle-connections" => {
                idle_connections = Some(positive(&value).ok_or_else(|| bad("a connection count of at least 1"))?)
            }
            "--cacert" => cacert = Some(PathBuf::from(value)),
            _ => unreachable!("every valued flag is matched above"),
        }
    }

    if urls.is_empty() {
        return Err("--url is required".to_owned());
    }
    let targets = urls.iter().map(|url| Target::parse(url)).collect::<Result<Vec<_>, _>>()?;
    let stop = match (duration, requests) {
        (Some(_), Some(_)) => return Err("--duration and --requests exclude each other".to_owned()),
        (Some(duration), None) => Stop::After(duration),
        (None, Some(requests)) => Stop::Requests(requests),
        (None, None) => Stop::After(DEFAULT_DURATION),
    };
    if idle_connections.is_some() && (requests.is_some() || rate.is_some()) {
        return Err("--idle-connections takes --duration, not --requests or --rate".to_owned());
    }
    let body = match (body_file, model, prompt_bytes) {
        (Some(_), Some(_), _) | (Some(_), _, Some(_)) => {
            return Err("--body excludes --model and --prompt-bytes".to_owned())
        }
        (Some(file), None, None) => BodySource::File(file),
        (None, model, prompt_bytes) => BodySource::Chat {
            model: model.unwrap_or_else(|| DEFAULT_MODEL.to_owned()),
            prompt_bytes: prompt_bytes.unwrap_or(DEFAULT_PROMPT_BYTES),
        },
    };
    if new_connection && idle_connections.is_some() {
        return Err("--new-connection excludes --idle-connections (idle connections are held, not reopened)".to_owned());
    }
    let tls = tls_options(&targets, cacert, insecure, resume)?;
    let connections = idle_connections.unwrap_or(concurrency);
    if connections < targets.len() {
        return Err(format!(
            "{} URLs need at least as many connections, got {connections}: every URL gets its own",
            targets.len()
        ));
    }
    let threads =
        threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from)).min(connections);
    Ok(Command::Run(LoadOptions {
        targets,
        concurrency,
        stop,
        rate,
        stream,
        body,
        headers,
        json,
        threads,
        timeout,
        spin,
        idle_connections,
        progress,
        new_connection,
        tls,
    }))
}

/// The TLS options when a target is `https://` (which then needs a trust anchor: there are no
/// built-in roots); the TLS flags without one are a mistake worth saying.
fn tls_options(
    targets: &[Target],
    cacert: Option<PathBuf>,
    insecure: bool,
    resume: bool,
) -> Result<Option<TlsOptions>, String> {
    let https = targets.iter().any(|target| target.scheme == Scheme::Https);
    let trust = match (cacert, insecure) {
        (Some(_), true) => return Err("--cacert and --insecure exclude each other".to_owned()),
        (Some(file), false) => Some(Trust::CaFile(file)),
        (None, true) => Some(Trust::AnyCertificate),
        (None, false) => None,
    };
    match (https, trust) {
        (true, Some(trust)) => Ok(Some(TlsOptions { trust, resume })),
        (true, None) => Err("https:// needs --cacert FILE (a PEM bundle of the CAs to trust) or --insecure (accept \
             any certificate, for benchmarks only): pointwork-load has no built-in root certificates"
            .to_owned()),
        (false, trust) if trust.is_some() || !resume => {
            Err("--cacert, --insecure and --no-resume are for https:// URLs, and no --url is one".to_owned())
        }
        (false, _) => Ok(None),
    }
}

fn positive(value: &str) -> Option<usize> {
    value.parse().ok().filter(|&count| count >= 1)
}

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

/// RFC 9110 `tchar`.
fn is_token_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Result<LoadOptions, String> {
        match parse_args(line.split_whitespace().map(str::to_owned))? {
            Command::Run(options) => Ok(options),
            Command::Help => Err("help".to_owned()),
        }
    }

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

    #[test]
    fn defaults_and_flags() {
        let options = parse("--url http://127.0.0.1:1/v1/chat/completions --threads 2").unwrap();
        assert_eq!(options.concurrency, 64);
        assert_eq!(options.stop, Stop::After(DEFAULT_DURATION));
        assert_eq!(options.rate, None);
        assert_eq!(options.body, BodySource::Chat { model: DEFAULT_MODEL.into(), prompt_bytes: 1024 });
        assert_eq!(options.threads, 2);

        let options = parse(
            "--url=http://h:1/ -c 3 --requests 10 --rate 5000 --stream --model m --prompt-bytes 7 \
             --header x-a:b --header X-B: c --threads 8",
        );
        // "X-B: c" splits on whitespace into two arguments: the value is "X-B:", then "c" is unknown.
        assert!(options.unwrap_err().contains("unknown option \"c\""));
        let options = parse(
            "--url=http://h:1/ -c 3 --requests 10 --rate 5000 --stream --model m --prompt-bytes 7 \
             --header x-a:b --threads 8",
        )
        .unwrap();
        assert_eq!(options.concurrency, 3);
        assert_eq!(options.threads, 3, "never more threads than connections");
        assert_eq!(options.stop, Stop::Requests(10));
        assert_eq!(options.rate, Some(5000.0));
        assert!(options.stream);
        assert_eq!(options.headers, vec![("x-a".to_owned(), "b".to_owned())]);
    }

    #[test]
    fn several_urls_in_the_order_given() {
        let options = parse("--url http://a:1/x --url=http://b:2/y --url http://c:3/ -c 6").unwrap();
        let hosts: Vec<_> = options.targets.iter().map(|target| (target.host.as_str(), target.port)).collect();
        assert_eq!(hosts, [("a", 1), ("b", 2), ("c", 3)]);
        assert_eq!(options.targets[1].path, "/y");
        assert_eq!(parse("--url http://a:1/").unwrap().targets.len(), 1);
        // Every URL needs a connection of its own.
        assert!(parse("--url http://a:1/ --url http://b:2/ -c 1").unwrap_err().contains("2 URLs"));
        assert!(parse("--url http://a:1/ --url http://b:2/ --idle-connections 1").is_err());
        assert!(parse("--url http://a:1/ --url http://b:2/ --idle-connections 2 -c 1").is_ok());
        assert!(parse("--url http://a:1/ --url https://b/ -c 2").unwrap_err().contains("--cacert"));
        assert!(parse("--url http://a:1/ --url https://b/ -c 2 --insecure").is_ok());
    }

    #[test]
    fn https_needs_a_trust_anchor() {
        let error = parse("--url https://h/").unwrap_err();
        assert!(error.contains("--cacert FILE") && error.contains("--insecure"), "{error}");
        assert!(error.contains("no built-in root certificates"), "{error}");
        let options = parse("--url https://h/ --cacert ca.pem").unwrap();
        let tls = options.tls.unwrap();
        assert_eq!(tls.trust, Trust::CaFile("ca.pem".into()));
        assert!(tls.resume, "resumption is on by default");
        let options = parse("--url https://h/ --insecure --no-resume --new-connection").unwrap();
        assert_eq!(options.tls, Some(TlsOptions { trust: Trust::AnyCertificate, resume: false }));
        assert!(options.new_connection);
        assert!(parse("--url https://h/ --insecure --cacert=ca.pem").unwrap_err().contains("exclude"));
        for flags in ["--insecure", "--cacert ca.pem", "--no-resume"] {
            let error = parse(&format!("--url http://h:1/ {flags}")).unwrap_err();
            assert!(error.contains("for https:// URLs"), "{flags}: {error}");
        }
        let options = parse("--url http://h:1/ --new-connection").unwrap();
        assert!(options.new_connection && options.tls.is_none());
        assert!(parse("--url http://h:1/ --new-connection --idle-connections 3").unwrap_err().contains("excludes"));
    }

    #[test]
    fn refusals() {
        assert!(parse("--concurrency 4").unwrap_err().contains("--url"));
        assert!(parse("--url http://h:1/ --duration 1s --requests 3").unwrap_err().contains("exclude"));
        assert!(parse("--url http://h:1/ --body f --model m").unwrap_err().contains("--body"));
        assert!(parse("--url http://h:1/ --rate 0").unwrap_err().contains("--rate"));
        assert!(parse("--url http://h:1/ --concurrency 0").is_err());
        assert!(parse("--url http://h:1/ --header nocolon").is_err());
        assert!(parse("--url http://h:1/ --bogus").unwrap_err().contains("unknown"));
        assert!(parse("--url http://h:1/ --idle-connections 5 --rate 3").is_err());
    }
}
