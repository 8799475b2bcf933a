//! One client connection: a nonblocking socket, the request being sent on it, and the parser of
//! its response. The worker decides when a request starts; the connection says when it ended.
//! An `https://` connection also carries its TLS side ([`TlsLink`]); each IO checks once which
//! kind it is and the TLS way lives in `conn/tls.rs`, so a plain connection pays nothing for it.

mod tls;

use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use socket2::{Domain, Socket, Type};

use super::response::{Complete, ResponseParser, MAX_HEAD};
use super::stats::{ErrorKind, Stats};
use super::sys::{Epoll, READABLE, WRITABLE};
use super::tls::TlsLink;

const READ_BUFFER: usize = 16 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// No socket: the next request connects first.
    Closed,
    /// A nonblocking connect is under way; `request` says whether a request waits for it.
    Connecting { request: bool },
    /// https: connected, the TLS handshake is under way; `request` as for `Connecting`.
    Handshaking { request: bool },
    /// Connected, no request.
    Idle,
    /// Writing the request (what is left did not fit the socket buffer).
    Sending,
    /// The request is out; reading the response.
    Receiving,
}

/// How a request ended.
#[derive(Debug)]
pub struct Finished {
    pub result: Result<Complete, ErrorKind>,
    /// The time base of the request: its intended start (open loop) or its send (closed loop).
    pub base: Instant,
    /// When it ended (the read that completed it).
    pub at: Instant,
    pub ttfb: Option<Duration>,
    pub events: u64,
}

/// What handling readiness (or starting a request) led to.
#[derive(Debug)]
pub enum Event {
    Nothing,
    /// A connect (and handshake) without a request ended, well or not (`phase` says which).
    ConnectEnded,
    /// The peer closed an idle connection; not an error.
    Lost,
    Finished(Finished),
}

pub struct Conn {
    token: usize,
    /// Which of the run's targets this connection talks to (an index into `Shared::targets`).
    pub target: usize,
    /// Which of its target's requests it sends now (`--keys`: the key's; else always 0).
    pub key: usize,
    socket: Option<Socket>,
    pub phase: Phase,
    parser: ResponseParser,
    buffer: Vec<u8>,
    filled: usize,
    written: usize,
    /// The current request's time base (see [`Finished::base`]).
    pub base: Instant,
    /// When the current request started (connect included): the timeout counts from here.
    pub started: Instant,
    ttfb: Option<Duration>,
    last_event: Option<Instant>,
    /// Gaps between the events of the current stream, recorded only if it succeeds.
    pub gaps: Vec<Duration>,
    events: u64,
    /// Connections this one opened (reconnects included).
    pub connects: u64,
    /// `--new-connection`: closed after every answer.
    one_shot: bool,
    /// https: the TLS side; `None` for a plain connection.
    tls: Option<Box<TlsLink>>,
}

impl Conn {
    pub fn new(token: usize, target: usize, stream: bool, one_shot: bool, tls: Option<TlsLink>) -> Conn {
        let now = Instant::now();
        Conn {
            token,
            target,
            key: 0,
            socket: None,
            phase: Phase::Closed,
            parser: ResponseParser::new(stream),
            buffer: vec![0; READ_BUFFER],
            filled: 0,
            written: 0,
            base: now,
            started: now,
            ttfb: None,
            last_event: None,
            gaps: Vec::new(),
            events: 0,
            connects: 0,
            one_shot,
            tls: tls.map(Box::new),
        }
    }

    /// A request is in flight (connecting for it included).
    pub fn busy(&self) -> bool {
        matches!(
            self.phase,
            Phase::Connecting { request: true }
                | Phase::Handshaking { request: true }
                | Phase::Sending
                | Phase::Receiving
        )
    }

    /// Starts a nonblocking connect. `request`: a request waits for it.
    pub fn connect(&mut self, epoll: &Epoll, addr: SocketAddr, request: bool) -> io::Result<()> {
        self.close();
        let socket = Socket::new(Domain::for_address(addr), Type::STREAM.cloexec(), None)?;
        socket.set_nonblocking(true)?;
        socket.set_nodelay(true)?;
        match socket.connect(&addr.into()) {
            Ok(()) => {}
            Err(error) if error.raw_os_error() == Some(libc::EINPROGRESS) => {}
            Err(error) => return Err(error),
        }
        epoll.add(socket.as_raw_fd(), READABLE | WRITABLE, self.token)?;
        self.socket = Some(socket);
        self.phase = Phase::Connecting { request };
        Ok(())
    }

    /// Starts a request with time base `base`: sends it now if connected, else connects first.
    pub fn start(&mut self, epoll: &Epoll, addr: SocketAddr, request: &[u8], base: Instant, now: Instant) -> Event {
        self.base = base;
        self.started = now;
        self.ttfb = None;
        self.last_event = None;
        self.gaps.clear();
        self.events = 0;
        self.written = 0;
        match self.phase {
            Phase::Idle => self.write(epoll, request),
            _ => match self.connect(epoll, addr, true) {
                Ok(()) => Event::Nothing,
                Err(_) => self.fail(ErrorKind::Connect),
            },
        }
    }

    /// Handles epoll readiness `ready` for this connection; TLS handshakes and failures are
    /// recorded in `stats` (the connection's target's).
    pub fn on_ready(&mut self, epoll: &Epoll, ready: u32, request: &[u8], stats: &mut Stats) -> Event {
        match self.phase {
            Phase::Closed => Event::Nothing,
            Phase::Connecting { request: waiting } => {
                let error = self.socket.as_ref().map(|socket| socket.take_error());
                let failed = !matches!(error, Some(Ok(None)))
                    || ready & (libc::EPOLLERR | libc::EPOLLHUP) as u32 != 0 && ready & WRITABLE == 0;
                if failed {
                    return if waiting {
                        self.fail(ErrorKind::Connect)
                    } else {
                        self.close();
                        Event::ConnectEnded
                    };
                }
                if ready & WRITABLE == 0 {
                    return Event::Nothing;
                }
                if let Some(socket) = &self.socket {
                    if epoll.modify(socket.as_raw_fd(), READABLE, self.token).is_err() {
                        return self.fail(ErrorKind::Connect);
                    }
                }
                self.connects += 1;
                if self.tls.is_some() {
                    return self.begin_handshake(epoll, waiting, request, stats);
                }
                if waiting {
                    self.phase = Phase::Sending;
                    self.write(epoll, request)
                } else {
                    self.phase = Phase::Idle;
                    Event::ConnectEnded
                }
            }
            Phase::Handshaking { .. } => self.handshake(epoll, request, stats),
            Phase::Sending | Phase::Idle | Phase::Receiving if self.tls.is_some() => {
                self.on_ready_tls(epoll, ready, request, stats)
            }
            Phase::Sending if ready & WRITABLE != 0 => self.write_plain(epoll, request),
            Phase::Sending => Event::Nothing,
            Phase::Idle | Phase::Receiving => self.read(),
        }
    }

    /// Writes the request (what is left of it).
    fn write(&mut self, epoll: &Epoll, request: &[u8]) -> Event {
        match self.tls {
            None => self.write_plain(epoll, request),
            Some(_) => self.write_tls(epoll, request),
        }
    }

    fn write_plain(&mut self, epoll: &Epoll, request: &[u8]) -> Event {
        let Some(socket) = &mut self.socket else { return self.fail(ErrorKind::Reset) };
        loop {
            match socket.write(&request[self.written..]) {
                Ok(0) => return self.fail(ErrorKind::Reset),
                Ok(count) => {
                    self.written += count;
                    if self.written == request.len() {
                        if self.phase == Phase::Sending {
                            // It had to wait for room: stop asking for writability.
                            let _ = epoll.modify(socket.as_raw_fd(), READABLE, self.token);
                        }
                        self.phase = Phase::Receiving;
                        return Event::Nothing;
                    }
                }
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                    if self.phase != Phase::Sending {
                        self.phase = Phase::Sending;
                        if epoll.modify(socket.as_raw_fd(), READABLE | WRITABLE, self.token).is_err() {
                            return self.fail(ErrorKind::Reset);
                        }
                    }
                    return Event::Nothing;
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return self.fail(ErrorKind::Reset),
            }
        }
    }

    fn read(&mut self) -> Event {
        if !self.make_room() {
            return self.fail(ErrorKind::BadResponse);
        }
        let Some(socket) = &mut self.socket else { return Event::Nothing };
        let count = match socket.read(&mut self.buffer[self.filled..]) {
            Ok(count) => count,
            Err(error) if matches!(error.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted) => {
                return Event::Nothing
            }
            Err(_) if self.phase == Phase::Idle => {
                self.close();
                return Event::Lost;
            }
            Err(_) => return self.fail(ErrorKind::Reset),
        };
        let now = Instant::now();
        if count == 0 {
            return self.ended(now);
        }
        self.received(count, now)
    }

    /// Makes room in the buffer for the next read; `false` when a response head outgrew it.
    fn make_room(&mut self) -> bool {
        if self.filled == self.buffer.len() {
            if self.buffer.len() > MAX_HEAD {
                return false;
            }
            self.buffer.resize(self.buffer.len() * 2, 0);
        }
        true
    }

    /// The peer closed its side (at `now`): an idle connection is lost, a response ends here.
    fn ended(&mut self, now: Instant) -> Event {
        if self.phase == Phase::Idle {
            self.close();
            return Event::Lost;
        }
        let result = self.parser.eof(self.filled);
        self.finish(result.map(|complete| Complete { keep_alive: false, ..complete }), now)
    }

    /// `count` more response bytes arrived at `now` (after `filled` in the buffer).
    fn received(&mut self, count: usize, now: Instant) -> Event {
        if self.phase == Phase::Idle {
            // Bytes nobody asked for.
            self.close();
            return Event::Lost;
        }
        self.filled += count;
        let progress = match self.parser.feed(&self.buffer[..self.filled]) {
            Ok(progress) => progress,
            Err(kind) => return self.fail(kind),
        };
        if progress.first_byte {
            self.ttfb = Some(now.saturating_duration_since(self.base));
        }
        for _ in 0..progress.events {
            if let Some(last) = self.last_event {
                self.gaps.push(now.saturating_duration_since(last));
            }
            self.last_event = Some(now);
        }
        self.events += progress.events;
        if progress.consumed == self.filled {
            self.filled = 0;
        } else {
            self.buffer.copy_within(progress.consumed..self.filled, 0);
            self.filled -= progress.consumed;
        }
        match progress.complete {
            Some(complete) => self.finish(Ok(complete), now),
            None => Event::Nothing,
        }
    }

    fn finish(&mut self, result: Result<Complete, ErrorKind>, at: Instant) -> Event {
        match result {
            Ok(complete) if complete.keep_alive && !self.one_shot => self.phase = Phase::Idle,
            _ => self.close(),
        }
        Event::Finished(Finished { result, base: self.base, at, ttfb: self.ttfb, events: self.events })
    }

    /// Ends the current request with `kind` and closes the connection.
    pub fn fail(&mut self, kind: ErrorKind) -> Event {
        self.close();
        Event::Finished(Finished { result: Err(kind), base: self.base, at: Instant::now(), ttfb: None, events: 0 })
    }

    pub fn close(&mut self) {
        // Dropping the socket closes it, which also removes it from the epoll set.
        self.socket = None;
        if let Some(tls) = &mut self.tls {
            tls.end();
        }
        self.phase = Phase::Closed;
        self.parser = ResponseParser::new(self.parser.stream());
        self.filled = 0;
    }
}
