//! A client connection: plain TCP, or TLS that Pointwork terminated itself, with the reads and
//! writes a request needs. The TLS side's futures are boxed so that they do not size, and get
//! copied with, every plain request's future.

use std::io;
use std::time::Duration;

use monoio::buf::IoBufMut;
use monoio::io::{AsyncReadRent, AsyncWriteRent, AsyncWriteRentExt};
use monoio::net::TcpStream;
use monoio_rustls::ServerTlsStream;

/// How long a closing TLS connection may take to send its `close_notify`.
const CLOSE_NOTIFY_WAIT: Duration = Duration::from_secs(1);

pub enum ClientConn {
    Plain(TcpStream),
    Tls(Box<ServerTlsStream<TcpStream>>),
}

impl ClientConn {
    /// Reads more bytes, appending to `buf` (grown when nearly full). `Ok(0)` is end of stream.
    pub async fn read_more(&mut self, mut buf: Vec<u8>) -> (io::Result<usize>, Vec<u8>) {
        if buf.capacity() - buf.len() < 4096 {
            buf.reserve(8 * 1024);
        }
        let len = buf.len();
        let slice = buf.slice_mut(len..);
        let (res, slice) = match self {
            ClientConn::Plain(s) => s.read(slice).await,
            ClientConn::Tls(s) => Box::pin(s.read(slice)).await,
        };
        (res, slice.into_inner())
    }

    /// Ends the connection: a TLS one says so with `close_notify` first (strict clients take a
    /// close without it for a truncation), given a second to leave.
    pub async fn close(self) {
        if let ClientConn::Tls(mut s) = self {
            let _ = monoio::time::timeout(CLOSE_NOTIFY_WAIT, Box::pin(s.shutdown())).await;
        }
    }

    pub async fn write_all(&mut self, buf: Vec<u8>) -> (io::Result<usize>, Vec<u8>) {
        match self {
            ClientConn::Plain(s) => s.write_all(buf).await,
            ClientConn::Tls(s) => Box::pin(s.write_all(buf)).await,
        }
    }
}
