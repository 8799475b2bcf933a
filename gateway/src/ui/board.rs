//! The board: whether anyone watches, and what the shards noted meanwhile — the last
//! decisions, each deployment's counts per second over the last minute, and each shard's
//! in-flight counts and latencies. Shards write it four times a second while watched; a poll
//! reads it. Nobody waits on a shard for it.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::noted::{Counts, Noted};

/// How long one poll keeps the shards noting.
pub const WATCH_FOR: Duration = Duration::from_secs(5);

/// Decisions the board keeps (the newest).
pub const DECISIONS_MAX: usize = 200;
/// Seconds of counts kept: one minute.
const SECONDS: u64 = 60;

/// What one shard knows of one deployment that the others do not.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Seen {
    pub in_flight: u32,
    pub latency_ms: Option<f64>,
    pub ttft_ms: Option<f64>,
}

/// One shard's [`Seen`] by deployment id.
pub type ShardView = HashMap<String, Seen>;

/// Whether anyone watches, and the board.
#[derive(Default)]
pub struct UiShared {
    /// Until when (ms since start) the shards note; 0: never watched.
    watched_until_ms: AtomicU64,
    board: Mutex<Board>,
}

#[derive(Default)]
struct Board {
    decisions: VecDeque<Noted>,
    last_seq: u64,
    /// Counts by second since start, the oldest first.
    seconds: VecDeque<(u64, HashMap<String, Counts>)>,
    shards: HashMap<usize, ShardView>,
}

/// What a poll reads of the board.
#[derive(Default)]
pub struct Reading {
    /// Newest first.
    pub decisions: Vec<Noted>,
    pub last_seq: u64,
    pub per_minute: HashMap<String, Counts>,
    /// Summed (in flight) or averaged (latencies) over the shards that saw the deployment.
    pub seen: HashMap<String, Seen>,
}

/// Milliseconds since `started` (the hub's start).
pub fn since_start_ms(started: Instant) -> u64 {
    started.elapsed().as_millis() as u64
}

impl UiShared {
    /// Someone watches: the shards note for [`WATCH_FOR`] from `now_ms`. Returns whether
    /// they already did.
    pub fn watch(&self, now_ms: u64) -> bool {
        let before = self.watched_until_ms.swap(now_ms + WATCH_FOR.as_millis() as u64, Ordering::Relaxed);
        before > now_ms
    }

    pub fn is_watched(&self, now_ms: u64) -> bool {
        self.watched_until_ms.load(Ordering::Relaxed) > now_ms
    }

    fn board(&self) -> std::sync::MutexGuard<'_, Board> {
        self.board.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes a shard's notes; `view` is `None` once the watch ended (the shard's last hand-over).
    pub fn hand_over(
        &self,
        shard: usize,
        noted: Vec<Noted>,
        counts: HashMap<String, Counts>,
        view: Option<ShardView>,
        now_ms: u64,
    ) {
        let mut board = self.board();
        for mut n in noted {
            board.last_seq += 1;
            n.seq = board.last_seq;
            board.decisions.push_back(n);
        }
        while board.decisions.len() > DECISIONS_MAX {
            board.decisions.pop_front();
        }
        let second = now_ms / 1000;
        while board.seconds.front().is_some_and(|(s, _)| s + SECONDS <= second) {
            board.seconds.pop_front();
        }
        if !counts.is_empty() {
            if board.seconds.back().is_none_or(|(s, _)| *s != second) {
                board.seconds.push_back((second, HashMap::new()));
            }
            let (_, bucket) = board.seconds.back_mut().expect("pushed above");
            for (id, c) in counts {
                bucket.entry(id).or_default().add(&c);
            }
        }
        match view {
            Some(view) => board.shards.insert(shard, view),
            None => board.shards.remove(&shard),
        };
    }

    /// The decisions after `since`, the last minute's counts and the shards' views.
    pub fn read(&self, since: u64, now_ms: u64) -> Reading {
        let board = self.board();
        let decisions = board.decisions.iter().rev().take_while(|n| n.seq > since).cloned().collect();
        let mut per_minute: HashMap<String, Counts> = HashMap::new();
        let second = now_ms / 1000;
        for (_, bucket) in board.seconds.iter().filter(|(s, _)| s + SECONDS > second) {
            for (id, c) in bucket {
                per_minute.entry(id.clone()).or_default().add(c);
            }
        }
        let mut seen: HashMap<String, Seen> = HashMap::new();
        let mut samples: HashMap<&str, (u32, u32)> = HashMap::new();
        for view in board.shards.values() {
            for (id, s) in view {
                let all = seen.entry(id.clone()).or_default();
                let (n_latency, n_ttft) = samples.entry(id).or_default();
                all.in_flight += s.in_flight;
                if let Some(l) = s.latency_ms {
                    *n_latency += 1;
                    all.latency_ms = Some(all.latency_ms.unwrap_or(0.0) + l);
                }
                if let Some(t) = s.ttft_ms {
                    *n_ttft += 1;
                    all.ttft_ms = Some(all.ttft_ms.unwrap_or(0.0) + t);
                }
            }
        }
        for (id, s) in seen.iter_mut() {
            let (n_latency, n_ttft) = samples[id.as_str()];
            s.latency_ms = s.latency_ms.map(|l| l / f64::from(n_latency));
            s.ttft_ms = s.ttft_ms.map(|t| t / f64::from(n_ttft));
        }
        Reading { decisions, last_seq: board.last_seq, per_minute, seen }
    }

    /// The decision numbered `seq`, while the board keeps it.
    pub fn decision(&self, seq: u64) -> Option<Noted> {
        self.board().decisions.iter().find(|n| n.seq == seq).cloned()
    }
}
