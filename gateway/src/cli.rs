//! Command-line parsing: `pointwork serve|check|route|demo|hash-key`, by hand (a handful of flags).

use std::net::SocketAddr;
use std::path::PathBuf;

use pointwork_config::{IoDriver, TlsOrigin, TlsSettings};

pub const USAGE: &str = "\
Pointwork — an LLM routing gateway

USAGE:
    pointwork serve --config FILE [--listen HOST:PORT] [--shards N] [--io-driver auto|uring|legacy]
                    [--tls-cert CERT.pem --tls-key KEY.pem]
    pointwork check --config FILE [--strict]
    pointwork route --config FILE --request REQUEST.json [--state STATE.json] [--seed N] [--policy NAME]
    pointwork demo [--listen HOST:PORT] [--shards N] [--io-driver auto|uring|legacy]
                   [--tls-cert CERT.pem --tls-key KEY.pem]
    pointwork hash-key < KEY
    pointwork --version | --help

COMMANDS:
    serve   run the gateway on a LiteLLM-compatible config.yaml
    check   validate a config: a summary and exit 0, or every error with its key path and exit 1;
            --strict: exit 1 also when an entry is left out (a provider Pointwork does not serve yet)
    route   dry run: the routing decision for a request body (JSON), without calling a provider;
            --state sets cooldowns, health, in-flight, latency and usage (see docs/operations.md);
            exit 1 when a file is bad or the model is unknown (the decision printed still)
    demo    run the gateway in front of built-in mock providers (no keys, no network needed)
    hash-key  print the SHA-256 of a key read from standard input, for pointwork.auth's sha256
            (the key is never a command-line argument: those show in the process list)

HTTPS:
    --tls-cert, --tls-key   serve HTTPS with this PEM certificate chain and private key (both or
            neither); they win over pointwork.tls's cert and key and over $SSL_CERTFILE_PATH /
            $SSL_KEYFILE_PATH. LiteLLM's --ssl_certfile_path / --ssl_keyfile_path are the same flags.
";

/// Flags that override the config's `pointwork:` section.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Overrides {
    pub listen: Option<SocketAddr>,
    pub shards: Option<usize>,
    pub io_driver: Option<IoDriver>,
    /// `--tls-cert` and `--tls-key`.
    pub tls: Option<TlsFiles>,
}

/// A certificate chain and its private key named on the command line (relative to the working
/// directory).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

impl Overrides {
    /// The TLS settings to serve with: `--tls-cert`/`--tls-key` replace the config's certificate
    /// and key (its `client_ca` stays), or turn TLS on when the config has none.
    pub fn tls(&self, config: Option<&TlsSettings>) -> Option<TlsSettings> {
        let Some(files) = &self.tls else { return config.cloned() };
        Some(TlsSettings {
            cert: files.cert.clone(),
            key: files.key.clone(),
            client_ca: config.and_then(|c| c.client_ca.clone()),
            origin: TlsOrigin::CommandLine,
        })
    }
}

/// `pointwork route`'s arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RouteArgs {
    pub config: PathBuf,
    pub request: PathBuf,
    pub state: Option<PathBuf>,
    pub seed: u64,
    /// The policy the request runs under (else `pointwork.default_policy`).
    pub policy: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    Serve {
        config: PathBuf,
        overrides: Overrides,
    },
    /// `strict`: entries left out fail the check.
    Check {
        config: PathBuf,
        strict: bool,
    },
    Route(RouteArgs),
    Demo {
        overrides: Overrides,
    },
    HashKey,
    Help,
    Version,
}

pub fn parse(args: &[String]) -> Result<Command, String> {
    let Some((command, rest)) = args.split_first() else {
        return Ok(Command::Help);
    };
    match command.as_str() {
        "-h" | "--help" | "help" => Ok(Command::Help),
        "-V" | "--version" | "version" => Ok(Command::Version),
        "serve" => {
            let (config, overrides) = parse_flags(rest, true, true)?;
            let config = config.ok_or("serve: --config FILE is required")?;
            Ok(Command::Serve { config, overrides })
        }
        "check" => {
            let strict = rest.iter().any(|a| a == "--strict");
            let rest: Vec<String> = rest.iter().filter(|a| *a != "--strict").cloned().collect();
            let (config, _) = parse_flags(&rest, true, false)?;
            Ok(Command::Check { config: config.ok_or("check: --config FILE is required")?, strict })
        }
        "route" => parse_route(rest).map(Command::Route),
        "hash-key" if rest.is_empty() => Ok(Command::HashKey),
        "hash-key" => Err("hash-key takes no arguments: it reads the key from standard input".to_string()),
        "demo" => {
            let (_, overrides) = parse_flags(rest, false, true)?;
            Ok(Command::Demo { overrides })
        }
        other => Err(format!("unknown command {other:?} (expected serve, check, route, demo or hash-key)")),
    }
}

fn parse_route(args: &[String]) -> Result<RouteArgs, String> {
    let (mut config, mut request, mut state, mut seed, mut policy) = (None, None, None, 0, None);
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let (name, inline) = match flag.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
            _ => (flag.as_str(), None),
        };
        let mut value = || inline.clone().or_else(|| it.next().cloned()).ok_or(format!("{name} needs a value"));
        match name {
            "--config" | "-c" => config = Some(PathBuf::from(value()?)),
            "--request" => request = Some(PathBuf::from(value()?)),
            "--state" => state = Some(PathBuf::from(value()?)),
            "--policy" => policy = Some(value()?),
            "--seed" => {
                let v = value()?;
                seed = v.parse().map_err(|_| format!("--seed: expected a non-negative integer, got {v:?}"))?;
            }
            _ => return Err(format!("unknown flag {flag:?}")),
        }
    }
    Ok(RouteArgs {
        config: config.ok_or("route: --config FILE is required")?,
        request: request.ok_or("route: --request REQUEST.json is required")?,
        state,
        seed,
        policy,
    })
}

fn parse_flags(
    args: &[String],
    takes_config: bool,
    takes_overrides: bool,
) -> Result<(Option<PathBuf>, Overrides), String> {
    let mut config = None;
    let mut o = Overrides::default();
    let (mut tls_cert, mut tls_key) = (None, None);
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let (name, inline) = match flag.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
            _ => (flag.as_str(), None),
        };
        let mut value = || inline.clone().or_else(|| it.next().cloned()).ok_or(format!("{name} needs a value"));
        match name {
            "--config" | "-c" if takes_config => config = Some(PathBuf::from(value()?)),
            "--listen" if takes_overrides => {
                let v = value()?;
                o.listen = Some(
                    v.parse().map_err(|_| format!("--listen: expected HOST:PORT (e.g. 127.0.0.1:4000), got {v:?}"))?,
                );
            }
            "--shards" if takes_overrides => {
                let v = value()?;
                o.shards = Some(
                    v.parse()
                        .ok()
                        .filter(|&n| n > 0)
                        .ok_or(format!("--shards: expected a positive integer, got {v:?}"))?,
                );
            }
            "--io-driver" if takes_overrides => {
                let v = value()?;
                o.io_driver = Some(match v.as_str() {
                    "auto" => IoDriver::Auto,
                    "uring" => IoDriver::Uring,
                    "legacy" => IoDriver::Legacy,
                    _ => return Err(format!("--io-driver: expected auto, uring or legacy, got {v:?}")),
                });
            }
            "--tls-cert" | "--ssl_certfile_path" if takes_overrides => tls_cert = Some(PathBuf::from(value()?)),
            "--tls-key" | "--ssl_keyfile_path" if takes_overrides => tls_key = Some(PathBuf::from(value()?)),
            _ => return Err(format!("unknown flag {flag:?}")),
        }
    }
    o.tls = match (tls_cert, tls_key) {
        (Some(cert), Some(key)) => Some(TlsFiles { cert, key }),
        (Some(_), None) => return Err("--tls-cert needs --tls-key (the certificate's private key)".to_string()),
        (None, Some(_)) => return Err("--tls-key needs --tls-cert (the certificate chain)".to_string()),
        (None, None) => None,
    };
    Ok((config, o))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn serve_with_overrides() {
        let cmd = parse(&args("serve --config c.yaml --listen 127.0.0.1:0 --shards 2 --io-driver=legacy")).unwrap();
        assert_eq!(
            cmd,
            Command::Serve {
                config: "c.yaml".into(),
                overrides: Overrides {
                    listen: Some("127.0.0.1:0".parse().unwrap()),
                    shards: Some(2),
                    io_driver: Some(IoDriver::Legacy),
                    tls: None,
                }
            }
        );
    }

    #[test]
    fn tls_files_on_serve_and_demo() {
        let files = Some(TlsFiles { cert: "c.pem".into(), key: "k.pem".into() });
        let cmd = parse(&args("serve --config c.yaml --tls-cert c.pem --tls-key=k.pem")).unwrap();
        let Command::Serve { overrides, .. } = cmd else { panic!("{cmd:?}") };
        assert_eq!(overrides.tls, files);
        let cmd = parse(&args("demo --tls-key k.pem --tls-cert c.pem")).unwrap();
        assert_eq!(cmd, Command::Demo { overrides: Overrides { tls: files.clone(), ..Overrides::default() } });
        // LiteLLM's spelling.
        let cmd = parse(&args("demo --ssl_certfile_path c.pem --ssl_keyfile_path=k.pem")).unwrap();
        assert_eq!(cmd, Command::Demo { overrides: Overrides { tls: files, ..Overrides::default() } });
    }

    #[test]
    fn tls_files_come_together() {
        let err = parse(&args("serve --config c --tls-cert c.pem")).unwrap_err();
        assert_eq!(err, "--tls-cert needs --tls-key (the certificate's private key)");
        let err = parse(&args("demo --ssl_keyfile_path k.pem")).unwrap_err();
        assert_eq!(err, "--tls-key needs --tls-cert (the certificate chain)");
        assert!(parse(&args("serve --config c --tls-cert")).unwrap_err().contains("--tls-cert needs a value"));
        assert!(parse(&args("check --config c --tls-cert c --tls-key k")).unwrap_err().contains("unknown flag"));
    }

    #[test]
    fn tls_files_replace_the_configs_cert_and_key_but_keep_its_client_ca() {
        let config = TlsSettings {
            cert: "/etc/c.pem".into(),
            key: "/etc/k.pem".into(),
            client_ca: Some("/etc/ca.pem".into()),
            origin: TlsOrigin::Config,
        };
        assert_eq!(Overrides::default().tls(Some(&config)), Some(config.clone()));
        assert_eq!(Overrides::default().tls(None), None);
        let flags =
            Overrides { tls: Some(TlsFiles { cert: "c.pem".into(), key: "k.pem".into() }), ..Overrides::default() };
        let expected = TlsSettings {
            cert: "c.pem".into(),
            key: "k.pem".into(),
            client_ca: Some("/etc/ca.pem".into()),
            origin: TlsOrigin::CommandLine,
        };
        assert_eq!(flags.tls(Some(&config)), Some(expected.clone()));
        assert_eq!(flags.tls(None), Some(TlsSettings { client_ca: None, ..expected }));
    }

    #[test]
    fn route_with_state_and_seed() {
        let cmd = parse(&args("route -c c.yaml --request r.json --state=s.json --seed 7 --policy eu")).unwrap();
        let expected = RouteArgs {
            config: "c.yaml".into(),
            request: "r.json".into(),
            state: Some("s.json".into()),
            seed: 7,
            policy: Some("eu".into()),
        };
        assert_eq!(cmd, Command::Route(expected));
    }

    #[test]
    fn errors_name_the_flag() {
        assert!(parse(&args("serve")).unwrap_err().contains("--config"));
        assert!(parse(&args("serve --config c --shards 0")).unwrap_err().contains("--shards"));
        assert!(parse(&args("serve --config c --listen nope")).unwrap_err().contains("--listen"));
        assert!(parse(&args("check --config c --shards 2")).unwrap_err().contains("unknown flag"));
        assert!(parse(&args("launch")).unwrap_err().contains("unknown command"));
        assert!(parse(&args("route --config c")).unwrap_err().contains("--request"));
        assert!(parse(&args("route --config c --request r --seed x")).unwrap_err().contains("--seed"));
        assert_eq!(parse(&[]).unwrap(), Command::Help);
    }
}
