//! Virtual keys' limits: requests and tokens per minute, and a budget in US dollars (for ever,
//! or per period). One [`KeyMeter`] per key is shared by every shard: a limit holds across the
//! whole gateway, not per shard, so the counters are atomics, not per-shard state with events
//! (an event's delay would let each shard admit a full minute's worth).
//!
//! Each counter is one `AtomicU64` holding its window (the minute, or the budget period, since
//! the Unix epoch) in the high bits and the count in the low bits, so that a window rolls over
//! and a count is checked and raised in one compare-and-swap: exact under contention, never a
//! lost reset. Time is an argument (Unix seconds), as everywhere in the core.
//!
//! Several gateway instances (sharing state through Redis) add [`SharedCounts`]: the other
//! instances' counts as the last reconcile saw them, and a cap on this instance's own requests
//! until the next reconcile. Admission stays local; see [`KeyMeter::reconciled`].

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// What one key may do; `None` = no limit.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KeyLimits {
    pub rpm: Option<u64>,
    pub tpm: Option<u64>,
    /// US dollars.
    pub max_budget: Option<f64>,
    /// The budget starts over every period (aligned to the Unix epoch, so `1d` is a UTC day);
    /// `None` = the budget is for the process's lifetime.
    pub budget_duration: Option<Duration>,
}

impl KeyLimits {
    /// Whether responses must report their usage for this key (tokens or spend are counted).
    pub fn counts_usage(&self) -> bool {
        self.tpm.is_some() || self.max_budget.is_some()
    }
}

/// Why a key's request was refused, with what a client needs to wait it out.
#[derive(Clone, Debug, PartialEq)]
pub enum KeyRefusal {
    Rpm {
        limit: u64,
        retry_after_secs: u64,
    },
    Tpm {
        limit: u64,
        used: u64,
        retry_after_secs: u64,
    },
    /// `resets_in_secs` is `None` for a budget without a period.
    Budget {
        max_budget: f64,
        spent: f64,
        resets_in_secs: Option<u64>,
    },
}

impl KeyRefusal {
    /// The seconds for a `Retry-After` header, where waiting helps.
    pub fn retry_after_secs(&self) -> Option<u64> {
        match self {
            KeyRefusal::Rpm { retry_after_secs, .. } | KeyRefusal::Tpm { retry_after_secs, .. } => {
                Some(*retry_after_secs)
            }
            KeyRefusal::Budget { resets_in_secs, .. } => *resets_in_secs,
        }
    }

    /// The limit's name in metrics and messages.
    pub fn limit(&self) -> &'static str {
        match self {
            KeyRefusal::Rpm { .. } => "rpm",
            KeyRefusal::Tpm { .. } => "tpm",
            KeyRefusal::Budget { .. } => "budget",
        }
    }
}

/// One key's counters, shared by all shards (and carried over a reload by the key's digest).
#[derive(Debug, Default)]
pub struct KeyMeter {
    requests: PackedWindow,
    tokens: PackedWindow,
    /// Micro-dollars.
    spend: PackedWindow,
    refused_rpm: AtomicU64,
    refused_tpm: AtomicU64,
    refused_budget: AtomicU64,
    /// What the other instances counted; zeros on a lone gateway.
    others: SharedCounts,
}

/// The other instances' counts, and this instance's share of what the rpm limit has left, as
/// the last reconcile set them.
#[derive(Debug, Default)]
struct SharedCounts {
    requests: PackedWindow,
    tokens: PackedWindow,
    /// Micro-dollars.
    spend: PackedWindow,
    /// This minute's cap on this instance's own requests: its count at the reconcile plus its
    /// share of what was left ([`KeyMeter::reconciled`]).
    request_cap: PackedWindow,
    /// How many instances share the limit (0 = none: a lone gateway, or Redis is out of reach).
    instances: AtomicU64,
}

/// This instance's own counts at one moment, what a reconcile publishes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OwnCounts {
    pub requests: u64,
    pub tokens: u64,
    /// Micro-dollars in the budget period.
    pub spend_micros: u64,
}

/// What a reconcile learnt: the others' counts in the same windows, and how many instances
/// share the limits now.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OthersCounts {
    pub requests: u64,
    pub tokens: u64,
    pub spend_micros: u64,
    pub instances: u64,
}

/// The windows counts are kept in at one moment: the minute and the budget period.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MeterWindows {
    pub minute: u64,
    pub budget_period: u64,
}

impl MeterWindows {
    pub fn at(limits: &KeyLimits, now: u64) -> MeterWindows {
        MeterWindows { minute: now / 60, budget_period: budget_period(limits.budget_duration, now).0 }
    }
}

/// What a key used, for metrics and the dry run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KeyUsage {
    pub requests_this_minute: u64,
    pub tokens_this_minute: u64,
    /// US dollars in the current budget period.
    pub spend: f64,
    pub refused_rpm: u64,
    pub refused_tpm: u64,
    pub refused_budget: u64,
}

const MICROS_PER_DOLLAR: f64 = 1_000_000.0;

impl KeyMeter {
    /// Admits one request at `now` (Unix seconds) or says which limit refuses it. An admitted
    /// request counts against this minute's requests; a refused one counts nowhere but in the
    /// refusal counters.
    pub fn admit(&self, limits: &KeyLimits, now: u64) -> Result<(), KeyRefusal> {
        let refusal = self.check(limits, now);
        if let Err(r) = &refusal {
            let counter = match r {
                KeyRefusal::Rpm { .. } => &self.refused_rpm,
                KeyRefusal::Tpm { .. } => &self.refused_tpm,
                KeyRefusal::Budget { .. } => &self.refused_budget,
            };
            counter.fetch_add(1, Ordering::Relaxed);
        }
        refusal
    }

    fn check(&self, limits: &KeyLimits, now: u64) -> Result<(), KeyRefusal> {
        if let Some(max_budget) = limits.max_budget {
            let (period, resets_in_secs) = budget_period(limits.budget_duration, now);
            let spent = self.spend_micros(period) as f64 / MICROS_PER_DOLLAR;
            if spent >= max_budget {
                return Err(KeyRefusal::Budget { max_budget, spent, resets_in_secs });
            }
        }
        let minute = now / 60;
        let retry_after_secs = 60 - now % 60;
        if let Some(limit) = limits.tpm {
            let used = self.tokens.get(minute) + self.others.tokens.get(minute);
            if used >= limit {
                return Err(KeyRefusal::Tpm { limit, used, retry_after_secs });
            }
        }
        match limits.rpm {
            Some(limit) if !self.requests.add_below(minute, 1, self.own_request_limit(limit, minute)) => {
                Err(KeyRefusal::Rpm { limit, retry_after_secs })
            }
            Some(_) => Ok(()),
            None => {
                self.requests.add(minute, 1);
                Ok(())
            }
        }
    }

    /// Counts a response's tokens and cost (US dollars) at `now`.
    pub fn record(&self, limits: &KeyLimits, tokens: u64, dollars: Option<f64>, now: u64) {
        if tokens > 0 {
            self.tokens.add(now / 60, tokens);
        }
        if let Some(dollars) = dollars.filter(|d| *d > 0.0) {
            let (period, _) = budget_period(limits.budget_duration, now);
            self.spend.add(period, (dollars * MICROS_PER_DOLLAR).ceil() as u64);
        }
    }

    /// The key's usage across every instance that shares it (as far as this one knows).
    pub fn usage(&self, limits: &KeyLimits, now: u64) -> KeyUsage {
        let (period, _) = budget_period(limits.budget_duration, now);
        let minute = now / 60;
        KeyUsage {
            requests_this_minute: self.requests.get(minute) + self.others.requests.get(minute),
            tokens_this_minute: self.tokens.get(minute) + self.others.tokens.get(minute),
            spend: self.spend_micros(period) as f64 / MICROS_PER_DOLLAR,
            refused_rpm: self.refused_rpm.load(Ordering::Relaxed),
            refused_tpm: self.refused_tpm.load(Ordering::Relaxed),
            refused_budget: self.refused_budget.load(Ordering::Relaxed),
        }
    }
}

impl KeyMeter {
    fn spend_micros(&self, period: u64) -> u64 {
        self.spend.get(period).saturating_add(self.others.spend.get(period))
    }

    /// How many requests this instance may have admitted in `minute` under an rpm `limit`:
    /// the limit less the others' requests, and, while instances share it, no more than the
    /// cap the last reconcile set — or, in a minute no reconcile has seen yet, this instance's
    /// even part of the limit.
    fn own_request_limit(&self, limit: u64, minute: u64) -> u64 {
        let below = limit.saturating_sub(self.others.requests.get(minute));
        match self.others.instances.load(Ordering::Relaxed) {
            0 => below,
            instances => below.min(self.others.request_cap.get_in(minute).unwrap_or(limit.div_ceil(instances))),
        }
    }

    /// This instance's own counts in `windows`, for a reconcile to publish.
    pub fn own_counts(&self, windows: MeterWindows) -> OwnCounts {
        OwnCounts {
            requests: self.requests.get(windows.minute),
            tokens: self.tokens.get(windows.minute),
            spend_micros: self.spend.get(windows.budget_period),
        }
    }

    /// Takes in what a reconcile learnt in `windows`:
    /// - `recorded`: this instance's own counts as the shared record holds them. The record
    ///   keeps absolute counts per instance, so a restarted instance takes back what it counted
    ///   before (the larger of the two wins: publishing again never counts twice);
    /// - `others`: the other instances' counts, which admission adds to its own;
    /// - the rpm share: until the next reconcile this instance admits at most its count now
    ///   plus an even part of what the limit has left (`⌈left / instances⌉`), so that
    ///   instances that each see the same stale total cannot each admit all of what is left.
    pub fn reconciled(&self, limits: &KeyLimits, windows: MeterWindows, recorded: OwnCounts, others: OthersCounts) {
        let MeterWindows { minute, budget_period } = windows;
        raise_to(&self.requests, minute, recorded.requests);
        raise_to(&self.tokens, minute, recorded.tokens);
        raise_to(&self.spend, budget_period, recorded.spend_micros);
        self.others.requests.set(minute, others.requests);
        self.others.tokens.set(minute, others.tokens);
        self.others.spend.set(budget_period, others.spend_micros);
        let instances = others.instances.max(1);
        if let Some(limit) = limits.rpm {
            let own = self.requests.get(minute);
            let left = limit.saturating_sub(own + others.requests);
            self.others.request_cap.set(minute, own + left.div_ceil(instances));
        }
        self.others.instances.store(instances, Ordering::Relaxed);
    }

    /// Redis is out of reach: admission goes on against the last known counts of the others,
    /// without a share (each instance may then admit up to the whole limit).
    pub fn unshared(&self) {
        self.others.instances.store(0, Ordering::Relaxed);
    }

    /// The spend counter as stored: its budget period (as kept: see [`PackedWindow`]) and
    /// micro-dollars — what a restart needs to go on from.
    pub fn spend_record(&self) -> (u64, u64) {
        let v = self.spend.0.load(Ordering::Relaxed);
        (window_of(v), v & COUNT_MAX)
    }

    /// Puts back a spend counter [`KeyMeter::spend_record`] gave (at start, before any request).
    pub fn restore_spend(&self, period: u64, micros: u64) {
        self.spend.0.store(pack(PackedWindow::tag(period), micros), Ordering::Relaxed);
    }
}

/// Raises the count in `window` to at least `count`.
fn raise_to(w: &PackedWindow, window: u64, count: u64) {
    w.update(window, |c| (c < count).then_some(count));
}

/// The budget period `now` falls in, and the seconds until it ends (`None` without a period).
fn budget_period(duration: Option<Duration>, now: u64) -> (u64, Option<u64>) {
    match duration.map(|d| d.as_secs().max(1)) {
        Some(secs) => (now / secs, Some(secs - now % secs)),
        None => (0, None),
    }
}

/// A count in a numbered window: the window's low [`WINDOW_BITS`] bits above [`COUNT_BITS`]
/// bits of count. Only equality of windows matters, so the window number may wrap.
#[derive(Debug, Default)]
pub(crate) struct PackedWindow(AtomicU64);

const COUNT_BITS: u32 = 44;
const COUNT_MAX: u64 = (1 << COUNT_BITS) - 1;
const WINDOW_BITS: u32 = 64 - COUNT_BITS;

fn pack(window: u64, count: u64) -> u64 {
    (window << COUNT_BITS) | count.min(COUNT_MAX)
}

fn window_of(packed: u64) -> u64 {
    packed >> COUNT_BITS
}

impl PackedWindow {
    fn tag(window: u64) -> u64 {
        window & ((1 << WINDOW_BITS) - 1)
    }

    /// The count in `window` (0 when the stored count is from another window).
    pub(crate) fn get(&self, window: u64) -> u64 {
        let v = self.0.load(Ordering::Relaxed);
        if window_of(v) == Self::tag(window) {
            v & COUNT_MAX
        } else {
            0
        }
    }

    /// Adds `n` in `window` (starting it over when it is a new window), saturating.
    pub(crate) fn add(&self, window: u64, n: u64) {
        self.update(window, |count| Some(count.saturating_add(n)));
    }

    /// Adds `n` when the count stays within `limit`; false (and no change) otherwise.
    fn add_below(&self, window: u64, n: u64, limit: u64) -> bool {
        self.update(window, |count| Some(count.saturating_add(n)).filter(|&c| c <= limit))
    }

    /// The count in `window`, or `None` when the stored count is from another window.
    fn get_in(&self, window: u64) -> Option<u64> {
        let v = self.0.load(Ordering::Relaxed);
        (window_of(v) == Self::tag(window)).then_some(v & COUNT_MAX)
    }

    fn set(&self, window: u64, count: u64) {
        self.0.store(pack(Self::tag(window), count), Ordering::Relaxed);
    }

    fn update(&self, window: u64, f: impl Fn(u64) -> Option<u64>) -> bool {
        let tag = Self::tag(window);
        let mut current = self.0.load(Ordering::Relaxed);
        loop {
            let count = if window_of(current) == tag { current & COUNT_MAX } else { 0 };
            let Some(next) = f(count) else { return false };
            match self.0.compare_exchange_weak(current, pack(tag, next), Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return true,
                Err(actual) => current = actual,
            }
        }
    }
}

#[cfg(test)]
#[path = "key_meter_shared_tests.rs"]
mod shared_tests;

#[cfg(test)]
mod tests {
    use super::*;

    /// The first second of a minute (Unix time), in 2027.
    const MINUTE: u64 = 1_800_000_000;

    fn limits(rpm: Option<u64>, tpm: Option<u64>, budget: Option<f64>) -> KeyLimits {
        KeyLimits { rpm, tpm, max_budget: budget, budget_duration: None }
    }

    #[test]
    fn rpm_admits_up_to_the_limit_then_refuses_until_the_next_minute() {
        let (m, l) = (KeyMeter::default(), limits(Some(3), None, None));
        let t = MINUTE + 15;
        for _ in 0..3 {
            assert_eq!(m.admit(&l, t), Ok(()));
        }
        assert_eq!(m.admit(&l, t + 10), Err(KeyRefusal::Rpm { limit: 3, retry_after_secs: 35 }));
        assert_eq!(m.usage(&l, t).requests_this_minute, 3, "a refusal does not count as a request");
        assert_eq!(m.usage(&l, t).refused_rpm, 1);
        assert_eq!(m.admit(&l, t + 45), Ok(()), "a new minute starts over");
        assert_eq!(m.usage(&l, t + 45).requests_this_minute, 1);
    }

    #[test]
    fn tpm_refuses_once_the_minute_used_its_tokens() {
        let (m, l) = (KeyMeter::default(), limits(None, Some(100), None));
        let t = MINUTE;
        assert_eq!(m.admit(&l, t), Ok(()));
        m.record(&l, 60, None, t);
        assert_eq!(m.admit(&l, t + 1), Ok(()), "60 of 100 used");
        m.record(&l, 40, None, t + 1);
        assert_eq!(m.admit(&l, t + 2), Err(KeyRefusal::Tpm { limit: 100, used: 100, retry_after_secs: 58 }));
        assert_eq!(m.admit(&l, t + 60), Ok(()));
    }

    #[test]
    fn a_budget_refuses_once_spent_and_starts_over_each_period() {
        let mut l = limits(None, None, Some(0.01));
        let m = KeyMeter::default();
        let t = 1_800_000_000;
        m.record(&l, 0, Some(0.004), t);
        assert_eq!(m.admit(&l, t), Ok(()));
        m.record(&l, 0, Some(0.006), t);
        assert!(matches!(m.admit(&l, t), Err(KeyRefusal::Budget { resets_in_secs: None, .. })));
        // With a daily period, the lifetime spend above is not today's: today starts empty.
        l.budget_duration = Some(Duration::from_secs(86_400));
        let day_start = t - t % 86_400;
        assert_eq!(m.admit(&l, day_start + 3_600), Ok(()));
        m.record(&l, 0, Some(0.02), day_start + 3_600);
        assert_eq!(
            m.admit(&l, day_start + 3_600),
            Err(KeyRefusal::Budget { max_budget: 0.01, spent: 0.02, resets_in_secs: Some(82_800) })
        );
        assert_eq!(m.admit(&l, day_start + 86_400), Ok(()), "the next day starts over");
    }

    #[test]
    fn a_spend_record_restores_into_the_same_period() {
        let l = KeyLimits {
            max_budget: Some(1.0),
            budget_duration: Some(Duration::from_secs(3_600)),
            ..limits(None, None, None)
        };
        let (old, new) = (KeyMeter::default(), KeyMeter::default());
        old.record(&l, 0, Some(0.25), MINUTE);
        let (period, micros) = old.spend_record();
        new.restore_spend(period, micros);
        assert_eq!(new.usage(&l, MINUTE + 60).spend, 0.25);
        assert_eq!(new.usage(&l, MINUTE + 3_600).spend, 0.0, "the next period starts over");
    }

    #[test]
    fn windows_roll_over_and_counts_saturate() {
        let w = PackedWindow::default();
        w.add(7, 5);
        assert_eq!(w.get(7), 5);
        assert_eq!(w.get(8), 0);
        w.add(8, 2);
        assert_eq!((w.get(7), w.get(8)), (0, 2));
        w.add(8, u64::MAX);
        assert_eq!(w.get(8), COUNT_MAX);
        assert!(!w.add_below(9, 3, 2));
        assert_eq!(w.get(9), 0, "a refused add changes nothing, not even the window");
    }

    #[test]
    fn rpm_is_exact_under_contention() {
        let m = std::sync::Arc::new(KeyMeter::default());
        let l = limits(Some(1_000), None, None);
        let t = MINUTE;
        let admitted: usize = std::thread::scope(|s| {
            let handles: Vec<_> =
                (0..4).map(|_| s.spawn(|| (0..600).filter(|_| m.admit(&l, t).is_ok()).count())).collect();
            handles.into_iter().map(|h| h.join().unwrap()).sum()
        });
        assert_eq!(admitted, 1_000);
        assert_eq!(m.usage(&l, t).refused_rpm, 1_400);
    }
}
