//! A lease in Redis: one instance at a time does a job for the whole cluster (the health checks'
//! probes, the telemetry poller's polls) and the others read what it publishes.
//!
//! The lease is the key `{key_prefix}:lease:{name}`, whose value names its holder
//! (`<instance>:<process>`). It is taken with `SET key holder NX PX ttl` and renewed only by its
//! holder (a script compares the value, then `PEXPIRE`s) every third of the ttl; another instance
//! tries to take it twice a second. When the holder dies, its key expires within one ttl and the
//! next instance to try takes it; a holder that drains gives it up at once ([`super::status::Status::release_leases`]).
//!
//! What an instance is ([`Role`]) is what its last attempt said, believed for one ttl: with Redis
//! out of reach, or no answer for a ttl, it is [`Role::Alone`] and does the job itself — two
//! instances doing a job is better than none doing it.
//!
//! A [`Keeper`] attempts on its own thread (the redis crate's sync client): the threads that read
//! the role never wait on Redis.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use redis::ConnectionLike;

use super::redis_link::{connect, log, next_backoff};

/// The shortest and the longest ttl [`ttl_for`] gives.
pub const TTL_RANGE: (Duration, Duration) = (Duration::from_secs(3), Duration::from_secs(30));
/// How often an instance that does not hold the lease tries to take it.
pub const TAKE_EVERY: Duration = Duration::from_millis(500);

/// Renews the lease when `ARGV[1]` holds it: 1, else 0.
const RENEW: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
";

/// Deletes the lease when `ARGV[1]` holds it: 1, else 0.
const RELEASE: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
";

/// What this instance is for a lease's job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// No attempt has answered yet (just started).
    Unknown,
    /// It holds the lease: it does the job for every instance.
    Holder,
    /// Another instance holds it: this one reads what the holder publishes.
    Follower,
    /// Redis is out of reach (or has not answered for a ttl): it does the job for itself.
    Alone,
}

impl Role {
    const ALL: [Role; 4] = [Role::Unknown, Role::Holder, Role::Follower, Role::Alone];

    /// Whether an instance in this role does the job itself. `Unknown` does not: a starting
    /// instance waits (briefly, see the users) for its first answer rather than doing a round
    /// that the holder also does.
    pub fn does_the_job(self) -> bool {
        matches!(self, Role::Holder | Role::Alone)
    }

    fn code(self) -> u8 {
        Role::ALL.iter().position(|r| *r == self).map_or(0, |i| i as u8)
    }

    fn from_code(code: u8) -> Role {
        Role::ALL.get(usize::from(code)).copied().unwrap_or(Role::Unknown)
    }
}

/// The ttl of a lease whose job runs every `interval`: three intervals, within [`TTL_RANGE`] (a
/// dead holder's checks must not go missing for a quarter of an hour when they run every 300 s:
/// the next holder does a round as soon as it takes over).
pub fn ttl_for(interval: Duration) -> Duration {
    (interval * 3).clamp(TTL_RANGE.0, TTL_RANGE.1)
}

/// One lease and what this instance knows of it. The role is read without a lock.
pub struct Lease {
    name: &'static str,
    /// What the holder does, for the log: "runs the health checks".
    job: &'static str,
    key: String,
    holder: String,
    ttl: Duration,
    born: Instant,
    role: AtomicU8,
    /// When the role was learnt: milliseconds since `born`.
    learnt_ms: AtomicU64,
    stopped: AtomicBool,
}

impl Lease {
    /// The lease `{key_prefix}:lease:{name}` as `holder` (`<instance>:<process>`) would hold it.
    pub fn new(name: &'static str, job: &'static str, key_prefix: &str, holder: String, ttl: Duration) -> Lease {
        Lease {
            name,
            job,
            key: format!("{key_prefix}:lease:{name}"),
            holder,
            ttl,
            born: Instant::now(),
            role: AtomicU8::new(Role::Unknown.code()),
            learnt_ms: AtomicU64::new(0),
            stopped: AtomicBool::new(false),
        }
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    pub fn key(&self) -> &str {
        &self.key
    }

    /// The value the lease holds while this instance holds it.
    pub fn holder(&self) -> &str {
        &self.holder
    }

    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// One attempt: renews the lease if this instance holds it, else takes it if it is free.
    /// `Ok(true)`: this instance holds it for a ttl from now. Once stopped, never takes it.
    pub fn attempt(&self, con: &mut dyn ConnectionLike) -> redis::RedisResult<bool> {
        if self.stopped.load(Ordering::Relaxed) {
            return Ok(false);
        }
        let ttl_ms = self.ttl.as_millis().max(1) as u64;
        let renew = |con: &mut dyn ConnectionLike| -> redis::RedisResult<bool> {
            let renewed: i64 = redis::Script::new(RENEW).key(&self.key).arg(&self.holder).arg(ttl_ms).invoke(con)?;
            Ok(renewed == 1)
        };
        let take = |con: &mut dyn ConnectionLike| -> redis::RedisResult<bool> {
            let set: Option<String> =
                redis::cmd("SET").arg(&self.key).arg(&self.holder).arg("NX").arg("PX").arg(ttl_ms).query(con)?;
            Ok(set.is_some())
        };
        // The likely answer first; the other covers a lease this instance held before Redis
        // went out of reach, or one that expired since.
        let held = self.role.load(Ordering::Relaxed) == Role::Holder.code();
        let first = if held { renew(con)? } else { take(con)? };
        match (first, held) {
            (true, _) => Ok(true),
            (false, true) => take(con),
            (false, false) => renew(con),
        }
    }

    /// Gives the lease up if this instance holds it: another instance takes over without
    /// waiting for the ttl. `Ok(true)`: it was held.
    pub fn release(&self, con: &mut dyn ConnectionLike) -> redis::RedisResult<bool> {
        self.role.store(Role::Follower.code(), Ordering::Relaxed);
        let released: i64 = redis::Script::new(RELEASE).key(&self.key).arg(&self.holder).invoke(con)?;
        Ok(released == 1)
    }

    /// From now on the lease is never taken (the process is ending).
    pub fn stop(&self) {
        self.stopped.store(true, Ordering::Relaxed);
    }

    /// Forgets the role (the job is not done here for now): [`Role::Unknown`] until the next
    /// attempt.
    pub fn forget(&self) {
        self.role.store(Role::Unknown.code(), Ordering::Relaxed);
    }

    /// Records what an attempt at `now` said (`None`: Redis out of reach); the new role when it
    /// changed.
    pub fn learnt(&self, outcome: Option<bool>, now: Instant) -> Option<Role> {
        let role = match outcome {
            _ if self.stopped.load(Ordering::Relaxed) => Role::Follower,
            Some(true) => Role::Holder,
            Some(false) => Role::Follower,
            None => Role::Alone,
        };
        let was = self.role(now);
        self.learnt_ms.store(now.saturating_duration_since(self.born).as_millis() as u64, Ordering::Relaxed);
        self.role.store(role.code(), Ordering::Relaxed);
        (role != was).then_some(role)
    }

    /// What this instance is at `now`: what the last attempt said, for one ttl; after that
    /// without an answer, [`Role::Alone`].
    pub fn role(&self, now: Instant) -> Role {
        let role = Role::from_code(self.role.load(Ordering::Relaxed));
        let learnt = self.born + Duration::from_millis(self.learnt_ms.load(Ordering::Relaxed));
        match role {
            Role::Unknown => Role::Unknown,
            _ if self.stopped.load(Ordering::Relaxed) => Role::Follower,
            _ if now.saturating_duration_since(learnt) > self.ttl => Role::Alone,
            role => role,
        }
    }

    /// When to attempt again after learning `role`: a holder renews every third of the ttl, the
    /// others try to take it every [`TAKE_EVERY`] (or sooner, within a third of the ttl);
    /// `backoff` after Redis was out of reach.
    pub fn next_attempt(&self, role: Role, now: Instant, backoff: Duration) -> Instant {
        now + match role {
            Role::Holder => self.ttl / 3,
            Role::Follower | Role::Unknown => TAKE_EVERY.min(self.ttl / 3),
            Role::Alone => backoff,
        }
    }

    /// Says on stderr what this instance does now.
    fn say(&self, role: Role) {
        let key = &self.key;
        match role {
            Role::Holder => log(&format!("this instance holds the lease {key}: it {} for every instance", self.job)),
            Role::Follower => log(&format!("another instance holds the lease {key}: it {}, this one reads", self.job)),
            Role::Alone => log(&format!("lease {key}: Redis is out of reach, this instance {} itself", self.job)),
            Role::Unknown => {}
        }
    }
}

/// Keeps one lease from a thread of its own: attempts, records, and says what changed.
pub struct Keeper {
    client: redis::Client,
    con: Option<redis::Connection>,
    lease: Arc<Lease>,
    backoff: Duration,
}

impl Keeper {
    pub fn new(client: redis::Client, lease: Arc<Lease>) -> Keeper {
        Keeper { client, con: None, lease, backoff: Duration::ZERO }
    }

    pub fn lease(&self) -> &Arc<Lease> {
        &self.lease
    }

    /// One attempt at `now`: the role, whether it changed, and when to attempt next.
    pub fn keep(&mut self, now: Instant) -> (Role, bool, Instant) {
        let lease = self.lease.clone();
        let outcome = self.with(|con| lease.attempt(con)).ok();
        self.backoff = match outcome {
            Some(_) => Duration::ZERO,
            None => next_backoff(self.backoff),
        };
        let changed = self.lease.learnt(outcome, now);
        if let Some(role) = changed {
            self.lease.say(role);
        }
        let role = self.lease.role(now);
        (role, changed.is_some(), self.lease.next_attempt(role, now, self.backoff))
    }

    /// Runs `f` on the connection, connecting first when there is none; a failure drops the
    /// connection (the next call connects again).
    pub fn with<T>(
        &mut self,
        f: impl FnOnce(&mut redis::Connection) -> redis::RedisResult<T>,
    ) -> redis::RedisResult<T> {
        let con = match &mut self.con {
            Some(con) => con,
            None => self.con.insert(connect(&self.client)?),
        };
        let outcome = f(con);
        if outcome.is_err() {
            self.con = None;
        }
        outcome
    }

    /// Keeps the lease for as long as the process runs.
    pub fn run(mut self) {
        loop {
            let (_, _, next) = self.keep(Instant::now());
            std::thread::sleep(next.saturating_duration_since(Instant::now()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lease(ttl: Duration) -> Lease {
        Lease::new("health_checks", "runs the health checks", "pw", "a:1".into(), ttl)
    }

    #[test]
    fn the_key_and_the_ttl() {
        assert_eq!(lease(Duration::from_secs(3)).key(), "pw:lease:health_checks");
        assert_eq!(ttl_for(Duration::from_millis(200)), Duration::from_secs(3));
        assert_eq!(ttl_for(Duration::from_secs(2)), Duration::from_secs(6));
        assert_eq!(ttl_for(Duration::from_secs(300)), Duration::from_secs(30));
    }

    #[test]
    fn the_role_is_what_the_last_attempt_said_for_one_ttl() {
        let l = lease(Duration::from_secs(3));
        let t0 = Instant::now();
        assert_eq!(l.role(t0), Role::Unknown);
        assert!(!l.role(t0).does_the_job());
        assert_eq!(l.learnt(Some(true), t0), Some(Role::Holder));
        assert_eq!(l.learnt(Some(true), t0 + Duration::from_secs(1)), None);
        assert_eq!(l.role(t0 + Duration::from_secs(3)), Role::Holder);
        // No answer for longer than a ttl: the lease may be another's by now, or Redis gone.
        assert_eq!(l.role(t0 + Duration::from_millis(4100)), Role::Alone);
        assert_eq!(l.learnt(Some(false), t0 + Duration::from_secs(5)), Some(Role::Follower));
        assert!(!l.role(t0 + Duration::from_secs(5)).does_the_job());
        assert_eq!(l.learnt(None, t0 + Duration::from_secs(6)), Some(Role::Alone));
        assert!(l.role(t0 + Duration::from_secs(6)).does_the_job());
    }

    #[test]
    fn a_holder_renews_every_third_of_the_ttl_the_others_try_more_often() {
        let l = lease(Duration::from_secs(30));
        let t0 = Instant::now();
        let backoff = Duration::from_millis(400);
        assert_eq!(l.next_attempt(Role::Holder, t0, backoff), t0 + Duration::from_secs(10));
        assert_eq!(l.next_attempt(Role::Follower, t0, backoff), t0 + TAKE_EVERY);
        assert_eq!(l.next_attempt(Role::Alone, t0, backoff), t0 + backoff);
        let short = lease(Duration::from_millis(900));
        assert_eq!(short.next_attempt(Role::Follower, t0, backoff), t0 + Duration::from_millis(300));
    }

    #[test]
    fn roles_survive_their_encoding() {
        for role in Role::ALL {
            assert_eq!(Role::from_code(role.code()), role);
        }
    }
}
