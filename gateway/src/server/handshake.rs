//! The TLS listener's part of a new connection, before its first request: the handshake, within
//! the head deadline, and a plain-HTTP request on the HTTPS port answered in plain HTTP.
//! Each connection handshakes in its own task, so a slow or stalled one holds up nobody else.

use std::io;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU64, Ordering};

use monoio::buf::IoBufMut;
use monoio::io::{AsyncReadRent, AsyncWriteRent, AsyncWriteRentExt};
use monoio::net::TcpStream;
use monoio::time::Instant;
use monoio_rustls::TlsAcceptor;

use crate::errors::openai_error;
use crate::http::write;
use crate::shard::Shard;
use crate::tcp_or_tls::peek_byte;
use crate::tcp_or_tls::ClientConn;
use crate::tls::listener::TlsListener;

/// The first byte of every TLS connection: a handshake record.
const TLS_HANDSHAKE_RECORD: u8 = 0x16;

/// Turns an accepted socket into a TLS connection, or `None` when it must be closed. A client
/// that sends nothing is closed after `timeouts.keepalive_idle`, like an idle plain connection;
/// from its first byte, the handshake and then the first request's head have
/// `timeouts.request_head` to arrive: the deadline returned with the connection.
pub async fn accept(shard: &Shard, stream: TcpStream, tls: &TlsListener) -> Option<(ClientConn, Option<Instant>)> {
    let timeouts = &shard.settings.timeouts;
    let first = monoio::time::timeout(timeouts.keepalive_idle, first_byte(&stream)).await;
    let deadline = Instant::now() + timeouts.request_head;
    let count = |c: &AtomicU64| {
        c.fetch_add(1, Ordering::Relaxed);
    };
    match first {
        Err(_) | Ok(None) => return None,
        Ok(Some(TLS_HANDSHAKE_RECORD)) => {}
        Ok(Some(b)) if b.is_ascii_alphabetic() => {
            count(&tls.handshakes.plain_http);
            monoio::time::timeout_at(deadline, refuse_plain_http(stream)).await.ok();
            return None;
        }
        // Anything else goes to rustls, which refuses it with an alert.
        Ok(Some(_)) => {}
    }
    let fd = stream.as_raw_fd();
    let acceptor = TlsAcceptor::from(tls.certs.current());
    match monoio::time::timeout_at(deadline, acceptor.accept(stream)).await {
        Ok(Ok(tls_stream)) => {
            count(&tls.handshakes.ok);
            Some((ClientConn::Tls(Box::new(tls_stream), fd), Some(deadline)))
        }
        Ok(Err(_)) => {
            count(&tls.handshakes.failed);
            None
        }
        Err(_) => {
            count(&tls.handshakes.timed_out);
            None
        }
    }
}

/// Waits for the connection's first byte and looks at it without taking it (`None`: closed).
async fn first_byte(stream: &TcpStream) -> Option<u8> {
    loop {
        stream.readable(false).await.ok()?;
        match peek_byte(stream) {
            Ok(byte) => return byte,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock || e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
}

/// Answers a plain HTTP request sent to the HTTPS port with a 400 in the API's error shape,
/// then closes. The head is read first and, after the answer, whatever else the client sends
/// (a body) until it closes, so that closing does not reset the connection before the client
/// has read the answer. All of it within the caller's deadline.
async fn refuse_plain_http(mut stream: TcpStream) {
    let mut buf = Vec::with_capacity(8 * 1024);
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") && buf.len() < MAX_PLAIN_HEAD {
        let len = buf.len();
        let (read, back) = stream.read(buf.slice_mut(len..)).await;
        buf = back.into_inner();
        match read {
            Ok(n) if n > 0 => buf.reserve(8 * 1024),
            _ => return,
        }
    }
    let message = "this port speaks HTTPS: the plain HTTP request was sent to the HTTPS port";
    let body = openai_error(400, message, None);
    let mut out = Vec::with_capacity(256 + body.len());
    write::full_response(&mut out, 400, "application/json", &[], &body, true);
    if stream.write_all(out).await.0.is_err() || stream.shutdown().await.is_err() {
        return;
    }
    loop {
        buf.clear();
        let (read, back) = stream.read(buf).await;
        buf = back;
        if !matches!(read, Ok(n) if n > 0) {
            return;
        }
    }
}

/// Read of a plain HTTP head on the HTTPS port, at most (its answer does not need more).
const MAX_PLAIN_HEAD: usize = 64 * 1024;
