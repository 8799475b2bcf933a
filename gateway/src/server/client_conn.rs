//! A client connection: plain TCP, or TLS that Pointwork terminated itself, with the reads and
//! writes a request needs. The TLS side's futures are boxed so that they do not size, and get
//! copied with, every plain request's future.

use std::io;

use monoio::buf::IoBufMut;
use monoio::io::{AsyncReadRent, AsyncWriteRentExt};
use monoio::net::TcpStream;
use monoio_rustls::ServerTlsStream;

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

    pub async fn write_all(&mut self, buf: Vec<u8>) -> (io::Result<usize>, Vec<u8>) {
        match self {
            ClientConn::Plain(s) => s.write_all(buf).await,
            ClientConn::Tls(s) => Box::pin(s.write_all(buf)).await,
        }
    }
}
