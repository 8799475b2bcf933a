//! What each command does: load the config, build the routes, start the shards, report.

use std::fmt::Display;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use pointwork_config::{Config, Loaded, TlsSettings};
use pointwork_core::Resolution;

use crate::access_log::Sink;
use crate::cli::{self, Command, Overrides};
use crate::control::{self, Control};
use crate::health;
use crate::hub::Hub;
use crate::routes::{Routes, Tokens};
use crate::server::tls::{expiry_warning, TlsCerts};
use crate::server::tls_listener::TlsListener;
use crate::server::{self, Driver, Launch};
use crate::spend_file::SpendFile;

pub fn run(args: &[String]) -> ExitCode {
    let command = match cli::parse(args) {
        Ok(c) => c,
        Err(e) => {
            print_err(format_args!("pointwork: {e}\n\n{}", cli::USAGE));
            return ExitCode::from(2);
        }
    };
    match command {
        Command::Help => answer(cli::USAGE.trim_end()),
        Command::Version => answer(format_args!("pointwork {}", env!("CARGO_PKG_VERSION"))),
        Command::Check { config, strict } => check(&config, strict),
        Command::Serve { config, overrides } => match pointwork_config::load_file(&config) {
            Ok(loaded) => serve(loaded, Some(config), &overrides, None),
            Err(errors) => fail(&format!("{}: invalid config:\n{errors}", config.display())),
        },
        Command::Route(args) => route(&args),
        Command::Demo { overrides } => crate::demo::run(&overrides),
        Command::HashKey => hash_key(),
    }
}

/// `pointwork check`: the config's errors (its routes', and the listener's certificate and key
/// when TLS is on, read as `serve` reads them), or its summary; `--strict` fails on entries left
/// out.
fn check(config: &Path, strict: bool) -> ExitCode {
    let mut loaded = match pointwork_config::load_file(config) {
        Ok(loaded) => loaded,
        Err(errors) => return fail(&format!("{}: invalid config:\n{errors}", config.display())),
    };
    print_warnings(&loaded);
    let mut errors = Vec::new();
    if let Err(e) = Routes::from_config(&loaded.config, None, Tokens::CheckOnly) {
        errors.push(e);
    }
    let tls_seconds_left = match loaded.config.gateway.tls.as_ref().map(check_tls).transpose() {
        Ok(left) => left,
        Err(e) => {
            errors.push(e);
            None
        }
    };
    if !errors.is_empty() {
        return fail(&format!("{}: invalid config:\n{}", config.display(), errors.join("\n")));
    }
    if let (Some(tls), Some(left)) = (&loaded.config.gateway.tls, tls_seconds_left) {
        if let Some(warning) = expiry_warning(&tls.cert.display().to_string(), left) {
            print_err(format_args!("pointwork: warning: {warning}"));
            loaded.config.warning_count += 1;
        }
    }
    let answered = answer(loaded.config.summary_with_tls_expiry(tls_seconds_left));
    let left_out = loaded.config.left_out.len();
    match strict && left_out > 0 && answered == ExitCode::SUCCESS {
        true => fail(&format!("{}: --strict: {left_out} entries left out", config.display())),
        false => answered,
    }
}

/// Builds the listener's TLS configuration from its files as `serve` does (the chain, the key
/// matching it, the client CA; errors name the setting and the file); the seconds until the
/// certificate expires.
fn check_tls(tls: &TlsSettings) -> Result<i64, String> {
    TlsCerts::load(tls).map(|certs| certs.seconds_until_expiry(std::time::SystemTime::now()))
}

/// `pointwork hash-key`: the digest of the first line of standard input.
fn hash_key() -> ExitCode {
    let mut line = String::new();
    if let Err(e) = std::io::stdin().read_line(&mut line) {
        return fail(&format!("cannot read the key from standard input: {e}"));
    }
    let key = line.trim_end_matches(['\r', '\n']);
    if key.is_empty() {
        return fail("no key on standard input (try: printf %s \"$KEY\" | pointwork hash-key)");
    }
    answer(crate::keys::digest_hex(key.as_bytes()))
}

/// `pointwork route`: prints the dry run's JSON; exit 1 (with the reason) when a file is bad or
/// the request's model is unknown (its JSON printed still).
fn route(args: &cli::RouteArgs) -> ExitCode {
    let loaded = match pointwork_config::load_file(&args.config) {
        Ok(l) => l,
        Err(errors) => return fail(&format!("{}: invalid config:\n{errors}", args.config.display())),
    };
    let routes = match Routes::from_config(&loaded.config, None, Tokens::CheckOnly) {
        Ok(r) => r,
        Err(e) => return fail(&format!("{}: invalid config:\n{e}", args.config.display())),
    };
    let read_json = |path: &std::path::Path| -> Result<(Vec<u8>, serde_json::Value), String> {
        let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let value = serde_json::from_slice(&bytes).map_err(|e| format!("{}: not JSON: {e}", path.display()))?;
        Ok((bytes, value))
    };
    let (body, request) = match read_json(&args.request) {
        Ok(r) => r,
        Err(e) => return fail(&e),
    };
    let now = std::time::Instant::now();
    let state = match &args.state {
        None => pointwork_core::State::new(&routes.snapshot),
        Some(path) => match read_json(path).and_then(|(_, v)| crate::route::state_from_json(&routes, &v, now)) {
            Ok(s) => s,
            Err(e) => return fail(&format!("{}: {e}", path.display())),
        },
    };
    // `--policy NAME`, else the default policy when the config has one.
    let policy = args.policy.as_deref();
    // The walk's part explains on what the poller last persisted.
    let telemetry = routes.pareto.as_ref().map(|p| crate::pareto_poller::read_cache(&p.settings)).unwrap_or_default();
    match crate::route::explain(
        &routes,
        &state,
        crate::route::route_kind_of(&request),
        &body,
        now,
        args.seed,
        policy,
        &telemetry,
    ) {
        Ok(v) => {
            if let Err(code) = print_line(serde_json::to_string_pretty(&v).unwrap_or_default()) {
                return code;
            }
            // A model the config does not know is a mistake in the request (or the config), not
            // a routing outcome such as every deployment cooling down: scripts must see it.
            let model = v["model"].as_str().unwrap_or_default();
            let unknown = match v.get("policy") {
                Some(_) => v["error"]["code"] == "model_not_found",
                None => matches!(routes.snapshot.resolve(model), Resolution::Unknown),
            };
            if unknown {
                let message = v["error"]["message"].as_str().unwrap_or("unknown model");
                return fail(&format!("{}: {message}", args.request.display()));
            }
            ExitCode::SUCCESS
        }
        Err(e) => fail(&format!("{}: {}", args.request.display(), e.message)),
    }
}

fn fail(message: &str) -> ExitCode {
    print_err(format_args!("pointwork: {message}"));
    ExitCode::FAILURE
}

fn print_warnings(loaded: &Loaded) {
    for w in &loaded.warnings {
        print_err(format_args!("pointwork: warning: {w}"));
    }
}

/// Prints a command's answer: exit 0, or 1 when standard output cannot take it.
fn answer(text: impl Display) -> ExitCode {
    print_line(text).err().unwrap_or(ExitCode::SUCCESS)
}

/// Writes `text` and a newline to standard output. `println!` panics when the reader has gone
/// (`pointwork route … | head -1` closes the pipe after one line); the reader chose to stop, so
/// a closed pipe is no error and the command keeps its exit status. Any other write error
/// (a full disk) fails the command.
fn print_line(text: impl Display) -> Result<(), ExitCode> {
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}").and_then(|()| out.flush()) {
        Err(e) if e.kind() != ErrorKind::BrokenPipe => Err(fail(&format!("cannot write to standard output: {e}"))),
        _ => Ok(()),
    }
}

/// Writes `text` and a newline to standard error, where a failure has nowhere left to be told
/// (`eprintln!` would panic on it).
fn print_err(text: impl Display) {
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

/// Starts the gateway on a loaded config and serves until a drain ends it. `config_path` is the
/// file reloads re-read (`None` for the demo); `banner` is printed once listening.
pub fn serve(
    loaded: Loaded,
    config_path: Option<PathBuf>,
    overrides: &Overrides,
    banner: Option<&dyn Fn(std::net::SocketAddr) -> String>,
) -> ExitCode {
    print_warnings(&loaded);
    let config: Config = loaded.config;
    let routes = match Routes::from_config(&config, None, Tokens::Obtain) {
        Ok(r) => r,
        Err(e) => return fail(&format!("invalid config:\n{e}")),
    };
    let gateway = config.gateway.clone();
    let listen = overrides.listen.unwrap_or(gateway.listen);
    let shards = overrides
        .shards
        .or(gateway.shards)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let driver = match Driver::resolve(overrides.io_driver.unwrap_or(gateway.io_driver)) {
        Ok(d) => d,
        Err(e) => return fail(&e.to_string()),
    };
    let access_log = match Sink::open(&gateway.access_log) {
        Ok(sink) => sink,
        Err(e) => return fail(&format!("pointwork.access_log: cannot open {:?}: {e}", gateway.access_log)),
    };
    // What the shards run with: the config's settings, the connection cap within what the
    // open-file limit allows (a reload compares the config's own settings, `gateway`).
    let mut settings = gateway.clone();
    let open_files = crate::server::raise_open_files();
    let fits = crate::server::connections_that_fit(open_files, shards);
    if fits < settings.limits.max_connections_per_shard {
        eprintln!(
            "pointwork: the open-file limit is {open_files}: at most {fits} client connections per shard \
             (pointwork.limits.max_connections_per_shard says {}; each may hold an upstream connection too; \
             raise the hard limit with ulimit -n or systemd's LimitNOFILE)",
            settings.limits.max_connections_per_shard
        );
        settings.limits.max_connections_per_shard = fits;
    }
    let (control_tx, control_rx) = crossbeam_channel::unbounded();
    if let Err(e) = control::forward_signals(control_tx.clone()) {
        return fail(&format!("cannot install signal handlers: {e}"));
    }
    let spend_file = match &config.auth.spend_file {
        Some(path) => match SpendFile::open(path, &routes.keys) {
            Ok(file) => Some(file),
            Err(e) => return fail(&format!("pointwork.auth.spend_file: {e}")),
        },
        None => None,
    };
    let routes_line = routes_summary(&routes);
    let pareto = routes.pareto.as_ref().map(|p| p.settings.clone());
    let hub = Hub::new(routes, control_tx);
    // The walk's telemetry poller, only when the config turns the walk on (with Redis, polling
    // only while it holds the poller's lease).
    if gateway.cluster.is_some() {
        hub.pareto.share_between_instances();
    }
    hub.pareto.configure(pareto);
    let (outbox, cluster) = gateway.cluster.as_ref().map(crate::cluster::prepare).unzip();
    settings.tls = overrides.tls(gateway.tls.as_ref());
    if let Some(tls) = &settings.tls {
        match TlsCerts::load(tls) {
            Ok(certs) => {
                let left = certs.seconds_until_expiry(std::time::SystemTime::now());
                if let Some(warning) = expiry_warning(&tls.cert.display().to_string(), left) {
                    eprintln!("pointwork: warning: {warning}");
                }
                let _ = hub.tls.set(Arc::new(TlsListener { certs, handshakes: Default::default() }));
            }
            Err(e) => return fail(&e),
        }
    }
    let scheme = if settings.tls.is_some() { "https" } else { "http" };
    let settings = Arc::new(settings);
    let launch = Launch { listen, shards, driver, settings, hub: hub.clone(), access_log, cluster: outbox };
    let (running, mesh) = match server::start(launch) {
        Ok(r) => r,
        Err(e) => return fail(&e.to_string()),
    };
    if let (Some(cluster), Some(cluster_settings)) = (cluster, &gateway.cluster) {
        match cluster.start(hub.clone(), mesh.clone(), running.addr) {
            Ok(status) => {
                eprintln!(
                    "pointwork: cluster: sharing state through Redis at {} as instance {:?}",
                    status.server, status.instance
                );
                crate::pareto_poller::share::start(&hub, &status, cluster_settings);
            }
            Err(e) => return fail(&format!("cluster: {e}")),
        }
    }
    health::start(&hub, mesh, &gateway);
    // A closed standard output (`pointwork demo | head -1`) must not stop a gateway that serves.
    let _ = print_line(format_args!(
        "pointwork {}: {routes_line}; {} shards on {}; listening on {scheme}://{}",
        env!("CARGO_PKG_VERSION"),
        running.shards,
        running.driver.name(),
        running.addr
    ));
    if let Some(banner) = banner {
        let _ = print_line(banner(running.addr));
    }
    let exit = Control {
        hub: hub.clone(),
        inbox: control_rx,
        config_path,
        started_with: gateway,
        overrides: overrides.clone(),
        drain_signals: running.drain_signals,
        spend_file,
    }
    .run();
    // Drained: the last counts go to Redis, and another instance takes over this one's leases
    // at once.
    if let Some(status) = hub.cluster.get() {
        status.leave(std::time::Duration::from_secs(2));
        status.release_leases();
    }
    exit
}

/// `3 model groups, 5 deployments, strategy simple-shuffle, access log off`.
fn routes_summary(routes: &Routes) -> String {
    let snap = &routes.snapshot;
    format!(
        "{} model groups, {} deployments, routing strategy {}",
        snap.groups.len(),
        snap.deployments.len(),
        snap.settings.routing_strategy.as_str()
    )
}
