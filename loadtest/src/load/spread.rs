//! How a run's connections are spread: over the generator threads in contiguous blocks, and
//! over the targets (`--url`, repeated) round-robin — connection `i` of the run, numbered from 0
//! over all threads, talks to target `i mod n`. So every target gets `C / n` connections or one
//! more, whatever the thread count, and each thread's block cycles through the targets. With
//! `--keys`, the keys go round-robin over the run's requests ([`Rotation`]).

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

/// The connections (numbered over the whole run) that thread `thread` of `threads` owns: the
/// first `connections % threads` threads take one more than the others.
pub fn thread_connections(connections: usize, threads: usize, thread: usize) -> Range<usize> {
    let (each, extra) = (connections / threads, connections % threads);
    let first = thread * each + thread.min(extra);
    first..first + each + usize::from(thread < extra)
}

/// The target of connection `connection` of the run when there are `targets` of them.
pub fn target_of(connection: usize, targets: usize) -> usize {
    connection % targets
}

/// `--keys`: request `i` of the run, whichever thread and connection send it, takes key
/// `i mod n` — so every key is used once before any is used twice.
#[derive(Debug, Default)]
pub struct Rotation {
    next: AtomicU64,
}

impl Rotation {
    /// The key of the next request, of `keys` (at least one).
    pub fn next(&self, keys: usize) -> usize {
        (self.next.fetch_add(1, Ordering::Relaxed) % keys as u64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_go_round_robin_over_the_targets_whatever_the_threads() {
        for connections in 1..=40 {
            for threads in 1..=connections.min(6) {
                for targets in 1..=connections.min(5) {
                    let mut seen = vec![None; connections];
                    let mut per_target = vec![0usize; targets];
                    for thread in 0..threads {
                        let owned = thread_connections(connections, threads, thread);
                        let sizes = (connections / threads, connections.div_ceil(threads));
                        assert!(owned.len() == sizes.0 || owned.len() == sizes.1, "{connections}/{threads}");
                        for connection in owned {
                            assert!(seen[connection].is_none(), "connection {connection} owned twice");
                            let target = target_of(connection, targets);
                            seen[connection] = Some(target);
                            per_target[target] += 1;
                        }
                    }
                    // Every connection owned once, connection i on target i mod n.
                    let expected: Vec<_> = (0..connections).map(|i| Some(i % targets)).collect();
                    assert_eq!(seen, expected, "{connections} connections, {threads} threads, {targets} targets");
                    // So the targets' shares differ by one at most, the first ones taking more.
                    for (target, &count) in per_target.iter().enumerate() {
                        let share = connections / targets + usize::from(target < connections % targets);
                        assert_eq!(count, share, "{connections} connections, {threads} threads, target {target}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_thread_cycles_through_the_targets() {
        // 64 connections, 2 threads, 3 targets: each thread talks to all three.
        let first: Vec<_> = thread_connections(64, 2, 0).map(|c| target_of(c, 3)).take(4).collect();
        let second: Vec<_> = thread_connections(64, 2, 1).map(|c| target_of(c, 3)).take(4).collect();
        assert_eq!(first, [0, 1, 2, 0]);
        assert_eq!(second, [2, 0, 1, 2], "thread 1 starts at connection 32");
        assert_eq!(thread_connections(64, 2, 1), 32..64);
        assert_eq!(thread_connections(5, 2, 0), 0..3);
        assert_eq!(thread_connections(5, 2, 1), 3..5);
    }

    #[test]
    fn the_keys_go_round_robin_over_the_requests_of_every_thread() {
        let rotation = Rotation::default();
        assert_eq!([0, 1, 2, 0, 1].map(|_| rotation.next(3)), [0, 1, 2, 0, 1]);
        // 4 threads taking 7 × 1 000 requests between them: each of 1 000 keys exactly 7 times.
        let rotation = Rotation::default();
        let mut uses = vec![0u32; 1000];
        let taken: Vec<Vec<usize>> = std::thread::scope(|scope| {
            let threads: Vec<_> =
                (0..4).map(|_| scope.spawn(|| (0..1750).map(|_| rotation.next(1000)).collect())).collect();
            threads.into_iter().map(|thread| thread.join().unwrap()).collect()
        });
        for key in taken.into_iter().flatten() {
            uses[key] += 1;
        }
        assert!(uses.iter().all(|&count| count == 7), "{uses:?}");
        // One key: always it.
        assert!((0..5).all(|_| Rotation::default().next(1) == 0));
    }
}
