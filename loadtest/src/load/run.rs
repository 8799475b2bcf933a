//! A whole run: the worker threads, the common start, the live progress line, the merged report.

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Barrier, OnceLock};
use std::time::{Duration, Instant};

use super::options::{LoadOptions, Scheme, Stop};
use super::report::{Report, RunInfo, TargetInfo};
use super::request;
use super::spread;
use super::stats::Stats;
use super::sys;
use super::tls::{self, ClientSetup};
use super::worker::{self, Counters, Endpoint, Mode, Shared};

/// The threads start together this long after the main thread sets the start.
const START_MARGIN: Duration = Duration::from_millis(2);
/// File descriptors kept free besides the connections.
const SPARE_FILES: u64 = 256;

/// Runs the load (or holds idle connections) as `options` say and returns the report.
pub fn run(options: &LoadOptions) -> Result<Report, String> {
    let body = request::body(options)?;
    let keys = options.keys.as_deref().map(request::keys).transpose()?.unwrap_or_default();
    let targets = options
        .targets
        .iter()
        .map(|target| {
            Ok(Endpoint {
                addr: target.resolve()?,
                requests: request::requests(options, target, &body, &keys),
                tls_name: match target.scheme {
                    Scheme::Http => None,
                    Scheme::Https => Some(tls::server_name(&target.host)?),
                },
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    let tls = options.tls.as_ref().map(ClientSetup::new).transpose()?;
    let (mode, connections) = match (options.idle_connections, options.rate) {
        (Some(count), _) => (Mode::Idle, count),
        (None, Some(rate)) => (Mode::Open { rate }, options.concurrency),
        (None, None) => (Mode::Closed, options.concurrency),
    };
    let wanted = connections as u64 + SPARE_FILES;
    let limit = sys::raise_open_files(wanted);
    if limit < wanted {
        eprintln!("pointwork-load: warning: only {limit} open files allowed; {connections} connections need more");
    }
    let threads = options.threads.clamp(1, connections);
    let shared = Shared {
        targets,
        stream: options.stream,
        new_connection: options.new_connection,
        tls,
        timeout: options.timeout,
        spin: options.spin,
        mode,
        stop: options.stop,
        threads,
        claimed: AtomicU64::new(0),
        keys: Default::default(),
        gate: Barrier::new(threads + 1),
        start: OnceLock::new(),
        progress: (0..threads).map(|_| Counters::default()).collect(),
    };
    let show_progress = options.progress && sys::stdout_is_terminal();

    let (outcomes, start) = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|index| {
                let owned = spread::thread_connections(connections, threads, index);
                let shared = &shared;
                std::thread::Builder::new()
                    .name(format!("load-{index}"))
                    .spawn_scoped(scope, move || worker::run(shared, index, owned))
                    .expect("a thread can be spawned")
            })
            .collect();
        shared.gate.wait();
        let start = Instant::now() + START_MARGIN;
        shared.start.set(start).expect("the start is set once");
        shared.gate.wait();
        watch(&shared, start, mode, connections, options, show_progress, &handles);
        let outcomes: Vec<_> = handles.into_iter().map(|handle| handle.join()).collect();
        (outcomes, start)
    });

    let mut stats = Stats::default();
    let mut by_target: Vec<Stats> = options.targets.iter().map(|_| Stats::default()).collect();
    let mut last = start;
    let mut still_open = 0;
    for outcome in outcomes {
        let outcome = outcome.map_err(|_| "a load thread panicked".to_owned())?;
        stats.merge(&outcome.stats);
        for (sum, theirs) in by_target.iter_mut().zip(&outcome.by_target) {
            sum.merge(theirs);
        }
        last = last.max(outcome.last_activity);
        still_open += outcome.still_open;
    }
    for target in &by_target {
        stats.merge(target);
    }
    let (duration, requests_limit) = match options.stop {
        Stop::After(duration) => (Some(duration), None),
        Stop::Requests(count) => (None, Some(count)),
    };
    let urls: Vec<String> = options.targets.iter().map(|target| target.url()).collect();
    let info = RunInfo {
        url: urls.join(" "),
        mode: match mode {
            Mode::Closed => "closed",
            Mode::Open { .. } => "open",
            Mode::Idle => "idle",
        },
        threads,
        concurrency: connections,
        rate: options.rate,
        stream: options.stream,
        body_bytes: body.len(),
        duration,
        requests_limit,
        // A run for a duration lasts that long even when its open-loop schedule ends just before.
        elapsed: last.saturating_duration_since(start).max(duration.unwrap_or_default()),
        idle_still_open: (mode == Mode::Idle).then_some(still_open),
        new_connection: options.new_connection,
        tls_resumption: options.tls.as_ref().map(|tls| tls.resume),
    };
    let mut report = Report::new(info, &stats);
    if urls.len() > 1 {
        let targets = urls.into_iter().zip(&by_target).enumerate().map(|(index, (url, stats))| TargetInfo {
            url,
            connections: (0..connections).filter(|&c| spread::target_of(c, by_target.len()) == index).count(),
            stats,
        });
        report = report.with_targets(targets);
    }
    Ok(report)
}

/// Until the workers end: the progress line once a second on a terminal; in idle mode, one line
/// on stderr once every connection has had its request (the moment to measure the server).
fn watch(
    shared: &Shared,
    start: Instant,
    mode: Mode,
    connections: usize,
    options: &LoadOptions,
    show_progress: bool,
    handles: &[std::thread::ScopedJoinHandle<'_, worker::Outcome>],
) {
    let mut next_line = start + Duration::from_secs(1);
    let mut announced = mode != Mode::Idle;
    let mut printed = false;
    while !handles.iter().all(|handle| handle.is_finished()) {
        std::thread::sleep(Duration::from_millis(20));
        let now = Instant::now();
        let sum = |field: fn(&Counters) -> &AtomicU64| -> u64 {
            shared.progress.iter().map(|counters| field(counters).load(Ordering::Relaxed)).sum()
        };
        if !announced && sum(|c| &c.settled) as usize >= connections {
            announced = true;
            let open = sum(|c| &c.open);
            let hold = match options.stop {
                Stop::After(duration) => duration.as_secs_f64(),
                Stop::Requests(_) => 0.0,
            };
            eprintln!("pointwork-load: {open} of {connections} idle connections open; holding them for {hold}s");
        }
        if show_progress && now >= next_line {
            next_line += Duration::from_secs(1);
            let seconds = now.saturating_duration_since(start).as_secs_f64();
            let ok = sum(|c| &c.ok);
            let line = match mode {
                Mode::Idle => {
                    format!("[{seconds:5.1}s] {} connections open, {} errors", sum(|c| &c.open), sum(|c| &c.errors))
                }
                _ => format!(
                    "[{seconds:5.1}s] {ok} ok, {} errors, {:.0} requests/s",
                    sum(|c| &c.errors),
                    ok as f64 / seconds.max(1e-9)
                ),
            };
            let mut stdout = std::io::stdout().lock();
            let _ = write!(stdout, "\r{line}\x1b[K");
            let _ = stdout.flush();
            printed = true;
        }
    }
    if printed {
        let mut stdout = std::io::stdout().lock();
        let _ = write!(stdout, "\r\x1b[K");
        let _ = stdout.flush();
    }
}
