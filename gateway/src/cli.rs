//! Command-line parsing: `pointwork serve|check|route|demo|hash-key`, declared once with clap
//! (derive); the declaration gives the help, and its errors are told in the gateway's words.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Args, CommandFactory, Parser, Subcommand};
use pointwork_config::{IoDriver, TlsOrigin, TlsSettings};

/// The synopsis at the head of the help: each command with its flags.
const SYNOPSIS: &str = "\
pointwork serve --config FILE [--listen HOST:PORT] [--shards N] [--io-driver auto|uring|legacy]
                    [--tls-cert CERT.pem --tls-key KEY.pem]
       pointwork check --config FILE [--strict]
       pointwork route --config FILE --request REQUEST.json [--state STATE.json] [--seed N] [--policy NAME]
       pointwork demo [--listen HOST:PORT] [--shards N] [--io-driver auto|uring|legacy]
                   [--tls-cert CERT.pem --tls-key KEY.pem]
       pointwork hash-key < KEY
       pointwork db init [--config FILE]
       pointwork claude|codex [--url URL | --config FILE] [--key KEY] [--model MODEL] [AGENT ARGS…]
       pointwork --version | --help";

/// What the HTTPS flags do, after the help of the commands that take them.
const HTTPS: &str = "\
HTTPS:
    --tls-cert, --tls-key   serve HTTPS with this PEM certificate chain and private key (both or
            neither); they win over pointwork.tls's cert and key and over $SSL_CERTFILE_PATH /
            $SSL_KEYFILE_PATH. LiteLLM's --ssl_certfile_path / --ssl_keyfile_path are the same flags.";

/// The commands `pointwork` knows, as its error for an unknown one lists them.
const COMMANDS: [&str; 8] = ["serve", "check", "route", "demo", "hash-key", "db", "claude", "codex"];

#[derive(Parser, Debug)]
#[command(
    name = "pointwork",
    version,
    about = "Pointwork — an LLM routing gateway",
    override_usage = SYNOPSIS,
    after_help = HTTPS,
    args_override_self = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Sub>,
}

#[derive(Subcommand, Debug)]
enum Sub {
    /// run the gateway on a LiteLLM-compatible config.yaml
    #[command(after_help = HTTPS)]
    Serve {
        #[command(flatten)]
        config: ConfigFlag,
        #[command(flatten)]
        overrides: OverrideFlags,
    },
    /// validate a config: a summary and exit 0, or every error with its key path and exit 1
    Check {
        #[command(flatten)]
        config: ConfigFlag,
        /// exit 1 also when an entry is left out (a provider Pointwork does not serve yet)
        #[arg(long)]
        strict: bool,
    },
    /// dry run: the routing decision for a request body (JSON), without calling a provider
    ///
    /// Exit 1 when a file is bad or the model is unknown (the decision printed still).
    Route {
        #[command(flatten)]
        config: ConfigFlag,
        /// the request body (JSON)
        #[arg(long, value_name = "REQUEST.json", allow_hyphen_values = true)]
        request: PathBuf,
        /// sets cooldowns, health, in-flight, latency and usage (see docs/operations.md)
        #[arg(long, value_name = "STATE.json", allow_hyphen_values = true)]
        state: Option<PathBuf>,
        /// the seed of the weighted shuffle
        #[arg(long, value_name = "N", default_value_t = 0, value_parser = seed, allow_hyphen_values = true)]
        seed: u64,
        /// the policy the request runs under (else pointwork.default_policy)
        #[arg(long, value_name = "NAME", allow_hyphen_values = true)]
        policy: Option<String>,
    },
    /// run the gateway in front of built-in mock providers (no keys, no network needed)
    #[command(after_help = HTTPS)]
    Demo {
        #[command(flatten)]
        overrides: OverrideFlags,
    },
    /// print the SHA-256 of a key read from standard input, for pointwork.auth's sha256
    ///
    /// The key is never a command-line argument: those show in the process list.
    HashKey {
        /// Refused with a message of its own (`unknown flag` would not say where the key goes).
        #[arg(hide = true, trailing_var_arg = true, allow_hyphen_values = true)]
        arguments: Vec<String>,
    },
    /// LiteLLM's database (DATABASE_URL, or the config's general_settings.database_url)
    #[command(subcommand)]
    Db(DbSub),
    /// Run Claude Code against the gateway (ANTHROPIC_BASE_URL, ANTHROPIC_AUTH_TOKEN, ANTHROPIC_MODEL)
    Claude(LaunchFlags),
    /// Run Codex against the gateway (a temporary CODEX_HOME with a Responses API provider)
    Codex(LaunchFlags),
    /// `pointwork version`, as `--version`.
    #[command(hide = true)]
    Version,
}

#[derive(Subcommand, Debug)]
enum DbSub {
    /// create the tables Pointwork uses, with LiteLLM's names and columns (what exists stays)
    Init {
        /// the config whose general_settings.database_url to use [default: $DATABASE_URL]
        #[arg(short = 'c', long, value_name = "FILE", allow_hyphen_values = true)]
        config: Option<PathBuf>,
    },
}

/// A coding agent's launch: which gateway, key and model, and the agent's own arguments.
#[derive(Args, Debug)]
struct LaunchFlags {
    /// the running gateway to use [default: http://127.0.0.1:4000]
    #[arg(long, value_name = "URL", conflicts_with = "config")]
    url: Option<String>,
    /// start a gateway on this config for the session (on a free loopback port)
    #[arg(short = 'c', long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// the key the agent sends [default: $POINTWORK_API_KEY, else the config's master key]
    #[arg(long, value_name = "KEY")]
    key: Option<String>,
    /// the gateway model the agent asks for [default: the config's first model]
    #[arg(long, value_name = "MODEL")]
    model: Option<String>,
    /// the agent's own arguments (after `--` when they start with `-`)
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "AGENT ARGS")]
    args: Vec<String>,
}

#[derive(Args, Debug)]
struct ConfigFlag {
    /// the LiteLLM-compatible config.yaml
    #[arg(short = 'c', long, value_name = "FILE", allow_hyphen_values = true)]
    config: PathBuf,
}

#[derive(Args, Debug)]
struct OverrideFlags {
    /// the address to listen on (else pointwork.listen)
    #[arg(long, value_name = "HOST:PORT", value_parser = listen, allow_hyphen_values = true)]
    listen: Option<SocketAddr>,
    /// the number of shards, one thread each (else pointwork.shards, else one per core)
    #[arg(long, value_name = "N", value_parser = shards, allow_hyphen_values = true)]
    shards: Option<usize>,
    /// the IO driver (else pointwork.io_driver)
    #[arg(long, value_name = "auto|uring|legacy", value_parser = io_driver, allow_hyphen_values = true)]
    io_driver: Option<IoDriver>,
    /// serve HTTPS with this PEM certificate chain (with --tls-key)
    #[arg(long, alias = "ssl_certfile_path", value_name = "CERT.pem", allow_hyphen_values = true)]
    tls_cert: Option<PathBuf>,
    /// the certificate's private key (PEM, with --tls-cert)
    #[arg(long, alias = "ssl_keyfile_path", value_name = "KEY.pem", allow_hyphen_values = true)]
    tls_key: Option<PathBuf>,
}

fn listen(v: &str) -> Result<SocketAddr, String> {
    v.parse().map_err(|_| format!("--listen: expected HOST:PORT (e.g. 127.0.0.1:4000), got {v:?}"))
}

fn shards(v: &str) -> Result<usize, String> {
    v.parse().ok().filter(|&n| n > 0).ok_or(format!("--shards: expected a positive integer, got {v:?}"))
}

fn io_driver(v: &str) -> Result<IoDriver, String> {
    IoDriver::from_name(v).ok_or(format!("--io-driver: expected auto, uring or legacy, got {v:?}"))
}

fn seed(v: &str) -> Result<u64, String> {
    v.parse().map_err(|_| format!("--seed: expected a non-negative integer, got {v:?}"))
}

/// The help of `pointwork` (`--help`, or no command).
pub fn help() -> String {
    Cli::command().render_help().to_string()
}

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
    /// `pointwork db init`: the database of `config` (else `DATABASE_URL`).
    DbInit {
        config: Option<PathBuf>,
    },
    Launch(LaunchArgs),
    /// `pointwork --help` (or no command at all).
    Help,
    /// `pointwork COMMAND --help`: that command's help.
    CommandHelp(String),
    Version,
}

pub fn parse(args: &[String]) -> Result<Command, String> {
    let argv = std::iter::once("pointwork").chain(args.iter().map(String::as_str));
    let sub = match Cli::try_parse_from(argv) {
        Ok(Cli { command: Some(sub) }) => sub,
        Ok(Cli { command: None }) => return Ok(Command::Help),
        Err(e) => return answer_or_refuse(&e, args),
    };
    Ok(match sub {
        Sub::Serve { config, overrides } => Command::Serve { config: config.config, overrides: overrides.try_into()? },
        Sub::Check { config, strict } => Command::Check { config: config.config, strict },
        Sub::Route { config, request, state, seed, policy } => {
            Command::Route(RouteArgs { config: config.config, request, state, seed, policy })
        }
        Sub::Demo { overrides } => Command::Demo { overrides: overrides.try_into()? },
        Sub::HashKey { arguments } if arguments.is_empty() => Command::HashKey,
        Sub::HashKey { .. } => {
            return Err("hash-key takes no arguments: it reads the key from standard input".to_string())
        }
        Sub::Db(DbSub::Init { config }) => Command::DbInit { config },
        Sub::Version => Command::Version,
        Sub::Claude(flags) => Command::Launch(LaunchArgs::new(Agent::Claude, flags)),
        Sub::Codex(flags) => Command::Launch(LaunchArgs::new(Agent::Codex, flags)),
    })
}

/// The coding agents `pointwork claude|codex` runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Agent {
    Claude,
    Codex,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchArgs {
    pub agent: Agent,
    pub url: Option<String>,
    pub config: Option<PathBuf>,
    pub key: Option<String>,
    pub model: Option<String>,
    /// The agent's own arguments.
    pub args: Vec<String>,
}

impl LaunchArgs {
    fn new(agent: Agent, f: LaunchFlags) -> LaunchArgs {
        LaunchArgs { agent, url: f.url, config: f.config, key: f.key, model: f.model, args: f.args }
    }
}

impl TryFrom<OverrideFlags> for Overrides {
    type Error = String;

    fn try_from(flags: OverrideFlags) -> Result<Overrides, String> {
        let tls = match (flags.tls_cert, flags.tls_key) {
            (Some(cert), Some(key)) => Some(TlsFiles { cert, key }),
            (Some(_), None) => return Err("--tls-cert needs --tls-key (the certificate's private key)".to_string()),
            (None, Some(_)) => return Err("--tls-key needs --tls-cert (the certificate chain)".to_string()),
            (None, None) => None,
        };
        Ok(Overrides { listen: flags.listen, shards: flags.shards, io_driver: flags.io_driver, tls })
    }
}

/// What clap stopped at: `--help` and `--version` are answers; anything else is refused in the
/// words `pointwork` has always used (the flag or command named, what it expected).
fn answer_or_refuse(e: &clap::Error, args: &[String]) -> Result<Command, String> {
    let command = args.first().filter(|a| COMMANDS.contains(&a.as_str()));
    let context = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => vec![s.clone()],
        Some(ContextValue::Strings(v)) => v.clone(),
        _ => Vec::new(),
    };
    // `--tls-cert <CERT.pem>` → `--tls-cert`; `--config <FILE>` → `--config FILE`.
    let flags = |spelled: Vec<String>| spelled.iter().map(|s| s.replace(['<', '>'], "")).collect::<Vec<_>>();
    Err(match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            // `pointwork --help` (or `help`); else a command's help (`serve --help`, `help serve`).
            return Ok(match args.len() {
                0 | 1 => Command::Help,
                _ => Command::CommandHelp(e.to_string()),
            });
        }
        ErrorKind::DisplayVersion => return Ok(Command::Version),
        ErrorKind::InvalidSubcommand | ErrorKind::UnknownArgument if command.is_none() => {
            let word = args.first().map(String::as_str).unwrap_or_default();
            format!("unknown command {word:?} (expected serve, check, route, demo, hash-key, db, claude or codex)")
        }
        ErrorKind::UnknownArgument => {
            let flag = context(ContextKind::InvalidArg).concat();
            match context(ContextKind::SuggestedArg).first() {
                Some(like) => format!("unknown flag {flag:?} (did you mean {like}?)"),
                None => format!("unknown flag {flag:?}"),
            }
        }
        ErrorKind::ValueValidation => match std::error::Error::source(e) {
            Some(reason) => reason.to_string(),
            None => e.to_string(),
        },
        ErrorKind::InvalidValue | ErrorKind::NoEquals => {
            let flag = flags(context(ContextKind::InvalidArg)).concat();
            format!("{} needs a value", flag.split(' ').next().unwrap_or_default())
        }
        ErrorKind::MissingRequiredArgument => {
            let missing = flags(context(ContextKind::InvalidArg));
            let verb = if missing.len() > 1 { "are" } else { "is" };
            format!("{}: {} {verb} required", command.map(String::as_str).unwrap_or("pointwork"), missing.join(" and "))
        }
        _ => e.to_string().trim_start_matches("error: ").lines().next().unwrap_or_default().to_string(),
    })
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
    fn db_init_with_or_without_a_config() {
        assert_eq!(parse(&args("db init")).unwrap(), Command::DbInit { config: None });
        assert_eq!(parse(&args("db init -c c.yaml")).unwrap(), Command::DbInit { config: Some("c.yaml".into()) });
        assert!(parse(&args("db drop")).is_err());
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

    /// Every flag that README.md, docs/*.md or the help shows after `pointwork COMMAND` parses
    /// on that command (with a value of its kind and the flags the command requires).
    #[test]
    fn every_documented_flag_parses() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut texts = vec![std::fs::read_to_string(root.join("README.md")).unwrap(), help()];
        for entry in std::fs::read_dir(root.join("docs")).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "md") {
                texts.push(std::fs::read_to_string(path).unwrap());
            }
        }
        let mut found: Vec<(String, String)> = texts.iter().flat_map(|t| documented_flags(t)).collect();
        for command in COMMANDS {
            let Ok(Command::CommandHelp(text)) = parse(&args(&format!("{command} --help"))) else {
                panic!("{command}")
            };
            let flags = text.split_whitespace().filter_map(flag_name).filter(|f| f != "--help");
            found.extend(flags.map(|f| (command.to_string(), f)));
        }
        found.sort();
        found.dedup();
        for expected in
            [("check", "--strict"), ("route", "--policy"), ("serve", "--tls-key"), ("demo", "--ssl_certfile_path")]
        {
            assert!(found.contains(&(expected.0.into(), expected.1.into())), "{expected:?} not found in {found:?}");
        }
        for (command, flag) in &found {
            let mut argv = vec!["pointwork".to_string(), command.clone()];
            argv.extend(args(match command.as_str() {
                "serve" | "check" => "--config c.yaml",
                "route" => "--config c.yaml --request r.json",
                "db" => "init",
                _ => "",
            }));
            argv.push(flag.clone());
            argv.extend(args(match flag.as_str() {
                "--strict" => "",
                "--listen" => "127.0.0.1:4000",
                "--shards" | "--seed" => "2",
                "--io-driver" => "legacy",
                "--tls-cert" | "--ssl_certfile_path" => "c.pem --tls-key k.pem",
                "--tls-key" | "--ssl_keyfile_path" => "k.pem --tls-cert c.pem",
                _ => "value",
            }));
            if let Err(e) = Cli::try_parse_from(&argv) {
                panic!("{argv:?}: {e}");
            }
            assert!(parse(&argv[1..]).is_ok(), "{argv:?}: {:?}", parse(&argv[1..]));
        }
    }

    #[test]
    fn an_unknown_flag_is_refused() {
        for line in ["serve --config c.yaml --no-such-flag", "demo --config c.yaml", "hash-key", "route --strict"] {
            let argv = std::iter::once("pointwork").chain(line.split_whitespace());
            let refused = Cli::try_parse_from(argv).map_err(|e| e.kind());
            match line {
                "hash-key" => assert!(refused.is_ok()),
                _ => assert_eq!(refused.unwrap_err(), clap::error::ErrorKind::UnknownArgument, "{line}"),
            }
        }
        assert_eq!(
            parse(&args("serve --config c.yaml --no-such-flag")).unwrap_err(),
            r#"unknown flag "--no-such-flag""#
        );
    }

    /// `--io-driver` of `[--io-driver`, `--tls-key=k.pem` or `--seed]`.
    fn flag_name(word: &str) -> Option<String> {
        let word = word.trim_start_matches('[').trim_end_matches([']', ',', '.']);
        let name = word.split('=').next()?;
        let ok = name.len() > 2
            && name.starts_with("--")
            && name[2..].chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        ok.then(|| name.to_string())
    }

    /// `(command, flag)` for every flag written after `pointwork COMMAND` on a line (up to a
    /// comment, a backtick, a pipe or `&`) and on the bracketed lines that continue it.
    fn documented_flags(text: &str) -> Vec<(String, String)> {
        let mut found = Vec::new();
        let mut command: Option<&str> = None;
        for line in text.lines() {
            let mut segments = Vec::new();
            match command {
                Some(c) if line.trim_start().starts_with("[--") => segments.push((c, line)),
                _ => command = None,
            }
            for (at, _) in line.match_indices("pointwork ") {
                let rest = &line[at + "pointwork ".len()..];
                let Some(c) = COMMANDS.into_iter().find(|c| rest.split_whitespace().next() == Some(c)) else {
                    continue;
                };
                segments.push((c, rest));
                command = Some(c);
            }
            for (c, segment) in segments {
                let end = segment.find(['#', '`', '|', '&', ';']).unwrap_or(segment.len());
                found.extend(segment[..end].split_whitespace().filter_map(flag_name).map(|f| (c.to_string(), f)));
            }
        }
        found
    }
}
