//! The TLS way of a connection: the handshake after the TCP connect, the request written through
//! rustls, the response read through it. Driven by readiness like the plain way, with rustls as a
//! sans-IO state machine between the socket and the response parser; the socket is watched for
//! writability only while rustls holds records it would not take.

use std::fmt::Display;
use std::io;
use std::os::fd::AsRawFd;
use std::time::Instant;

use super::{Conn, Event, Phase};
use crate::load::stats::{ErrorKind, Stats};
use crate::load::sys::{Epoll, READABLE, WRITABLE};
use crate::load::tls::{self, Pumped, TlsFailure};

impl Conn {
    /// The TCP connect of an `https://` connection completed: the handshake starts (its
    /// ClientHello goes out now). `waiting`: a request waits for it.
    pub(super) fn begin_handshake(&mut self, epoll: &Epoll, waiting: bool, request: &[u8], stats: &mut Stats) -> Event {
        self.phase = Phase::Handshaking { request: waiting };
        let Some(tls) = self.tls.as_deref_mut() else { return self.failed(ErrorKind::Tls) };
        if let Err(error) = tls.begin(Instant::now()) {
            return self.tls_failed(tls::error_kind(&error), &error, stats);
        }
        self.handshake(epoll, request, stats)
    }

    /// Moves the handshake on as far as the socket allows; once it is done, records it and goes
    /// on with the waiting request (or rests idle).
    pub(super) fn handshake(&mut self, epoll: &Epoll, request: &[u8], stats: &mut Stats) -> Event {
        let Phase::Handshaking { request: waiting } = self.phase else { return Event::Nothing };
        loop {
            let (Some(socket), Some(tls)) = (&self.socket, self.tls.as_deref_mut()) else {
                return self.failed(ErrorKind::Reset);
            };
            match tls.flush(socket) {
                Ok(true) => {}
                Ok(false) => return self.watch_writable(epoll, true),
                Err(_) => return self.failed(ErrorKind::Reset),
            }
            if !tls.handshaking() {
                break;
            }
            match tls.pump(socket) {
                Ok(Pumped::Records) => {}
                Ok(Pumped::WouldBlock) => return self.watch_writable(epoll, false),
                Ok(Pumped::Eof) => {
                    return self.tls_failed(
                        ErrorKind::Tls,
                        &"the server closed the connection during the handshake",
                        stats,
                    )
                }
                Err(TlsFailure::Socket) => return self.failed(ErrorKind::Reset),
                Err(TlsFailure::Tls(error)) => return self.tls_failed(tls::error_kind(&error), &error, stats),
            }
        }
        if let Some(tls) = self.tls.as_deref() {
            stats.handshake(Instant::now().saturating_duration_since(tls.started), tls.resumed());
        }
        if let event @ Event::Finished(_) = self.watch_writable(epoll, false) {
            return event;
        }
        if waiting {
            self.phase = Phase::Sending;
            self.write_tls(epoll, request)
        } else {
            self.phase = Phase::Idle;
            Event::ConnectEnded
        }
    }

    /// Readiness of a connected `https://` connection (sending, idle or receiving).
    pub(super) fn on_ready_tls(&mut self, epoll: &Epoll, ready: u32, request: &[u8], stats: &mut Stats) -> Event {
        if self.phase != Phase::Sending {
            return self.read_tls(stats);
        }
        if ready & WRITABLE != 0 {
            return self.write_tls(epoll, request);
        }
        // Readable while the request waits for room (session tickets, say): the records are
        // processed so the readiness ends; plaintext stays with rustls until the request is out.
        let (Some(socket), Some(tls)) = (&self.socket, self.tls.as_deref_mut()) else { return Event::Nothing };
        match tls.pump(socket) {
            Ok(Pumped::Records | Pumped::WouldBlock) => Event::Nothing,
            Ok(Pumped::Eof) | Err(TlsFailure::Socket) => self.fail(ErrorKind::Reset),
            Err(TlsFailure::Tls(error)) => self.tls_failed(tls::error_kind(&error), &error, stats),
        }
    }

    /// Hands the request (what is left of it) to rustls and writes the records out.
    pub(super) fn write_tls(&mut self, epoll: &Epoll, request: &[u8]) -> Event {
        loop {
            let (Some(socket), Some(tls)) = (&self.socket, self.tls.as_deref_mut()) else {
                return self.fail(ErrorKind::Reset);
            };
            if self.written < request.len() {
                match tls.write_plaintext(&request[self.written..]) {
                    Ok(count) => self.written += count,
                    Err(_) => return self.fail(ErrorKind::Reset),
                }
            }
            match tls.flush(socket) {
                Ok(true) if self.written == request.len() => {
                    self.phase = Phase::Receiving;
                    return self.watch_writable(epoll, false);
                }
                // rustls took part of a large request: the rest fits now that its records are out.
                Ok(true) => {}
                Ok(false) => {
                    self.phase = Phase::Sending;
                    return self.watch_writable(epoll, true);
                }
                Err(_) => return self.fail(ErrorKind::Reset),
            }
        }
    }

    /// One read of the socket into rustls, then the plaintext it yields to the response parser.
    fn read_tls(&mut self, stats: &mut Stats) -> Event {
        let (Some(socket), Some(tls)) = (&self.socket, self.tls.as_deref_mut()) else { return Event::Nothing };
        let pumped = match tls.pump(socket) {
            Ok(Pumped::WouldBlock) => return Event::Nothing,
            Ok(pumped) => pumped,
            Err(_) if self.phase == Phase::Idle => {
                self.close();
                return Event::Lost;
            }
            Err(TlsFailure::Socket) => return self.fail(ErrorKind::Reset),
            Err(TlsFailure::Tls(error)) => return self.tls_failed(tls::error_kind(&error), &error, stats),
        };
        // Whatever rustls must answer (a key update) goes out now or with the next request.
        let _ = tls.flush(socket);
        let now = Instant::now();
        loop {
            if !self.make_room() {
                return self.fail(ErrorKind::BadResponse);
            }
            let Some(tls) = self.tls.as_deref_mut() else { return Event::Nothing };
            match tls.read_plaintext(&mut self.buffer[self.filled..]) {
                // After the server's close_notify.
                Ok(0) => return self.ended(now),
                Ok(count) => match self.received(count, now) {
                    Event::Nothing => {}
                    event => return event,
                },
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                    return match pumped {
                        Pumped::Eof => self.ended(now),
                        _ => Event::Nothing,
                    };
                }
                // The socket closed without close_notify: framing decides whether that cut the answer.
                Err(error) if error.kind() == io::ErrorKind::UnexpectedEof => return self.ended(now),
                Err(_) => return self.fail(ErrorKind::Reset),
            }
        }
    }

    /// Watches the socket for writability too (`true`) or for readability only. `Nothing`, or
    /// the request's failure when epoll refuses.
    fn watch_writable(&mut self, epoll: &Epoll, writable: bool) -> Event {
        let (Some(socket), Some(tls)) = (&self.socket, self.tls.as_deref_mut()) else { return Event::Nothing };
        if tls.write_interest == writable {
            return Event::Nothing;
        }
        tls.write_interest = writable;
        let interest = if writable { READABLE | WRITABLE } else { READABLE };
        match epoll.modify(socket.as_raw_fd(), interest, self.token) {
            Ok(()) => Event::Nothing,
            Err(_) => self.failed(ErrorKind::Reset),
        }
    }

    /// A TLS failure: counted as `kind` with its words kept in `stats` when a request waited;
    /// a connection opened ahead of the requests just closes (the next request tries again).
    fn tls_failed(&mut self, kind: ErrorKind, why: &dyn Display, stats: &mut Stats) -> Event {
        if self.phase != (Phase::Handshaking { request: false }) {
            stats.tls_failure(why);
        }
        self.failed(kind)
    }

    /// Ends the request with `kind`, or, for a connection opened ahead of the requests whose
    /// handshake failed, just closes it.
    fn failed(&mut self, kind: ErrorKind) -> Event {
        if self.phase == (Phase::Handshaking { request: false }) {
            self.close();
            Event::ConnectEnded
        } else {
            self.fail(kind)
        }
    }
}
