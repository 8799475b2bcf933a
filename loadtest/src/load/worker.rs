//! One generator thread: its share of the connections on one level-triggered epoll loop, the
//! closed or open loop that starts requests on them, and the stats it records.
//!
//! Pacing (open loop): the thread sleeps in `epoll_pwait2` (nanosecond timeout, timer slack set
//! to 1 ns) until `spin` before the next intended start, then polls `epoll_wait(…, 0)` — handling
//! responses meanwhile — until the instant comes. See README "Pacing".

use std::net::SocketAddr;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Barrier, OnceLock};
use std::time::{Duration, Instant};

use rustls::pki_types::ServerName;

use super::conn::{Conn, Event, Finished, Phase};
use super::options::Stop;
use super::schedule::Schedule;
use super::spread::{target_of, Rotation};
use super::stats::{ErrorKind, Stats};
use super::sys::{self, Epoll};
use super::tls::{ClientSetup, TlsLink};

/// How often in-flight requests are checked against the timeout.
const TIMEOUT_SCAN: Duration = Duration::from_millis(10);
/// Closed loop: a connection whose connect failed waits this long before its next request.
const CONNECT_BACKOFF: Duration = Duration::from_millis(10);
/// Idle mode: connects and first requests in flight at once, per thread.
const IDLE_OPENING: usize = 256;
/// Idle mode: how often timeouts are checked.
const IDLE_SCAN: Duration = Duration::from_millis(100);
/// Longest wait for the connections opened before the start.
const SETUP_LIMIT: Duration = Duration::from_secs(5);

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Mode {
    Closed,
    Open {
        rate: f64,
    },
    /// One request per connection, then hold the connection for the duration.
    Idle,
}

/// One of the run's targets: where its connections connect, and the request they send.
pub struct Endpoint {
    pub addr: SocketAddr,
    /// The request, built once: one, or with `--keys` one per key (in the file's order).
    pub requests: Vec<Vec<u8>>,
    /// https: the name its certificate must carry; `None` for plain http.
    pub tls_name: Option<ServerName<'static>>,
}

/// What every thread of one run shares.
pub struct Shared {
    /// The targets, in `--url` order; connection `i` of the run talks to `targets[i mod n]`.
    pub targets: Vec<Endpoint>,
    pub stream: bool,
    /// `--new-connection`: every request connects (and shakes hands) afresh; none opened ahead.
    pub new_connection: bool,
    /// The TLS client configuration when a target is https.
    pub tls: Option<ClientSetup>,
    pub timeout: Duration,
    pub spin: Duration,
    pub mode: Mode,
    pub stop: Stop,
    pub threads: usize,
    /// Closed loop with `--requests`: requests claimed so far by all threads.
    pub claimed: AtomicU64,
    /// `--keys`: which key the next request of the run sends.
    pub keys: Rotation,
    /// Workers and the main thread meet here after the connections are opened, then again once
    /// the main thread has set `start`.
    pub gate: Barrier,
    pub start: OnceLock<Instant>,
    pub progress: Vec<Counters>,
}

/// A thread's running totals for the live progress line; written only by that thread.
#[derive(Default)]
#[repr(align(128))]
pub struct Counters {
    pub ok: AtomicU64,
    pub errors: AtomicU64,
    /// Idle mode: connections open after their first request.
    pub open: AtomicU64,
    /// Idle mode: connections whose first request has ended (well or not).
    pub settled: AtomicU64,
}

/// What a thread hands back.
pub struct Outcome {
    /// What belongs to no one target (open loop: requests not sent).
    pub stats: Stats,
    /// Everything else, per target (indexed like `Shared::targets`).
    pub by_target: Vec<Stats>,
    /// The last time it completed a request or stopped sending.
    pub last_activity: Instant,
    /// Idle mode: connections still open at the end.
    pub still_open: u64,
}

struct Worker<'a> {
    shared: &'a Shared,
    index: usize,
    epoll: Epoll,
    conns: Vec<Conn>,
    ready: Vec<(usize, u32)>,
    /// Connections free for a request (idle, or closed: they connect first).
    available: Vec<usize>,
    /// Closed loop: connections waiting out a connect backoff, with the instant it ends.
    backoff: Vec<(Instant, usize)>,
    in_flight: usize,
    /// What belongs to no one target.
    stats: Stats,
    /// Per target: what its connections recorded.
    by_target: Vec<Stats>,
    /// Successes and failures so far, over the targets (for the progress line).
    ok: u64,
    errors: u64,
    last_activity: Instant,
}

/// Runs thread `index` with the run's connections `owned` (numbered over all threads: see
/// [`super::spread`]).
pub fn run(shared: &Shared, index: usize, owned: Range<usize>) -> Outcome {
    sys::tight_timer_slack();
    let connections = owned.len();
    let targets = shared.targets.len();
    // One TLS configuration (and so one session store) per https target, for this thread alone.
    let tls_configs: Vec<_> = (shared.targets.iter().enumerate())
        .map(|(target, endpoint)| {
            let setup = shared.tls.as_ref()?;
            let mine = owned.clone().filter(|&connection| target_of(connection, targets) == target).count();
            Some((setup.for_thread(mine), endpoint.tls_name.clone()?))
        })
        .collect();
    let conn = |(token, connection)| {
        let target = target_of(connection, targets);
        let tls = tls_configs[target].as_ref().map(|(config, name)| TlsLink::new(config.clone(), name.clone()));
        Conn::new(token, target, shared.stream, shared.new_connection, tls)
    };
    let mut worker = match Epoll::new(connections) {
        Ok(epoll) => Worker {
            shared,
            index,
            epoll,
            conns: owned.enumerate().map(conn).collect(),
            ready: Vec::with_capacity(connections.min(1024)),
            available: Vec::with_capacity(connections),
            backoff: Vec::new(),
            in_flight: 0,
            stats: Stats::default(),
            by_target: (0..targets).map(|_| Stats::default()).collect(),
            ok: 0,
            errors: 0,
            last_activity: Instant::now(),
        },
        Err(error) => panic!("pointwork-load: epoll_create1: {error}"),
    };
    if shared.mode != Mode::Idle && !shared.new_connection {
        worker.open_connections();
    } else {
        worker.available.extend((0..connections).rev());
    }
    shared.gate.wait();
    shared.gate.wait();
    let start = *shared.start.get().expect("the main thread sets the start before the second gate");
    let still_open = match shared.mode {
        Mode::Idle => worker.hold_idle(start),
        _ => {
            worker.load(start);
            0
        }
    };
    for conn in &worker.conns {
        worker.by_target[conn.target].connections += conn.connects;
    }
    Outcome { stats: worker.stats, by_target: worker.by_target, last_activity: worker.last_activity, still_open }
}

impl Worker<'_> {
    /// Opens every connection (handshakes included) before the start, so the first requests do
    /// not pay for it. Those that fail connect again (and count) when their first request starts.
    fn open_connections(&mut self) {
        let mut pending = 0;
        for token in 0..self.conns.len() {
            let addr = self.shared.targets[self.conns[token].target].addr;
            if self.conns[token].connect(&self.epoll, addr, false).is_ok() {
                pending += 1;
            }
        }
        let limit = Instant::now() + SETUP_LIMIT;
        while pending > 0 && Instant::now() < limit {
            self.wait(Some(Duration::from_millis(10)));
            for at in 0..self.ready.len() {
                let (token, flags) = self.ready[at];
                let conn = &mut self.conns[token];
                let request = &self.shared.targets[conn.target].requests[conn.key];
                let stats = &mut self.by_target[conn.target];
                if let Event::ConnectEnded = conn.on_ready(&self.epoll, flags, request, stats) {
                    pending -= 1;
                }
            }
        }
        for conn in &mut self.conns {
            if conn.phase != Phase::Idle {
                conn.close();
            }
        }
        self.available.extend((0..self.conns.len()).rev());
    }

    fn wait(&mut self, timeout: Option<Duration>) {
        self.ready.clear();
        match self.epoll.wait(timeout) {
            Ok(ready) => self.ready.extend(ready),
            Err(error) => panic!("pointwork-load: epoll_wait: {error}"),
        }
    }

    /// The closed or open loop, until the run stops sending and the requests in flight ended
    /// (or the drain grace ran out).
    fn load(&mut self, start: Instant) {
        let shared = self.shared;
        let mut schedule = match shared.mode {
            Mode::Open { rate } => {
                let (limit, horizon) = match shared.stop {
                    Stop::Requests(count) => (Some(count), None),
                    Stop::After(duration) => (None, Some(duration)),
                };
                Some(Schedule::new(start, rate, self.index, shared.threads, limit, horizon))
            }
            _ => None,
        };
        let send_deadline = match shared.stop {
            Stop::After(duration) => Some(start + duration),
            Stop::Requests(_) => None,
        };
        let grace = match shared.stop {
            Stop::After(_) => shared.timeout.min(Duration::from_secs(2)),
            Stop::Requests(_) => shared.timeout + TIMEOUT_SCAN,
        };
        let mut sending = true;
        let mut drain_deadline = None;
        let mut next_scan = start + TIMEOUT_SCAN;
        // Wait for the start itself (the other threads start at the same instant).
        self.pace_until(start);

        loop {
            let mut now = Instant::now();
            if sending {
                let past_deadline = send_deadline.is_some_and(|deadline| now >= deadline);
                sending = match &mut schedule {
                    // Requests meant to start before the deadline still go out (late, and their
                    // lateness counts) while a connection is free; the rest are not sent.
                    Some(schedule) => self.dispatch_open(schedule, &mut now) && !past_deadline,
                    None => !past_deadline && self.dispatch_closed(now),
                };
                if !sending {
                    if let Some(schedule) = &mut schedule {
                        self.stats.not_sent += schedule.skip_rest();
                    }
                    self.last_activity = self.last_activity.max(now);
                    drain_deadline = Some(now + grace);
                }
            }
            if !sending && self.in_flight == 0 {
                break;
            }
            if drain_deadline.is_some_and(|deadline| now >= deadline) {
                for conn in self.conns.iter().filter(|conn| conn.busy()) {
                    self.by_target[conn.target].unfinished += 1;
                }
                debug_assert_eq!(self.conns.iter().filter(|conn| conn.busy()).count(), self.in_flight);
                break;
            }
            if now >= next_scan {
                self.scan(now);
                next_scan = now + TIMEOUT_SCAN;
                continue;
            }

            // The earliest instant something must happen, and whether it is a paced start.
            let mut wake = drain_deadline.or(send_deadline.filter(|_| sending));
            if self.in_flight > 0 || !self.backoff.is_empty() {
                wake = Some(wake.map_or(next_scan, |wake| wake.min(next_scan)));
            }
            let paced = match &schedule {
                Some(schedule) if sending && !self.available.is_empty() => schedule.peek(),
                _ => None,
            };
            let timeout = match (paced, wake) {
                (Some(paced), wake) if wake.is_none_or(|wake| paced <= wake) => {
                    let left = paced.saturating_duration_since(now);
                    Some(left.saturating_sub(shared.spin))
                }
                (_, Some(wake)) => Some(wake.saturating_duration_since(now)),
                (_, None) => None,
            };
            self.wait(timeout);
            self.handle_ready();
        }
    }

    /// Sleeps, then spins, until `instant`.
    fn pace_until(&mut self, instant: Instant) {
        loop {
            let left = instant.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            if left > self.shared.spin {
                std::thread::sleep(left - self.shared.spin);
            } else {
                std::hint::spin_loop();
            }
        }
    }

    /// Closed loop: a request on every free connection. `false` once the run has no more.
    fn dispatch_closed(&mut self, now: Instant) -> bool {
        while let Some(token) = self.available.pop() {
            if let Stop::Requests(limit) = self.shared.stop {
                if self.shared.claimed.fetch_add(1, Ordering::Relaxed) >= limit {
                    self.available.push(token);
                    return false;
                }
            }
            self.start(token, now, now);
        }
        true
    }

    /// Open loop: every request whose intended start has come, while a connection is free.
    /// Requests wait for a free connection; the wait counts in their latency. `false` once the
    /// schedule has no more.
    fn dispatch_open(&mut self, schedule: &mut Schedule, now: &mut Instant) -> bool {
        loop {
            let Some(intended) = schedule.peek() else { return false };
            if intended > *now {
                return true;
            }
            let Some(token) = self.available.pop() else { return true };
            schedule.advance();
            self.by_target[self.conns[token].target].send_lag(now.saturating_duration_since(intended));
            self.start(token, intended, *now);
            *now = Instant::now();
        }
    }

    fn start(&mut self, token: usize, base: Instant, now: Instant) {
        self.in_flight += 1;
        let conn = &mut self.conns[token];
        let endpoint = &self.shared.targets[conn.target];
        if endpoint.requests.len() > 1 {
            conn.key = self.shared.keys.next(endpoint.requests.len());
        }
        let event = conn.start(&self.epoll, endpoint.addr, &endpoint.requests[conn.key], base, now);
        self.on_event(token, event);
    }

    fn handle_ready(&mut self) {
        for at in 0..self.ready.len() {
            let (token, flags) = self.ready[at];
            let conn = &mut self.conns[token];
            let stats = &mut self.by_target[conn.target];
            let event = conn.on_ready(&self.epoll, flags, &self.shared.targets[conn.target].requests[conn.key], stats);
            self.on_event(token, event);
        }
    }

    fn on_event(&mut self, token: usize, event: Event) {
        match event {
            Event::Nothing | Event::ConnectEnded => {}
            Event::Lost => {
                self.by_target[self.conns[token].target].lost += 1;
                if self.shared.mode == Mode::Idle {
                    self.shared.progress[self.index].open.fetch_sub(1, Ordering::Relaxed);
                }
            }
            Event::Finished(finished) => self.finished(token, finished),
        }
    }

    fn finished(&mut self, token: usize, finished: Finished) {
        self.in_flight -= 1;
        let at = finished.at;
        self.last_activity = self.last_activity.max(at);
        let mut connect_failed = false;
        let conn = &self.conns[token];
        let stats = &mut self.by_target[conn.target];
        match finished.result {
            Ok(complete) if (200..300).contains(&complete.status) => {
                self.ok += 1;
                stats.success(at.saturating_duration_since(finished.base));
                if self.shared.stream {
                    if let Some(ttfb) = finished.ttfb {
                        stats.ttfb(ttfb);
                    }
                    for &gap in &conn.gaps {
                        stats.inter_event(gap);
                    }
                    stats.events += finished.events;
                }
            }
            Ok(complete) => {
                self.errors += 1;
                stats.status_error(complete.status);
            }
            Err(kind) => {
                self.errors += 1;
                connect_failed = kind == ErrorKind::Connect;
                stats.error(kind);
            }
        }
        let counters = &self.shared.progress[self.index];
        counters.ok.store(self.ok, Ordering::Relaxed);
        counters.errors.store(self.errors, Ordering::Relaxed);
        match self.shared.mode {
            Mode::Idle => {
                if self.conns[token].phase == Phase::Idle {
                    counters.open.fetch_add(1, Ordering::Relaxed);
                }
                counters.settled.fetch_add(1, Ordering::Relaxed);
            }
            Mode::Closed if connect_failed => self.backoff.push((at + CONNECT_BACKOFF, token)),
            _ => self.available.push(token),
        }
    }

    /// Ends requests past the timeout; frees connections whose backoff is over.
    fn scan(&mut self, now: Instant) {
        for token in 0..self.conns.len() {
            let conn = &mut self.conns[token];
            if conn.busy() && now.saturating_duration_since(conn.started) >= self.shared.timeout {
                let kind = match conn.phase {
                    Phase::Connecting { .. } => ErrorKind::Connect,
                    _ => ErrorKind::Timeout,
                };
                let event = conn.fail(kind);
                self.on_event(token, event);
            }
        }
        let available = &mut self.available;
        self.backoff.retain(|&(until, token)| {
            let waiting = until > now;
            if !waiting {
                available.push(token);
            }
            waiting
        });
    }

    /// Idle mode: one request on each connection (at most `IDLE_OPENING` at once), then hold
    /// them until `--duration` after this thread's last one ended. Returns how many are open.
    fn hold_idle(&mut self, start: Instant) -> u64 {
        let Stop::After(duration) = self.shared.stop else { unreachable!("idle mode takes --duration") };
        let mut hold_until = None;
        let mut next_scan = start + TIMEOUT_SCAN;
        loop {
            let now = Instant::now();
            while self.in_flight < IDLE_OPENING {
                let Some(token) = self.available.pop() else { break };
                self.start(token, now, now);
            }
            if hold_until.is_none() && self.available.is_empty() && self.in_flight == 0 {
                hold_until = Some(now + duration);
            }
            if hold_until.is_some_and(|until| now >= until) {
                break;
            }
            if now >= next_scan {
                self.scan(now);
                next_scan = now + IDLE_SCAN;
            }
            let wake = hold_until.map_or(next_scan, |until| until.min(next_scan));
            self.wait(Some(wake.saturating_duration_since(now)));
            self.handle_ready();
        }
        self.last_activity = Instant::now();
        self.conns.iter().filter(|conn| conn.phase == Phase::Idle).count() as u64
    }
}
