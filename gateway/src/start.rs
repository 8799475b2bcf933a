//! `pointwork serve` once its config is loaded (and `pointwork demo` once its mocks run): build
//! the routes, start the shards, the control thread and the cluster, and serve until drained.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use pointwork_config::{Config, GatewaySettings, Loaded, TlsSettings};

use crate::access_log::Sink;
use crate::cli::Overrides;
use crate::control::stored_models::{self, StoredModelsSlot};
use crate::control::{self, Control};
use crate::health;
use crate::hub::Hub;
use crate::output::{fail, print_line, print_warnings};
use crate::routes::{Routes, Tokens};
use crate::server::{self, Driver, Launch};
use crate::spend_file::SpendFile;
use crate::tls::listener::TlsListener;
use crate::tls::{expiry_warning, TlsCerts};

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
    let mut settings = within_open_files(gateway.clone(), shards);
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
    if let Some(export) = crate::export::Exporters::start(&config.export) {
        eprintln!("pointwork: export: {}", export.describe());
        let _ = hub.export.set(export);
    }
    if let Err(e) = crate::mcp::upstream::Upstreams::serve(&hub.mcp, &config.mcp) {
        return fail(&e);
    }
    let mut stored = Vec::new();
    let mut stored_slot = None;
    if let Some(database) = &config.database {
        let slot = database.store_model_in_db.then(|| StoredModelsSlot::new(hub.control.clone()));
        match start_database(database, &config, slot.as_ref()) {
            Ok(db) => {
                let _ = hub.database.set(db);
            }
            Err(e) => return fail(&e),
        }
        // The models stored in the database were read at start: they serve from the first
        // request on.
        if let Some(models) = slot.as_ref().and_then(|s| s.take()) {
            let entries = stored_models::entries(&models);
            // They never keep the gateway from starting: the file's models serve without them.
            match stored_models::publish(&hub, &config, &entries, &models.warnings) {
                Ok(line) => eprintln!("pointwork: database: {line}"),
                Err(e) => eprintln!("pointwork: warning: the models stored in the database do not serve: {e}"),
            }
            stored = entries;
        }
        stored_slot = slot;
    }
    let (outbox, cluster) = gateway.cluster.as_ref().map(crate::cluster::prepare).unzip();
    settings.tls = overrides.tls(gateway.tls.as_ref());
    if let Some(tls) = &settings.tls {
        match TlsCerts::load(tls) {
            Ok(certs) => listen_with(&hub, tls, certs),
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
    let mut status = None;
    if let (Some(cluster), Some(cluster_settings)) = (cluster, &gateway.cluster) {
        match cluster.start(hub.clone(), mesh.clone(), running.addr) {
            Ok(started) => {
                if let Err(e) = hub.responses.share_through(started.client().clone(), &cluster_settings.key_prefix) {
                    return fail(&format!("cluster: the Responses API's conversations: {e}"));
                }
                eprintln!(
                    "pointwork: cluster: sharing state through Redis at {} as instance {:?}",
                    started.server, started.instance
                );
                let interval = hub.routes.load().pareto.as_ref().map(|p| p.settings.telemetry.poll_interval);
                crate::pareto_poller::share::start(&hub.pareto, interval, &started, cluster_settings);
                status = Some(started);
            }
            Err(e) => return fail(&format!("cluster: {e}")),
        }
    }
    health::start(&hub, mesh, &gateway, status.as_deref());
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
        file_config: config,
        stored,
        stored_slot,
    }
    .run();
    // Drained: the MCP servers' sessions end, their children stopped and reaped.
    if let Some(mcp) = hub.mcp.get() {
        mcp.stop(std::time::Duration::from_secs(5));
    }
    // Drained: the last requests' records go to the exporters.
    if let Some(export) = hub.export.get() {
        export.flush_blocking(std::time::Duration::from_secs(3));
    }
    // Drained: the spend not yet written goes to the database (or the pending file).
    if let Some(db) = hub.database.get() {
        db.flush_blocking(std::time::Duration::from_secs(5));
    }
    // Drained: the last counts go to Redis, and another instance takes over this one's leases
    // at once.
    if let Some(status) = status {
        status.leave(std::time::Duration::from_secs(2));
        status.release_leases();
    }
    exit
}

/// Starts the database thread: it checks the schema now, and goes on trying a database that is
/// away. Spend that waits for it is kept beside `pointwork.auth.spend_file`, when there is one.
fn start_database(
    database: &pointwork_config::Database,
    config: &Config,
    stored_models: Option<&Arc<StoredModelsSlot>>,
) -> Result<pointwork_db::Database, String> {
    let mut settings = crate::database::commands::settings(database, config);
    settings.on_models = stored_models.map(|slot| slot.sink());
    let url = settings.redacted_url();
    let db = pointwork_db::Database::start(settings)?;
    match db.status.is_connected() {
        true => eprintln!("pointwork: database: LiteLLM's schema at {url}"),
        false => {
            eprintln!("pointwork: database: {url} is away ({}); trying again every second", db.status.last_error())
        }
    }
    Ok(db)
}

/// `settings` with at most as many client connections per shard as the open-file limit allows
/// `shards` (raised as far as it goes first), said on stderr when that is fewer.
fn within_open_files(mut settings: GatewaySettings, shards: usize) -> GatewaySettings {
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
    settings
}

/// The listener terminates TLS with `certs` (warned of when they expire within 14 days).
fn listen_with(hub: &Hub, tls: &TlsSettings, certs: TlsCerts) {
    let left = certs.seconds_until_expiry(std::time::SystemTime::now());
    if let Some(warning) = expiry_warning(&tls.cert.display().to_string(), left) {
        eprintln!("pointwork: warning: {warning}");
    }
    let _ = hub.tls.set(Arc::new(TlsListener { certs, handshakes: Default::default() }));
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
