//! What the hub holds of the walk: the telemetry every shard reads per request (always there,
//! empty while the walk is off or nothing is learned yet) and the running poller, if any, for
//! the notes shards send it. Both are read without a lock. With Redis, also the poller's side
//! of the sharing between instances ([`Sharing`]).

use std::sync::{Arc, OnceLock};

use arc_swap::{ArcSwap, ArcSwapOption};
use pointwork_core::pareto::{ParetoSettings, ParetoTelemetry};

use super::sharing::Sharing;
use super::{start_shared, PollerHandle};

pub struct ParetoShared {
    /// What the poller published; a shard `load()`s it per request.
    pub telemetry: Arc<ArcSwap<ParetoTelemetry>>,
    poller: ArcSwapOption<PollerHandle>,
    sharing: OnceLock<Arc<Sharing>>,
}

impl Default for ParetoShared {
    fn default() -> Self {
        ParetoShared {
            telemetry: Arc::new(ArcSwap::from_pointee(ParetoTelemetry::default())),
            poller: ArcSwapOption::empty(),
            sharing: OnceLock::new(),
        }
    }
}

impl ParetoShared {
    /// The running poller, if the walk is on.
    pub fn poller(&self) -> Option<Arc<PollerHandle>> {
        self.poller.load_full()
    }

    /// Prepares the sharing of the poller between instances (Redis is configured): every poller
    /// started from now on polls only while [`super::share::start`]'s lease allows it. Called
    /// before the first [`ParetoShared::configure`].
    pub fn share_between_instances(&self) {
        let _ = self.sharing.set(Arc::new(Sharing::default()));
    }

    pub(super) fn sharing(&self) -> Option<Arc<Sharing>> {
        self.sharing.get().cloned()
    }

    /// A shard parsed the account's allowed providers from a 404 ("No allowed providers are
    /// available"): the poller stores them and selects again at once. Nothing when the walk is off.
    pub fn allow_list_learned(&self, providers: Vec<String>) {
        if let Some(poller) = &*self.poller.load() {
            poller.allow_list_learned(providers);
        }
    }

    /// Starts, reconfigures or stops the poller for the config's walk settings (`None`: the walk
    /// is off, and no thread runs). Called by the control thread at start and on every reload.
    pub fn configure(&self, settings: Option<Arc<ParetoSettings>>) {
        match (settings, self.poller.load_full()) {
            (Some(settings), Some(poller)) => poller.reconfigure(settings),
            (Some(settings), None) => {
                eprintln!(
                    "pointwork: openrouter-pareto: telemetry poller started for {} rules ({})",
                    settings.rules.len(),
                    settings.telemetry.base_url
                );
                let poller = start_shared(settings, self.telemetry.clone(), self.sharing());
                self.poller.store(Some(Arc::new(poller)));
            }
            (None, Some(poller)) => {
                poller.stop();
                self.poller.store(None);
                self.telemetry.store(Arc::new(ParetoTelemetry::default()));
                eprintln!("pointwork: openrouter-pareto: telemetry poller stopped (the walk is off)");
            }
            (None, None) => {}
        }
    }
}
