//! A connection that is plain TCP or TLS over TCP, with the reads and writes the gateway needs:
//! a client's (TLS that Pointwork terminated, [`ClientConn`]) and an
//! upstream's (TLS to a provider, [`crate::upstream::conn::UpstreamConn`]). The TLS side's
//! futures are boxed, an allocation per read or write over TLS: unboxed, they made every plain
//! request's futures about 1 KB larger, and each `.await` copies them whole.

use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, BorrowedFd, RawFd};
use std::time::Duration;

use monoio::buf::IoBufMut;
use monoio::io::{AsyncReadRent, AsyncWriteRent, AsyncWriteRentExt};
use monoio::net::TcpStream;
use monoio_rustls::ServerTlsStream;

/// A client connection: plain TCP, or TLS that Pointwork terminated itself.
pub type ClientConn = TcpOrTls<ServerTlsStream<TcpStream>>;

pub enum TcpOrTls<T> {
    Plain(TcpStream),
    /// The TLS stream, and its socket (which the TLS stream does not lend out).
    Tls(Box<T>, RawFd),
}

/// How long a closing TLS connection may take to send its `close_notify`.
const CLOSE_NOTIFY_WAIT: Duration = Duration::from_secs(1);

impl<T: AsyncReadRent + AsyncWriteRent> TcpOrTls<T> {
    /// Reads more bytes, appending to `buf` (grown when nearly full). `Ok(0)` is end of stream.
    pub async fn read_more(&mut self, mut buf: Vec<u8>) -> (io::Result<usize>, Vec<u8>) {
        if buf.capacity() - buf.len() < 4096 {
            buf.reserve(16 * 1024);
        }
        let len = buf.len();
        let slice = buf.slice_mut(len..);
        let (res, slice) = match self {
            TcpOrTls::Plain(s) => s.read(slice).await,
            TcpOrTls::Tls(s, _) => Box::pin(s.read(slice)).await,
        };
        (res, slice.into_inner())
    }

    pub async fn write_all(&mut self, buf: Vec<u8>) -> (io::Result<usize>, Vec<u8>) {
        match self {
            TcpOrTls::Plain(s) => s.write_all(buf).await,
            TcpOrTls::Tls(s, _) => Box::pin(s.write_all(buf)).await,
        }
    }

    /// Ends the connection: a TLS one says so with `close_notify` first (strict peers take a
    /// close without it for a truncation), given a second to leave.
    pub async fn close(self) {
        if let TcpOrTls::Tls(mut s, _) = self {
            let _ = monoio::time::timeout(CLOSE_NOTIFY_WAIT, Box::pin(s.shutdown())).await;
        }
    }

    /// The next byte waiting on the socket, left there (see [`peek_byte`]).
    pub fn peek_byte(&self) -> io::Result<Option<u8>> {
        peek_fd(self.fd())
    }

    /// Acknowledges what arrives next at once instead of after the kernel's delayed-ACK wait
    /// (`TCP_QUICKACK`, which Linux clears again as it likes: set before each read). A server
    /// that writes an answer in pieces with Nagle on sends its second piece only once the first
    /// is acknowledged; on a kept-alive connection a delayed ACK then costs each answer 40 ms.
    pub fn quick_ack(&self) {
        let on: libc::c_int = 1;
        // Best effort: a socket that refuses it only keeps the kernel's delayed ACK.
        // SAFETY: setsockopt reads `size_of::<c_int>()` bytes from a live local.
        unsafe {
            libc::setsockopt(
                self.fd(),
                libc::IPPROTO_TCP,
                libc::TCP_QUICKACK,
                (&on as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            );
        }
    }

    fn fd(&self) -> RawFd {
        match self {
            TcpOrTls::Plain(s) => s.as_raw_fd(),
            TcpOrTls::Tls(_, fd) => *fd,
        }
    }
}

/// The next byte waiting on a socket, left there: `Ok(None)` once the peer closed, `WouldBlock`
/// when nothing has arrived. One non-blocking `recv(MSG_PEEK)`.
pub fn peek_byte(socket: &TcpStream) -> io::Result<Option<u8>> {
    peek_fd(socket.as_raw_fd())
}

/// [`peek_byte`] on the descriptor of a socket the caller borrows for the call.
fn peek_fd(fd: RawFd) -> io::Result<Option<u8>> {
    // SAFETY: both callers pass the descriptor of a socket they hold a borrow of for the whole
    // call, so it stays open.
    let fd = unsafe { BorrowedFd::borrow_raw(fd) };
    let mut byte = [MaybeUninit::<u8>::uninit(); 1];
    match socket2::SockRef::from(&fd).recv_with_flags(&mut byte, libc::MSG_PEEK | libc::MSG_DONTWAIT)? {
        0 => Ok(None),
        // SAFETY: `recv` wrote the one byte it reported.
        _ => Ok(Some(unsafe { byte[0].assume_init() })),
    }
}
