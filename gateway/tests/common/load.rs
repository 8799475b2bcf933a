//! Load from the tests' side: many callers at once, their answers counted.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A second of load on each of `addrs` from `callers` threads apiece, each sending
/// `status_of(addr)` requests back to back: how many answered 200 and how many 429 (any other
/// status fails the test).
pub fn admitted_and_refused(
    addrs: &[SocketAddr],
    callers: usize,
    status_of: impl Fn(SocketAddr) -> u16 + Sync,
) -> (u64, u64) {
    let (admitted, refused) = (AtomicU64::new(0), AtomicU64::new(0));
    std::thread::scope(|s| {
        for &addr in addrs {
            for _ in 0..callers {
                let (admitted, refused, status_of) = (&admitted, &refused, &status_of);
                s.spawn(move || {
                    let until = Instant::now() + Duration::from_secs(1);
                    while Instant::now() < until {
                        match status_of(addr) {
                            200 => admitted.fetch_add(1, Ordering::Relaxed),
                            429 => refused.fetch_add(1, Ordering::Relaxed),
                            other => panic!("unexpected status {other}"),
                        };
                    }
                });
            }
        }
    });
    (admitted.into_inner(), refused.into_inner())
}
