//! The database keys' and teams' requests in flight (`max_parallel_requests`), shared by the
//! instances: every reconcile each instance writes how many it has in flight now into one hash
//! per key or team (`<prefix>:parallel:<id>`, a field per instance, overwritten: a gauge, not
//! a count), and reads the sum of the other live instances' fields, which admission adds to its
//! own ([`Account::enter`]). A field of an instance gone from the heartbeat is dropped. A set
//! (`<prefix>:parallel-busy`) names the gauges with requests in flight anywhere: an instance
//! reconciles those and its own busy ones, so that a key busy elsewhere is known here within a
//! reconcile or two, and thousands of idle keys cost nothing.
//!
//! LiteLLM's limiter counts in Redis itself, exactly; here an instance admits on what the last
//! reconcile saw, so requests entering on several instances within one `sync_interval` may
//! overshoot the cap by what each admitted meanwhile — never more than the cap per instance.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use pointwork_db::{Account, LimitedMeters};

/// KEYS[1]: the instances' heartbeat (kept by the counters' reconcile); KEYS[2]: the set of
/// gauges with requests in flight anywhere; KEYS[3..]: the gauges. ARGV: instance, TTL in
/// seconds, then each gauge's value. Returns the others' sum per gauge, and the busy set.
const GAUGES: &str = r"
local instance = ARGV[1]
local ttl = tonumber(ARGV[2])
local busy = KEYS[2]
local out = {}
for i = 3, #KEYS do
  local key = KEYS[i]
  local own = tonumber(ARGV[i])
  redis.call('HSET', key, instance, own)
  redis.call('EXPIRE', key, ttl)
  local others = 0
  local all = redis.call('HGETALL', key)
  for j = 1, #all, 2 do
    if all[j] ~= instance then
      if redis.call('ZSCORE', KEYS[1], all[j]) then
        others = others + tonumber(all[j + 1])
      else
        redis.call('HDEL', key, all[j])
      end
    end
  end
  if own + others > 0 then redis.call('SADD', busy, key) else redis.call('SREM', busy, key) end
  out[#out + 1] = others
end
redis.call('EXPIRE', busy, ttl)
return { out, redis.call('SMEMBERS', busy) }
";

/// How long a gauge outlives its last write.
const TTL_SECS: u64 = 60;

pub(super) struct ParallelGauges {
    prefix: String,
    instance: String,
    script: redis::Script,
    /// What this instance last wrote per gauge: a gauge back to 0 is written once more.
    written: RefCell<HashMap<String, u64>>,
    /// The gauges with requests in flight on some instance, as the last reconcile saw them.
    busy: RefCell<HashSet<String>>,
}

impl ParallelGauges {
    pub(super) fn new(prefix: &str, instance: &str) -> ParallelGauges {
        ParallelGauges {
            prefix: prefix.to_string(),
            instance: instance.to_string(),
            script: redis::Script::new(GAUGES),
            written: RefCell::default(),
            busy: RefCell::default(),
        }
    }

    /// Writes this instance's requests in flight and takes in the others', for the gauges with
    /// requests in flight here or (as Redis's busy set said last time) anywhere: the cost
    /// follows the keys in use, not the keys cached.
    pub(super) fn reconcile(&self, con: &mut redis::Connection, list: &LimitedMeters) -> redis::RedisResult<()> {
        let live = list.live_parallel();
        if live.is_empty() {
            return Ok(());
        }
        let mut written = self.written.borrow_mut();
        let mut busy = self.busy.borrow_mut();
        let gauges: Vec<(String, Arc<Account>, u64)> = live
            .into_iter()
            .map(|(id, account)| {
                let key = format!("{}:parallel:{id}", self.prefix);
                let own = account.in_flight();
                (key, account, own)
            })
            .filter(|(key, _, own)| *own > 0 || busy.contains(key) || written.get(key).is_some_and(|w| *w > 0))
            .collect();
        let mut invocation = self.script.prepare_invoke();
        invocation.key(format!("{}:instances", self.prefix)).key(format!("{}:parallel-busy", self.prefix));
        invocation.arg(&self.instance).arg(TTL_SECS);
        for (key, _, own) in &gauges {
            invocation.key(key).arg(*own);
        }
        let (others, now_busy): (Vec<u64>, Vec<String>) = invocation.invoke(con)?;
        written.clear();
        for ((key, account, own), others) in gauges.into_iter().zip(others) {
            account.set_others_in_flight(others);
            written.insert(key, own);
        }
        *busy = now_busy.into_iter().collect();
        Ok(())
    }

    /// Redis is out of reach: each instance caps its own requests alone.
    pub(super) fn unshare(&self, list: &LimitedMeters) {
        for (_, account) in list.live_parallel() {
            account.set_others_in_flight(0);
        }
    }
}
