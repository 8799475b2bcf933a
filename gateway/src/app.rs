//! What each command does: load the config, build the routes, start the shards, report.

use std::process::ExitCode;
use std::sync::Arc;

use arc_swap::ArcSwap;
use switchyard_config::{Config, Loaded};

use crate::cli::{self, Command, Overrides};
use crate::routes::Routes;
use crate::server::{self, Driver};

pub fn run(args: &[String]) -> ExitCode {
    let command = match cli::parse(args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("switchyard: {e}\n\n{}", cli::USAGE);
            return ExitCode::from(2);
        }
    };
    match command {
        Command::Help => {
            print!("{}", cli::USAGE);
            ExitCode::SUCCESS
        }
        Command::Version => {
            println!("switchyard {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        Command::Check { config } => match switchyard_config::load_file(&config) {
            Ok(loaded) => {
                print_warnings(&loaded);
                match loaded.config.snapshot().map_err(|e| e.to_string()).and_then(Routes::build) {
                    Ok(_) => {
                        println!("{}", loaded.config.summary());
                        ExitCode::SUCCESS
                    }
                    Err(e) => fail(&format!("{}: invalid config:\n{e}", config.display())),
                }
            }
            Err(errors) => fail(&format!("{}: invalid config:\n{errors}", config.display())),
        },
        Command::Serve { config, overrides } => match switchyard_config::load_file(&config) {
            Ok(loaded) => serve(loaded, &overrides, None),
            Err(errors) => fail(&format!("{}: invalid config:\n{errors}", config.display())),
        },
        Command::Demo { overrides } => crate::demo::run(&overrides),
    }
}

fn fail(message: &str) -> ExitCode {
    eprintln!("switchyard: {message}");
    ExitCode::FAILURE
}

fn print_warnings(loaded: &Loaded) {
    for w in &loaded.warnings {
        eprintln!("switchyard: warning: {w}");
    }
}

/// Starts the gateway on a loaded config and serves until the process is stopped.
/// `banner` is printed once listening (the demo's hints).
pub fn serve(
    loaded: Loaded,
    overrides: &Overrides,
    banner: Option<&dyn Fn(std::net::SocketAddr) -> String>,
) -> ExitCode {
    print_warnings(&loaded);
    let config: Config = loaded.config;
    let routes = match config.snapshot().map_err(|e| e.to_string()).and_then(Routes::build) {
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
    let groups = routes.snapshot.groups.len();
    let deployments = routes.snapshot.deployments.len();
    let routes = Arc::new(ArcSwap::from_pointee(routes));
    let running = match server::start(listen, shards, driver, Arc::new(gateway), routes) {
        Ok(r) => r,
        Err(e) => return fail(&e.to_string()),
    };
    println!(
        "switchyard {}: {groups} model groups, {deployments} deployments; {} shards on {}; listening on http://{}",
        env!("CARGO_PKG_VERSION"),
        running.shards,
        running.driver.name(),
        running.addr
    );
    if let Some(banner) = banner {
        println!("{}", banner(running.addr));
    }
    running.join();
    ExitCode::SUCCESS
}
