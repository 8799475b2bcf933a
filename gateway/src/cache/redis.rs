//! The Redis store of one shard: RESP2 ([`resp`]) over the gateway's own client
//! connections (`crate::upstream::conn`, TLS for `rediss://`), a few pooled connections, every
//! command bounded by `pointwork.cache.redis_timeout` from its start (connecting included),
//! writes in the background, and a pause after a failure ([`reach`]) so that a Redis that
//! is down or slow costs requests nothing: while paused, a read is a miss at once and a write is
//! dropped, without touching the network.
//!
//! A connection is used by one command at a time and goes back to the pool only after a whole,
//! expected reply; one whose command failed or timed out is closed.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use monoio_rustls::TlsConnector;
use pointwork_config::RedisServer;

use super::routes::RedisPlace;
use crate::upstream::conn::{connect, ConnectError, UpstreamConn};
use crate::upstream::target::Target;
use reach::{Change, Reach, Ticket};
use resp::{ProtocolError, Reply};

#[path = "redis_reach.rs"]
mod reach;
#[path = "redis_resp.rs"]
mod resp;

/// The most idle connections a store keeps: one command goes on a connection at a time, so
/// about as many as the shard has cache reads under way at once (fewer: connections are opened
/// and closed under load — 4 cost a Redis hit ~500 new connections per 1,000 at 64 clients).
const IDLE_MAX: usize = 64;
/// The most writes (`SET`, `DEL`) a store has under way; further ones are dropped.
pub(crate) const WRITES_MAX: usize = 64;
/// A pooled connection keeps a buffer up to this size (a large value's is let go).
const BUF_KEEP: usize = 64 * 1024;

/// Whether a store of this process last saw Redis out of reach: each shard's store finds it out
/// on its own, the log says it once.
static SAID_OUT: AtomicBool = AtomicBool::new(false);

/// What a read found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum RedisRead {
    Found(Vec<u8>),
    Missing,
    /// Redis is out of reach, slow or answered an error: a miss.
    Unavailable,
}

/// The store's cumulative counts, for `/metrics`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct RedisStats {
    /// Reads asked for.
    pub(crate) gets: u64,
    /// Reads that found a value.
    pub(crate) found: u64,
    /// Reads answered `Unavailable` at once because Redis was paused (no command sent).
    pub(crate) skipped: u64,
    /// Commands (any) without a whole answer within the timeout.
    pub(crate) timeouts: u64,
    /// Commands (any) that failed otherwise: connect refused, connection lost, an error or
    /// unexpected reply, bytes that are not RESP.
    pub(crate) errors: u64,
    /// Writes sent.
    pub(crate) sets: u64,
    /// Writes not sent: Redis was paused or [`WRITES_MAX`] were under way.
    pub(crate) sets_dropped: u64,
    /// Deletes sent.
    pub(crate) deletes: u64,
    /// Deletes not sent, for the same reasons.
    pub(crate) deletes_dropped: u64,
}

/// One shard's connections to the cache's Redis.
pub(crate) struct RedisStore {
    shared: Rc<Shared>,
}

/// What the store and its background writes share.
struct Shared {
    server: RedisServer,
    /// Where to connect, the host resolved once when the store is made.
    target: Result<Target, String>,
    timeout: Duration,
    tls: TlsConnector,
    idle: RefCell<Vec<RedisConn>>,
    writes: Cell<usize>,
    reach: RefCell<Reach>,
    stats: Cell<RedisStats>,
}

/// A connection and its buffer (the command written, then the reply read, in the same one).
struct RedisConn {
    io: UpstreamConn,
    buf: Vec<u8>,
}

/// Why a command failed.
#[derive(Debug)]
enum Failure {
    Timeout(Duration),
    Connect(String),
    Io(std::io::Error),
    Closed,
    /// An error or unexpected reply, said which command it answered.
    Reply(&'static str, String),
    Protocol(ProtocolError),
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Timeout(limit) => write!(f, "no answer within {} ms", limit.as_millis()),
            Failure::Connect(why) => f.write_str(why),
            Failure::Io(e) => write!(f, "connection failed: {e}"),
            Failure::Closed => f.write_str("Redis closed the connection"),
            Failure::Reply(command, reply) => write!(f, "{command} answered {reply}"),
            Failure::Protocol(e) => write!(f, "not a RESP reply: {e}"),
        }
    }
}

impl RedisStore {
    /// A store for `place` (its address resolved already); `tls`: the shard's client TLS
    /// (`rediss://`).
    pub(crate) fn new(place: &RedisPlace, timeout: Duration, tls: TlsConnector) -> RedisStore {
        let (server, target) = (place.server.clone(), place.target.clone());
        let shared = Shared {
            server,
            target,
            timeout,
            tls,
            idle: RefCell::new(Vec::new()),
            writes: Cell::new(0),
            reach: RefCell::new(Reach::new()),
            stats: Cell::new(RedisStats::default()),
        };
        RedisStore { shared: Rc::new(shared) }
    }

    /// The server this store talks to, and how long a command may take (a reload changing
    /// either makes a new store).
    pub(crate) fn is_for(&self, server: &RedisServer, timeout: Duration) -> bool {
        self.shared.server == *server && self.shared.timeout == timeout
    }

    /// The cumulative counts (the tests read them; `/metrics` counts what the lookups saw).
    #[cfg(test)]
    pub(crate) fn stats(&self) -> RedisStats {
        self.shared.stats.get()
    }

    /// `GET key`, within the timeout (at once `Unavailable` while Redis is paused).
    pub(crate) async fn get(&self, key: &str) -> RedisRead {
        let shared = &self.shared;
        shared.count(|s| s.gets += 1);
        let Some(ticket) = shared.may_send() else {
            shared.count(|s| s.skipped += 1);
            return RedisRead::Unavailable;
        };
        let is_value = |r: &Reply| matches!(r, Reply::Bulk(_));
        match shared.run(ticket, "GET", &[b"GET", key.as_bytes()], is_value).await {
            Some(Reply::Bulk(Some(value))) => {
                shared.count(|s| s.found += 1);
                RedisRead::Found(value)
            }
            Some(_) => RedisRead::Missing,
            None => RedisRead::Unavailable,
        }
    }

    /// `SET key value PX ttl`, in the background (dropped while Redis is paused or when
    /// [`WRITES_MAX`] writes are under way).
    pub(crate) fn set(&self, key: String, value: Vec<u8>, ttl: Duration) {
        let Some(ticket) = self.shared.may_write() else {
            return self.shared.count(|s| s.sets_dropped += 1);
        };
        self.shared.count(|s| s.sets += 1);
        let shared = self.shared.clone();
        monoio::spawn(async move {
            // PX 0 is an error reply; a TTL under a millisecond keeps the entry for one.
            let ms = ttl.as_millis().clamp(1, u64::MAX as u128) as u64;
            let ms = itoa::Buffer::new().format(ms).to_owned();
            let args: [&[u8]; 5] = [b"SET", key.as_bytes(), &value, b"PX", ms.as_bytes()];
            shared.run(ticket, "SET", &args, Reply::is_ok).await;
            shared.writes.set(shared.writes.get() - 1);
        });
    }

    /// `DEL key`, in the background (dropped like a write).
    pub(crate) fn delete(&self, key: String) {
        let Some(ticket) = self.shared.may_write() else {
            return self.shared.count(|s| s.deletes_dropped += 1);
        };
        self.shared.count(|s| s.deletes += 1);
        let shared = self.shared.clone();
        monoio::spawn(async move {
            let is_count = |r: &Reply| matches!(r, Reply::Integer(_));
            shared.run(ticket, "DEL", &[b"DEL", key.as_bytes()], is_count).await;
            shared.writes.set(shared.writes.get() - 1);
        });
    }

    /// How many writes are under way.
    #[cfg(test)]
    fn writes_under_way(&self) -> usize {
        self.shared.writes.get()
    }

    /// When the pause ends, while Redis is paused.
    #[cfg(test)]
    fn paused_until(&self) -> Option<Instant> {
        self.shared.reach.borrow().retry_at()
    }
}

impl Shared {
    fn count(&self, change: impl FnOnce(&mut RedisStats)) {
        let mut stats = self.stats.get();
        change(&mut stats);
        self.stats.set(stats);
    }

    fn may_send(&self) -> Option<Ticket> {
        self.reach.borrow_mut().may_send(Instant::now(), self.timeout)
    }

    /// A ticket for a write, counted as under way; `None` when it must be dropped.
    fn may_write(&self) -> Option<Ticket> {
        if self.writes.get() >= WRITES_MAX {
            return None;
        }
        let ticket = self.may_send()?;
        self.writes.set(self.writes.get() + 1);
        Some(ticket)
    }

    /// Sends one command and reads its reply within the timeout; `accept` says which replies
    /// are its answers. Records the outcome: `None` when the command failed.
    async fn run(
        &self,
        ticket: Ticket,
        name: &'static str,
        args: &[&[u8]],
        accept: fn(&Reply) -> bool,
    ) -> Option<Reply> {
        let outcome = match monoio::time::timeout(self.timeout, self.exchange(name, args, accept)).await {
            Ok(outcome) => outcome,
            Err(_) => Err(Failure::Timeout(self.timeout)),
        };
        match outcome {
            Ok(reply) => {
                let came_back = self.reach.borrow_mut().answered() == Change::CameBack;
                if came_back && SAID_OUT.swap(false, Ordering::Relaxed) {
                    eprintln!("pointwork: cache: Redis {} answers again", self.server.display());
                }
                Some(reply)
            }
            Err(failure) => {
                match failure {
                    Failure::Timeout(_) => self.count(|s| s.timeouts += 1),
                    _ => self.count(|s| s.errors += 1),
                }
                let went_out = self.reach.borrow_mut().failed(ticket, Instant::now()) == Change::WentOut;
                if went_out && !SAID_OUT.swap(true, Ordering::Relaxed) {
                    eprintln!(
                        "pointwork: cache: Redis {} is out of reach ({failure}): cache reads are misses and writes \
                         are dropped until it answers again",
                        self.server.display()
                    );
                }
                None
            }
        }
    }

    /// One command on a pooled or new connection (a new one first sends `AUTH` and `SELECT`,
    /// pipelined with the command). The connection goes back to the pool only after an
    /// accepted reply.
    async fn exchange(&self, name: &'static str, args: &[&[u8]], accept: fn(&Reply) -> bool) -> Result<Reply, Failure> {
        let (mut conn, fresh) = match self.take_idle() {
            Some(conn) => (conn, false),
            None => (self.open().await?, true),
        };
        let mut buf = std::mem::take(&mut conn.buf);
        buf.clear();
        let setup = if fresh { self.encode_setup(&mut buf) } else { Vec::new() };
        resp::encode(&mut buf, args);
        let (written, mut buf) = conn.io.write_all(buf).await;
        written.map_err(Failure::Io)?;
        buf.clear();
        let mut at = 0;
        let mut setup = setup.into_iter();
        loop {
            let Some((reply, used)) = resp::parse(&buf[at..]).map_err(Failure::Protocol)? else {
                let (read, more) = conn.io.read_more(buf).await;
                buf = more;
                match read {
                    Ok(0) => return Err(Failure::Closed),
                    Ok(_) => continue,
                    Err(e) => return Err(Failure::Io(e)),
                }
            };
            at += used;
            if let Some(step) = setup.next() {
                if !reply.is_ok() {
                    return Err(Failure::Reply(step, reply.to_string()));
                }
                continue;
            }
            if at != buf.len() {
                return Err(Failure::Protocol(ProtocolError(format!("bytes after the reply to {name}"))));
            }
            if !accept(&reply) {
                return Err(Failure::Reply(name, reply.to_string()));
            }
            conn.buf = buf;
            self.put_idle(conn);
            return Ok(reply);
        }
    }

    /// Encodes what a new connection sends first; the names of the commands encoded.
    fn encode_setup(&self, buf: &mut Vec<u8>) -> Vec<&'static str> {
        let mut steps = Vec::new();
        if let Some(password) = &self.server.password {
            match &self.server.username {
                Some(user) => resp::encode(buf, &[b"AUTH", user.as_bytes(), password.as_bytes()]),
                None => resp::encode(buf, &[b"AUTH", password.as_bytes()]),
            }
            steps.push("AUTH");
        }
        if self.server.db != 0 {
            resp::encode(buf, &[b"SELECT", itoa::Buffer::new().format(self.server.db).as_bytes()]);
            steps.push("SELECT");
        }
        steps
    }

    async fn open(&self) -> Result<RedisConn, Failure> {
        let target = self.target.as_ref().map_err(|e| Failure::Connect(e.clone()))?;
        match connect(target, &self.tls, self.timeout).await {
            Ok(io) => Ok(RedisConn { io, buf: Vec::new() }),
            Err(ConnectError::Timeout) => Err(Failure::Timeout(self.timeout)),
            Err(ConnectError::Failed(why)) => Err(Failure::Connect(why)),
        }
    }

    /// An idle connection that is still open (one Redis closed — a restart, its `timeout` — is
    /// let go).
    fn take_idle(&self) -> Option<RedisConn> {
        let mut idle = self.idle.borrow_mut();
        while let Some(conn) = idle.pop() {
            if conn.io.is_idle_and_open() {
                return Some(conn);
            }
        }
        None
    }

    fn put_idle(&self, mut conn: RedisConn) {
        let mut idle = self.idle.borrow_mut();
        if idle.len() < IDLE_MAX {
            if conn.buf.capacity() > BUF_KEEP {
                conn.buf = Vec::new();
            }
            idle.push(conn);
        }
    }
}

#[cfg(test)]
#[path = "redis_tests.rs"]
mod tests;
