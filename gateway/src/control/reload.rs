//! One reload: re-read the config file (and its includes), build new routes, publish them.
//! A config with any error is refused whole, with every error and its key path; the routes in
//! service stay. Requests in flight keep the routes they started with.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use std::time::SystemTime;

use pointwork_config::{Config, GatewaySettings, StoredModel, TlsSettings};
use serde::Serialize;

use super::diff::Changes;
use crate::cli::Overrides;
use crate::export::Exporters;
use crate::hub::Hub;
use crate::keys::key_changes;
use crate::tls::expiry_warning;
use crate::tls::listener::TlsListener;

#[derive(Clone, Debug, Serialize)]
pub struct ReloadReport {
    pub config: String,
    pub model_groups: usize,
    pub deployments: usize,
    pub changes: Changes,
    /// Virtual keys added, removed or changed (by name).
    pub keys: Option<String>,
    /// `pointwork:` settings that changed but only take effect on a restart.
    pub restart_needed_for: Vec<&'static str>,
    /// The listener's certificate, re-read (when Pointwork terminates TLS).
    pub tls: Option<String>,
    /// Deployments an admin blocked (`true`) or unblocked (`false`) at run time, by id: their
    /// word stands over the file's `model_info.blocked` (`POST /admin/deployments/{id}/block`).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub blocked_by_admin: BTreeMap<String, bool>,
}

impl ReloadReport {
    /// One line for the log.
    pub fn summary(&self) -> String {
        let mut line = format!(
            "{}: {}; now {} model groups, {} deployments",
            self.config,
            self.changes.describe(),
            self.model_groups,
            self.deployments
        );
        if let Some(keys) = &self.keys {
            line.push_str(&format!("; {keys}"));
        }
        if let Some(tls) = &self.tls {
            line.push_str(&format!("; {tls}"));
        }
        if !self.blocked_by_admin.is_empty() {
            let said: Vec<String> = self
                .blocked_by_admin
                .iter()
                .map(|(id, &blocked)| format!("{id} {}", if blocked { "blocked" } else { "unblocked" }))
                .collect();
            line.push_str(&format!("; admin overrides kept: {}", said.join(", ")));
        }
        if !self.restart_needed_for.is_empty() {
            line.push_str(&format!(
                " (changed but applied only on restart: pointwork.{})",
                self.restart_needed_for.join(", pointwork.")
            ));
        }
        line
    }
}

/// Re-reads the file and publishes it with the models stored in the database (`stored`, none
/// without `store_model_in_db`). Returns the report and the file's own config (what a change
/// of the stored models is compiled with next).
pub fn reload(
    hub: &Hub,
    path: Option<&Path>,
    started_with: &GatewaySettings,
    overrides: &Overrides,
    stored: &[StoredModel],
) -> Result<(ReloadReport, Config), String> {
    let Some(path) = path else {
        return Err("this gateway runs on an embedded config (the demo): there is no file to re-read".to_string());
    };
    let loaded =
        pointwork_config::load_file(path).map_err(|errors| format!("{}: invalid config:\n{errors}", path.display()))?;
    for w in &loaded.warnings {
        eprintln!("pointwork: warning: {w}");
    }
    let old = hub.routes.load();
    let (routes, _) = super::stored_models::routes_with(&loaded.config, stored, &old, &hub.blocked_by_admin)
        .map_err(|e| format!("{}: invalid config:\n{e}", path.display()))?;
    crate::mcp::upstream::Upstreams::check(&loaded.config.mcp)
        .map_err(|e| format!("{}: invalid config:\n{e}", path.display()))?;
    let mut restart_needed_for = restart_only_changes(started_with, &loaded.config.gateway);
    if Exporters::differ(hub.export.get().map(|e| &**e), &loaded.config.export) {
        restart_needed_for.push("telemetry");
    }
    // The certificate last: a broken one refuses the whole reload, routes included.
    let tls = overrides.tls(loaded.config.gateway.tls.as_ref());
    let tls = match (hub.tls.get(), &tls) {
        (Some(listener), Some(settings)) => Some(reload_certificate(listener, settings)?),
        (None, None) => None,
        _ => {
            restart_needed_for.push("tls");
            None
        }
    };
    let report = ReloadReport {
        config: path.display().to_string(),
        model_groups: routes.snapshot.groups.len(),
        deployments: routes.snapshot.deployments.len(),
        changes: Changes::between(&old.snapshot, &routes.snapshot),
        keys: key_changes(&old.keys, &routes.keys),
        restart_needed_for,
        tls,
        blocked_by_admin: hub.blocked_by_admin.listed(),
    };
    let pareto = routes.pareto.as_ref().map(|p| p.settings.clone());
    let mcp_changed = old.mcp != routes.mcp;
    hub.routes.store(Arc::new(routes));
    // The walk's poller keeps what it learned under unchanged rules, starts or stops with it.
    hub.pareto.configure(pareto);
    // New and changed MCP servers get new sessions; calls under way finish on the old ones.
    if let Err(e) = crate::mcp::upstream::Upstreams::serve(&hub.mcp, &loaded.config.mcp) {
        eprintln!("pointwork: warning: the MCP servers could not be started: {e}");
    }
    if mcp_changed {
        hub.mcp_clients.push(crate::mcp::pushed::Pushed::ListsChanged);
    }
    Ok((report, loaded.config))
}

/// Re-reads the listener's certificate and key: new handshakes get them, open connections keep
/// theirs. A file that does not load leaves the certificate in service (and refuses the reload).
fn reload_certificate(listener: &TlsListener, settings: &TlsSettings) -> Result<String, String> {
    listener
        .certs
        .reload(settings)
        .map_err(|e| format!("TLS certificate not replaced (the current one keeps serving): {e}"))?;
    let left = listener.certs.seconds_until_expiry(SystemTime::now());
    if let Some(warning) = expiry_warning(&settings.cert.display().to_string(), left) {
        eprintln!("pointwork: warning: {warning}");
    }
    Ok(format!("TLS certificate {} re-read (expires in {} days)", settings.cert.display(), left / 86_400))
}

/// The `pointwork:` keys whose new value the running shards cannot take on.
fn restart_only_changes(old: &GatewaySettings, new: &GatewaySettings) -> Vec<&'static str> {
    let mut changed = Vec::new();
    let mut check = |name: &'static str, differs: bool| {
        if differs {
            changed.push(name);
        }
    };
    check("listen", old.listen != new.listen);
    check("shards", old.shards != new.shards);
    check("io_driver", old.io_driver != new.io_driver);
    check("limits", old.limits != new.limits);
    check("timeouts", old.timeouts != new.timeouts);
    check("drain_timeout", old.drain_timeout != new.drain_timeout);
    check("access_log", old.access_log != new.access_log);
    check("health_checks", old.health_checks != new.health_checks);
    check("cluster", old.cluster != new.cluster);
    changed
}
