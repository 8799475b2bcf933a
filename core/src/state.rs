//! Per-shard routing state: what this shard has learnt about each deployment (cooldowns and the
//! failure counters behind them). Owned by one thread: plain fields, no locks, no atomics.
//!
//! Each cooldown is kept twice: in the deployment's [`DeploymentState`] (until and cause, what
//! the accessors report), and as one `u64` in the pick's cooldown index (`cooldown_ends.rs`),
//! laid out in the snapshot's slot order so that the cooldown filter reads 8 bytes per
//! candidate, or nothing for a block of 64 whose summary answers. Both are written in one
//! place, `State::extend_cooldown`, and cleared in one, `State::end_cooldown` (`end_cooldown.rs`).
//!
//! What the stateful strategies read (requests in flight, latency averages, this minute's usage)
//! and the last health check are kept in vectors by deployment index, so that a strategy reads
//! a few bytes per candidate. Events from other shards ([`crate::Event`]) are applied in
//! `event.rs`; carrying state over a reload is in `carry_over.rs`.
//!
//! An endpoint's status an operator set since the config was read (`POST
//! /admin/endpoints/{id}/status`) is kept by deployment index too, `None` while the config's
//! status applies.

use std::time::{Duration, Instant};

use crate::affinity::{Pin, Pins};
use crate::budget::Spend;
use crate::cooldown::{
    failure_rate_says_cool_down, AllowedFailsCounter, Cooldown, CooldownStarted, Outcomes, OUTCOME_WINDOW,
};
use crate::cooldown_ends::CooldownEnds;
use crate::deployment::{Deployment, DeploymentIdx};
use crate::failure::Failure;
use crate::health::HealthCheck;
use crate::latency::Latency;
use crate::latency::LatencySample;
use crate::provider::Provider;
use crate::snapshot::Snapshot;
use crate::usage::{MinuteClock, MinuteUsage, Usage};
use crate::window::{instant_after, FixedWindow};

/// Everything a shard knows about one deployment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeploymentState {
    /// The last cooldown started; expired ones stay until replaced and are read as absent.
    pub(crate) cooldown: Option<Cooldown>,
    /// LiteLLM's v1 counter, used while `allowed_fails` is set.
    allowed_fails: AllowedFailsCounter,
    /// This minute's outcomes: LiteLLM's v2 rule reads them while `allowed_fails` is not set.
    outcomes: FixedWindow<Outcomes>,
}

impl DeploymentState {
    /// The cooldown live at `now`, if any.
    pub fn cooldown_at(&self, now: Instant) -> Option<Cooldown> {
        self.cooldown.filter(|c| now < c.until)
    }

    /// Successes and failures in the outcome window open at `now`.
    pub fn outcomes_at(&self, now: Instant) -> Outcomes {
        self.outcomes.counts_at(now)
    }

    /// Returns the end of the cooldown now recorded.
    fn extend_cooldown(&mut self, until: Instant, cause: Failure) -> Instant {
        // A second cooldown while one is live keeps whichever ends later (the other shard's
        // event may arrive after this shard's own, shorter one).
        let until = match self.cooldown {
            Some(live) if live.until > until => live.until,
            _ => until,
        };
        self.cooldown = Some(Cooldown { until, cause });
        until
    }
}

/// A shard's routing state: one [`DeploymentState`] per deployment index of the snapshot it was
/// built for. Indices outside it (a stale index after a reload) read as "nothing known" and
/// record nothing.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct State {
    pub(crate) deployments: Vec<DeploymentState>,
    pub(crate) ends: CooldownEnds,
    /// Requests this shard has sent and not yet seen end, by deployment index.
    pub(crate) in_flight: Vec<u32>,
    /// By deployment index; this shard's own measurements only.
    pub(crate) latency: Vec<Latency>,
    /// This minute's requests and tokens, by deployment index, every shard's.
    pub(crate) usage: Vec<MinuteUsage>,
    pub(crate) minutes: MinuteClock,
    /// The last health check, by deployment index.
    pub(crate) health: Vec<Option<HealthCheck>>,
    /// Affinity pins by pin key ([`crate::affinity::pin_key`]), every shard's.
    pub(crate) pins: Pins,
    /// Spend per provider this budget period, every shard's.
    pub(crate) spend: Spend,
    /// The policy endpoint status an operator set, by deployment index (`None`: the config's).
    pub(crate) endpoint_status: Vec<Option<Box<str>>>,
    /// The pareto walk's 429 windows and input caps, by (model, provider slug), every shard's.
    pub(crate) providers: crate::pareto::ProviderCooldowns,
}

impl State {
    pub fn new(snapshot: &Snapshot) -> State {
        let n = snapshot.deployments.len();
        State {
            deployments: vec![DeploymentState::default(); n],
            ends: CooldownEnds::new(snapshot),
            in_flight: vec![0; n],
            latency: vec![Latency::default(); n],
            usage: vec![MinuteUsage::default(); n],
            minutes: MinuteClock::default(),
            health: vec![None; n],
            pins: Pins::default(),
            spend: Spend::default(),
            endpoint_status: vec![None; n],
            providers: crate::pareto::ProviderCooldowns::default(),
        }
    }

    /// The pareto walk's 429 windows and input caps.
    pub fn providers(&self) -> &crate::pareto::ProviderCooldowns {
        &self.providers
    }

    /// See [`State::providers`]; the shard records what its requests teach, and sets the
    /// configured window, threshold and TTL.
    pub fn providers_mut(&mut self) -> &mut crate::pareto::ProviderCooldowns {
        &mut self.providers
    }

    /// Keeps the conversation under `key` on `pin.deployment` until `pin.until` (set at `now`;
    /// the longer pin wins).
    pub fn pin(&mut self, key: u64, pin: Pin, now: Instant) {
        if pin.deployment.get() < self.deployments.len() {
            self.pins.set(key, pin, now);
        }
    }

    /// The live pin under `key` at `now`.
    pub fn pin_of(&self, key: u64, now: Instant) -> Option<Pin> {
        self.pins.get(key).filter(|p| now < p.until)
    }

    /// The deployment pinned under `key` at `now`, if the pin is live.
    pub fn pinned(&self, key: u64, now: Instant) -> Option<DeploymentIdx> {
        self.pins.get(key).filter(|p| now < p.until).map(|p| p.deployment)
    }

    /// Sets the instant usage minutes are counted from (LiteLLM counts wall-clock minutes).
    /// Shards that exchange usage events must share one origin for their minutes to line up,
    /// e.g. the process's start; without it, a state takes the first instant it records usage
    /// at. Counts recorded under an earlier origin are dropped.
    pub fn set_minute_origin(&mut self, origin: Instant) {
        if self.minutes.origin() != Some(origin) {
            self.minutes = MinuteClock::new(origin);
            self.usage.fill(MinuteUsage::default());
        }
    }

    /// The cooldown ends the pick's filter reads.
    pub(crate) fn cooldown_ends(&self) -> &CooldownEnds {
        &self.ends
    }

    /// Starts or extends `idx`'s cooldown, in both places it is kept.
    fn extend_cooldown(&mut self, idx: DeploymentIdx, until: Instant, cause: Failure) {
        if let Some(ds) = self.deployments.get_mut(idx.get()) {
            let until = ds.extend_cooldown(until, cause);
            self.ends.set(idx, until, || self.deployments.iter().map(|ds| ds.cooldown.map(|c| c.until)));
        }
    }

    pub fn deployment(&self, idx: DeploymentIdx) -> Option<&DeploymentState> {
        self.deployments.get(idx.get())
    }

    pub fn record_success(&mut self, idx: DeploymentIdx, now: Instant) {
        if let Some(ds) = self.deployments.get_mut(idx.get()) {
            let outcomes = ds.outcomes.open_at(now, OUTCOME_WINDOW);
            outcomes.successes = outcomes.successes.saturating_add(1);
        }
    }

    /// Records a failed attempt and returns the cooldown it starts, if any (see
    /// [`crate::cooldown`] for the two rules). Every failure enters this minute's outcomes, as
    /// in LiteLLM, even one that cannot start a cooldown itself (a 400).
    pub fn record_failure(
        &mut self,
        snap: &Snapshot,
        idx: DeploymentIdx,
        failure: Failure,
        now: Instant,
    ) -> Option<CooldownStarted> {
        let deployment = snap.deployments.get(idx.get())?;
        let ds = self.deployments.get_mut(idx.get())?;
        let outcomes = ds.outcomes.open_at(now, OUTCOME_WINDOW);
        outcomes.failures = outcomes.failures.saturating_add(1);
        let outcomes = *outcomes;

        if snap.settings.disable_cooldowns || !failure.counts_for_cooldown() {
            return None;
        }
        let cooldown_time = deployment.cooldown_time.unwrap_or(snap.settings.cooldown_time);
        // `allowed_fails_policy` sets the tolerance per error class; the count is the
        // deployment's, whatever the classes of its failures (as in LiteLLM).
        let policy = snap.settings.allowed_fails_policy.as_ref().and_then(|p| p.for_failure(failure));
        let cool_down = match policy.or(snap.settings.allowed_fails) {
            Some(allowed_fails) => ds.allowed_fails.count(allowed_fails, now, cooldown_time),
            None => {
                let group_size = snap.group(snap.group_of(idx)).members.len();
                failure_rate_says_cool_down(outcomes, failure, group_size)
            }
        };
        if !cool_down {
            return None;
        }
        let until = instant_after(now, cooldown_time);
        self.extend_cooldown(idx, until, failure);
        Some(CooldownStarted { idx, until, cause: failure })
    }

    /// Applies a cooldown another shard started.
    pub fn apply_cooldown(&mut self, started: CooldownStarted) {
        self.extend_cooldown(started.idx, started.until, started.cause);
    }

    /// The cooldown live at `now`, if any.
    pub fn cooldown(&self, idx: DeploymentIdx, now: Instant) -> Option<Cooldown> {
        self.deployment(idx)?.cooldown_at(now)
    }

    /// How long the deployment still cools down; `None` once the cooldown has ended.
    pub fn cooldown_remaining(&self, idx: DeploymentIdx, now: Instant) -> Option<Duration> {
        self.cooldown(idx, now).map(|c| c.until - now)
    }

    pub fn is_cooling_down(&self, idx: DeploymentIdx, now: Instant) -> bool {
        self.cooldown(idx, now).is_some()
    }

    /// A request to `idx` was sent (least-busy counts it until [`State::request_ended`]).
    pub fn request_started(&mut self, idx: DeploymentIdx) {
        if let Some(n) = self.in_flight.get_mut(idx.get()) {
            *n = n.saturating_add(1);
        }
    }

    /// A request to `idx` ended, however it ended.
    pub fn request_ended(&mut self, idx: DeploymentIdx) {
        if let Some(n) = self.in_flight.get_mut(idx.get()) {
            *n = n.saturating_sub(1);
        }
    }

    /// Requests to `idx` this shard has in flight.
    pub fn in_flight(&self, idx: DeploymentIdx) -> u32 {
        self.in_flight.get(idx.get()).copied().unwrap_or(0)
    }

    /// Adds a finished request's timings to `idx`'s latency averages (this shard's only: each
    /// shard measures its own, and they are not broadcast).
    pub fn record_latency(&mut self, idx: DeploymentIdx, sample: LatencySample) {
        if let Some(latency) = self.latency.get_mut(idx.get()) {
            latency.record(sample);
        }
    }

    /// `idx`'s latency averages.
    pub fn latency(&self, idx: DeploymentIdx) -> Option<&Latency> {
        self.latency.get(idx.get())
    }

    /// Counts `requests` and `tokens` for `idx` in the minute `now` falls in. The caller
    /// broadcasts the same as [`crate::Event::Usage`] for the other shards.
    pub fn record_usage(&mut self, idx: DeploymentIdx, now: Instant, requests: u64, tokens: u64) {
        if idx.get() >= self.usage.len() {
            return;
        }
        let minute = self.minutes.minute_starting(now);
        self.usage[idx.get()].add(minute, requests, tokens);
    }

    /// `idx`'s requests and tokens in the minute `now` falls in.
    pub fn usage(&self, idx: DeploymentIdx, now: Instant) -> Usage {
        let minute = self.minutes.minute(now);
        self.usage.get(idx.get()).map_or(Usage::default(), |u| u.in_minute(minute))
    }

    /// Records a health check result (the later check wins when results arrive out of order).
    pub fn record_health(&mut self, idx: DeploymentIdx, healthy: bool, checked_at: Instant) {
        if let Some(h) = self.health.get_mut(idx.get()) {
            *h = Some(HealthCheck::later(*h, HealthCheck { healthy, checked_at }));
        }
    }

    /// `idx`'s last health check, if any.
    pub fn health(&self, idx: DeploymentIdx) -> Option<HealthCheck> {
        self.health.get(idx.get()).copied().flatten()
    }

    /// Records the status an operator gave endpoint `idx` (`up`, `maintenance`, …): it stands
    /// instead of the config's until a reload changes the configured one. The caller checks the
    /// word and that the deployment is a policy endpoint.
    pub fn set_endpoint_status(&mut self, idx: DeploymentIdx, status: Box<str>) {
        if let Some(slot) = self.endpoint_status.get_mut(idx.get()) {
            *slot = Some(status);
        }
    }

    /// The status an operator set for `idx` since the config was read; `None`: the config's
    /// applies.
    pub fn endpoint_status(&self, idx: DeploymentIdx) -> Option<&str> {
        self.endpoint_status.get(idx.get()).and_then(|s| s.as_deref())
    }

    /// The status in force for `idx` of `snap`: the operator's, else the configured one (`up`
    /// when `model_info` does not say); `None` for a deployment without policy attributes.
    pub fn effective_endpoint_status<'a>(&'a self, snap: &'a Snapshot, idx: DeploymentIdx) -> Option<&'a str> {
        let configured = configured_status(snap.deployments.get(idx.get())?)?;
        Some(self.endpoint_status(idx).unwrap_or(configured))
    }

    /// Adds spend to `provider`'s current period of length `period` (opened now if none is).
    pub fn record_spend(&mut self, provider: Provider, dollars: f64, at: Instant, period: Duration) {
        self.spend.add(provider, dollars, at, period);
    }

    /// `provider`'s spend in its period open at `now`.
    pub fn provider_spend(&self, provider: Provider, now: Instant) -> f64 {
        self.spend.at(provider, now)
    }
}

/// The status `d`'s config gives it (`up` when `model_info` does not say), or `None` when it is
/// not a policy endpoint.
pub(crate) fn configured_status(d: &Deployment) -> Option<&str> {
    d.policy.as_ref().map(|p| p.status.as_deref().unwrap_or("up"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Deployment, Provider, RouterSettings};

    const A: DeploymentIdx = DeploymentIdx(0);
    const B: DeploymentIdx = DeploymentIdx(1);
    const SOLO: DeploymentIdx = DeploymentIdx(2);

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    /// Group `pair` = {a, b}, group `solo` = {solo}.
    fn snap_with(settings: RouterSettings) -> Snapshot {
        let dep = |id: &str, group: &str| Deployment::new(id, group, Provider::OpenAi, "m", "http://127.0.0.1:1/v1");
        Snapshot::build(vec![dep("a", "pair"), dep("b", "pair"), dep("solo", "solo")], settings).unwrap()
    }

    fn default_snap() -> Snapshot {
        snap_with(RouterSettings::default())
    }

    fn allowed_fails_snap(n: u32) -> Snapshot {
        snap_with(RouterSettings { allowed_fails: Some(n), ..RouterSettings::default() })
    }

    #[test]
    fn the_allowed_fails_policy_sets_the_tolerance_per_error_class() {
        let mut policy = crate::AllowedFailsPolicy::default();
        policy.set("RateLimitErrorAllowedFails", 2);
        policy.set("InternalServerErrorAllowedFails", 0);
        let snap = snap_with(RouterSettings { allowed_fails_policy: Some(policy), ..RouterSettings::default() });
        let t0 = Instant::now();
        let mut state = State::new(&snap);
        assert_eq!(state.record_failure(&snap, A, Failure::Status(429), t0), None);
        assert_eq!(state.record_failure(&snap, A, Failure::Status(429), t0), None);
        assert!(state.record_failure(&snap, A, Failure::Status(429), t0).is_some(), "the third 429 exceeds 2");
        let mut state = State::new(&snap);
        assert!(state.record_failure(&snap, B, Failure::Status(503), t0).is_some(), "no 5xx tolerated");
        // A class the policy does not set falls back to allowed_fails, or the failure-rate rule.
        assert_eq!(crate::AllowedFailsPolicy::default().for_failure(Failure::Timeout), None);
    }

    #[test]
    fn a_fresh_state_has_no_cooldowns() {
        let snap = default_snap();
        let state = State::new(&snap);
        let now = Instant::now();
        assert!(!state.is_cooling_down(A, now));
        assert_eq!(state.cooldown_remaining(A, now), None);
        assert_eq!(state.cooldown_remaining(DeploymentIdx(99), now), None);
    }

    // --- allowed_fails set: LiteLLM's v1 counter -------------------------------------------

    #[test]
    fn allowed_fails_cools_on_the_failure_that_exceeds_it() {
        let snap = allowed_fails_snap(2);
        let mut state = State::new(&snap);
        let t0 = Instant::now();
        let f = Failure::Status(500);
        assert_eq!(state.record_failure(&snap, A, f, t0), None);
        assert_eq!(state.record_failure(&snap, A, f, t0 + secs(1)), None);
        let started = state.record_failure(&snap, A, f, t0 + secs(2)).unwrap();
        assert_eq!(started, CooldownStarted { idx: A, until: t0 + secs(7), cause: f });
        assert!(state.is_cooling_down(A, t0 + secs(2)));
        assert_eq!(state.cooldown_remaining(A, t0 + secs(4)), Some(secs(3)));
        assert!(!state.is_cooling_down(A, t0 + secs(7)));
        assert_eq!(state.cooldown_remaining(A, t0 + secs(7)), None);
        assert!(!state.is_cooling_down(B, t0 + secs(2)));
    }

    #[test]
    fn allowed_fails_zero_cools_on_the_first_failure_even_alone() {
        let snap = allowed_fails_snap(0);
        let mut state = State::new(&snap);
        let now = Instant::now();
        assert!(state.record_failure(&snap, SOLO, Failure::Connect, now).is_some());
    }

    #[test]
    fn allowed_fails_counter_expires_one_cooldown_time_after_the_first_failure() {
        let snap = allowed_fails_snap(1);
        let mut state = State::new(&snap);
        let t0 = Instant::now();
        let f = Failure::Timeout;
        assert_eq!(state.record_failure(&snap, A, f, t0), None);
        // Cooldown time is 5 s: the first failure is forgotten at t0 + 5 s.
        assert_eq!(state.record_failure(&snap, A, f, t0 + secs(5)), None);
        assert!(state.record_failure(&snap, A, f, t0 + secs(6)).is_some());
    }

    #[test]
    fn allowed_fails_ignores_failures_that_do_not_count() {
        let snap = allowed_fails_snap(0);
        let mut state = State::new(&snap);
        let now = Instant::now();
        for status in [400, 403, 409, 422] {
            assert_eq!(state.record_failure(&snap, A, Failure::Status(status), now), None);
        }
    }

    // --- allowed_fails not set: LiteLLM's v2 failure-rate rule -------------------------------

    #[test]
    fn rate_limit_cools_a_deployment_with_siblings_but_not_a_single_one() {
        let snap = default_snap();
        let mut state = State::new(&snap);
        let now = Instant::now();
        for _ in 0..5 {
            state.record_success(A, now);
            state.record_success(SOLO, now);
        }
        let f = Failure::Status(429);
        assert!(state.record_failure(&snap, A, f, now).is_some());
        assert_eq!(state.record_failure(&snap, SOLO, f, now), None);
        assert!(!state.is_cooling_down(SOLO, now));
    }

    #[test]
    fn more_than_half_failing_this_minute_cools_a_deployment_with_siblings() {
        let snap = default_snap();
        let mut state = State::new(&snap);
        let t0 = Instant::now();
        let f = Failure::Status(503);
        state.record_success(A, t0);
        state.record_success(A, t0);
        assert_eq!(state.record_failure(&snap, A, f, t0), None); // 1 of 3
        assert_eq!(state.record_failure(&snap, A, f, t0), None); // 2 of 4
        assert!(state.record_failure(&snap, A, f, t0).is_some()); // 3 of 5
        assert_eq!(state.deployment(A).unwrap().outcomes_at(t0), Outcomes { successes: 2, failures: 3 });
    }

    #[test]
    fn the_outcome_window_starts_at_the_first_event_and_lasts_a_minute() {
        let snap = default_snap();
        let mut state = State::new(&snap);
        let t0 = Instant::now();
        let f = Failure::Status(500);
        state.record_success(A, t0);
        state.record_success(A, t0);
        assert_eq!(state.record_failure(&snap, A, f, t0 + secs(1)), None);
        // At t0 + 60 s the successes are forgotten: 1 failure of 1 is > 50%.
        assert!(state.record_failure(&snap, A, f, t0 + secs(60)).is_some());
    }

    #[test]
    fn a_single_deployment_does_not_cool_for_a_failure_rate_below_a_total_outage() {
        let snap = default_snap();
        let mut state = State::new(&snap);
        let now = Instant::now();
        for _ in 0..999 {
            assert_eq!(state.record_failure(&snap, SOLO, Failure::Status(500), now), None);
        }
        // The 1000th failure of 1000 requests this minute is a total outage.
        assert!(state.record_failure(&snap, SOLO, Failure::Status(500), now).is_some());
    }

    #[test]
    fn auth_and_not_found_cool_immediately_even_a_single_deployment() {
        let snap = default_snap();
        let mut state = State::new(&snap);
        let now = Instant::now();
        for _ in 0..10 {
            state.record_success(SOLO, now);
        }
        let started = state.record_failure(&snap, SOLO, Failure::Status(401), now);
        assert_eq!(started.map(|s| s.cause), Some(Failure::Status(401)));
        state.record_success(B, now);
        assert!(state.record_failure(&snap, B, Failure::Status(404), now).is_some());
    }

    #[test]
    fn a_bad_request_never_cools_but_enters_the_failure_rate() {
        let snap = default_snap();
        let mut state = State::new(&snap);
        let now = Instant::now();
        for _ in 0..3 {
            assert_eq!(state.record_failure(&snap, A, Failure::Status(400), now), None);
        }
        assert!(!state.is_cooling_down(A, now));
        // Three bad requests, one success and one 500: 4 of 5 failed.
        state.record_success(A, now);
        assert!(state.record_failure(&snap, A, Failure::Status(500), now).is_some());
    }

    // --- cooldown length and switches --------------------------------------------------------

    #[test]
    fn a_deployment_cooldown_time_overrides_the_router_setting() {
        let settings = RouterSettings { allowed_fails: Some(0), cooldown_time: secs(30), ..RouterSettings::default() };
        let mut deployments = default_snap().deployments;
        deployments[0].cooldown_time = Some(secs(2));
        let snap = Snapshot::build(deployments, settings).unwrap();
        let mut state = State::new(&snap);
        let t0 = Instant::now();
        let a = state.record_failure(&snap, A, Failure::Connect, t0).unwrap();
        let b = state.record_failure(&snap, B, Failure::Connect, t0).unwrap();
        assert_eq!(a.until, t0 + secs(2));
        assert_eq!(b.until, t0 + secs(30));
    }

    #[test]
    fn disable_cooldowns_never_cools() {
        let snap =
            snap_with(RouterSettings { disable_cooldowns: true, allowed_fails: Some(0), ..RouterSettings::default() });
        let mut state = State::new(&snap);
        let now = Instant::now();
        for f in [Failure::Status(401), Failure::Status(429), Failure::Connect] {
            assert_eq!(state.record_failure(&snap, A, f, now), None);
        }
        assert!(!state.is_cooling_down(A, now));
    }

    #[test]
    fn a_cooldown_from_another_shard_applies_and_the_later_end_wins() {
        let snap = allowed_fails_snap(0);
        let mut state = State::new(&snap);
        let t0 = Instant::now();
        let cause = Failure::Status(429);
        state.apply_cooldown(CooldownStarted { idx: A, until: t0 + secs(20), cause });
        assert_eq!(state.cooldown_remaining(A, t0), Some(secs(20)));
        // This shard's own, shorter cooldown does not cut the other one short.
        state.record_failure(&snap, A, Failure::Timeout, t0).unwrap();
        let live = state.cooldown(A, t0).unwrap();
        assert_eq!(live.until, t0 + secs(20));
        assert_eq!(live.cause, Failure::Timeout);
        state.apply_cooldown(CooldownStarted { idx: DeploymentIdx(42), until: t0 + secs(20), cause });
    }

    #[test]
    fn an_operator_set_endpoint_status_stands_instead_of_the_configs() {
        let mut policy_dep = Deployment::new("eu", "pair", Provider::OpenAi, "m", "http://h");
        policy_dep.policy =
            Some(Box::new(crate::policy::PolicyAttrs { status: Some("degraded".into()), ..Default::default() }));
        let plain = Deployment::new("plain", "pair", Provider::OpenAi, "m", "http://h");
        let snap = Snapshot::build(vec![policy_dep, plain], RouterSettings::default()).unwrap();
        let mut state = State::new(&snap);
        assert_eq!(state.endpoint_status(A), None);
        assert_eq!(state.effective_endpoint_status(&snap, A), Some("degraded"));
        assert_eq!(state.effective_endpoint_status(&snap, B), None, "not a policy endpoint");

        state.set_endpoint_status(A, "maintenance".into());
        assert_eq!(state.endpoint_status(A), Some("maintenance"));
        assert_eq!(state.effective_endpoint_status(&snap, A), Some("maintenance"));
        assert_eq!(state.endpoint_status(B), None);
        // Back to the config's word: an ordinary set, still the operator's.
        state.set_endpoint_status(A, "degraded".into());
        assert_eq!(state.endpoint_status(A), Some("degraded"));
        // An index outside the snapshot records nothing.
        let before = state.clone();
        state.set_endpoint_status(DeploymentIdx(9), "down".into());
        assert_eq!(state, before);
        assert_eq!(state.endpoint_status(DeploymentIdx(9)), None);
    }
}
