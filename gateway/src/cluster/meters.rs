//! The shared counters: each virtual key's requests and tokens this minute and its spend this
//! budget period, and each policy's spend today. Every instance admits on its own atomics
//! ([`KeyMeter`]); every `sync_interval` this reconcile writes its own counts into Redis and
//! reads the others'.
//!
//! Redis keeps one hash per counter and window, one field per instance holding that instance's
//! *absolute* count (`HSET`, never `INCRBY`): writing the same count twice changes nothing, so
//! a reconcile whose answer was lost, or a Redis that comes back, never counts twice. A
//! restarted instance takes its own field back (the larger of the two wins), which is how spend
//! outlives a restart of every instance: Redis is the record. One Lua script does it all in one
//! round trip, with the instances' heartbeat that says how many share the limits.

use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use pointwork_core::{KeyLimits, KeyMeter, MeterWindows, OthersCounts, OwnCounts};
use pointwork_db::LimitedMeters;

use crate::routes::Routes;

/// For each counter hash (KEYS[2..]), ARGV: instance, now_ms, stale_ms, then per hash its
/// value and TTL in seconds (0: none). Raises this instance's field to the value, and returns
/// the live instances followed by (own field, sum of the other fields) per hash.
const RECONCILE: &str = r"
local instance = ARGV[1]
local now = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], now, instance)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[3]))
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]) * 10)
local out = { redis.call('ZCARD', KEYS[1]) }
for i = 2, #KEYS do
  local key = KEYS[i]
  local value = tonumber(ARGV[2 * i])
  local ttl = tonumber(ARGV[2 * i + 1])
  local recorded = tonumber(redis.call('HGET', key, instance) or '0')
  if value > recorded then
    redis.call('HSET', key, instance, value)
    recorded = value
  end
  if ttl > 0 then redis.call('EXPIRE', key, ttl) end
  local others = 0
  local all = redis.call('HGETALL', key)
  for j = 1, #all, 2 do
    if all[j] ~= instance then others = others + tonumber(all[j + 1]) end
  end
  out[#out + 1] = recorded
  out[#out + 1] = others
end
return out
";

/// What a minute's counters are kept for in Redis beyond the minute.
const MINUTE_TTL_SECS: u64 = 120;
/// The database's meters that count nothing now (on this instance, or on the others as last
/// seen) are reconciled once in this many reconciles (every second at the default 100 ms), so
/// that thousands of limited keys cost Redis what the busy ones do; the rest every time.
const QUIET_EVERY: u64 = 10;

pub(super) struct Meters {
    prefix: String,
    instance: String,
    script: redis::Script,
    /// An instance missing this long from the heartbeat no longer counts as sharing.
    stale: Duration,
    /// Reconciles so far (quiet meters join every [`QUIET_EVERY`]th).
    rounds: Cell<u64>,
    /// The database's meters reconciled at least once: a new one joins its first round, quiet
    /// or not, so that it admits on its share at once.
    seen: RefCell<HashSet<String>>,
}

/// One meter to reconcile: its id in Redis, its limits, the meter.
struct Shared {
    id: String,
    limits: KeyLimits,
    meter: Arc<KeyMeter>,
}

impl Meters {
    pub(super) fn new(prefix: &str, instance: &str, sync_interval: Duration) -> Meters {
        Meters {
            prefix: prefix.to_string(),
            instance: instance.to_string(),
            script: redis::Script::new(RECONCILE),
            stale: (sync_interval * 5).max(Duration::from_secs(2)),
            rounds: Cell::new(0),
            seen: RefCell::default(),
        }
    }

    /// The instances sharing, with when each last reconciled (Unix ms), oldest first.
    pub(super) fn members(&self, con: &mut redis::Connection) -> redis::RedisResult<Vec<(String, u64)>> {
        let key = format!("{}:instances", self.prefix);
        let members: Vec<(String, f64)> = redis::cmd("ZRANGE").arg(key).arg(0).arg(-1).arg("WITHSCORES").query(con)?;
        Ok(members.into_iter().map(|(name, at)| (name, at as u64)).collect())
    }

    /// One reconcile of every limited meter of `routes` and of the database's keys and
    /// teams; returns the instances sharing.
    pub(super) fn reconcile(
        &self,
        con: &mut redis::Connection,
        routes: &Routes,
        database: Option<&LimitedMeters>,
    ) -> redis::RedisResult<u64> {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        let round = self.rounds.replace(self.rounds.get() + 1);
        let sweep = round.is_multiple_of(QUIET_EVERY);
        let shared = {
            let seen = self.seen.borrow();
            let quiet_skipped = (!sweep).then_some((now.as_secs(), &*seen));
            shared_meters(routes, database, quiet_skipped)
        };
        let mut invocation = self.script.prepare_invoke();
        invocation
            .key(format!("{}:instances", self.prefix))
            .arg(&self.instance)
            .arg(now.as_millis() as u64)
            .arg(self.stale.as_millis() as u64);
        let mut plans = Vec::with_capacity(shared.len());
        for s in &shared {
            let windows = MeterWindows::at(&s.limits, now.as_secs());
            let own = s.meter.own_counts(windows);
            let counters = self.counters(s, windows, own);
            for (key, value, ttl) in &counters {
                invocation.key(key).arg(*value).arg(*ttl);
            }
            plans.push((windows, counters.len()));
        }
        let answer: Vec<u64> = invocation.invoke(con)?;
        let instances = answer.first().copied().unwrap_or(1).max(1);
        let mut pairs = answer.get(1..).unwrap_or_default().chunks_exact(2);
        for (s, (windows, n)) in shared.iter().zip(plans) {
            let mut recorded = OwnCounts::default();
            let mut others = OthersCounts { instances, ..OthersCounts::default() };
            let kinds = counted(&s.limits);
            for kind in kinds.into_iter().take(n) {
                let Some([own, theirs]) = pairs.next().map(|p| [p[0], p[1]]) else { break };
                match kind {
                    Counter::Requests => (recorded.requests, others.requests) = (own, theirs),
                    Counter::Tokens => (recorded.tokens, others.tokens) = (own, theirs),
                    Counter::Spend => (recorded.spend_micros, others.spend_micros) = (own, theirs),
                }
            }
            s.meter.reconciled(&s.limits, windows, recorded, others);
        }
        let mut seen = self.seen.borrow_mut();
        if sweep {
            // Every live meter was in this round: forget those gone.
            seen.clear();
        }
        seen.extend(shared.iter().map(|s| s.id.clone()));
        Ok(instances)
    }

    /// Takes this instance out of the heartbeat: the others' shares grow at their next
    /// reconcile, not once it went stale.
    pub(super) fn leave(&self, con: &mut redis::Connection) -> redis::RedisResult<()> {
        redis::cmd("ZREM").arg(format!("{}:instances", self.prefix)).arg(&self.instance).exec(con)
    }

    /// Every meter goes on alone (Redis is out of reach).
    pub(super) fn unshare(&self, routes: &Routes, database: Option<&LimitedMeters>) {
        for s in shared_meters(routes, database, None) {
            s.meter.unshared();
        }
    }

    /// The Redis hashes of one meter's limited counters: key, own count, TTL in seconds.
    fn counters(&self, s: &Shared, windows: MeterWindows, own: OwnCounts) -> Vec<(String, u64, u64)> {
        let base = format!("{}:meter:{}", self.prefix, s.id);
        counted(&s.limits)
            .into_iter()
            .map(|kind| match kind {
                Counter::Requests => (format!("{base}:req:{}", windows.minute), own.requests, MINUTE_TTL_SECS),
                Counter::Tokens => (format!("{base}:tok:{}", windows.minute), own.tokens, MINUTE_TTL_SECS),
                Counter::Spend => match s.limits.budget_duration {
                    // Kept a period beyond its own, then gone.
                    Some(d) => {
                        let secs = d.as_secs().max(1);
                        (format!("{base}:spend:{secs}s:{}", windows.budget_period), own.spend_micros, 2 * secs)
                    }
                    None => (format!("{base}:spend:lifetime"), own.spend_micros, 0),
                },
            })
            .collect()
    }
}

#[derive(Clone, Copy)]
enum Counter {
    Requests,
    Tokens,
    Spend,
}

/// The counters `limits` limits, in a fixed order.
fn counted(limits: &KeyLimits) -> Vec<Counter> {
    let mut kinds = Vec::with_capacity(3);
    if limits.rpm.is_some() {
        kinds.push(Counter::Requests);
    }
    if limits.tpm.is_some() {
        kinds.push(Counter::Tokens);
    }
    if limits.max_budget.is_some() {
        kinds.push(Counter::Spend);
    }
    kinds
}

/// The limited meters: virtual keys (by the SHA-256 the config names them by, never a key),
/// policies with a daily budget (by policy id), and the database's keys (by `token`, the same
/// SHA-256) and teams (by `team_id`) with rpm / tpm, and keys' model budgets — of these, with
/// `quiet_skipped` (now, the meters reconciled before), only those counting something now or
/// never reconciled yet.
fn shared_meters(
    routes: &Routes,
    database: Option<&LimitedMeters>,
    quiet_skipped: Option<(u64, &HashSet<String>)>,
) -> Vec<Shared> {
    let keys = routes.keys.virtual_keys().map(|k| Shared {
        id: format!("key:{}", k.digest_hex()),
        limits: k.limits.clone(),
        meter: k.meter.clone(),
    });
    let policies = routes.policy.iter().flat_map(|p| {
        p.policies.iter().zip(&p.meters).map(|(policy, meter)| Shared {
            id: format!("policy:{}", policy.id),
            limits: crate::routes::policy::daily_limits(policy),
            meter: meter.clone(),
        })
    });
    let database = database
        .into_iter()
        .flat_map(LimitedMeters::live)
        .filter(|(id, limits, meter)| {
            quiet_skipped.is_none_or(|(now, seen)| !seen.contains(id) || busy(meter, limits, now))
        })
        .map(|(id, limits, meter)| Shared { id, limits, meter });
    keys.chain(policies).chain(database).filter(|s| !counted(&s.limits).is_empty()).collect()
}

/// Whether `meter` counts anything at `now`: requests or tokens this minute, spend this budget
/// period — its own or the other instances' as last seen.
fn busy(meter: &KeyMeter, limits: &KeyLimits, now: u64) -> bool {
    let usage = meter.usage(limits, now);
    usage.requests_this_minute > 0 || usage.tokens_this_minute > 0 || usage.spend > 0.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_meter_is_busy_while_it_counts_something() {
        let (meter, now) = (KeyMeter::default(), 1_800_000_000);
        let rpm = KeyLimits { rpm: Some(6), ..KeyLimits::default() };
        assert!(!busy(&meter, &rpm, now));
        assert!(meter.admit(&rpm, now).is_ok());
        assert!(busy(&meter, &rpm, now));
        assert!(!busy(&meter, &rpm, now + 60), "quiet again the next minute");
        let budget = KeyLimits {
            max_budget: Some(1.0),
            budget_duration: Some(Duration::from_secs(86_400)),
            ..KeyLimits::default()
        };
        let spender = KeyMeter::default();
        spender.record(&budget, 0, Some(0.01), now);
        assert!(busy(&spender, &budget, now + 3600), "spend keeps a budget busy for its period");
    }
}
