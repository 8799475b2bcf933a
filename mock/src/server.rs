//! Starting and stopping a mock: one thread per `threads`, each a monoio runtime (legacy epoll
//! driver) with its own `SO_REUSEPORT` listener on the same address, serving plain HTTP or,
//! with a TLS acceptor built once for all of them, HTTPS.

use std::future::{poll_fn, Future};
use std::io;
use std::net::SocketAddr;
use std::pin::pin;
use std::rc::Rc;
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::Arc;
use std::task::Poll;
use std::thread::{self, JoinHandle};
use std::time::Duration;

use monoio::net::{ListenerOpts, TcpListener};
use monoio_rustls::TlsAcceptor;

use crate::conn::serve;
use crate::conn::tls as conn_tls;
use crate::options::MockOptions;
use crate::shutdown::{Connections, ThreadStop};
use crate::state::Shared;
use crate::tls;

/// Pause after a failed accept (for example out of file descriptors) before trying again.
const ACCEPT_RETRY_PAUSE: Duration = Duration::from_millis(20);

/// A running mock provider. Dropping it stops its threads and closes every connection.
#[derive(Debug)]
pub struct MockServer {
    addr: SocketAddr,
    name: String,
    https: bool,
    threads: Vec<ServingThread>,
}

#[derive(Debug)]
struct ServingThread {
    stop: Arc<ThreadStop>,
    handle: Option<JoinHandle<()>>,
}

/// Starts a mock provider and returns once every thread is listening.
pub fn spawn(options: MockOptions) -> io::Result<MockServer> {
    options.validate()?;
    let acceptor = options.tls.as_ref().map(tls::acceptor).transpose()?;
    refuse_taken_port(options.listen)?;
    let mut shared = Shared::new(&options);
    if let Some(path) = &options.vertex_service_account {
        shared.google.set_account(crate::vertex::token::load_service_account(path)?);
    }
    let shared = Arc::new(shared);
    // Dropping a half-built server on an error stops the threads already running.
    let mut server = MockServer {
        addr: options.listen,
        name: options.name.clone(),
        https: acceptor.is_some(),
        threads: Vec::with_capacity(options.threads),
    };
    for index in 0..options.threads {
        let (bound_sender, bound) = sync_channel(1);
        let stop = Arc::new(ThreadStop::default());
        let handle = thread::Builder::new().name(format!("mock-{}-{index}", options.name)).spawn({
            // The first thread binds the requested address (maybe port 0); the others bind
            // the address it got, so all share one port.
            let listen = server.addr;
            let shared = shared.clone();
            let acceptor = acceptor.clone();
            let stop = stop.clone();
            move || serve_thread(listen, shared, acceptor, stop, bound_sender)
        })?;
        server.threads.push(ServingThread { stop, handle: Some(handle) });
        let bound_addr = bound.recv().map_err(|_| io::Error::other("mock thread ended before listening"))??;
        if index == 0 {
            server.addr = bound_addr;
        }
    }
    Ok(server)
}

impl MockServer {
    /// The address every thread listens on (the real port when 0 was asked for).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://ADDR` (`https://ADDR` with TLS), the base URL to point a gateway at (add `/v1`
    /// for OpenAI clients).
    pub fn url(&self) -> String {
        let scheme = if self.https { "https" } else { "http" };
        format!("{scheme}://{}", self.addr)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Stops the threads, closes every connection and waits until they are gone.
    pub fn shutdown(self) {
        drop(self);
    }

    /// Blocks while the server serves (until another handle stops it or a thread fails).
    pub fn wait(mut self) {
        for thread in &mut self.threads {
            if let Some(handle) = thread.handle.take() {
                let _ = handle.join();
            }
        }
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        for thread in &self.threads {
            thread.stop.request();
        }
        for thread in &mut self.threads {
            if let Some(handle) = thread.handle.take() {
                // A panicked thread has nothing more to clean up.
                let _ = handle.join();
            }
        }
    }
}

/// `SO_REUSEPORT` would let a second mock (of the same user) share a fixed port silently and
/// take half its connections; a plain bind first fails if anybody holds the port.
fn refuse_taken_port(listen: SocketAddr) -> io::Result<()> {
    if listen.port() == 0 {
        return Ok(());
    }
    std::net::TcpListener::bind(listen)
        .map(drop)
        .map_err(|error| io::Error::new(error.kind(), format!("cannot listen on {listen}: {error}")))
}

/// Body of one serving thread: binds, reports the bound address, accepts until stopped.
fn serve_thread(
    listen: SocketAddr,
    shared: Arc<Shared>,
    acceptor: Option<TlsAcceptor>,
    stop: Arc<ThreadStop>,
    bound: SyncSender<io::Result<SocketAddr>>,
) {
    let runtime = monoio::RuntimeBuilder::<monoio::LegacyDriver>::new().enable_timer().build();
    let mut runtime = match runtime {
        Ok(runtime) => runtime,
        Err(error) => {
            let _ = bound.send(Err(error));
            return;
        }
    };
    runtime.block_on(async move {
        let listener = TcpListener::bind_with_config(listen, &ListenerOpts::new().reuse_port(true))
            .and_then(|listener| Ok((listener.local_addr()?, listener)));
        let listener = match listener {
            Ok((local_addr, listener)) => {
                let _ = bound.send(Ok(local_addr));
                listener
            }
            Err(error) => {
                let _ = bound.send(Err(error));
                return;
            }
        };
        let connections = Rc::new(Connections::default());
        until(accept_loop(&listener, &shared, acceptor.as_ref(), &connections), stop.requested()).await;
        drop(listener);
        connections.stop_all().await;
    });
}

async fn accept_loop(
    listener: &TcpListener,
    shared: &Arc<Shared>,
    acceptor: Option<&TlsAcceptor>,
    connections: &Rc<Connections>,
) {
    loop {
        match listener.accept().await {
            Ok((stream, _peer)) => {
                if connections.is_stopping() {
                    return;
                }
                shared.stats.connections.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                // The handshake runs in the connection's task, so a slow client holds up nobody.
                match acceptor {
                    None => monoio::spawn(connections.clone().run(serve::serve_plain(stream, shared.clone()))),
                    Some(acceptor) => {
                        let connection = conn_tls::serve(stream, acceptor.clone(), shared.clone());
                        monoio::spawn(connections.clone().run(connection))
                    }
                };
            }
            Err(_) => monoio::time::sleep(ACCEPT_RETRY_PAUSE).await,
        }
    }
}

/// Runs `work` until it ends or `stop` completes, whichever is first.
async fn until(work: impl Future<Output = ()>, stop: impl Future<Output = ()>) {
    let mut work = pin!(work);
    let mut stop = pin!(stop);
    poll_fn(|cx| {
        if stop.as_mut().poll(cx).is_ready() || work.as_mut().poll(cx).is_ready() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    })
    .await
}
