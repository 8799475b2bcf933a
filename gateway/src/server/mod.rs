//! Starting the shards: one thread per shard, each with its own monoio runtime and its own
//! `SO_REUSEPORT` listener on the same address.

pub mod conn;
pub mod endpoints;

use std::fmt;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use monoio::net::{ListenerOpts, TcpListener};
use switchyard_config::{GatewaySettings, IoDriver};

use crate::routes::Routes;
use crate::shard::Shard;

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
    threads: Vec<JoinHandle<()>>,
}

impl Running {
    /// Blocks until every shard thread ends.
    pub fn join(self) {
        for t in self.threads {
            let _ = t.join();
        }
    }
}

/// Binds and starts `shards` shards. Refuses when another process already serves the address:
/// `SO_REUSEPORT` would otherwise let a stale instance silently share the port.
pub fn start(
    listen: SocketAddr,
    shards: usize,
    driver: Driver,
    settings: Arc<GatewaySettings>,
    routes: Arc<ArcSwap<Routes>>,
) -> Result<Running, StartError> {
    let tls = crate::upstream::conn::tls_connector().map_err(StartError)?;
    let addr = claim_address(listen)?;
    let (ready_tx, ready_rx) = mpsc::channel::<Result<(), String>>();
    let seed = seed();
    let mut threads = Vec::with_capacity(shards);
    for id in 0..shards {
        let ready = ready_tx.clone();
        let settings = settings.clone();
        let routes = routes.clone();
        let tls = tls.clone();
        let spawned = std::thread::Builder::new().name(format!("shard-{id}")).spawn(move || {
            let shard = Shard::new(id, routes, settings, tls, seed);
            let result = match driver {
                Driver::IoUring => monoio::RuntimeBuilder::<monoio::IoUringDriver>::new()
                    .enable_timer()
                    .build()
                    .map(|mut rt| rt.block_on(run_shard(shard, addr, ready.clone()))),
                Driver::Epoll => monoio::RuntimeBuilder::<monoio::LegacyDriver>::new()
                    .enable_timer()
                    .build()
                    .map(|mut rt| rt.block_on(run_shard(shard, addr, ready.clone()))),
            };
            if let Err(e) = result {
                let _ = ready.send(Err(format!("shard {id}: cannot start the {} runtime: {e}", driver.name())));
            }
        });
        let handle = spawned.map_err(|e| StartError(format!("cannot spawn shard thread: {e}")))?;
        threads.push(handle);
    }
    drop(ready_tx);
    for _ in 0..shards {
        match ready_rx.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(StartError(e)),
            Err(_) => return Err(StartError("a shard thread ended during start-up".into())),
        }
    }
    Ok(Running { addr, driver, shards, threads })
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

async fn run_shard(shard: Shard, addr: SocketAddr, ready: mpsc::Sender<Result<(), String>>) {
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
    let sweeper = shard.clone();
    monoio::spawn(async move {
        loop {
            monoio::time::sleep(POOL_SWEEP_EVERY).await;
            sweeper.pool.borrow_mut().evict_idle(Instant::now());
        }
    });
    loop {
        match listener.accept().await {
            Ok((stream, _peer)) => {
                monoio::spawn(conn::serve_connection(shard.clone(), stream));
            }
            Err(e) => {
                // Out of file descriptors or a transient accept error: back off briefly rather
                // than spin; existing connections keep being served.
                eprintln!("switchyard: shard {}: accept failed: {e}", shard.id);
                monoio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}
