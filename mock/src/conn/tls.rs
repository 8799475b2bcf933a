//! A connection over TLS: the handshake, then the same HTTP handling as plain TCP.

use std::os::fd::AsRawFd;
use std::sync::Arc;

use monoio::io::AsyncWriteRent;
use monoio::net::TcpStream;
use monoio_rustls::{ServerTlsStream, TlsAcceptor};

use crate::conn::link::{tune, Transport};
use crate::conn::serve;
use crate::state::Shared;

impl Transport for ServerTlsStream<TcpStream> {
    /// `close_notify` before the FIN, so the client can tell a complete close from a cut.
    async fn finish(&mut self) {
        // Best effort: the peer may already be gone.
        let _ = self.shutdown().await;
    }
}

/// Serves one accepted socket over TLS. A failed handshake (an untrusted certificate, a client
/// speaking plain HTTP) just ends the connection: there is no HTTP to answer it in.
pub(crate) async fn serve(stream: TcpStream, acceptor: TlsAcceptor, shared: Arc<Shared>) {
    tune(&stream);
    let fd = stream.as_raw_fd();
    if let Ok(stream) = acceptor.accept(stream).await {
        serve::serve(stream, fd, shared).await;
    }
}
