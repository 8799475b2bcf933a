use std::os::unix::fs::PermissionsExt;

use pointwork_core::pareto::{select, ParetoRule};

use super::*;
use crate::pareto_poller::parse;
use crate::pareto_poller::test_support::{fixture, TempDir, ENDPOINTS, STATS};

const DAY: f64 = 86_400.0;
const NOW: f64 = 1_800_000_000.0;

/// A verdict from the fixtures, as a poll at `polled_at` would leave it.
fn learned(key: &str, polled_at: f64) -> ModelTelemetry {
    let stats = parse::stats(&fixture(STATS)).unwrap().rows;
    let uptime = parse::endpoints(&fixture(ENDPOINTS)).unwrap().rows;
    let rule = ParetoRule { exclude_regions: vec!["SG".into()], min_context: 200_000, ..ParetoRule::default() };
    let selection = select(&stats, &uptime, &rule, None);
    let verdict = Verdict::after_poll(None, selection, &rule);
    ModelTelemetry {
        key: key.into(),
        fingerprint: rule.fingerprint(),
        verdict,
        regions: vec![("baseten/fp8".into(), RegionVerdict::Allowed), ("z-ai/fp8".into(), RegionVerdict::Excluded)],
        polled_at,
        stale: false,
    }
}

fn cache(dir: &TempDir) -> CacheFile {
    CacheFile::new(&dir.path().join("sub"), Duration::from_secs(7 * 86_400))
}

#[test]
fn what_is_written_reads_back_stale_with_the_allow_list() {
    let dir = TempDir::new("cache-roundtrip");
    let cache = cache(&dir);
    assert_eq!(cache.read(NOW), Ok(Contents::default()), "no file yet: empty");
    let model = learned("z-ai/glm-5.2", NOW - 60.0);
    let allow = AllowList { providers: vec!["novita".into(), "baseten".into()], discovered_at: NOW - 5.0 };
    cache.write(&[&model], Some(&allow), NOW).unwrap();
    let back = cache.read(NOW).unwrap();
    assert_eq!(back.allow_list, Some(allow));
    assert_eq!(back.skipped, 0);
    let expected = ModelTelemetry {
        stale: true,
        verdict: Verdict {
            selection: Selection {
                // Not kept: what each candidate measured, and why others were dropped.
                candidates: Vec::new(),
                dropped: Vec::new(),
                ..model.verdict.selection.clone()
            },
            ..model.verdict.clone()
        },
        ..model.clone()
    };
    assert_eq!(back.models, vec![expected]);
    assert_eq!(back.models[0].verdict.winner.as_deref(), Some("baseten/fp8-fast"));
    assert!(!back.models[0].verdict.selection.points.is_empty());
    assert!(!back.models[0].verdict.selection.excluded_bases.is_empty());
}

#[test]
fn the_file_is_private_and_replaced_whole() {
    let dir = TempDir::new("cache-mode");
    let cache = cache(&dir);
    cache.write(&[&learned("a/b", NOW)], None, NOW).unwrap();
    let mode = std::fs::metadata(&cache.path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    // A file someone made world-readable is replaced by a private one.
    std::fs::set_permissions(&cache.path, std::fs::Permissions::from_mode(0o644)).unwrap();
    cache.write(&[], None, NOW).unwrap();
    assert_eq!(std::fs::metadata(&cache.path).unwrap().permissions().mode() & 0o777, 0o600);
    assert_eq!(cache.read(NOW).unwrap().models, vec![]);
    let leftovers: Vec<_> = std::fs::read_dir(cache.path.parent().unwrap()).unwrap().collect();
    assert_eq!(leftovers.len(), 1, "no temporary file left behind");
}

#[test]
fn a_symbolic_link_is_neither_read_nor_written_through() {
    let dir = TempDir::new("cache-link");
    let cache = cache(&dir);
    std::fs::create_dir_all(cache.path.parent().unwrap()).unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    std::os::unix::fs::symlink(&victim, &cache.path).unwrap();
    let err = cache.write(&[&learned("a/b", NOW)], None, NOW).unwrap_err();
    assert!(err.contains("symbolic link"), "{err}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    let err = cache.read(NOW).unwrap_err();
    assert!(err.contains("symbolic link"), "{err}");
}

#[test]
fn entries_past_the_retention_are_pruned_on_write_and_ignored_on_read() {
    let dir = TempDir::new("cache-prune");
    let cache = cache(&dir);
    let (fresh, old) = (learned("fresh/m", NOW - DAY), learned("old/m", NOW - 8.0 * DAY));
    cache.write(&[&fresh, &old], None, NOW).unwrap();
    let text = std::fs::read_to_string(&cache.path).unwrap();
    assert!(text.contains("fresh/m") && !text.contains("old/m"), "pruned on write");
    let keys = |c: &Contents| c.models.iter().map(|m| m.key.clone()).collect::<Vec<_>>();
    assert_eq!(keys(&cache.read(NOW).unwrap()), ["fresh/m"]);
    // A week later the fresh one has aged out too: ignored on read.
    assert_eq!(keys(&cache.read(NOW + 7.0 * DAY).unwrap()), Vec::<String>::new());
}

#[test]
fn a_corrupt_file_or_entry_is_reported_or_skipped() {
    let dir = TempDir::new("cache-corrupt");
    let cache = cache(&dir);
    std::fs::create_dir_all(cache.path.parent().unwrap()).unwrap();
    std::fs::write(&cache.path, "{ not json").unwrap();
    let err = cache.read(NOW).unwrap_err();
    assert!(err.contains("not a cache file"), "{err}");
    std::fs::write(&cache.path, r#"{"version": 99, "entries": []}"#).unwrap();
    assert!(cache.read(NOW).unwrap_err().contains("cache format 99"));
    // One bad entry (and a bad point) costs only itself.
    cache.write(&[&learned("good/m", NOW)], None, NOW).unwrap();
    let mut doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&cache.path).unwrap()).unwrap();
    let entries = doc["entries"].as_array_mut().unwrap();
    entries[0]["points"][0]["tps"] = serde_json::json!(-1.0);
    entries.push(serde_json::json!({"key": "bad/m", "fingerprint": "not hex"}));
    std::fs::write(&cache.path, doc.to_string()).unwrap();
    let back = cache.read(NOW).unwrap();
    assert_eq!((back.models.len(), back.skipped), (1, 1));
    let points = &back.models[0].verdict.selection.points;
    assert_eq!(points.len(), learned("good/m", NOW).verdict.selection.points.len() - 1);
}

#[test]
fn the_shared_document_carries_everything_the_dry_run_explains_with_the_staleness() {
    let fresh = learned("a/m", NOW);
    let stale = ModelTelemetry { stale: true, ..learned("b/m", NOW - 60.0) };
    assert!(!fresh.verdict.selection.candidates.is_empty() && !fresh.verdict.selection.dropped.is_empty());
    let allow = AllowList { providers: vec!["baseten".into()], discovered_at: NOW - 5.0 };
    let telemetry = ParetoTelemetry {
        models: vec![fresh.clone(), stale.clone()],
        allow_list: Some(allow.clone()),
        polls: 7,
        poll_failures: 1,
    };
    let back = read_shared(&write_shared(&telemetry, "gw-a")).unwrap();
    assert_eq!(back, Shared { from: "gw-a".into(), models: vec![fresh, stale], allow_list: Some(allow), skipped: 0 });
    for m in &DROPPED {
        assert_eq!(dropped(m.as_str()), Some(*m));
    }
}

#[test]
fn a_shared_document_of_another_format_or_a_bad_entry_is_refused_or_skipped() {
    assert!(read_shared(b"{ no").unwrap_err().contains("not the shared telemetry"));
    let other = br#"{"version": 99, "from": "x", "entries": []}"#;
    assert!(read_shared(other).unwrap_err().contains("format 99"));
    let telemetry = ParetoTelemetry { models: vec![learned("a/m", NOW)], ..ParetoTelemetry::default() };
    let mut doc: serde_json::Value = serde_json::from_slice(&write_shared(&telemetry, "gw-a")).unwrap();
    doc["entries"].as_array_mut().unwrap().push(serde_json::json!({"stale": false, "entry": {"key": "bad/m"}}));
    let back = read_shared(doc.to_string().as_bytes()).unwrap();
    assert_eq!((back.models.len(), back.skipped), (1, 1));
}
