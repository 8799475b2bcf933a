//! One accepted connection's stream and buffers: what every way of answering (whole, streamed,
//! framed in advance) writes through. The request loop is in `conn/serve.rs`.

use std::os::fd::{BorrowedFd, RawFd};
use std::sync::Arc;
use std::time::Duration;

use monoio::buf::{IoBuf, IoBufMut};
use monoio::io::{AsyncReadRent, AsyncWriteRent, AsyncWriteRentExt};
use monoio::net::TcpStream;

use crate::state::Shared;

/// Free space below which the input buffer grows before a read.
const MIN_READ_SPACE: usize = 2048;
/// How much the input buffer grows at a time.
const READ_GROWTH: usize = 16 * 1024;

/// Per-connection facts dispatch keeps up to date.
#[derive(Debug, Default)]
pub(crate) struct ConnectionFacts {
    pub carried_provider_request: bool,
}

/// How a connection ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    /// An orderly close (FIN).
    Close,
    /// A close with `SO_LINGER` 0, which the peer sees as a reset.
    Reset,
}

/// A byte stream a connection is served over.
pub(crate) trait Transport: AsyncReadRent + AsyncWriteRent {
    /// What goes out before an orderly close: nothing for TCP (the FIN says it), `close_notify`
    /// for TLS.
    async fn finish(&mut self);
}

impl Transport for TcpStream {
    async fn finish(&mut self) {}
}

pub(crate) struct Connection<S> {
    pub(crate) stream: S,
    /// The descriptor of the TCP socket under `stream`, which owns it.
    socket: RawFd,
    pub(crate) shared: Arc<Shared>,
    /// Received bytes not yet answered; starts with the next request.
    pub(crate) input: Vec<u8>,
    /// The bytes of the next write.
    pub(crate) output: Vec<u8>,
    /// Room to format a body before its length is known.
    pub(crate) scratch: Vec<u8>,
    pub(crate) facts: ConnectionFacts,
}

impl<S: Transport> Connection<S> {
    pub(crate) fn new(stream: S, socket: RawFd, shared: Arc<Shared>) -> Self {
        Connection {
            stream,
            socket,
            shared,
            input: Vec::with_capacity(READ_GROWTH),
            output: Vec::with_capacity(4096),
            scratch: Vec::with_capacity(1024),
            facts: ConnectionFacts::default(),
        }
    }

    /// Appends what the socket has to `input`; false when the peer closed or IO failed.
    pub(crate) async fn read_more(&mut self) -> bool {
        if self.input.capacity() - self.input.len() < MIN_READ_SPACE {
            self.input.reserve(READ_GROWTH);
        }
        let input = std::mem::take(&mut self.input);
        let filled = input.len();
        let (result, input) = self.stream.read(input.slice_mut(filled..)).await;
        self.input = input.into_inner();
        matches!(result, Ok(read) if read > 0)
    }

    /// Makes the coming close a reset.
    pub(crate) fn set_linger_zero(&self) -> std::io::Result<()> {
        // SAFETY: `socket` belongs to `self.stream`, which stays open for the whole borrow.
        let fd = unsafe { BorrowedFd::borrow_raw(self.socket) };
        socket2::SockRef::from(&fd).set_linger(Some(Duration::ZERO))
    }

    /// Writes `output[..len]` in one go and empties `output`; false when IO failed.
    pub(crate) async fn send(&mut self, len: usize) -> bool {
        let output = std::mem::take(&mut self.output);
        let (result, output) = self.stream.write_all(output.slice(..len)).await;
        self.output = output.into_inner();
        self.output.clear();
        result.is_ok()
    }
}

/// Socket options every accepted connection gets.
pub(crate) fn tune(stream: &TcpStream) {
    // Without this, Nagle holds back the second write of a stream for up to 40 ms.
    let _ = stream.set_nodelay(true);
}

/// Waits on the runtime's timer (never blocking the thread); no-op for zero.
pub(crate) async fn pause(duration: Duration) {
    if !duration.is_zero() {
        monoio::time::sleep(duration).await;
    }
}
