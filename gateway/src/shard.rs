//! One shard: a thread with its own monoio runtime, listener, routing state, rng and upstream
//! pool. It shares with other shards only the hub (published routes, draining flag) and the
//! event mesh.
//!
//! The shard's `State` is built for one routes generation. Before every pick the shard catches
//! up: it carries its state over to newly published routes (by deployment id) and applies the
//! events the other shards sent. A request keeps the routes it started with; when a reload lands
//! in the middle of it, its outcomes are translated to the shard's newer routes by id.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

use crossbeam_channel::Receiver;
use monoio_rustls::TlsConnector;
use pointwork_config::GatewaySettings;
use pointwork_core::{
    pick_with_scratch, translate, Decision, DeploymentIdx, Event, PickRequest, PickScratch, Rng, RouteError, Snapshot,
    State,
};

use crate::access_log::AccessLog;
use crate::buffers::Buffers;
use crate::events::{Mesh, ShardEvent};
use crate::hub::Hub;
use crate::metrics::ShardMetrics;
use crate::routes::Routes;
use crate::upstream::pool::Pool;
use crate::upstream::side::Upstreams;

/// The routes a shard's state was built for, and that state.
pub struct Routing {
    /// `Rc` around the shared `Arc` so that a request takes its reference without touching the
    /// `Arc`'s cross-thread counter.
    pub routes: Rc<Arc<Routes>>,
    pub state: State,
}

pub struct Shard {
    pub id: usize,
    pub hub: Arc<Hub>,
    pub routing: RefCell<Routing>,
    inbox: Receiver<ShardEvent>,
    mesh: Mesh,
    pub rng: RefCell<Rng>,
    pub scratch: RefCell<PickScratch>,
    /// The keep-alive pool, TLS client, connect timeout and byte buffers of its attempts.
    pub upstream: Upstreams,
    pub settings: Arc<GatewaySettings>,
    pub metrics: RefCell<ShardMetrics>,
    pub access_log: RefCell<AccessLog>,
    /// Requests being served (head read, response not finished): a drain waits for zero.
    pub active_requests: Cell<usize>,
    /// Client connections open on this shard (`limits.max_connections_per_shard`).
    pub open_connections: Cell<usize>,
    /// The database keys this shard has seen.
    pub db_keys: crate::database::ShardKeys,
    /// Database keys' spend rows not yet handed to the database thread
    /// (`database::spend::hand_over`).
    pub db_spend: RefCell<Vec<pointwork_db::SpendRow>>,
    /// The exporters, when any is configured: every request's record goes to them.
    pub export: Option<Arc<crate::export::Exporters>>,
    /// Draws trace and span ids (seeded apart from `rng`, which the pick's tests fix).
    pub trace_ids: RefCell<Rng>,
    /// The response cache's Redis store, made at first use (`crate::cache`).
    pub(crate) cache_redis: RefCell<Option<std::rc::Rc<crate::cache::redis::RedisStore>>>,
    /// What the live view (`/ui`) is shown of this shard's requests, noted only while someone
    /// watches.
    pub(crate) ui: crate::ui::noted::ShardUi,
}

/// What a shard is made of, besides what it builds itself.
pub struct ShardParts {
    pub id: usize,
    pub hub: Arc<Hub>,
    pub inbox: Receiver<ShardEvent>,
    pub mesh: Mesh,
    pub settings: Arc<GatewaySettings>,
    pub tls: TlsConnector,
    pub access_log: AccessLog,
    pub seed: u64,
}

impl Shard {
    pub fn new(parts: ShardParts) -> Shard {
        let routes = parts.hub.routes.load_full();
        let mut state = State::new(&routes.snapshot);
        state.set_minute_origin(parts.hub.started);
        set_provider_cooldowns(&mut state, &routes);
        Shard {
            id: parts.id,
            routing: RefCell::new(Routing { routes: Rc::new(routes), state }),
            inbox: parts.inbox,
            mesh: parts.mesh,
            rng: RefCell::new(Rng::new(parts.seed ^ (parts.id as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15))),
            scratch: RefCell::new(PickScratch::new()),
            upstream: Upstreams {
                pool: RefCell::new(Pool::new(parts.settings.timeouts.upstream_idle)),
                tls: parts.tls,
                connect_timeout: parts.settings.timeouts.connect,
                buffers: Buffers::default(),
            },
            metrics: RefCell::new(ShardMetrics::default()),
            access_log: RefCell::new(parts.access_log),
            active_requests: Cell::new(0),
            open_connections: Cell::new(0),
            db_keys: Default::default(),
            db_spend: Default::default(),
            export: parts.hub.export.get().cloned(),
            trace_ids: RefCell::new(Rng::new(random_seed() ^ parts.id as u64)),
            cache_redis: RefCell::new(None),
            ui: Default::default(),
            hub: parts.hub,
            settings: parts.settings,
        }
    }

    /// Catches up with the published routes and the other shards' events; returns the routes a
    /// new request starts with.
    pub fn sync(&self) -> Rc<Arc<Routes>> {
        let mut routing = self.routing.borrow_mut();
        let published = self.hub.routes.load();
        if !Arc::ptr_eq(&published, &routing.routes) {
            let new = arc_swap::Guard::into_inner(published);
            routing.state = routing.state.carry_over(&routing.routes.snapshot, &new.snapshot);
            set_provider_cooldowns(&mut routing.state, &new);
            routing.routes = Rc::new(new);
        }
        let routing = &mut *routing;
        while let Ok(ShardEvent { routes, event }) = self.inbox.try_recv() {
            if Arc::ptr_eq(&routes, &routing.routes) {
                routing.state.apply(&event);
            } else if let Some(idx) = translate(&routes.snapshot, &routing.routes.snapshot, event.deployment()) {
                routing.state.apply(&event.for_deployment(idx));
            }
        }
        routing.routes.clone()
    }

    /// Picks for a request that runs on `routes`.
    // The error is the cold path (a few per thousand requests at most): not worth a box on the
    // way of every decision.
    #[allow(clippy::result_large_err)]
    pub fn pick(&self, routes: &Arc<Routes>, req: &PickRequest<'_>, now: Instant) -> Result<Decision, RouteError> {
        let mut rng = self.rng.borrow_mut();
        let mut scratch = self.scratch.borrow_mut();
        self.with_state(routes, |state| pick_with_scratch(&routes.snapshot, state, req, now, &mut rng, &mut scratch))
    }

    /// Runs `read` on this shard's state as seen under `routes`: the state itself, or, when it
    /// has moved on to newer routes (a reload landed during the request), a copy translated back
    /// by deployment id.
    pub fn with_state<R>(&self, routes: &Arc<Routes>, read: impl FnOnce(&State) -> R) -> R {
        let routing = self.routing.borrow();
        if Arc::ptr_eq(routes, &routing.routes) {
            read(&routing.state)
        } else {
            read(&routing.state.carry_over(&routing.routes.snapshot, &routes.snapshot))
        }
    }

    /// Records something learnt about deployment `idx` of `routes` in this shard's state, and
    /// tells the other shards the event `record` returns.
    pub fn record<R>(
        &self,
        routes: &Arc<Routes>,
        idx: DeploymentIdx,
        record: impl FnOnce(&mut State, &Snapshot, DeploymentIdx) -> (R, Option<Event>),
    ) -> Option<R> {
        let mut routing = self.routing.borrow_mut();
        let routing = &mut *routing;
        let idx = if Arc::ptr_eq(routes, &routing.routes) {
            idx
        } else {
            translate(&routes.snapshot, &routing.routes.snapshot, idx)?
        };
        let (result, event) = record(&mut routing.state, &routing.routes.snapshot, idx);
        if let Some(event) = event {
            self.mesh.broadcast(Some(self.id), &routing.routes, &event);
        }
        Some(result)
    }
}

/// The pareto walk's 429 window, threshold and input-cap TTL, as configured.
fn set_provider_cooldowns(state: &mut State, routes: &Routes) {
    if let Some(pareto) = &routes.pareto {
        state.providers_mut().set_settings(pareto.settings.cooldown);
    }
}

/// A seed no two processes share (trace ids must not repeat across instances).
fn random_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
    h.write_u32(std::process::id());
    h.finish()
}
