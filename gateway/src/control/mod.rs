//! The control thread: the process's main thread once the shards run. It owns config reloads
//! (SIGHUP, `POST /admin/reload`), the drain on SIGTERM/SIGINT, and the merging of the shards'
//! metrics. Shards never wait on it: they send it messages and, for an admin reload, await a
//! oneshot reply.

mod diff;
mod reload;
pub mod stored_models;

pub use diff::Changes;
pub use reload::{reload, ReloadReport};

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use futures_channel::oneshot;
use pointwork_config::{Config, GatewaySettings, StoredModel};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

use crate::cli::Overrides;
use crate::hub::{ControlMsg, Hub};
use crate::spend_file::SpendFile;

/// Forwards SIGHUP, SIGTERM and SIGINT to the control thread. Installed before the shards
/// start, so that an early signal is never the default action (which would kill the process).
pub fn forward_signals(to: Sender<ControlMsg>) -> std::io::Result<()> {
    let mut signals = signal_hook::iterator::Signals::new([SIGHUP, SIGTERM, SIGINT])?;
    std::thread::Builder::new().name("signals".into()).spawn(move || {
        for signal in signals.forever() {
            if to.send(ControlMsg::Signal(signal)).is_err() {
                return;
            }
        }
    })?;
    Ok(())
}

pub struct Control {
    pub hub: Arc<Hub>,
    pub inbox: Receiver<ControlMsg>,
    /// The config file reloads re-read; `None` for the demo's embedded config.
    pub config_path: Option<PathBuf>,
    /// The settings the shards started with (some only take effect on a restart).
    pub started_with: GatewaySettings,
    /// The command line's overrides: its `--tls-cert` / `--tls-key` hold across reloads.
    pub overrides: Overrides,
    /// One per shard: dropping or firing it makes the shard stop accepting and drain.
    pub drain_signals: Vec<oneshot::Sender<()>>,
    /// Where the virtual keys' spend is kept across restarts, if anywhere.
    pub spend_file: Option<SpendFile>,
    /// The config file's own config (without the stored models): what the stored models are
    /// compiled with when they change.
    pub file_config: Config,
    /// The models stored in the database (`store_model_in_db`) in service, and the slot
    /// the database thread leaves new sets in.
    pub stored: Vec<StoredModel>,
    pub stored_slot: Option<Arc<stored_models::StoredModelsSlot>>,
}

impl Control {
    /// Serves control messages until the shards have drained (or the grace period ran out),
    /// then writes the keys' spend a last time.
    pub fn run(mut self) -> ExitCode {
        let code = self.serve_messages();
        self.save_spend();
        code
    }

    fn save_spend(&mut self) {
        if let Some(file) = &mut self.spend_file {
            file.save(&self.hub.routes.load().keys);
        }
    }

    fn serve_messages(&mut self) -> ExitCode {
        let shards = self.drain_signals.len();
        let mut stopped = 0;
        let mut drain_deadline: Option<Instant> = None;
        loop {
            let msg = match drain_deadline {
                None => match self.inbox.recv() {
                    Ok(m) => m,
                    Err(_) => return ExitCode::SUCCESS,
                },
                Some(deadline) => match self.inbox.recv_deadline(deadline) {
                    Ok(m) => m,
                    Err(RecvTimeoutError::Timeout) => {
                        log(&format!(
                            "drain: grace period of {} over with requests still in flight; exiting",
                            secs(self.started_with.drain_timeout)
                        ));
                        return ExitCode::SUCCESS;
                    }
                    Err(RecvTimeoutError::Disconnected) => return ExitCode::SUCCESS,
                },
            };
            match msg {
                ControlMsg::Signal(SIGHUP) => {
                    let _ = self.reload_and_log("SIGHUP");
                }
                ControlMsg::Signal(signal) if drain_deadline.is_some() => {
                    log(&format!("drain: second signal ({}); exiting at once", signal_name(signal)));
                    self.save_spend();
                    std::process::exit(1);
                }
                ControlMsg::Signal(signal) => {
                    let grace = self.started_with.drain_timeout;
                    log(&format!(
                        "{}: draining — no new connections, readiness is false, up to {} for requests in flight \
                         (a second signal exits at once)",
                        signal_name(signal),
                        secs(grace)
                    ));
                    self.hub.start_draining();
                    // The MCP clients' open streams end, so that they hold no shard.
                    self.hub.mcp_clients.push(crate::mcp::pushed::Pushed::Closing);
                    for signal in self.drain_signals.drain(..) {
                        let _ = signal.send(());
                    }
                    drain_deadline = Some(Instant::now() + grace);
                }
                ControlMsg::StoredModelsChanged => self.publish_stored_models(),
                ControlMsg::SetBlocked { id, blocked, reply } => {
                    let _ = reply.send(self.set_blocked(&id, blocked));
                }
                ControlMsg::Reload(reply) => {
                    let report = self.reload_and_log("POST /admin/reload");
                    let _ = reply.send(report.map(|r| serde_json::to_value(r).unwrap_or_default()));
                }
                ControlMsg::Report(report) => {
                    if let Ok(mut totals) = self.hub.totals.lock() {
                        totals.counts.merge(*report);
                    }
                    // Reports arrive a few times a second from every shard: the spend file's tick.
                    if let Some(file) = &mut self.spend_file {
                        file.save_if_due(&self.hub.routes.load().keys);
                    }
                }
                ControlMsg::ShardStopped(_) => {
                    stopped += 1;
                    if stopped == shards {
                        log("drain: every request in flight finished; exiting");
                        return ExitCode::SUCCESS;
                    }
                }
            }
        }
    }

    /// The database's models changed: publish them with the file's.
    fn publish_stored_models(&mut self) {
        let Some(models) = self.stored_slot.as_ref().and_then(|slot| slot.take()) else { return };
        let stored = stored_models::entries(&models);
        match stored_models::publish(&self.hub, &self.file_config, &stored, &models.warnings) {
            Ok(line) => {
                log(&format!("models in the database changed: {line}"));
                self.stored = stored;
            }
            Err(e) => log(&format!("models in the database changed, but were not published: {e}")),
        }
    }

    /// An admin blocked or unblocked deployment `id`: the routes in service are built again
    /// from the same config and stored models, with the admins' word laid over them, and
    /// published; shards carry their state over by id, as on a reload.
    fn set_blocked(&mut self, id: &str, blocked: bool) -> Result<(), String> {
        let before = self.hub.blocked_by_admin.set(id, blocked);
        let old = self.hub.routes.load();
        match stored_models::routes_with(&self.file_config, &self.stored, &old, &self.hub.blocked_by_admin) {
            Ok((routes, _)) => {
                self.hub.routes.store(Arc::new(routes));
                Ok(())
            }
            Err(e) => {
                self.hub.blocked_by_admin.restore(id, before);
                Err(e)
            }
        }
    }

    fn reload_and_log(&mut self, trigger: &str) -> Result<ReloadReport, String> {
        let outcome = reload(&self.hub, self.config_path.as_deref(), &self.started_with, &self.overrides, &self.stored)
            .map(|(report, file_config)| {
                self.file_config = file_config;
                report
            });
        if let Ok(mut totals) = self.hub.totals.lock() {
            match &outcome {
                Ok(_) => totals.reloads_ok += 1,
                Err(_) => totals.reloads_failed += 1,
            }
        }
        match &outcome {
            Ok(report) => log(&format!("reload ({trigger}): {}", report.summary())),
            Err(e) => log(&format!("reload ({trigger}) refused; the current config keeps serving:\n{e}")),
        }
        outcome
    }
}

fn log(line: &str) {
    eprintln!("pointwork: {line}");
}

fn secs(d: Duration) -> String {
    format!("{}s", d.as_secs_f64())
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        SIGHUP => "SIGHUP",
        SIGTERM => "SIGTERM",
        SIGINT => "SIGINT",
        _ => "signal",
    }
}
