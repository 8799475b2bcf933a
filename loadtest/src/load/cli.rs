//! The command line of `pointwork-load`: one clap declaration ([`Cli`]) for its flags, values and
//! help, then the checks across flags that turn it into [`LoadOptions`] (no IO here: the `--body`
//! and `--cacert` files are read when the run starts).

use std::path::PathBuf;
use std::time::Duration;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{ArgAction, CommandFactory, Parser};

use super::options::{
    parse_duration, BodySource, LoadOptions, Scheme, Stop, Target, TlsOptions, Trust, DEFAULT_DURATION, DEFAULT_MODEL,
    DEFAULT_PROMPT_BYTES,
};

const AFTER_HELP: &str = "\
https runs report their handshakes: how many, how many resumed, and their time from the TCP
connection's establishment to the handshake's end (\"tls\" in the JSON); TLS failures count as
\"certificate\" (the server's certificate was refused) or \"tls\" (anything else), with the first
one's message.

Exit status: 0 when every request succeeded, 1 when any failed (or was not sent), 2 on bad usage.";

/// The flags of `pointwork-load`, each documented as `--help` prints it.
#[derive(Debug, Parser)]
#[command(
    name = "pointwork-load",
    about = "Sends POST requests over HTTP/1.1 keep-alive connections (plain or TLS) and reports throughput,\n\
             latency percentiles and errors. Closed loop by default; --rate makes it an open loop.",
    override_usage = "pointwork-load --url http[s]://HOST:PORT/PATH [--url …] [OPTIONS]",
    help_template = "usage: {usage}\n\n{about}\n\noptions:\n{options}{after-help}",
    after_help = AFTER_HELP,
    disable_help_flag = true,
    disable_version_flag = true,
    args_override_self = true
)]
pub struct Cli {
    /// where to send (http:// or https://); the path is sent as it is. Repeat it to spread the
    /// connections round-robin over several servers (connection i to URL i mod n); the report
    /// gives the total, then each URL's share
    #[arg(long = "url", value_name = "URL", action = ArgAction::Append, allow_hyphen_values = true)]
    pub urls: Vec<String>,
    /// connections (default 64)
    #[arg(short = 'c', long, value_name = "C", value_parser = at_least_one("a connection count of at least 1"))]
    pub concurrency: Option<usize>,
    /// how long to send (default 10s; 500ms, 30s, 2m)
    #[arg(long, value_name = "D", value_parser = duration)]
    pub duration: Option<Duration>,
    /// send N requests instead of running for a duration
    #[arg(long, value_name = "N", value_parser = at_least_one("a request count of at least 1"))]
    pub requests: Option<usize>,
    /// open loop: R requests per second over all connections, each on a fixed schedule; latency
    /// counts from the intended start (waits for a free connection included)
    #[arg(long, value_name = "R", value_parser = rate)]
    pub rate: Option<f64>,
    /// add "stream": true and read the answer as server-sent events (time to first byte, time
    /// between events, total)
    #[arg(long)]
    pub stream: bool,
    /// send this file as the body instead of a generated chat request
    #[arg(long, value_name = "FILE", allow_hyphen_values = true)]
    pub body: Option<PathBuf>,
    /// the generated chat request's model (default mock-chat)
    #[arg(long, value_name = "NAME", allow_hyphen_values = true)]
    pub model: Option<String>,
    /// the generated user message's size in bytes (default 1024)
    #[arg(long, value_name = "B", value_parser = byte_count)]
    pub prompt_bytes: Option<usize>,
    /// an extra request header (repeatable)
    #[arg(long = "header", value_name = "K:V", action = ArgAction::Append, value_parser = header)]
    pub headers: Vec<(String, String)>,
    /// bearer keys, one per line: request i of the run sends "authorization: Bearer KEY" with
    /// key i mod n, so that every key is used (each key's request is built once, before the start)
    #[arg(long, value_name = "FILE", allow_hyphen_values = true)]
    pub keys: Option<PathBuf>,
    /// also write the report as JSON to OUT
    #[arg(long, value_name = "OUT", allow_hyphen_values = true)]
    pub json: Option<PathBuf>,
    /// generator threads (default: available cores, at most C)
    #[arg(long, value_name = "T", value_parser = at_least_one("a thread count of at least 1"))]
    pub threads: Option<usize>,
    /// a request not complete this long after its start fails (default 30s)
    #[arg(long, value_name = "D", value_parser = timeout)]
    pub timeout: Option<Duration>,
    /// open loop: busy-poll the last U µs before each start (default 50)
    #[arg(long = "spin-us", value_name = "U", value_parser = micros)]
    pub spin: Option<Duration>,
    /// open N connections, one request each, then hold them idle for --duration and report how
    /// many stayed open
    #[arg(long, value_name = "N", value_parser = at_least_one("a connection count of at least 1"))]
    pub idle_connections: Option<usize>,
    /// every request on a fresh connection (with "connection: close"), closed after its answer;
    /// the connect and TLS handshake count in the request's latency. With https: handshakes per
    /// second
    #[arg(long)]
    pub new_connection: bool,
    /// https: trust the CAs in this PEM bundle (there are no built-in roots: https needs --cacert
    /// or --insecure)
    #[arg(long, value_name = "FILE", allow_hyphen_values = true)]
    pub cacert: Option<PathBuf>,
    /// https: accept any server certificate (the handshake signature is still checked). For
    /// benchmarks only
    #[arg(long)]
    pub insecure: bool,
    /// https: no session resumption, every handshake a full one (by default new connections
    /// resume the thread's sessions: tickets or session ids)
    #[arg(long)]
    pub no_resume: bool,
    /// no live progress line (it shows only on a terminal anyway)
    #[arg(long)]
    pub no_progress: bool,
    /// print this help
    #[arg(short = 'h', long, action = ArgAction::Help)]
    pub help: Option<bool>,
}

#[allow(clippy::large_enum_variant)] // built once per process
pub enum Command {
    Run(LoadOptions),
    Help,
}

/// The help `--help` prints, its value names as this tool has always written them (`--flag
/// VALUE`, not clap's `--flag <VALUE>`; the columns stay aligned).
pub fn usage() -> String {
    Cli::command().render_help().to_string().replace('<', "").replace('>', "  ")
}

/// Parses the arguments after the program name.
pub fn parse_args(args: impl Iterator<Item = String>) -> Result<Command, String> {
    match Cli::try_parse_from(std::iter::once("pointwork-load".to_owned()).chain(args)) {
        Ok(cli) => cli.into_options().map(Command::Run),
        Err(error) if error.kind() == ErrorKind::DisplayHelp => Ok(Command::Help),
        Err(error) => Err(usage_error(&error)),
    }
}

impl Cli {
    /// The checks across flags, and the defaults.
    fn into_options(self) -> Result<LoadOptions, String> {
        if self.urls.is_empty() {
            return Err("--url is required".to_owned());
        }
        let targets = self.urls.iter().map(|url| Target::parse(url)).collect::<Result<Vec<_>, _>>()?;
        let stop = match (self.duration, self.requests) {
            (Some(_), Some(_)) => return Err("--duration and --requests exclude each other".to_owned()),
            (Some(duration), None) => Stop::After(duration),
            (None, Some(requests)) => Stop::Requests(requests as u64),
            (None, None) => Stop::After(DEFAULT_DURATION),
        };
        if self.idle_connections.is_some() && (self.requests.is_some() || self.rate.is_some()) {
            return Err("--idle-connections takes --duration, not --requests or --rate".to_owned());
        }
        let body = match (self.body, self.model, self.prompt_bytes) {
            (Some(_), Some(_), _) | (Some(_), _, Some(_)) => {
                return Err("--body excludes --model and --prompt-bytes".to_owned())
            }
            (Some(file), None, None) => BodySource::File(file),
            (None, model, prompt_bytes) => BodySource::Chat {
                model: model.unwrap_or_else(|| DEFAULT_MODEL.to_owned()),
                prompt_bytes: prompt_bytes.unwrap_or(DEFAULT_PROMPT_BYTES),
            },
        };
        if self.new_connection && self.idle_connections.is_some() {
            return Err(
                "--new-connection excludes --idle-connections (idle connections are held, not reopened)".to_owned()
            );
        }
        if self.keys.is_some() && self.headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("authorization")) {
            return Err("--keys excludes an authorization --header (each request sends its key's)".to_owned());
        }
        let tls = tls_options(&targets, self.cacert, self.insecure, !self.no_resume)?;
        let concurrency = self.concurrency.unwrap_or(64);
        let connections = self.idle_connections.unwrap_or(concurrency);
        if connections < targets.len() {
            return Err(format!(
                "{} URLs need at least as many connections, got {connections}: every URL gets its own",
                targets.len()
            ));
        }
        let threads = self
            .threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
            .min(connections);
        Ok(LoadOptions {
            targets,
            concurrency,
            stop,
            rate: self.rate,
            stream: self.stream,
            body,
            headers: self.headers,
            keys: self.keys,
            json: self.json,
            threads,
            timeout: self.timeout.unwrap_or(Duration::from_secs(30)),
            spin: self.spin.unwrap_or(Duration::from_micros(50)),
            idle_connections: self.idle_connections,
            progress: !self.no_progress,
            new_connection: self.new_connection,
            tls,
        })
    }
}

/// clap's refusal in this tool's words: `unknown option "--x"`, `--flag needs a value`,
/// `--flag "value": expected …`.
fn usage_error(error: &clap::Error) -> String {
    let context = |kind| match error.get(kind) {
        Some(ContextValue::String(text)) => Some(text.as_str()),
        _ => None,
    };
    // "--rate <R>": the flag without its value name.
    let flag = context(ContextKind::InvalidArg).and_then(|arg| arg.split(' ').next()).unwrap_or_default();
    let value = context(ContextKind::InvalidValue);
    match error.kind() {
        ErrorKind::UnknownArgument => format!("unknown option {flag:?}"),
        ErrorKind::InvalidValue if value == Some("") => format!("{flag} needs a value"),
        ErrorKind::ValueValidation => {
            let reason = std::error::Error::source(error).map(ToString::to_string).unwrap_or_default();
            format!("{flag} {:?}: {reason}", value.unwrap_or_default())
        }
        _ => {
            let rendered = error.render().to_string();
            let first = rendered.lines().next().unwrap_or_default();
            first.strip_prefix("error: ").unwrap_or(first).to_owned()
        }
    }
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

/// A count of at least 1; `what` names it in the refusal.
fn at_least_one(what: &'static str) -> impl Fn(&str) -> Result<usize, String> + Clone + Send + Sync + 'static {
    move |value| value.parse().ok().filter(|&count| count >= 1).ok_or_else(|| format!("expected {what}"))
}

fn duration(value: &str) -> Result<Duration, String> {
    parse_duration(value).ok_or_else(|| "expected a duration like 30s".to_owned())
}

fn timeout(value: &str) -> Result<Duration, String> {
    parse_duration(value).filter(|timeout| !timeout.is_zero()).ok_or_else(|| "expected a duration like 30s".to_owned())
}

fn rate(value: &str) -> Result<f64, String> {
    value
        .parse::<f64>()
        .ok()
        .filter(|rate| rate.is_finite() && *rate > 0.0)
        .ok_or_else(|| "expected requests per second above 0".to_owned())
}

fn byte_count(value: &str) -> Result<usize, String> {
    value.parse().map_err(|_| "expected a byte count".to_owned())
}

fn micros(value: &str) -> Result<Duration, String> {
    value.parse().map(Duration::from_micros).map_err(|_| "expected microseconds".to_owned())
}

/// `NAME:VALUE`, both trimmed: a valid header name, a value without line breaks.
fn header(value: &str) -> Result<(String, String), String> {
    let (name, header_value) = value.split_once(':').ok_or_else(|| "expected NAME:VALUE".to_owned())?;
    let name = name.trim();
    if name.is_empty() || !name.bytes().all(is_token_byte) {
        return Err("expected NAME:VALUE with a valid header name".to_owned());
    }
    let header_value = header_value.trim();
    if header_value.bytes().any(|byte| byte == b'\r' || byte == b'\n') {
        return Err("expected a header value without line breaks".to_owned());
    }
    Ok((name.to_owned(), header_value.to_owned()))
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
    fn keys_file() {
        assert_eq!(parse("--url http://h:1/").unwrap().keys, None);
        let options = parse("--url http://h:1/ --keys keys.txt --header x-a:b").unwrap();
        assert_eq!(options.keys, Some(PathBuf::from("keys.txt")));
        let error = parse("--url http://h:1/ --keys k --header Authorization:Bearer-x").unwrap_err();
        assert!(error.contains("--keys excludes"), "{error}");
        assert_eq!(parse("--url http://h:1/ --keys").err().as_deref(), Some("--keys needs a value"));
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

    #[test]
    fn every_documented_flag_parses() {
        let help = usage();
        let flags = [
            "--url",
            "-c",
            "--concurrency",
            "--duration",
            "--requests",
            "--rate",
            "--stream",
            "--body",
            "--model",
            "--prompt-bytes",
            "--header",
            "--keys",
            "--json",
            "--threads",
            "--timeout",
            "--spin-us",
            "--idle-connections",
            "--new-connection",
            "--cacert",
            "--insecure",
            "--no-resume",
            "--no-progress",
            "-h",
            "--help",
        ];
        for flag in flags {
            assert!(help.contains(flag), "--help documents {flag}:\n{help}");
        }
        let readme = include_str!("../../README.md");
        for flag in flags.iter().filter(|flag| flag.starts_with("--")) {
            assert!(readme.contains(flag), "loadtest/README.md documents {flag}");
        }
        let line = [
            "pointwork-load",
            "--url",
            "https://a:1/x",
            "--url=https://b:2/y",
            "-c",
            "4",
            "--concurrency",
            "4",
            "--duration",
            "2s",
            "--rate",
            "10",
            "--stream",
            "--model",
            "m",
            "--prompt-bytes",
            "7",
            "--header",
            "x-a:b",
            "--keys",
            "k.txt",
            "--json",
            "out.json",
            "--threads",
            "2",
            "--timeout",
            "5s",
            "--spin-us",
            "9",
            "--new-connection",
            "--cacert",
            "ca.pem",
            "--no-resume",
            "--no-progress",
        ];
        let cli = Cli::try_parse_from(line).expect("every flag parses");
        assert_eq!(cli.urls, ["https://a:1/x", "https://b:2/y"]);
        assert_eq!(cli.concurrency, Some(4));
        assert_eq!(cli.duration, Some(Duration::from_secs(2)));
        assert_eq!(cli.rate, Some(10.0));
        assert!(cli.stream && cli.new_connection && cli.no_resume && cli.no_progress);
        assert_eq!(cli.model.as_deref(), Some("m"));
        assert_eq!(cli.prompt_bytes, Some(7));
        assert_eq!(cli.headers, [("x-a".to_owned(), "b".to_owned())]);
        assert_eq!(cli.keys, Some(PathBuf::from("k.txt")));
        assert_eq!(cli.json, Some(PathBuf::from("out.json")));
        assert_eq!(cli.threads, Some(2));
        assert_eq!(cli.timeout, Some(Duration::from_secs(5)));
        assert_eq!(cli.spin, Some(Duration::from_micros(9)));
        assert_eq!(cli.cacert, Some(PathBuf::from("ca.pem")));
        let cli = Cli::try_parse_from(["pointwork-load", "--url", "http://h/", "--requests", "3", "--body", "b.json"])
            .expect("parses");
        assert_eq!((cli.requests, cli.body), (Some(3), Some(PathBuf::from("b.json"))));
        let cli =
            Cli::try_parse_from(["pointwork-load", "--url", "https://h/", "--idle-connections", "5", "--insecure"])
                .expect("parses");
        assert_eq!(cli.idle_connections, Some(5));
        assert!(cli.insecure);
        for help in ["-h", "--help"] {
            assert!(matches!(parse_args([help.to_owned()].into_iter()), Ok(Command::Help)), "{help}");
        }
    }

    #[test]
    fn an_unknown_flag_is_refused() {
        let error = Cli::try_parse_from(["pointwork-load", "--url", "http://h/", "--bogus"]).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::UnknownArgument);
        let refused = parse_args(["--url", "http://h/", "--bogus"].map(str::to_owned).into_iter());
        assert_eq!(refused.err().as_deref(), Some("unknown option \"--bogus\""));
        let refused = parse_args(["--url"].map(str::to_owned).into_iter());
        assert_eq!(refused.err().as_deref(), Some("--url needs a value"));
        let refused = parse_args(["--url", "http://h/", "--rate", "0"].map(str::to_owned).into_iter());
        assert_eq!(refused.err().as_deref(), Some("--rate \"0\": expected requests per second above 0"));
    }
}
