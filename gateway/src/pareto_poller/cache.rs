//! The poller's cache file: what it learned, kept across restarts so that requests route on
//! the last verdicts before the first poll answers. One JSON file in `cache_dir`, written by the
//! poller thread only (never on the request path): to a temporary file created 0600 beside it,
//! then renamed over it; never through a symbolic link. Entries older than the retention are
//! pruned on write and ignored on read.

use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use pointwork_core::pareto::{
    AllowList, Candidate, Dropped, ModelTelemetry, ParetoTelemetry, Point, RegionVerdict, Selection, Verdict,
};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// The file's name inside `cache_dir`.
pub const FILE_NAME: &str = "openrouter-pareto-cache.json";
/// The format this code writes and reads; a file of another version is ignored.
pub const VERSION: u32 = 1;
/// A cache file larger than this is not read.
const MAX_FILE: u64 = 64 << 20;

/// What the file holds, as the poller uses it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Contents {
    /// Every entry within the retention (each marked stale: no poll has confirmed it yet).
    pub models: Vec<ModelTelemetry>,
    pub allow_list: Option<AllowList>,
    /// Entries that could not be read (skipped).
    pub skipped: usize,
}

pub struct CacheFile {
    pub path: PathBuf,
    pub retention: Duration,
}

#[derive(Serialize)]
struct FileOut {
    version: u32,
    entries: Vec<Entry>,
    allow_list: Option<StoredAllowList>,
}

#[derive(Deserialize)]
struct FileIn<'a> {
    version: u32,
    #[serde(borrow, default)]
    entries: Vec<&'a RawValue>,
    #[serde(default)]
    allow_list: Option<StoredAllowList>,
}

#[derive(Serialize, Deserialize)]
struct StoredAllowList {
    providers: Vec<String>,
    discovered_at: f64,
}

/// One (rule key, fingerprint): the verdict and the selection requests walk.
#[derive(Serialize, Deserialize)]
struct Entry {
    key: String,
    /// The rule's fingerprint as 16 hex digits (a JSON number would lose bits in most readers).
    fingerprint: String,
    /// Unix seconds of the poll that produced it.
    polled_at: f64,
    winner: Option<String>,
    challenger: Option<String>,
    streak: u32,
    /// The selection: its own winner, the safe set (cheapest first), the walk's points, the
    /// frontier, and the region policy's organisations.
    selected: Option<String>,
    safe_set: Vec<String>,
    points: Vec<StoredPoint>,
    frontier: Vec<String>,
    excluded_bases: Vec<String>,
    allowed_bases: Vec<String>,
    /// Slug → `allowed`, `excluded` or `unknown`.
    regions: Vec<(String, String)>,
}

#[derive(Serialize, Deserialize)]
struct StoredPoint {
    slug: String,
    input_price_m: f64,
    tps: f64,
}

/// A point the walk can order and divide by.
fn usable(p: &Point) -> bool {
    p.input_price_m.is_finite() && p.tps.is_finite() && p.input_price_m > 0.0 && p.tps > 0.0
}

impl Entry {
    fn from_model(m: &ModelTelemetry) -> Entry {
        let (v, s) = (&m.verdict, &m.verdict.selection);
        Entry {
            key: m.key.clone(),
            fingerprint: format!("{:016x}", m.fingerprint),
            polled_at: m.polled_at,
            winner: v.winner.clone(),
            challenger: v.challenger.clone(),
            streak: v.streak,
            selected: s.winner.clone(),
            safe_set: s.safe_set.clone(),
            points: s
                .points
                .iter()
                .filter(|p| usable(p))
                .map(|p| StoredPoint { slug: p.slug.to_string(), input_price_m: p.input_price_m, tps: p.tps })
                .collect(),
            frontier: s.frontier.clone(),
            excluded_bases: s.excluded_bases.iter().cloned().collect(),
            allowed_bases: s.allowed_bases.iter().cloned().collect(),
            regions: m.regions.iter().map(|(slug, r)| (slug.clone(), r.as_str().to_string())).collect(),
        }
    }

    fn into_model(self) -> Option<ModelTelemetry> {
        let fingerprint = u64::from_str_radix(&self.fingerprint, 16).ok()?;
        let points: Vec<Point> = self
            .points
            .into_iter()
            .map(|p| Point { slug: p.slug.into(), input_price_m: p.input_price_m, tps: p.tps })
            .filter(usable)
            .collect();
        let mut regions: Vec<(String, RegionVerdict)> =
            self.regions.into_iter().filter_map(|(slug, r)| Some((slug, region(&r)?))).collect();
        regions.sort();
        regions.dedup_by(|a, b| a.0 == b.0);
        let selection = Selection {
            winner: self.selected,
            safe_set: self.safe_set,
            points,
            frontier: self.frontier,
            excluded_bases: self.excluded_bases.into_iter().collect(),
            allowed_bases: self.allowed_bases.into_iter().collect(),
            ..Selection::default()
        };
        Some(ModelTelemetry {
            key: self.key,
            fingerprint,
            verdict: Verdict { winner: self.winner, challenger: self.challenger, streak: self.streak, selection },
            regions,
            polled_at: self.polled_at,
            stale: true,
        })
    }
}

fn region(name: &str) -> Option<RegionVerdict> {
    [RegionVerdict::Allowed, RegionVerdict::Excluded, RegionVerdict::Unknown].into_iter().find(|r| r.as_str() == name)
}

impl CacheFile {
    pub fn new(dir: &Path, retention: Duration) -> CacheFile {
        CacheFile { path: dir.join(FILE_NAME), retention }
    }

    fn fresh(&self, polled_at: f64, now: f64) -> bool {
        polled_at.is_finite() && now - polled_at <= self.retention.as_secs_f64()
    }

    /// What the file holds within the retention at `now` (unix seconds); empty when there is
    /// no file. An error (unreadable, a symbolic link, not the format) says why, naming the file.
    pub fn read(&self, now: f64) -> Result<Contents, String> {
        let shown = self.path.display();
        let file = OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW).open(&self.path);
        let file = match file {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Contents::default()),
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
                return Err(format!("{shown} is a symbolic link; not reading it"));
            }
            Err(e) => return Err(format!("{shown}: {e}")),
        };
        let mut bytes = Vec::new();
        file.take(MAX_FILE + 1).read_to_end(&mut bytes).map_err(|e| format!("{shown}: {e}"))?;
        if bytes.len() as u64 > MAX_FILE {
            return Err(format!("{shown}: larger than {MAX_FILE} bytes"));
        }
        let doc: FileIn = serde_json::from_slice(&bytes).map_err(|e| format!("{shown}: not a cache file: {e}"))?;
        if doc.version != VERSION {
            return Err(format!("{shown}: cache format {} (this version reads {VERSION})", doc.version));
        }
        let mut contents = Contents::default();
        for raw in doc.entries {
            match serde_json::from_str::<Entry>(raw.get()).ok().and_then(Entry::into_model) {
                Some(m) if self.fresh(m.polled_at, now) => contents.models.push(m),
                Some(_) => {}
                None => contents.skipped += 1,
            }
        }
        one_per_rule(&mut contents.models);
        contents.allow_list = read_allow_list(doc.allow_list);
        Ok(contents)
    }

    /// Replaces the file with `models` (those within the retention at `now`) and `allow_list`.
    pub fn write(&self, models: &[&ModelTelemetry], allow_list: Option<&AllowList>, now: f64) -> Result<(), String> {
        let shown = self.path.display();
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        if std::fs::symlink_metadata(&self.path).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(format!("{shown} is a symbolic link; not writing through it"));
        }
        let doc = FileOut {
            version: VERSION,
            entries: models.iter().filter(|m| self.fresh(m.polled_at, now)).map(|m| Entry::from_model(m)).collect(),
            allow_list: allow_list
                .map(|a| StoredAllowList { providers: a.providers.clone(), discovered_at: a.discovered_at }),
        };
        let bytes = serde_json::to_vec_pretty(&doc).map_err(|e| format!("{shown}: {e}"))?;
        // Unique per write: a poller stopped by a reload may still be writing when the next starts.
        static WRITES: AtomicU64 = AtomicU64::new(0);
        let n = WRITES.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{FILE_NAME}.{}.{n}.tmp", std::process::id()));
        // A temporary file left by a crash (or planted as a link) goes first: create_new below
        // never opens an existing file, so nothing is written through a link.
        let _ = std::fs::remove_file(&tmp);
        let written = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&tmp)
            .and_then(|mut f| f.write_all(&bytes).and_then(|()| f.sync_all()))
            .and_then(|()| std::fs::rename(&tmp, &self.path));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(format!("cannot write {shown}: {e}"));
        }
        Ok(())
    }
}

/// The telemetry the poller lease's holder publishes to the other instances through Redis
/// ([`super::share`]): the cache file's entries, each with its staleness as published.
#[derive(Serialize)]
struct SharedOut<'a> {
    version: u32,
    /// The instance that polled.
    from: &'a str,
    entries: Vec<SharedEntry>,
    allow_list: Option<StoredAllowList>,
}

#[derive(Deserialize)]
struct SharedIn<'a> {
    version: u32,
    from: String,
    #[serde(borrow, default)]
    entries: Vec<&'a RawValue>,
    #[serde(default)]
    allow_list: Option<StoredAllowList>,
}

/// A cache entry with what the file leaves out: the dry run explains the walk on it.
#[derive(Serialize, Deserialize)]
struct SharedEntry {
    stale: bool,
    entry: Entry,
    #[serde(default)]
    candidates: Vec<StoredCandidate>,
    /// Slug → why the hard filters dropped it ([`Dropped::as_str`]).
    #[serde(default)]
    dropped: Vec<(String, String)>,
}

#[derive(Serialize, Deserialize)]
struct StoredCandidate {
    slug: String,
    input_price_m: f64,
    output_price_m: f64,
    tps: f64,
    requests: u64,
    context: u64,
    uptime: f64,
}

impl SharedEntry {
    fn from_model(m: &ModelTelemetry) -> SharedEntry {
        let s = &m.verdict.selection;
        SharedEntry {
            stale: m.stale,
            entry: Entry::from_model(m),
            candidates: s
                .candidates
                .iter()
                .filter(|c| [c.input_price_m, c.output_price_m, c.tps, c.uptime].iter().all(|n| n.is_finite()))
                .map(|c| StoredCandidate {
                    slug: c.slug.clone(),
                    input_price_m: c.input_price_m,
                    output_price_m: c.output_price_m,
                    tps: c.tps,
                    requests: c.requests,
                    context: c.context,
                    uptime: c.uptime,
                })
                .collect(),
            dropped: s.dropped.iter().map(|(slug, why)| (slug.clone(), why.as_str().to_string())).collect(),
        }
    }

    fn into_model(self) -> Option<ModelTelemetry> {
        let mut m = self.entry.into_model()?;
        m.stale = self.stale;
        let s = &mut m.verdict.selection;
        s.candidates = self
            .candidates
            .into_iter()
            .map(|c| Candidate {
                slug: c.slug,
                input_price_m: c.input_price_m,
                output_price_m: c.output_price_m,
                tps: c.tps,
                requests: c.requests,
                context: c.context,
                uptime: c.uptime,
            })
            .collect();
        s.dropped = self.dropped.into_iter().filter_map(|(slug, why)| Some((slug, dropped(&why)?))).collect();
        Some(m)
    }
}

/// Every reason the hard filters give.
const DROPPED: [Dropped; 10] = [
    Dropped::Region,
    Dropped::NotAllowed,
    Dropped::Quantization,
    Dropped::Context,
    Dropped::Retention,
    Dropped::Uptime,
    Dropped::Throughput,
    Dropped::SampleSize,
    Dropped::Price,
    Dropped::AboveMaxPrice,
];

fn dropped(name: &str) -> Option<Dropped> {
    DROPPED.into_iter().find(|d| d.as_str() == name)
}

/// What another instance published, read.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Shared {
    /// The instance that polled.
    pub from: String,
    pub models: Vec<ModelTelemetry>,
    pub allow_list: Option<AllowList>,
    /// Entries that could not be read (skipped).
    pub skipped: usize,
}

/// `telemetry` as the document the other instances read ([`read_shared`]).
pub fn write_shared(telemetry: &ParetoTelemetry, from: &str) -> Vec<u8> {
    let doc = SharedOut {
        version: VERSION,
        from,
        entries: telemetry.models.iter().map(SharedEntry::from_model).collect(),
        allow_list: telemetry
            .allow_list
            .as_ref()
            .map(|a| StoredAllowList { providers: a.providers.clone(), discovered_at: a.discovered_at }),
    };
    // Strings and numbers only; serde_json writes a non-finite number as null rather than
    // failing (and the points and candidates are finite): an empty document is never written.
    serde_json::to_vec(&doc).unwrap_or_default()
}

/// Reads what [`write_shared`] wrote; an entry that cannot be read is skipped.
pub fn read_shared(bytes: &[u8]) -> Result<Shared, String> {
    let doc: SharedIn = serde_json::from_slice(bytes).map_err(|e| format!("not the shared telemetry: {e}"))?;
    if doc.version != VERSION {
        return Err(format!("shared telemetry format {} (this version reads {VERSION})", doc.version));
    }
    let mut shared = Shared { from: doc.from, ..Shared::default() };
    for raw in doc.entries {
        let read = serde_json::from_str::<SharedEntry>(raw.get()).ok();
        match read.and_then(SharedEntry::into_model) {
            Some(m) => shared.models.push(m),
            None => shared.skipped += 1,
        }
    }
    one_per_rule(&mut shared.models);
    shared.allow_list = read_allow_list(doc.allow_list);
    Ok(shared)
}

/// One entry per rule key and fingerprint, in a fixed order.
fn one_per_rule(models: &mut Vec<ModelTelemetry>) {
    models.sort_by(|a, b| (&a.key, a.fingerprint).cmp(&(&b.key, b.fingerprint)));
    models.dedup_by(|a, b| (&a.key, a.fingerprint) == (&b.key, b.fingerprint));
}

fn read_allow_list(stored: Option<StoredAllowList>) -> Option<AllowList> {
    stored
        .filter(|a| a.discovered_at.is_finite())
        .map(|a| AllowList { providers: a.providers, discovered_at: a.discovered_at })
}

#[cfg(test)]
#[path = "cache_tests.rs"]
mod tests;
