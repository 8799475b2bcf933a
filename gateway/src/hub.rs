//! What the shards and the control thread share: the published routes, the draining flag, the
//! way to the control thread, the merged metrics, and the best-value walk's telemetry. On the
//! request path only `routes` is read (one arc-swap load), and `pareto.telemetry` for a managed
//! model (one more); everything else is touched per connection, per second, or per scrape.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use arc_swap::ArcSwap;
use crossbeam_channel::Sender;
use futures_channel::oneshot;

use crate::metrics::Report;
use crate::metrics::Totals;
use crate::pareto_poller::shared::ParetoShared;
use crate::routes::Routes;

/// What the control thread is asked to do.
pub enum ControlMsg {
    Signal(i32),
    /// `POST /admin/reload`: the outcome goes back on the oneshot (the report as JSON, or why
    /// the new config was refused).
    Reload(oneshot::Sender<Result<serde_json::Value, String>>),
    /// A shard's counts since its last report.
    Report(Box<Report>),
    /// A shard finished draining (its last report was sent before).
    ShardStopped(usize),
    /// The database thread left a new set of stored models (`store_model_in_db`).
    StoredModelsChanged,
    /// `POST /admin/deployments/{id}/block` or `/unblock`: publish routes with deployment `id`
    /// blocked or not; the oneshot says once they are published (or why they could not be built).
    SetBlocked {
        id: String,
        blocked: bool,
        reply: oneshot::Sender<Result<(), String>>,
    },
}

/// A part of `/metrics` that a thread of its own keeps current (the cluster's, with Redis).
pub trait MetricsPart: Send + Sync {
    fn render(&self, out: &mut String);
    /// The same state as JSON, for the live view.
    fn live(&self) -> Option<serde_json::Value> {
        None
    }
}

pub struct Hub {
    /// The routing table every new request starts from; replaced whole by a reload.
    pub routes: ArcSwap<Routes>,
    /// Set once a drain starts: readiness reports it and responses close their connections.
    draining: AtomicBool,
    /// Open client connections, all shards together.
    connections: AtomicI64,
    /// Requests and admin calls for the control thread.
    pub control: Sender<ControlMsg>,
    /// Every shard's metrics merged by the control thread; read by `GET /metrics`.
    pub totals: Mutex<Totals>,
    /// When the gateway started: every shard counts usage minutes from it, so that their
    /// minutes line up.
    pub started: Instant,
    /// The walk's telemetry (`pareto.telemetry.load()`, always there, empty while the walk is
    /// off) and its poller, for the allow-list a 404 teaches (`pareto.allow_list_learned`).
    pub pareto: Arc<ParetoShared>,
    /// The cluster threads' status, when Redis is configured (`/metrics`).
    pub cluster: OnceLock<Arc<dyn MetricsPart>>,
    /// The certificates and handshake counts, when Pointwork terminates TLS itself.
    pub tls: OnceLock<Arc<crate::tls::listener::TlsListener>>,
    /// The Responses API's kept conversations and learned chat-only deployments (touched only
    /// by Responses requests).
    pub responses: Arc<crate::responses::ResponsesShared>,
    /// LiteLLM's database, when `DATABASE_URL` (or `general_settings.database_url`) names one.
    pub database: OnceLock<pointwork_db::Database>,
    /// The exporters (OTLP, Langfuse), when the config names any; set before the shards start.
    pub export: OnceLock<Arc<crate::export::Exporters>>,
    /// The MCP servers' sessions (the `mcp` thread), when the config names any.
    pub mcp: OnceLock<Arc<crate::mcp::upstream::Upstreams>>,
    /// The response cache's in-memory store and counts (empty while no cache is configured).
    pub(crate) cache: crate::cache::counts::CacheShared,
    /// The gateway's MCP clients: their sessions, calls under way and counts.
    pub mcp_clients: crate::mcp::McpClients,
    /// The live view's board: whether anyone watches, and what the shards noted meanwhile.
    pub(crate) ui: crate::ui::board::UiShared,
    /// Deployments an admin blocked or unblocked at run time (`/admin/deployments/{id}/block`).
    pub(crate) blocked_by_admin: crate::ui::admin_blocks::AdminBlocks,
}

impl Hub {
    pub fn new(routes: Routes, control: Sender<ControlMsg>) -> Arc<Hub> {
        Arc::new(Hub {
            routes: ArcSwap::from_pointee(routes),
            draining: AtomicBool::new(false),
            connections: AtomicI64::new(0),
            control,
            totals: Mutex::new(Totals::default()),
            started: Instant::now(),
            pareto: Arc::new(ParetoShared::default()),
            cluster: OnceLock::new(),
            tls: OnceLock::new(),
            responses: Arc::default(),
            database: OnceLock::new(),
            export: OnceLock::new(),
            mcp: OnceLock::new(),
            cache: Default::default(),
            mcp_clients: Default::default(),
            ui: Default::default(),
            blocked_by_admin: Default::default(),
        })
    }

    pub fn is_draining(&self) -> bool {
        self.draining.load(Ordering::Relaxed)
    }

    pub fn start_draining(&self) {
        self.draining.store(true, Ordering::Relaxed);
    }

    pub fn connection_opened(&self) {
        self.connections.fetch_add(1, Ordering::Relaxed);
    }

    pub fn connection_closed(&self) {
        self.connections.fetch_sub(1, Ordering::Relaxed);
    }

    pub fn open_connections(&self) -> i64 {
        self.connections.load(Ordering::Relaxed)
    }
}
