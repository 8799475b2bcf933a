//! One shard: a thread with its own monoio runtime, listener, routing state, rng and upstream
//! pool. Nothing here is shared with other shards except the published routes.

use std::cell::RefCell;
use std::sync::Arc;

use arc_swap::ArcSwap;
use monoio_rustls::TlsConnector;
use switchyard_config::GatewaySettings;
use switchyard_core::{PickScratch, Rng, State};

use crate::routes::Routes;
use crate::upstream::pool::Pool;

pub struct Shard {
    pub id: usize,
    pub routes: Arc<ArcSwap<Routes>>,
    pub state: RefCell<State>,
    pub rng: RefCell<Rng>,
    pub scratch: RefCell<PickScratch>,
    pub pool: RefCell<Pool>,
    pub tls: TlsConnector,
    pub settings: Arc<GatewaySettings>,
}

impl Shard {
    pub fn new(
        id: usize,
        routes: Arc<ArcSwap<Routes>>,
        settings: Arc<GatewaySettings>,
        tls: TlsConnector,
        seed: u64,
    ) -> Shard {
        let state = State::new(&routes.load().snapshot);
        Shard {
            id,
            state: RefCell::new(state),
            rng: RefCell::new(Rng::new(seed ^ (id as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15))),
            scratch: RefCell::new(PickScratch::new()),
            pool: RefCell::new(Pool::new(settings.timeouts.upstream_idle)),
            tls,
            routes,
            settings,
        }
    }
}
