//! The exporter thread: its own monoio runtime, never in a request's way. Shards hand records
//! over through a bounded channel without waiting (a full channel drops the record, counted);
//! the thread takes them in a few times a second, queues them per sink (bounded, overflow
//! dropped and counted), and posts each sink's batches in turn. A receiver that fails or hangs
//! is retried with backoff; a batch that fails [`MAX_TRIES`] times is dropped, counted.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};

use super::record::Record;
use super::sink::{Sink, Verdict};
use super::Counters;
use crate::http::write;
use crate::upstream::fetch::{self, Client};
use crate::upstream::target::Target;

/// How often the thread takes in what the shards handed over.
const INTAKE_EVERY: Duration = Duration::from_millis(200);
/// How often a batch is tried before it is dropped.
const MAX_TRIES: u32 = 5;
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// The largest receiver answer read.
const MAX_ANSWER: usize = 1 << 20;

/// One sink and what waits for it.
struct Lane {
    sink: Box<dyn Sink>,
    /// The receiver, resolved again after a failed export (a collector whose name did not
    /// resolve at start, or moved, is found once it does).
    target: RefCell<Result<Target, String>>,
    client: Client,
    queue: RefCell<VecDeque<Arc<Record>>>,
    /// The most records `queue` holds.
    bound: usize,
    batch: usize,
    counters: Arc<Counters>,
}

impl Lane {
    /// The next batch of what waits (empty when nothing does).
    fn next_batch(&self) -> Vec<Arc<Record>> {
        let mut queue = self.queue.borrow_mut();
        let n = queue.len().min(self.batch).min(self.sink.max_batch());
        queue.drain(..n).collect()
    }
}

/// Runs the thread until the process ends: `inbox` from the shards, one lane per sink.
/// `queue`: the most records waiting per sink; `batch`: the most one export carries.
/// `flush`: asked once, at exit: everything taken in goes out now, once, and the answer goes
/// back on `flushed`.
pub(super) fn run(
    inbox: Receiver<Record>,
    sinks: Vec<(Box<dyn Sink>, Arc<Counters>)>,
    (queue, batch): (usize, usize),
    (flush, flushed): (Arc<AtomicBool>, Sender<()>),
) {
    let rt = monoio::RuntimeBuilder::<monoio::LegacyDriver>::new().enable_timer().build();
    let mut rt = match rt {
        Ok(rt) => rt,
        Err(e) => return eprintln!("pointwork: export off: cannot start its runtime: {e}"),
    };
    let lanes: Vec<Rc<Lane>> = sinks
        .into_iter()
        .map(|(sink, counters)| {
            let target = RefCell::new(Target::parse(sink.url()).map_err(|e| e.0));
            let client =
                Client { tls: crate::upstream::conn::tls_connector(), timeout: sink.timeout(), max_body: MAX_ANSWER };
            Rc::new(Lane { sink, target, client, queue: RefCell::default(), bound: queue, batch, counters })
        })
        .collect();
    rt.block_on(async move {
        for lane in &lanes {
            monoio::spawn(send_loop(lane.clone()));
        }
        loop {
            monoio::time::sleep(INTAKE_EVERY).await;
            take_in(&inbox, &lanes);
            if flush.load(Ordering::Acquire) {
                for lane in &lanes {
                    send_all_once(lane).await;
                }
                let _ = flushed.send(());
                return;
            }
        }
    });
}

/// Sends what waits in `lane`, each batch tried once (the process is about to exit).
async fn send_all_once(lane: &Lane) {
    loop {
        let batch = lane.next_batch();
        if batch.is_empty() {
            return;
        }
        let (body, content_type) = lane.sink.encode(&batch);
        let verdict = post(lane, &body, content_type).await.map(|answer| lane.sink.judge(&batch, &answer));
        let dropped = match verdict {
            Ok(Verdict::Accepted) => 0,
            Ok(Verdict::Rejected { records, .. }) => records.min(batch.len()),
            Ok(Verdict::Retry(_)) | Err(_) => batch.len(),
        };
        lane.counters.exported.fetch_add((batch.len() - dropped) as u64, Ordering::Relaxed);
        lane.counters.dropped.fetch_add(dropped as u64, Ordering::Relaxed);
    }
}

/// Moves what the shards handed over into the lanes' queues.
fn take_in(inbox: &Receiver<Record>, lanes: &[Rc<Lane>]) {
    for record in inbox.try_iter() {
        let record = Arc::new(record);
        for lane in lanes.iter().filter(|l| l.sink.wants(&record)) {
            let mut queue = lane.queue.borrow_mut();
            if queue.len() >= lane.bound {
                lane.counters.dropped.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            queue.push_back(record.clone());
        }
    }
    for lane in lanes {
        lane.counters.queued.store(lane.queue.borrow().len() as u64, Ordering::Relaxed);
    }
}

/// Sends the lane's batches as they fill, retrying a failed one with backoff.
async fn send_loop(lane: Rc<Lane>) {
    let name = lane.sink.name();
    let mut failing = false;
    let mut rejecting = false;
    loop {
        let batch = lane.next_batch();
        if batch.is_empty() {
            monoio::time::sleep(INTAKE_EVERY).await;
            continue;
        }
        let (body, content_type) = lane.sink.encode(&batch);
        let mut backoff = FIRST_BACKOFF;
        let mut tries = 0;
        loop {
            tries += 1;
            let verdict = match post(&lane, &body, content_type).await {
                Ok(answer) => lane.sink.judge(&batch, &answer),
                Err(why) => Verdict::Retry(why),
            };
            match verdict {
                Verdict::Accepted | Verdict::Rejected { .. } => {
                    // Refused for good (the receiver said why per record): never retried.
                    let rejected = match verdict {
                        Verdict::Rejected { records, why } => {
                            if !rejecting {
                                eprintln!("pointwork: export {name}: the receiver refused {records} record(s): {why}");
                            }
                            records.min(batch.len())
                        }
                        _ => 0,
                    };
                    rejecting = rejected > 0;
                    lane.counters.exported.fetch_add((batch.len() - rejected) as u64, Ordering::Relaxed);
                    lane.counters.dropped.fetch_add(rejected as u64, Ordering::Relaxed);
                    if failing {
                        eprintln!("pointwork: export {name}: the receiver takes batches again");
                        failing = false;
                    }
                    break;
                }
                Verdict::Retry(why) => {
                    lane.counters.failures.fetch_add(1, Ordering::Relaxed);
                    if !failing {
                        eprintln!("pointwork: export {name}: {why}; retrying with backoff");
                        failing = true;
                    }
                    if tries >= MAX_TRIES {
                        lane.counters.dropped.fetch_add(batch.len() as u64, Ordering::Relaxed);
                        break;
                    }
                    monoio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                }
            }
        }
    }
}

/// Posts one batch: the receiver's 2xx answer body.
async fn post(lane: &Lane, body: &[u8], content_type: &str) -> Result<Vec<u8>, String> {
    let target = lane.target.borrow().clone().map_err(|e| format!("bad receiver URL: {e}"))?;
    let mut request = Vec::with_capacity(body.len() + 512);
    request.extend_from_slice(b"POST ");
    let path = if target.path_prefix.is_empty() { "/" } else { target.path_prefix.as_str() };
    request.extend_from_slice(path.as_bytes());
    request.extend_from_slice(b" HTTP/1.1\r\n");
    write::header(&mut request, "host", target.authority.as_bytes());
    write::header(&mut request, "user-agent", concat!("pointwork/", env!("CARGO_PKG_VERSION")).as_bytes());
    write::header(&mut request, "content-type", content_type.as_bytes());
    for (name, value) in lane.sink.headers() {
        write::header(&mut request, name, value.as_bytes());
    }
    write::header_decimal(&mut request, "content-length", body.len() as u64);
    write::header(&mut request, "connection", b"close");
    write::end_head(&mut request);
    request.extend_from_slice(body);
    let sent = fetch::send(&lane.client, &target, request).await;
    sent.map_err(|e| {
        // Blocking, on this thread of its own: the name is looked up again for the next try.
        *lane.target.borrow_mut() = Target::parse(lane.sink.url()).map_err(|e| e.0);
        format!("{} refused or failed: {e}", lane.sink.url())
    })
}
