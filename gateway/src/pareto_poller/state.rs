//! What the poller knows, without IO or a clock of its own: each managed model's schedule and
//! last rows, each (rule key, fingerprint)'s verdict, the account's allow-list, the counters.
//! The thread feeds it poll outcomes and notes with `now`; it answers with the telemetry to
//! publish, the cache entries to keep, and the lines to log.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use pointwork_core::pareto::{
    region_verdict, select, AllowList, ModelTelemetry, ParetoRule, ParetoSettings, ParetoTelemetry, RegionVerdict,
    StatsRow, UptimeRow, Verdict,
};

use super::backoff::retry_after;
use super::cache::Contents;

/// One successful fetch of a model's telemetry.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rows {
    pub stats: Vec<StatsRow>,
    pub uptime: Vec<UptimeRow>,
    /// Malformed rows the parsers skipped.
    pub skipped: usize,
}

/// A managed model (rule key): when it is polled next, and what its last poll brought.
struct Model {
    next_due: Instant,
    /// Failed polls in a row.
    failures: u32,
    rows: Option<Rows>,
}

/// One (rule key, fingerprint): its rule, the verdict before its last poll (a re-selection
/// replays that poll), and what is published.
struct Learned {
    rule: ParetoRule,
    prior: Option<Verdict>,
    published: ModelTelemetry,
}

pub struct PollerState {
    settings: Arc<ParetoSettings>,
    models: BTreeMap<String, Model>,
    learned: BTreeMap<(String, u64), Learned>,
    /// Verdicts of no configured rule (from the cache, or of a rule a reload removed): kept in
    /// the cache file until the retention prunes them, revived if their rule comes back.
    dormant: BTreeMap<(String, u64), ModelTelemetry>,
    allow_list: Option<AllowList>,
    polls: u64,
    poll_failures: u64,
}

const LOG: &str = "pointwork: openrouter-pareto:";

impl PollerState {
    /// Every model due at `now`; the cached verdicts of the configured rules published stale.
    pub fn new(settings: Arc<ParetoSettings>, cached: Contents, now: Instant) -> PollerState {
        let mut state = PollerState {
            settings: settings.clone(),
            models: BTreeMap::new(),
            learned: BTreeMap::new(),
            dormant: cached.models.into_iter().map(|m| ((m.key.clone(), m.fingerprint), m)).collect(),
            allow_list: cached.allow_list,
            polls: 0,
            poll_failures: 0,
        };
        state.reconfigure(settings, now);
        state
    }

    /// The rules of `key`, with their fingerprints.
    fn rules_of<'s>(settings: &'s ParetoSettings, key: &'s str) -> impl Iterator<Item = (u64, &'s ParetoRule)> + 's {
        settings.rules.iter().filter(move |(k, _)| k == key).map(|(_, r)| (r.fingerprint(), r))
    }

    /// Takes on new settings: verdicts whose (key, fingerprint) stays are kept, new ones are
    /// polled at once, removed ones leave the telemetry.
    pub fn reconfigure(&mut self, settings: Arc<ParetoSettings>, now: Instant) {
        let interval = settings.telemetry.poll_interval;
        let interval_changed = interval != self.settings.telemetry.poll_interval;
        self.settings = settings.clone();
        self.models.retain(|key, _| settings.rules.iter().any(|(k, _)| k == key));
        let wanted: BTreeMap<(String, u64), &ParetoRule> =
            settings.rules.iter().map(|(k, r)| ((k.clone(), r.fingerprint()), r)).collect();
        let gone: Vec<(String, u64)> = self.learned.keys().filter(|id| !wanted.contains_key(*id)).cloned().collect();
        for id in gone {
            if let Some(learned) = self.learned.remove(&id) {
                self.dormant.insert(id, learned.published);
            }
        }
        for ((key, fp), rule) in wanted {
            let model = self.models.entry(key.clone()).or_insert(Model { next_due: now, failures: 0, rows: None });
            if interval_changed && model.failures == 0 {
                model.next_due = model.next_due.min(now + interval);
            }
            let id = (key, fp);
            match self.learned.get_mut(&id) {
                // The same fingerprint: the rule's other fields (log flags, wildcard) may differ.
                Some(learned) => learned.rule = rule.clone(),
                None => {
                    model.next_due = now;
                    if let Some(mut published) = self.dormant.remove(&id) {
                        published.stale = true;
                        self.learned.insert(id, Learned { rule: rule.clone(), prior: None, published });
                    }
                }
            }
        }
    }

    /// When the next poll is due.
    pub fn next_due(&self) -> Option<Instant> {
        self.models.values().map(|m| m.next_due).min()
    }

    /// The models due at `now`.
    pub fn due(&self, now: Instant) -> Vec<String> {
        self.models.iter().filter(|(_, m)| m.next_due <= now).map(|(k, _)| k.clone()).collect()
    }

    /// Makes every model due at `now`.
    pub fn poll_now(&mut self, now: Instant) {
        for model in self.models.values_mut() {
            model.next_due = now;
        }
    }

    /// The allow-list's organisations when it is fresh at `unix`.
    fn allowed(&self, unix: f64) -> Option<&[String]> {
        let ttl = self.settings.cooldown.allowlist_ttl_s;
        self.allow_list.as_ref().filter(|a| a.is_fresh(unix, ttl)).map(|a| a.providers.as_slice())
    }

    /// A poll of `key` ended at `now` (`unix`: the same instant in unix seconds).
    pub fn polled(&mut self, key: &str, outcome: Result<Rows, String>, now: Instant, unix: f64) -> Vec<String> {
        let mut log = Vec::new();
        let interval = self.settings.telemetry.poll_interval;
        let Some(model) = self.models.get_mut(key) else { return log };
        self.polls += 1;
        let rows = match outcome {
            Ok(rows) => rows,
            Err(why) => {
                self.poll_failures += 1;
                model.failures = model.failures.saturating_add(1);
                let retry = retry_after(model.failures, interval);
                model.next_due = now + retry;
                if model.failures == 1 {
                    log.push(format!(
                        "{LOG} {key}: telemetry poll failed: {why}; keeping the last verdict (marked stale), \
                         retrying in {}s and backing off",
                        retry.as_secs_f64()
                    ));
                }
                for learned in self.learned.range_mut(id_range(key)).map(|(_, l)| l) {
                    learned.published.stale = true;
                }
                return log;
            }
        };
        if model.failures > 0 {
            log.push(format!("{LOG} {key}: telemetry poll recovered after {} failed polls", model.failures));
        }
        if rows.skipped > 0 && model.rows.as_ref().is_none_or(|r| r.skipped == 0) {
            log.push(format!("{LOG} {key}: {} malformed telemetry rows skipped", rows.skipped));
        }
        model.failures = 0;
        model.next_due = now + interval;
        model.rows = Some(rows);
        let allowed = self.allowed(unix).map(<[String]>::to_vec);
        let settings = self.settings.clone();
        for (fp, rule) in Self::rules_of(&settings, key) {
            let previous = self.learned.remove(&(key.to_string(), fp)).map(|l| l.published.verdict);
            self.learn((key, fp), rule, previous, allowed.as_deref(), unix, &mut log);
        }
        log
    }

    /// Selects over `key`'s last rows, records the verdict after `prior`, logs a new winner.
    fn learn(
        &mut self,
        (key, fp): (&str, u64),
        rule: &ParetoRule,
        prior: Option<Verdict>,
        allowed: Option<&[String]>,
        polled_at: f64,
        log: &mut Vec<String>,
    ) {
        let Some(rows) = self.models.get(key).and_then(|m| m.rows.as_ref()) else { return };
        let selection = select(&rows.stats, &rows.uptime, rule, allowed);
        let verdict = Verdict::after_poll(prior.as_ref(), selection, rule);
        let was = self
            .learned
            .get(&(key.to_string(), fp))
            .map_or_else(|| prior.as_ref().and_then(|p| p.winner.clone()), |l| l.published.verdict.winner.clone());
        if verdict.winner != was {
            let shared = self.settings.rules.iter().filter(|(k, _)| k == key).count() > 1;
            let rule_note = if shared { format!(" [rule {fp:016x}]") } else { String::new() };
            let name = |w: &Option<String>| w.clone().unwrap_or_else(|| "none".into());
            log.push(format!("{LOG} {key}: winner {} (was {}){rule_note}", name(&verdict.winner), name(&was)));
        }
        let stale = self.learned.get(&(key.to_string(), fp)).is_some_and(|l| l.published.stale);
        let published = ModelTelemetry {
            key: key.to_string(),
            fingerprint: fp,
            verdict,
            regions: regions(&rows.stats, rule),
            polled_at,
            stale,
        };
        self.learned.insert((key.to_string(), fp), Learned { rule: rule.clone(), prior, published });
    }

    /// A shard parsed the account's allowed providers from a 404 at `unix`: every model with
    /// rows is selected again under it (its last poll replayed, nothing fetched).
    pub fn allow_list_learned(&mut self, providers: Vec<String>, unix: f64) -> Vec<String> {
        let mut providers: Vec<String> =
            providers.into_iter().map(|p| p.trim().to_string()).filter(|p| !p.is_empty()).collect();
        providers.sort();
        providers.dedup();
        if providers.is_empty() {
            return Vec::new();
        }
        let unchanged = self.allowed(unix).is_some_and(|a| a == providers.as_slice());
        self.allow_list = Some(AllowList { providers, discovered_at: unix });
        if unchanged {
            return Vec::new();
        }
        let mut log = vec![format!(
            "{LOG} the account's allowed providers: {}",
            self.allow_list.as_ref().map_or(String::new(), |a| a.providers.join(", "))
        )];
        let allowed = self.allowed(unix).map(<[String]>::to_vec);
        let ids: Vec<(String, u64)> = self.learned.keys().cloned().collect();
        for (key, fp) in ids {
            let Some(learned) = self.learned.get(&(key.clone(), fp)) else { continue };
            let (rule, prior, polled_at) = (learned.rule.clone(), learned.prior.clone(), learned.published.polled_at);
            self.learn((&key, fp), &rule, prior, allowed.as_deref(), polled_at, &mut log);
        }
        log
    }

    /// Takes on what the poller lease's holder published (this instance does not poll): the
    /// verdicts of this instance's rules as published — the next poll here, after a takeover,
    /// damps flaps from them — and the allow-list when it is the newer. The rows of those models
    /// are forgotten (the verdicts are not theirs). Logs a changed winner, naming `from`.
    pub fn adopt(&mut self, models: Vec<ModelTelemetry>, allow_list: Option<AllowList>, from: &str) -> Vec<String> {
        let mut log = Vec::new();
        let settings = self.settings.clone();
        for m in models {
            let Some((fp, rule)) = Self::rules_of(&settings, &m.key).find(|(fp, _)| *fp == m.fingerprint) else {
                continue;
            };
            let id = (m.key.clone(), fp);
            let was = self.learned.get(&id).and_then(|l| l.published.verdict.winner.clone());
            if m.verdict.winner != was {
                let name = |w: &Option<String>| w.clone().unwrap_or_else(|| "none".into());
                log.push(format!(
                    "{LOG} {}: winner {} (was {}), polled by instance {from}",
                    m.key,
                    name(&m.verdict.winner),
                    name(&was)
                ));
            }
            if let Some(model) = self.models.get_mut(&m.key) {
                model.rows = None;
            }
            self.learned.insert(id, Learned { rule: rule.clone(), prior: None, published: m });
        }
        if let Some(shared) = allow_list {
            if self.allow_list.as_ref().is_none_or(|own| own.discovered_at < shared.discovered_at) {
                self.allow_list = Some(shared);
            }
        }
        log
    }

    /// What the shards read.
    pub fn telemetry(&self) -> ParetoTelemetry {
        ParetoTelemetry {
            models: self.learned.values().map(|l| l.published.clone()).collect(),
            allow_list: self.allow_list.clone(),
            polls: self.polls,
            poll_failures: self.poll_failures,
        }
    }

    /// What the cache file keeps: the verdicts, the dormant ones too.
    pub fn cache_entries(&self) -> Vec<&ModelTelemetry> {
        let mut all: Vec<&ModelTelemetry> = self.learned.values().map(|l| &l.published).collect();
        all.extend(self.dormant.values());
        all
    }

    pub fn allow_list(&self) -> Option<&AllowList> {
        self.allow_list.as_ref()
    }

    pub fn settings(&self) -> &Arc<ParetoSettings> {
        &self.settings
    }

    /// The poll interval, for the thread's idle wait when nothing is managed.
    pub fn poll_interval(&self) -> Duration {
        self.settings.telemetry.poll_interval
    }
}

/// Every id of `key`, whatever the fingerprint.
fn id_range(key: &str) -> std::ops::RangeInclusive<(String, u64)> {
    (key.to_string(), 0)..=(key.to_string(), u64::MAX)
}

/// Each reported slug's region verdict under `rule` (none without `exclude_regions`); a slug
/// reported twice keeps its most restrictive verdict.
fn regions(rows: &[StatsRow], rule: &ParetoRule) -> Vec<(String, RegionVerdict)> {
    if rule.exclude_regions.is_empty() {
        return Vec::new();
    }
    let rank = |v: RegionVerdict| match v {
        RegionVerdict::Allowed => 0,
        RegionVerdict::Unknown => 1,
        RegionVerdict::Excluded => 2,
    };
    let mut by_slug: BTreeMap<&str, RegionVerdict> = BTreeMap::new();
    for row in rows {
        let v = region_verdict(row, &rule.exclude_regions);
        let slot = by_slug.entry(row.slug.as_str()).or_insert(v);
        if rank(v) > rank(*slot) {
            *slot = v;
        }
    }
    by_slug.into_iter().map(|(slug, v)| (slug.to_string(), v)).collect()
}

#[cfg(test)]
#[path = "state_tests.rs"]
mod tests;
