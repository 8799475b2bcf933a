//! What one shard learns that every shard must know, and how a shard applies it. The shard that
//! learns it records it in its own [`State`] and broadcasts an [`Event`]; every other shard
//! applies it with [`State::apply`] before its next pick.

use std::time::{Duration, Instant};

use crate::affinity::Pin;
use crate::cooldown::CooldownStarted;
use crate::deployment::DeploymentIdx;
use crate::provider::Provider;
use crate::state::State;

#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// A cooldown [`State::record_failure`] started.
    Cooldown(CooldownStarted),
    /// An admin ended the deployment's cooldown ([`State::end_cooldown`]).
    CooldownEnded { idx: DeploymentIdx },
    /// Usage [`State::record_usage`] counted.
    Usage { idx: DeploymentIdx, at: Instant, requests: u64, tokens: u64 },
    /// A health check's result.
    Health { idx: DeploymentIdx, healthy: bool, checked_at: Instant },
    /// An affinity pin [`State::pin`] set.
    Pin { key: u64, pin: Pin, at: Instant },
    /// Spend [`State::record_spend`] counted for the deployment's provider.
    Spend { idx: DeploymentIdx, provider: Provider, dollars: f64, at: Instant, period: Duration },
    /// An endpoint status an operator set [`State::set_endpoint_status`].
    EndpointStatus { idx: DeploymentIdx, status: Box<str> },
    /// A provider behind deployment `idx` answered 429 for a managed model (the pareto walk).
    ProviderRateLimited { idx: DeploymentIdx, model: Box<str>, slug: Box<str>, at: Instant },
    /// A provider behind deployment `idx` refused the input as too long for a managed model.
    ProviderInputCapped { idx: DeploymentIdx, model: Box<str>, slug: Box<str>, at: Instant },
}

impl Event {
    /// The deployment the event is about.
    pub fn deployment(&self) -> DeploymentIdx {
        match self {
            Event::Cooldown(c) => c.idx,
            Event::Pin { pin, .. } => pin.deployment,
            Event::CooldownEnded { idx }
            | Event::Usage { idx, .. }
            | Event::Health { idx, .. }
            | Event::Spend { idx, .. }
            | Event::EndpointStatus { idx, .. }
            | Event::ProviderRateLimited { idx, .. }
            | Event::ProviderInputCapped { idx, .. } => *idx,
        }
    }

    /// The same event about deployment `idx` (its index in newer routes, after a reload).
    pub fn for_deployment(&self, idx: DeploymentIdx) -> Event {
        let mut event = self.clone();
        match &mut event {
            Event::Cooldown(c) => c.idx = idx,
            Event::Pin { pin, .. } => pin.deployment = idx,
            Event::CooldownEnded { idx: i }
            | Event::Usage { idx: i, .. }
            | Event::Health { idx: i, .. }
            | Event::Spend { idx: i, .. }
            | Event::EndpointStatus { idx: i, .. }
            | Event::ProviderRateLimited { idx: i, .. }
            | Event::ProviderInputCapped { idx: i, .. } => *i = idx,
        }
        event
    }
}

impl State {
    /// Applies another shard's event. An index outside this state's snapshot is ignored (the
    /// sender translates indices across reloads, see [`crate::translate`]).
    pub fn apply(&mut self, event: &Event) {
        match *event {
            Event::Cooldown(started) => self.apply_cooldown(started),
            Event::CooldownEnded { idx } => {
                self.end_cooldown(idx, Instant::now());
            }
            Event::Usage { idx, at, requests, tokens } => self.record_usage(idx, at, requests, tokens),
            Event::Health { idx, healthy, checked_at } => self.record_health(idx, healthy, checked_at),
            Event::Pin { key, pin, at } => self.pin(key, pin, at),
            Event::Spend { provider, dollars, at, period, .. } => self.spend.add(provider, dollars, at, period),
            Event::EndpointStatus { idx, ref status } => self.set_endpoint_status(idx, status.clone()),
            Event::ProviderRateLimited { ref model, ref slug, at, .. } => self.providers.record_429(model, slug, at),
            Event::ProviderInputCapped { ref model, ref slug, at, .. } => {
                self.providers.record_input_cap(model, slug, at)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::{Deployment, Failure, Provider, RouterSettings, Snapshot, Usage};

    const A: DeploymentIdx = DeploymentIdx(0);
    const OUTSIDE: DeploymentIdx = DeploymentIdx(7);

    fn snap() -> Snapshot {
        let dep = |id: &str| Deployment::new(id, "g", Provider::OpenAi, "m", "http://h");
        Snapshot::build(vec![dep("a"), dep("b")], RouterSettings::default()).unwrap()
    }

    #[test]
    fn a_cooldown_event_is_apply_cooldown() {
        let snap = snap();
        let t0 = Instant::now();
        let started = CooldownStarted { idx: A, until: t0 + Duration::from_secs(9), cause: Failure::Status(429) };
        let mut by_event = State::new(&snap);
        by_event.apply(&Event::Cooldown(started));
        let mut direct = State::new(&snap);
        direct.apply_cooldown(started);
        assert_eq!(by_event, direct);
        assert_eq!(by_event.cooldown_remaining(A, t0), Some(Duration::from_secs(9)));
    }

    #[test]
    fn usage_events_add_to_the_minute_they_happened_in() {
        let snap = snap();
        let t0 = Instant::now();
        let mut state = State::new(&snap);
        state.set_minute_origin(t0);
        state.record_usage(A, t0 + Duration::from_secs(1), 1, 100);
        state.apply(&Event::Usage { idx: A, at: t0 + Duration::from_secs(2), requests: 2, tokens: 50 });
        assert_eq!(state.usage(A, t0 + Duration::from_secs(30)), Usage { requests: 3, tokens: 150 });
        assert_eq!(state.usage(A, t0 + Duration::from_secs(60)), Usage::default());
    }

    #[test]
    fn health_events_record_the_later_check() {
        let snap = snap();
        let t0 = Instant::now();
        let mut state = State::new(&snap);
        state.apply(&Event::Health { idx: A, healthy: false, checked_at: t0 });
        assert_eq!(state.health(A).map(|h| h.healthy), Some(false));
        state.apply(&Event::Health { idx: A, healthy: true, checked_at: t0 - Duration::from_secs(1) });
        assert_eq!(state.health(A).map(|h| h.healthy), Some(false));
    }

    #[test]
    fn an_event_moves_to_another_deployment_index_whole() {
        let t0 = Instant::now();
        let b = DeploymentIdx(1);
        let events = [
            Event::Cooldown(CooldownStarted { idx: A, until: t0, cause: Failure::Connect }),
            Event::CooldownEnded { idx: A },
            Event::Usage { idx: A, at: t0, requests: 1, tokens: 2 },
            Event::Health { idx: A, healthy: false, checked_at: t0 },
            Event::EndpointStatus { idx: A, status: "down".into() },
        ];
        for e in events {
            assert_eq!(e.deployment(), A);
            let moved = e.for_deployment(b);
            assert_eq!(moved.deployment(), b);
            assert_eq!(moved.for_deployment(A), e);
        }
    }

    #[test]
    fn events_for_an_index_outside_the_snapshot_are_ignored() {
        let snap = snap();
        let t0 = Instant::now();
        let mut state = State::new(&snap);
        let before = state.clone();
        state.apply(&Event::Cooldown(CooldownStarted { idx: OUTSIDE, until: t0, cause: Failure::Connect }));
        state.apply(&Event::Usage { idx: OUTSIDE, at: t0, requests: 1, tokens: 1 });
        state.apply(&Event::Health { idx: OUTSIDE, healthy: false, checked_at: t0 });
        state.apply(&Event::EndpointStatus { idx: OUTSIDE, status: "down".into() });
        assert_eq!(state, before);
    }

    #[test]
    fn an_endpoint_status_event_is_set_endpoint_status() {
        let snap = snap();
        let mut by_event = State::new(&snap);
        by_event.apply(&Event::EndpointStatus { idx: A, status: "maintenance".into() });
        let mut direct = State::new(&snap);
        direct.set_endpoint_status(A, "maintenance".into());
        assert_eq!(by_event, direct);
        assert_eq!(by_event.endpoint_status(A), Some("maintenance"));
        assert_eq!(by_event.endpoint_status(DeploymentIdx(1)), None);
        // A later event replaces it (the operator's newest word).
        by_event.apply(&Event::EndpointStatus { idx: A, status: "up".into() });
        assert_eq!(by_event.endpoint_status(A), Some("up"));
    }
}
