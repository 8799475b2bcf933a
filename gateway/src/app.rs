//! What each command does: `check`, `route` and `hash-key` here (`db init` in `database`); `serve` loads its config and
//! starts the gateway (`start`), `demo` starts its mocks first (`demo`).

use std::path::Path;
use std::process::ExitCode;

use pointwork_config::TlsSettings;
use pointwork_core::Resolution;

use crate::cli::{self, Command};
use crate::output::{answer, fail, print_err, print_line, print_warnings};
use crate::routes::{Routes, Tokens};
use crate::start;
use crate::tls::{expiry_warning, TlsCerts};

pub fn run(args: &[String]) -> ExitCode {
    let command = match cli::parse(args) {
        Ok(c) => c,
        Err(e) => {
            print_err(format_args!("pointwork: {e}\n\n{}", cli::help().trim_end()));
            return ExitCode::from(2);
        }
    };
    match command {
        Command::Help => answer(cli::help().trim_end()),
        Command::CommandHelp(text) => answer(text.trim_end()),
        Command::Version => answer(format_args!("pointwork {}", env!("CARGO_PKG_VERSION"))),
        Command::Check { config, strict } => check(&config, strict),
        Command::Serve { config, overrides } => match pointwork_config::load_file(&config) {
            Ok(loaded) => start::serve(loaded, Some(config), &overrides, None),
            Err(errors) => fail(&format!("{}: invalid config:\n{errors}", config.display())),
        },
        Command::Route(args) => route(&args),
        Command::Demo { overrides } => crate::demo::run(&overrides),
        Command::HashKey => hash_key(),
        Command::DbInit { config } => crate::database::commands::init(config.as_deref()),
        Command::Launch(args) => crate::launch::run(&args),
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
    let database = match loaded.config.database.as_ref().map(crate::database::commands::check_line).transpose() {
        Ok(line) => line,
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
    let mut summary = loaded.config.summary_with_tls_expiry(tls_seconds_left);
    if let Some(line) = database {
        summary.insert_str(summary.rfind("warnings: ").unwrap_or(summary.len()), &format!("{line}\n"));
    }
    let answered = answer(summary);
    let left_out = loaded.config.left_out.len();
    let placeholders = &loaded.config.placeholders;
    match strict && (left_out > 0 || !placeholders.is_empty()) && answered == ExitCode::SUCCESS {
        true if left_out > 0 => fail(&format!("{}: --strict: {left_out} entries left out", config.display())),
        true => fail(&format!("{}: --strict: {}", config.display(), placeholders.join("; "))),
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
