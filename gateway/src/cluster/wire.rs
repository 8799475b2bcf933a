//! What travels between instances on the events channel: the events a shard broadcasts
//! ([`Event`]), with deployments named by id (indices differ between instances and configs) and
//! instants as Unix milliseconds (an `Instant` means nothing in another process; the instances'
//! clocks are assumed to agree, as NTP keeps them, to well within a cooldown).
//!
//! One message is a JSON [`Batch`]: `{"from":"edge-1","process":"4f…","events":[{"kind":
//! "cooldown","deployment":"gpt-4o-eu","until_ms":1800000030000,"cause":"429"}, …]}`.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use pointwork_core::complexity::Tier;
use pointwork_core::{CooldownStarted, Event, Failure, Pin, Snapshot};
use serde::{Deserialize, Serialize};

#[derive(Debug, PartialEq, Serialize, Deserialize)]
pub struct Batch {
    /// The sending instance's name.
    pub from: String,
    /// The sending process (a random number per start): two processes under one instance name
    /// would count each other's requests as their own.
    pub process: String,
    pub events: Vec<WireEvent>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WireEvent {
    Cooldown {
        deployment: String,
        until_ms: u64,
        cause: String,
    },
    /// An admin ended the cooldown (an instance of an older release drops the batch holding it).
    CooldownEnded {
        deployment: String,
    },
    Usage {
        deployment: String,
        at_ms: u64,
        requests: u64,
        tokens: u64,
    },
    Health {
        deployment: String,
        healthy: bool,
        checked_ms: u64,
    },
    Pin {
        deployment: String,
        key: u64,
        until_ms: u64,
        tier: Option<String>,
        at_ms: u64,
    },
    Spend {
        deployment: String,
        dollars: f64,
        at_ms: u64,
        period_ms: u64,
    },
    EndpointStatus {
        deployment: String,
        status: String,
    },
    ProviderRateLimited {
        deployment: String,
        model: String,
        slug: String,
        at_ms: u64,
    },
    ProviderInputCapped {
        deployment: String,
        model: String,
        slug: String,
        at_ms: u64,
    },
}

/// One reading of both clocks, to turn instants into Unix milliseconds and back.
#[derive(Clone, Copy)]
pub struct Clock {
    instant: Instant,
    unix_ms: u64,
}

impl Clock {
    pub fn now() -> Clock {
        let unix_ms = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
        Clock { instant: Instant::now(), unix_ms }
    }

    pub fn unix_ms(&self, at: Instant) -> u64 {
        match at.checked_duration_since(self.instant) {
            Some(ahead) => self.unix_ms.saturating_add(ahead.as_millis() as u64),
            None => self.unix_ms.saturating_sub(self.instant.duration_since(at).as_millis() as u64),
        }
    }

    /// The instant of Unix time `ms` (clamped to what an `Instant` can say).
    pub fn instant(&self, ms: u64) -> Instant {
        if ms >= self.unix_ms {
            self.instant + Duration::from_millis(ms - self.unix_ms)
        } else {
            let back = Duration::from_millis(self.unix_ms - ms);
            self.instant.checked_sub(back).unwrap_or(self.instant)
        }
    }
}

impl WireEvent {
    /// `event` as it leaves: its deployment named by its id in `snap`.
    pub fn from_event(event: &Event, snap: &Snapshot, clock: &Clock) -> Option<WireEvent> {
        let deployment = snap.deployments.get(event.deployment().get())?.id.clone();
        let ms = |at: Instant| clock.unix_ms(at);
        Some(match event {
            Event::Cooldown(c) => WireEvent::Cooldown { deployment, until_ms: ms(c.until), cause: cause_name(c.cause) },
            Event::CooldownEnded { .. } => WireEvent::CooldownEnded { deployment },
            Event::Usage { at, requests, tokens, .. } => {
                WireEvent::Usage { deployment, at_ms: ms(*at), requests: *requests, tokens: *tokens }
            }
            Event::Health { healthy, checked_at, .. } => {
                WireEvent::Health { deployment, healthy: *healthy, checked_ms: ms(*checked_at) }
            }
            Event::Pin { key, pin, at } => WireEvent::Pin {
                deployment,
                key: *key,
                until_ms: ms(pin.until),
                tier: pin.tier.map(|t| t.as_str().to_string()),
                at_ms: ms(*at),
            },
            Event::Spend { dollars, at, period, .. } => {
                WireEvent::Spend { deployment, dollars: *dollars, at_ms: ms(*at), period_ms: period.as_millis() as u64 }
            }
            Event::EndpointStatus { status, .. } => {
                WireEvent::EndpointStatus { deployment, status: status.to_string() }
            }
            Event::ProviderRateLimited { model, slug, at, .. } => WireEvent::ProviderRateLimited {
                deployment,
                model: model.to_string(),
                slug: slug.to_string(),
                at_ms: ms(*at),
            },
            Event::ProviderInputCapped { model, slug, at, .. } => WireEvent::ProviderInputCapped {
                deployment,
                model: model.to_string(),
                slug: slug.to_string(),
                at_ms: ms(*at),
            },
        })
    }

    /// The event as this instance applies it: `None` when `snap` has no such deployment or the
    /// event does not parse (another release's event kind, a bad cause).
    pub fn to_event(&self, snap: &Snapshot, clock: &Clock) -> Option<Event> {
        let idx = snap.deployment_by_id(self.deployment())?;
        let at = |ms: u64| clock.instant(ms);
        Some(match self {
            WireEvent::Cooldown { until_ms, cause, .. } => {
                Event::Cooldown(CooldownStarted { idx, until: at(*until_ms), cause: parse_cause(cause)? })
            }
            WireEvent::CooldownEnded { .. } => Event::CooldownEnded { idx },
            WireEvent::Usage { at_ms, requests, tokens, .. } => {
                Event::Usage { idx, at: at(*at_ms), requests: *requests, tokens: *tokens }
            }
            WireEvent::Health { healthy, checked_ms, .. } => {
                Event::Health { idx, healthy: *healthy, checked_at: at(*checked_ms) }
            }
            WireEvent::Pin { key, until_ms, tier, at_ms, .. } => {
                let tier = match tier {
                    Some(name) => Some(Tier::parse(name)?),
                    None => None,
                };
                Event::Pin { key: *key, pin: Pin { deployment: idx, until: at(*until_ms), tier }, at: at(*at_ms) }
            }
            WireEvent::Spend { dollars, at_ms, period_ms, .. } => Event::Spend {
                idx,
                provider: snap.deployment(idx).provider,
                dollars: *dollars,
                at: at(*at_ms),
                period: Duration::from_millis(*period_ms),
            },
            WireEvent::EndpointStatus { status, .. } => Event::EndpointStatus { idx, status: status.as_str().into() },
            WireEvent::ProviderRateLimited { model, slug, at_ms, .. } => Event::ProviderRateLimited {
                idx,
                model: model.as_str().into(),
                slug: slug.as_str().into(),
                at: at(*at_ms),
            },
            WireEvent::ProviderInputCapped { model, slug, at_ms, .. } => Event::ProviderInputCapped {
                idx,
                model: model.as_str().into(),
                slug: slug.as_str().into(),
                at: at(*at_ms),
            },
        })
    }

    pub fn deployment(&self) -> &str {
        match self {
            WireEvent::Cooldown { deployment, .. }
            | WireEvent::CooldownEnded { deployment }
            | WireEvent::Usage { deployment, .. }
            | WireEvent::Health { deployment, .. }
            | WireEvent::Pin { deployment, .. }
            | WireEvent::Spend { deployment, .. }
            | WireEvent::EndpointStatus { deployment, .. }
            | WireEvent::ProviderRateLimited { deployment, .. }
            | WireEvent::ProviderInputCapped { deployment, .. } => deployment,
        }
    }

    /// Takes `other` into `self` when it says all `self` says: a later pin of the same
    /// conversation (pins are refreshed with every request). Returns whether it did.
    pub fn absorb(&mut self, other: &WireEvent) -> bool {
        match (&*self, other) {
            (WireEvent::Pin { key: k1, .. }, WireEvent::Pin { key: k2, .. }) if k1 == k2 => {
                *self = other.clone();
                true
            }
            _ => false,
        }
    }
}

fn cause_name(cause: Failure) -> String {
    match cause {
        Failure::Status(status) => status.to_string(),
        Failure::Connect => "connect".into(),
        Failure::Timeout => "timeout".into(),
        Failure::Protocol => "protocol".into(),
    }
}

fn parse_cause(name: &str) -> Option<Failure> {
    Some(match name {
        "connect" => Failure::Connect,
        "timeout" => Failure::Timeout,
        "protocol" => Failure::Protocol,
        status => Failure::Status(status.parse().ok()?),
    })
}

#[cfg(test)]
mod tests {
    use pointwork_core::{Deployment, DeploymentIdx, Provider, RouterSettings};

    use super::*;

    fn idx(snap: &Snapshot, id: &str) -> DeploymentIdx {
        snap.deployment_by_id(id).unwrap()
    }

    fn snap(ids: &[&str]) -> Snapshot {
        let deps = ids.iter().map(|id| Deployment::new(id, "g", Provider::OpenAi, "m", "http://h")).collect();
        Snapshot::build(deps, RouterSettings::default()).unwrap()
    }

    #[test]
    fn every_event_crosses_by_deployment_id_and_comes_back_whole() {
        let here = snap(&["a", "b"]);
        // The other instance lists the deployments in another order.
        let there = snap(&["b", "x", "a"]);
        let clock = Clock::now();
        let t = clock.instant(clock.unix_ms + 5_000);
        let b = idx(&here, "b");
        let events = [
            Event::Cooldown(CooldownStarted { idx: b, until: t, cause: Failure::Status(429) }),
            Event::Cooldown(CooldownStarted { idx: b, until: t, cause: Failure::Connect }),
            Event::CooldownEnded { idx: b },
            Event::Usage { idx: b, at: t, requests: 2, tokens: 30 },
            Event::Health { idx: b, healthy: false, checked_at: t },
            Event::Pin { key: u64::MAX - 3, pin: Pin { deployment: b, until: t, tier: Some(Tier::Complex) }, at: t },
            Event::Spend { idx: b, provider: Provider::OpenAi, dollars: 0.25, at: t, period: Duration::from_secs(60) },
            Event::EndpointStatus { idx: b, status: "maintenance".into() },
            Event::ProviderRateLimited { idx: b, model: "m".into(), slug: "s".into(), at: t },
            Event::ProviderInputCapped { idx: b, model: "m".into(), slug: "s".into(), at: t },
        ];
        for event in events {
            let wire = WireEvent::from_event(&event, &here, &clock).unwrap();
            let json = serde_json::to_string(&wire).unwrap();
            let back: WireEvent = serde_json::from_str(&json).unwrap();
            let arrived = back.to_event(&there, &clock).unwrap();
            assert_eq!(arrived, event.for_deployment(idx(&there, "b")), "{json}");
        }
    }

    #[test]
    fn unknown_deployments_kinds_and_causes_are_left_out() {
        let clock = Clock::now();
        let s = snap(&["a"]);
        let gone = WireEvent::Health { deployment: "zz".into(), healthy: true, checked_ms: 0 };
        assert_eq!(gone.to_event(&s, &clock), None);
        let bad = WireEvent::Cooldown { deployment: "a".into(), until_ms: 0, cause: "teapot".into() };
        assert_eq!(bad.to_event(&s, &clock), None);
        assert!(serde_json::from_str::<WireEvent>(r#"{"kind":"future_thing","deployment":"a"}"#).is_err());
    }

    #[test]
    fn a_later_pin_of_the_same_conversation_replaces_the_earlier() {
        let pin = |key, deployment: &str, until_ms| WireEvent::Pin {
            deployment: deployment.into(),
            key,
            until_ms,
            tier: None,
            at_ms: until_ms - 1,
        };
        let mut first = pin(7, "a", 1_000);
        assert!(first.absorb(&pin(7, "b", 2_000)));
        assert_eq!(first, pin(7, "b", 2_000));
        assert!(!first.absorb(&pin(8, "a", 3_000)), "another conversation");
    }

    #[test]
    fn instants_survive_the_trip_to_the_millisecond() {
        let clock = Clock::now();
        let later = clock.instant(clock.unix_ms + 1_234);
        assert_eq!(clock.unix_ms(later), clock.unix_ms + 1_234);
        assert_eq!(clock.unix_ms(clock.instant(clock.unix_ms - 1_000)), clock.unix_ms - 1_000);
    }
}
