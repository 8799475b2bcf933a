//! Starting the shards: one thread per shard, each with its own monoio runtime and its own
//! `SO_REUSEPORT` listener on the same address.

pub mod admin;
pub mod conn;
mod count_tokens;
pub mod endpoints;
pub mod handshake;
mod health_report;

use std::fmt;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_channel::oneshot;
use monoio::net::{ListenerOpts, TcpListener};
use pointwork_config::{GatewaySettings, IoDriver};

use crate::access_log::{AccessLog, Sink};
use crate::events::Mesh;
use crate::hub::ControlMsg;
use crate::hub::Hub;
use crate::shard::{Shard, ShardParts};

/// The IO driver a shard runs on, resolved from `auto`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Driver {
    IoUring,
    Epoll,
}

impl Driver {
    pub fn resolve(choice: IoDriver) -> Result<Driver, StartError> {
        let uring = monoio::utils::detect_uring();
        match choice {
            IoDriver::Auto => Ok(if uring { Driver::IoUring } else { Driver::Epoll }),
            IoDriver::Uring if uring => Ok(Driver::IoUring),
            IoDriver::Uring => {
                Err(StartError("io_uring is not available on this kernel (use --io-driver legacy or auto)".into()))
            }
            IoDriver::Legacy => Ok(Driver::Epoll),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Driver::IoUring => "io_uring",
            Driver::Epoll => "epoll (legacy)",
        }
    }
}

#[derive(Debug)]
pub struct StartError(pub String);

impl fmt::Display for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A running set of shards.
pub struct Running {
    pub addr: SocketAddr,
    pub driver: Driver,
    pub shards: usize,
    /// One per shard: firing it makes the shard stop accepting and drain.
    pub drain_signals: Vec<oneshot::Sender<()>>,
}

/// What the shards are started with.
pub struct Launch {
    pub listen: SocketAddr,
    pub shards: usize,
    pub driver: Driver,
    pub settings: Arc<GatewaySettings>,
    pub hub: Arc<Hub>,
    pub access_log: Option<Arc<Sink>>,
    /// The way to the other instances, when Redis is configured.
    pub cluster: Option<crate::events::Outbox>,
}

/// Binds and starts the shards; returns once every shard listens. Refuses when another process
/// already serves the address: `SO_REUSEPORT` would otherwise let a stale instance silently
/// share the port.
pub fn start(launch: Launch) -> Result<(Running, Mesh), StartError> {
    let Launch { listen, shards, driver, settings, hub, access_log, cluster } = launch;
    let tls = crate::upstream::conn::tls_connector().map_err(StartError)?;
    let addr = claim_address(listen)?;
    let (ready_tx, ready_rx) = mpsc::channel::<Result<(), String>>();
    let (mesh, inboxes) = Mesh::new(shards, cluster);
    let seed = seed();
    let mut drain_signals = Vec::with_capacity(shards);
    for (id, inbox) in inboxes.into_iter().enumerate() {
        let (drain_tx, drain_rx) = oneshot::channel();
        drain_signals.push(drain_tx);
        let ready = ready_tx.clone();
        let parts = ShardParts {
            id,
            hub: hub.clone(),
            inbox,
            mesh: mesh.clone(),
            settings: settings.clone(),
            tls: tls.clone(),
            access_log: AccessLog::new(access_log.clone()),
            seed,
        };
        let spawned = std::thread::Builder::new().name(format!("shard-{id}")).spawn(move || {
            let shard = Shard::new(parts);
            let result = match driver {
                Driver::IoUring => monoio::RuntimeBuilder::<monoio::IoUringDriver>::new()
                    .enable_timer()
                    .build()
                    .map(|mut rt| rt.block_on(run_shard(shard, addr, ready.clone(), drain_rx))),
                Driver::Epoll => monoio::RuntimeBuilder::<monoio::LegacyDriver>::new()
                    .enable_timer()
                    .build()
                    .map(|mut rt| rt.block_on(run_shard(shard, addr, ready.clone(), drain_rx))),
            };
            if let Err(e) = result {
                let _ = ready.send(Err(format!("shard {id}: cannot start the {} runtime: {e}", driver.name())));
            }
        });
        spawned.map_err(|e| StartError(format!("cannot spawn shard thread: {e}")))?;
    }
    drop(ready_tx);
    for _ in 0..shards {
        match ready_rx.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(StartError(e)),
            Err(_) => return Err(StartError("a shard thread ended during start-up".into())),
        }
    }
    Ok((Running { addr, driver, shards, drain_signals }, mesh))
}

/// Checks that no other process listens on `listen` (a plain bind without `SO_REUSEPORT` fails
/// if one does) and resolves port 0 to a concrete free port.
fn claim_address(listen: SocketAddr) -> Result<SocketAddr, StartError> {
    match std::net::TcpListener::bind(listen) {
        Ok(probe) => {
            probe.local_addr().map_err(|e| StartError(format!("cannot read the bound address of {listen}: {e}")))
        }
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => Err(StartError(format!(
            "{listen} is already in use by another process; stop it or choose another --listen address"
        ))),
        Err(e) => Err(StartError(format!("cannot listen on {listen}: {e}"))),
    }
}

fn seed() -> u64 {
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    t.as_nanos() as u64 ^ u64::from(std::process::id()).rotate_left(32)
}

/// How often a shard closes pooled upstream connections that idled out.
const POOL_SWEEP_EVERY: Duration = Duration::from_secs(5);
/// How often a shard hands its metrics to the control thread and writes its access log lines.
const REPORT_EVERY: Duration = Duration::from_millis(250);
/// How often a draining shard looks whether its last request finished.
const DRAIN_CHECK_EVERY: Duration = Duration::from_millis(5);

async fn run_shard(
    shard: Shard,
    addr: SocketAddr,
    ready: mpsc::Sender<Result<(), String>>,
    drain: oneshot::Receiver<()>,
) {
    let opts = ListenerOpts::new().reuse_port(true).reuse_addr(true).backlog(4096);
    let listener = match TcpListener::bind_with_config(addr, &opts) {
        Ok(l) => l,
        Err(e) => {
            let _ = ready.send(Err(format!("shard {}: cannot listen on {addr}: {e}", shard.id)));
            return;
        }
    };
    let _ = ready.send(Ok(()));
    drop(ready);
    let shard = Rc::new(shard);
    monoio::spawn(housekeeping(shard.clone()));
    monoio::select! {
        _ = accept_loop(&shard, &listener) => {}
        _ = drain => {}
    }
    // Draining: no new connections; requests in flight (and any that arrive on connections
    // already open) finish, each response closing its connection.
    drop(listener);
    while shard.active_requests.get() > 0 {
        monoio::time::sleep(DRAIN_CHECK_EVERY).await;
    }
    report(&shard);
    let _ = shard.hub.control.send(ControlMsg::ShardStopped(shard.id));
    // Keep the runtime turning until the process exits (other shards may still drain): the
    // tasks of connections that are open but idle are never dropped by a runtime that ends,
    // so a request sent on one would wait unanswered. Served, it gets `connection: close`.
    std::future::pending::<()>().await;
}

/// Raises the soft open-file limit to the hard one (an edge holds a descriptor per client and
/// upstream connection; the usual soft default of 1 024 is far too low); returns the limit now.
pub fn raise_open_files() -> u64 {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: `limit` is a valid out-parameter.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return 0;
    }
    if limit.rlim_cur < limit.rlim_max {
        let raised = libc::rlimit { rlim_cur: limit.rlim_max, rlim_max: limit.rlim_max };
        // SAFETY: `raised` is a valid rlimit.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            return raised.rlim_cur;
        }
    }
    limit.rlim_cur
}

/// Descriptors kept back for listeners, the control thread, health probes and logs.
const RESERVED_FILES: u64 = 64;

/// Client connections per shard that `open_files` descriptors can hold when each client
/// connection may also hold an upstream one: past it accepts would fail instead of the shard
/// refusing cleanly (at least 1).
pub fn connections_that_fit(open_files: u64, shards: usize) -> usize {
    let per_shard = open_files.saturating_sub(RESERVED_FILES) / (2 * shards.max(1) as u64);
    usize::try_from(per_shard).unwrap_or(usize::MAX).max(1)
}

/// How often a shard reports failing accepts (with how many it did not print).
const ACCEPT_ERROR_LOG_EVERY: Duration = Duration::from_secs(1);

async fn accept_loop(shard: &Rc<Shard>, listener: &TcpListener) {
    let mut last_report: Option<Instant> = None;
    let mut unreported = 0u64;
    loop {
        match listener.accept().await {
            Ok((stream, _peer)) => {
                if shard.open_connections.get() >= shard.settings.limits.max_connections_per_shard {
                    // Over the cap: closed at once; the connections already open keep being
                    // served (and the client sees a close, not a hang).
                    drop(stream);
                    continue;
                }
                let _ = stream.set_nodelay(true);
                monoio::spawn(conn::serve_connection(shard.clone(), stream));
            }
            Err(e) => {
                // Out of file descriptors or a transient accept error: back off briefly rather
                // than spin; existing connections keep being served.
                let now = Instant::now();
                if last_report.is_none_or(|t| now.duration_since(t) >= ACCEPT_ERROR_LOG_EVERY) {
                    let more = if unreported > 0 {
                        format!(" ({unreported} more since the last report)")
                    } else {
                        String::new()
                    };
                    eprintln!("pointwork: shard {}: accept failed: {e}{more}", shard.id);
                    last_report = Some(now);
                    unreported = 0;
                } else {
                    unreported += 1;
                }
                monoio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

/// The shard's periodic chores: its inbox, metrics and access-log hand-over, pool sweeping.
async fn housekeeping(shard: Rc<Shard>) {
    let mut last_sweep = Instant::now();
    loop {
        monoio::time::sleep(REPORT_EVERY).await;
        // A shard without requests still applies its inbox now and then, so that the other
        // shards' events (usage counts under usage-based routing) never pile up in it.
        shard.sync();
        report(&shard);
        crate::ui::hand_over(&shard);
        let now = Instant::now();
        if now.duration_since(last_sweep) >= POOL_SWEEP_EVERY {
            shard.upstream.pool.borrow_mut().evict_idle(now);
            last_sweep = now;
        }
    }
}

fn report(shard: &Shard) {
    shard.access_log.borrow_mut().flush();
    crate::database::spend::hand_over(shard);
    let report = shard.metrics.borrow_mut().take_report();
    if !report.is_empty() {
        let _ = shard.hub.control.send(ControlMsg::Report(Box::new(report)));
    }
}

#[cfg(test)]
mod tests {
    use super::connections_that_fit;

    #[test]
    fn the_connection_cap_leaves_room_for_an_upstream_connection_each() {
        assert_eq!(connections_that_fit(20_000, 2), 4_984);
        assert_eq!(connections_that_fit(1_024, 2), 240);
        assert_eq!(connections_that_fit(1_048_576, 1), 524_256);
        assert_eq!(connections_that_fit(0, 4), 1);
    }
}
