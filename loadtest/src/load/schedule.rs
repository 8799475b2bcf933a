//! The open-loop schedule: request `k` of the whole run is meant to start at `start + k / rate`;
//! thread `i` of `T` owns the requests `k ≡ i (mod T)`, so the threads interleave into one even
//! schedule of `rate` requests per second.

use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct Schedule {
    start: Instant,
    rate: f64,
    thread: u64,
    threads: u64,
    /// How many of this thread's requests were taken.
    taken: u64,
    /// The run's request count (`--requests`), over all threads.
    limit: Option<u64>,
    /// Requests are meant to start before `start + horizon` (`--duration`).
    horizon: Option<Duration>,
}

impl Schedule {
    pub fn new(
        start: Instant,
        rate: f64,
        thread: usize,
        threads: usize,
        limit: Option<u64>,
        horizon: Option<Duration>,
    ) -> Schedule {
        Schedule { start, rate, thread: thread as u64, threads: threads as u64, taken: 0, limit, horizon }
    }

    fn index(&self) -> u64 {
        self.thread + self.taken * self.threads
    }

    /// The intended start of this thread's next request, or `None` when the run has no more.
    pub fn peek(&self) -> Option<Instant> {
        let index = self.index();
        if self.limit.is_some_and(|limit| index >= limit) {
            return None;
        }
        let offset = Duration::from_secs_f64(index as f64 / self.rate);
        if self.horizon.is_some_and(|horizon| offset >= horizon) {
            return None;
        }
        Some(self.start + offset)
    }

    /// Takes the next request.
    pub fn advance(&mut self) {
        self.taken += 1;
    }

    /// Takes every request left; returns how many there were.
    pub fn skip_rest(&mut self) -> u64 {
        let mut skipped = 0;
        while self.peek().is_some() {
            self.advance();
            skipped += 1;
        }
        skipped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(schedule: &mut Schedule) -> Vec<Instant> {
        let mut out = Vec::new();
        while let Some(at) = schedule.peek() {
            out.push(at);
            schedule.advance();
        }
        out
    }

    #[test]
    fn threads_interleave_into_one_even_schedule() {
        let start = Instant::now();
        let horizon = Some(Duration::from_secs(1));
        let mut merged: Vec<Instant> =
            (0..3).flat_map(|thread| all(&mut Schedule::new(start, 1000.0, thread, 3, None, horizon))).collect();
        merged.sort();
        assert_eq!(merged.len(), 1000);
        for (k, at) in merged.iter().enumerate() {
            let expected = start + Duration::from_secs_f64(k as f64 / 1000.0);
            assert!(at.max(&expected).duration_since(*at.min(&expected)) < Duration::from_nanos(2), "request {k}");
        }
    }

    #[test]
    fn a_request_limit_is_shared_by_the_threads() {
        let start = Instant::now();
        let counts: Vec<usize> =
            (0..4).map(|thread| all(&mut Schedule::new(start, 10.0, thread, 4, Some(10), None)).len()).collect();
        assert_eq!(counts, vec![3, 3, 2, 2]);
        let mut schedule = Schedule::new(start, 10.0, 1, 4, Some(10), None);
        schedule.advance();
        assert_eq!(schedule.skip_rest(), 2);
        assert_eq!(schedule.peek(), None);
    }
}
