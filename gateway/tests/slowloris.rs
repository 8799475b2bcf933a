//! Slowloris: 1 000 connections trickling a request head one byte every 200 ms do not stop
//! normal requests from being served, and each of them gets its 408 (or is closed) once
//! `timeouts.request_head` has passed since its first byte. One thread drives all the trickling
//! sockets (non-blocking, a round every 200 ms).

mod common;

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use common::{chat_body, config, deployment, Client, Gateway, GatewayOptions, Mock};

const TRICKLERS: usize = 1_000;
/// The gateway's `timeouts.request_head`: long enough for the normal requests to be made while
/// every trickling head is still arriving.
const REQUEST_HEAD: Duration = Duration::from_secs(4);
const TICK: Duration = Duration::from_millis(200);
/// The start of a head that never completes: after it, a header value of `a`s, one per tick.
const SLOW_HEAD: &[u8] = b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nx-slow: ";
const SEQUENTIAL: usize = 50;
const CONCURRENT_CLIENTS: usize = 4;
const PER_CLIENT: usize = 10;
/// The longest a normal request may take while the 1 000 trickle (a debug build on a busy
/// two-core machine; each takes milliseconds when nothing else runs).
const NORMAL_BOUND: Duration = Duration::from_secs(2);

/// Raises this process's soft RLIMIT_NOFILE to the hard limit; the gateway, its child,
/// inherits it (it does not raise its own).
fn raise_fd_limit() -> libc::rlim_t {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit/setrlimit with a valid pointer to an rlimit.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit), 0, "getrlimit");
        limit.rlim_cur = limit.rlim_max;
        assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &limit), 0, "setrlimit");
    }
    limit.rlim_cur
}

/// How a trickling connection ended, and when (since its first byte).
#[derive(Clone, Copy, Debug)]
enum Ended {
    Status(u16, Duration),
    Closed(Duration),
}

struct Trickler {
    stream: TcpStream,
    first_byte: Option<Instant>,
    sent: usize,
    answer: Vec<u8>,
    ended: Option<Ended>,
}

impl Trickler {
    /// One round: reads what arrived (an answer or the close ends it), else writes a byte.
    fn round(&mut self, now: Instant) {
        let since = |first: Option<Instant>| first.map_or(Duration::ZERO, |f| now - f);
        let mut buf = [0u8; 1024];
        loop {
            match self.stream.read(&mut buf) {
                Ok(0) => {
                    let after = since(self.first_byte);
                    self.ended =
                        Some(status_of(&self.answer).map_or(Ended::Closed(after), |s| Ended::Status(s, after)));
                    return;
                }
                Ok(n) => self.answer.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(_) => {
                    self.ended = Some(Ended::Closed(since(self.first_byte)));
                    return;
                }
            }
        }
        if let Some(status) = status_of(&self.answer) {
            self.ended = Some(Ended::Status(status, since(self.first_byte)));
            return;
        }
        // A full send buffer is not expected at one byte a tick; a closed socket shows on the
        // next read.
        if let Ok(1) = self.stream.write(&[SLOW_HEAD.get(self.sent).copied().unwrap_or(b'a')]) {
            self.sent += 1;
            self.first_byte.get_or_insert(now);
        }
    }
}

/// The status of a response whose status line arrived.
fn status_of(answer: &[u8]) -> Option<u16> {
    let line_end = answer.windows(2).position(|w| w == b"\r\n")?;
    let line = std::str::from_utf8(&answer[..line_end]).ok()?;
    line.split(' ').nth(1)?.parse().ok()
}

/// Drives every trickler from one thread until all ended (or the deadline); `answered` counts
/// the ended ones as they end.
fn trickle(mut tricklers: Vec<Trickler>, answered: Arc<AtomicUsize>, deadline: Instant) -> JoinHandle<Vec<Trickler>> {
    std::thread::spawn(move || {
        let mut next = Instant::now();
        while Instant::now() < deadline {
            let now = Instant::now();
            for t in tricklers.iter_mut().filter(|t| t.ended.is_none()) {
                t.round(now);
                if t.ended.is_some() {
                    answered.fetch_add(1, Ordering::Relaxed);
                }
            }
            if tricklers.iter().all(|t| t.ended.is_some()) {
                break;
            }
            next += TICK;
            std::thread::sleep(next.saturating_duration_since(Instant::now()));
        }
        tricklers
    })
}

/// `pointwork_open_connections` from `/metrics`.
fn open_connections(gateway: &Gateway) -> u64 {
    let text = gateway.get("/metrics").text();
    let line = text.lines().find(|l| l.starts_with("pointwork_open_connections ")).expect("the connections gauge");
    line.rsplit(' ').next().unwrap().parse().expect("a count")
}

#[test]
fn a_thousand_trickling_heads_do_not_stop_normal_requests() {
    let started = Instant::now();
    let fd_limit = raise_fd_limit();
    // Each process holds one end of every trickling connection, and a few more files.
    assert!(
        fd_limit >= TRICKLERS as libc::rlim_t + 200,
        "RLIMIT_NOFILE hard limit {fd_limit} is too low for this test"
    );
    let mock = Mock::start("a", &[]);
    let yaml = config(
        &[deployment("gpt", "dep-a", "openai/gpt-4o-mini", &mock, "")],
        &format!("pointwork: {{timeouts: {{request_head: {}s}}}}\n", REQUEST_HEAD.as_secs()),
    );
    let gateway = Gateway::start_with(&yaml, GatewayOptions { shards: 2, ..GatewayOptions::default() });

    let tricklers: Vec<Trickler> = (0..TRICKLERS)
        .map(|i| {
            let stream = TcpStream::connect(gateway.addr).unwrap_or_else(|e| panic!("connection {i}: {e}"));
            stream.set_nodelay(true).unwrap();
            stream.set_nonblocking(true).unwrap();
            Trickler { stream, first_byte: None, sent: 0, answer: Vec::new(), ended: None }
        })
        .collect();
    let answered = Arc::new(AtomicUsize::new(0));
    let deadline = Instant::now() + REQUEST_HEAD + Duration::from_secs(6);
    let driver = trickle(tricklers, answered.clone(), deadline);

    // Every trickling connection is held by the gateway (the gauge counts accepted ones; the
    // request reading it is one more).
    let held = loop {
        let open = open_connections(&gateway);
        if open > TRICKLERS as u64 {
            break open - 1;
        }
        assert!(Instant::now() < deadline, "the gateway holds {open} connections, expected {TRICKLERS}");
        std::thread::sleep(Duration::from_millis(20));
    };

    // Normal requests on fresh connections while the heads trickle: sequential, then concurrent.
    let normal_started = Instant::now();
    let mut latencies = Vec::new();
    for _ in 0..SEQUENTIAL {
        let at = Instant::now();
        let r = gateway.chat("gpt");
        assert_eq!(r.status, 200, "{}", r.text());
        latencies.push(at.elapsed());
    }
    let (addr, body) = (gateway.addr, chat_body("gpt", false));
    std::thread::scope(|s| {
        let clients: Vec<_> = (0..CONCURRENT_CLIENTS)
            .map(|_| {
                s.spawn(|| {
                    (0..PER_CLIENT)
                        .map(|_| {
                            let at = Instant::now();
                            let r = Client::connect(addr).post_json("/v1/chat/completions", &body);
                            assert_eq!(r.status, 200, "{}", r.text());
                            at.elapsed()
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for c in clients {
            latencies.extend(c.join().expect("a concurrent client"));
        }
    });
    let normal_took = normal_started.elapsed();
    // They overlapped: no trickling head had been answered yet.
    let answered_meanwhile = answered.load(Ordering::Relaxed);
    assert_eq!(answered_meanwhile, 0, "trickling heads answered before the normal requests ended ({normal_took:?})");
    let max = latencies.iter().max().copied().unwrap_or_default();
    assert!(max < NORMAL_BOUND, "a normal request took {max:?} while {TRICKLERS} heads trickled");

    // Then each trickling head gets its 408 (or a close) once request_head has passed.
    let tricklers = driver.join().expect("the trickle thread");
    let mut refused = 0;
    let mut closed = 0;
    let mut latest = Duration::ZERO;
    for (i, t) in tricklers.iter().enumerate() {
        let after = match t.ended {
            Some(Ended::Status(408, after)) => {
                refused += 1;
                after
            }
            Some(Ended::Closed(after)) => {
                closed += 1;
                after
            }
            other => {
                panic!("trickler {i} ({} bytes sent): {other:?}, {:?}", t.sent, String::from_utf8_lossy(&t.answer))
            }
        };
        // The gateway's clock starts when it reads the first byte, just after it was written.
        assert!(after >= REQUEST_HEAD, "trickler {i} ended {after:?} after its first byte");
        assert!(after < REQUEST_HEAD + Duration::from_secs(3), "trickler {i} was held {after:?} past its first byte");
        latest = latest.max(after);
    }
    let sent_min = tricklers.iter().map(|t| t.sent).min().unwrap_or_default();
    assert!(sent_min >= 10, "a trickler sent only {sent_min} bytes: the trickle stalled");
    println!(
        "slowloris: {held} connections held, {} normal requests served in {normal_took:?} (max latency {max:?}), \
         trickling heads: {refused} got 408, {closed} closed, the last {latest:?} after its first byte; \
         {sent_min}+ bytes each; wall {:?}",
        latencies.len(),
        started.elapsed()
    );
}
