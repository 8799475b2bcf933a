//! Export of what the gateway does to the tools teams already run: OpenTelemetry traces over
//! OTLP/HTTP (`otlp`) and Langfuse's ingestion API (`langfuse`), configured by LiteLLM's names
//! or `pointwork.telemetry` (`pointwork_config::ExportSettings`).
//!
//! With no exporter configured nothing of this exists: shards build no record. Otherwise each
//! request's shard builds one [`RequestRecord`] as the request ends (`draft`), and each MCP
//! request sent on to a server one [`McpCallRecord`] (`mcp_record`), and hands it to the
//! exporter thread (`thread`) without waiting; the thread reads what costs parsing off the
//! kept bodies (`details`), encodes batches (`sink`) and posts them.

pub mod details;
pub mod draft;
mod langfuse;
pub mod mcp_record;
mod otlp;
pub mod record;
pub mod sink;
mod thread;
pub mod trace_context;

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use crossbeam_channel::{Receiver, Sender, TrySendError};
use pointwork_config::ExportSettings;

pub use mcp_record::McpCallRecord;
pub use record::{AttemptRecord, Record, RequestRecord};
use sink::Sink;

/// How many records the shards may have handed over before the thread takes them in.
const HAND_OVER: usize = 16_384;

/// One exporter's counts, for `/metrics`.
#[derive(Default)]
pub struct Counters {
    pub name: &'static str,
    pub exported: AtomicU64,
    /// Records that never reached the receiver: the queue was full, or a batch failed every try.
    pub dropped: AtomicU64,
    /// Failed exports (each retried, up to a limit).
    pub failures: AtomicU64,
    /// Records waiting (as of the thread's last intake).
    pub queued: AtomicU64,
}

/// The shards' way to the exporter thread.
pub struct Exporters {
    inbox: Sender<Record>,
    counters: Vec<Arc<Counters>>,
    /// Where records go, for the start-up line (no credentials).
    described: String,
    /// What the exporters were started with (a reload cannot change them).
    settings: ExportSettings,
    /// Set at exit: the thread sends what waits, and says so on `flushed`.
    flush: Arc<AtomicBool>,
    flushed: Receiver<()>,
}

impl Exporters {
    /// Starts the exporter thread for `settings`; `None` when nothing is exported.
    pub fn start(settings: &ExportSettings) -> Option<Arc<Exporters>> {
        let mut sinks: Vec<Box<dyn Sink>> = Vec::new();
        if let Some(otlp) = &settings.otlp {
            sinks.push(Box::new(otlp::OtlpSink::new(otlp.clone(), settings.content)));
        }
        if let Some(langfuse) = &settings.langfuse {
            sinks.push(Box::new(langfuse::LangfuseSink::new(langfuse.clone(), settings.content)));
        }
        if sinks.is_empty() {
            return None;
        }
        let (inbox, taken) = crossbeam_channel::bounded(HAND_OVER);
        let (queue, batch) = (settings.queue, settings.batch);
        let lanes: Vec<(Box<dyn Sink>, Arc<Counters>)> = sinks
            .into_iter()
            .map(|sink| {
                let counters = Arc::new(Counters { name: sink.name(), ..Counters::default() });
                (sink, counters)
            })
            .collect();
        let counters = lanes.iter().map(|(_, c)| c.clone()).collect();
        let mut described: Vec<String> = lanes.iter().map(|(s, _)| format!("{} to {}", s.name(), s.url())).collect();
        described.push(if settings.content { "with content".into() } else { "without content".into() });
        let described = described.join(", ");
        let (flush, (done, flushed)) = (Arc::new(AtomicBool::new(false)), crossbeam_channel::bounded(1));
        let asked = flush.clone();
        let spawned = std::thread::Builder::new()
            .name("export".into())
            .spawn(move || thread::run(taken, lanes, (queue, batch), (asked, done)));
        if let Err(e) = spawned {
            eprintln!("pointwork: export off: cannot spawn its thread: {e}");
            return None;
        }
        let settings = settings.clone();
        Some(Arc::new(Exporters { inbox, counters, described, settings, flush, flushed }))
    }

    /// Whether `new` asks for other exporters than those running (`running`: `None` when none
    /// runs): they change only on a restart. LiteLLM's metric names are not theirs.
    pub fn differ(running: Option<&Exporters>, new: &ExportSettings) -> bool {
        let exporters = |s: &ExportSettings| (s.otlp.clone(), s.langfuse.clone(), s.content, s.queue, s.batch);
        match running {
            Some(running) => exporters(&running.settings) != exporters(new),
            None => new.traces(),
        }
    }

    /// Whether prompts and completions go with the records.
    pub fn content(&self) -> bool {
        self.settings.content
    }

    /// Where records go (`otlp to http://…/v1/traces, without content`).
    pub fn describe(&self) -> &str {
        &self.described
    }

    /// Hands `record` to the exporter thread, or drops it (counted) when the thread is behind.
    pub fn send(&self, record: Box<RequestRecord>) {
        self.hand_over(Record::Request(record));
    }

    /// Hands the record of an MCP request to the exporter thread, as [`Exporters::send`].
    pub fn send_mcp(&self, record: Box<McpCallRecord>) {
        self.hand_over(Record::Mcp(record));
    }

    fn hand_over(&self, record: Record) {
        match self.inbox.try_send(record) {
            Ok(()) => {}
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                for c in &self.counters {
                    c.dropped.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }

    /// At exit, once the shards have drained: sends what waits, waiting for it at most `within`.
    pub fn flush_blocking(&self, within: std::time::Duration) {
        self.flush.store(true, Ordering::Release);
        if self.flushed.recv_timeout(within).is_err() {
            let waiting: u64 = self.counters.iter().map(|c| c.queued.load(Ordering::Relaxed)).sum();
            eprintln!("pointwork: export: not every record went out within {within:?} ({waiting} were waiting)");
        }
    }

    /// Each exporter's counts, for the live view.
    pub fn live(&self) -> Vec<serde_json::Value> {
        let n = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let each = |c: &Arc<Counters>| {
            serde_json::json!({"name": c.name, "exported": n(&c.exported), "dropped": n(&c.dropped),
                "failures": n(&c.failures), "queued": n(&c.queued)})
        };
        self.counters.iter().map(each).collect()
    }

    /// The exporters' lines of `/metrics`.
    pub fn render(&self, out: &mut String) {
        type Field = fn(&Counters) -> &AtomicU64;
        let families: [(&str, &str, &str, Field); 4] = [
            ("pointwork_export_exported_total", "counter", "Records the receiver accepted.", |c| &c.exported),
            (
                "pointwork_export_dropped_total",
                "counter",
                "Records never exported: the queue was full or every try of their batch failed.",
                |c| &c.dropped,
            ),
            ("pointwork_export_failures_total", "counter", "Exports that failed (each retried with backoff).", |c| {
                &c.failures
            }),
            ("pointwork_export_queued", "gauge", "Records waiting for their export.", |c| &c.queued),
        ];
        for (name, kind, help, field) in families {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
            for c in &self.counters {
                let _ = writeln!(out, "{name}{{exporter=\"{}\"}} {}", c.name, field(c).load(Ordering::Relaxed));
            }
        }
    }
}
