//! What the control thread is asked (a signal, a reload, the shards' reports), and what a
//! reload answers.

use futures_channel::oneshot;
use serde::Serialize;

use super::diff::Changes;
use crate::metrics::Report;

/// What the control thread is asked to do.
pub enum ControlMsg {
    Signal(i32),
    /// `POST /admin/reload`: the outcome goes back on the oneshot.
    Reload(oneshot::Sender<Result<ReloadReport, String>>),
    /// A shard's counts since its last report.
    Report(Box<Report>),
    /// A shard finished draining (its last report was sent before).
    ShardStopped(usize),
}

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
}
