use pointwork_core::pareto::{CooldownSettings, TelemetrySettings};

use super::*;
use crate::pareto_poller::parse;
use crate::pareto_poller::test_support::{fixture, ENDPOINTS, STATS};

const KEY: &str = "z-ai/glm-5.2";
const UNIX: f64 = 1_800_000_000.0;

fn settings(rules: Vec<(&str, ParetoRule)>) -> Arc<ParetoSettings> {
    Arc::new(ParetoSettings {
        rules: rules.into_iter().map(|(k, r)| (k.to_string(), r)).collect(),
        cooldown: CooldownSettings::default(),
        telemetry: TelemetrySettings { poll_interval: Duration::from_secs(300), ..TelemetrySettings::default() },
        routing_log: "/dev/null".into(),
        error_log: "/dev/null".into(),
    })
}

fn rows() -> Rows {
    Rows {
        stats: parse::stats(&fixture(STATS)).unwrap().rows,
        uptime: parse::endpoints(&fixture(ENDPOINTS)).unwrap().rows,
        skipped: 0,
    }
}

fn winner(state: &PollerState, key: &str, rule: &ParetoRule) -> Option<String> {
    state.telemetry().model(key, rule.fingerprint()).and_then(|m| m.verdict.winner.clone())
}

#[test]
fn a_poll_publishes_the_selection_and_logs_the_new_winner() {
    let rule = ParetoRule::default();
    let t0 = Instant::now();
    let mut state = PollerState::new(settings(vec![(KEY, rule.clone())]), Contents::default(), t0);
    assert_eq!(state.due(t0), [KEY], "the first poll is at start");
    assert_eq!(state.telemetry(), ParetoTelemetry::default(), "nothing learned yet");
    let log = state.polled(KEY, Ok(rows()), t0, UNIX);
    assert_eq!(log, ["pointwork: openrouter-pareto: z-ai/glm-5.2: winner baseten/fp8-fast (was none)"]);
    let t = state.telemetry();
    let m = t.model(KEY, rule.fingerprint()).unwrap();
    assert_eq!(m.verdict.winner.as_deref(), Some("baseten/fp8-fast"));
    assert_eq!((m.polled_at, m.stale, m.regions.len()), (UNIX, false, 0), "no region policy: no verdicts");
    assert_eq!((t.polls, t.poll_failures), (1, 0));
    assert_eq!(state.next_due(), Some(t0 + Duration::from_secs(300)));
    // The same winner again: nothing to log.
    assert_eq!(state.polled(KEY, Ok(rows()), t0, UNIX + 300.0), Vec::<String>::new());
}

#[test]
fn failures_back_off_keep_the_verdict_stale_and_log_once_per_streak() {
    let rule = ParetoRule::default();
    let t0 = Instant::now();
    let mut state = PollerState::new(settings(vec![(KEY, rule.clone())]), Contents::default(), t0);
    state.polled(KEY, Ok(rows()), t0, UNIX);
    let mut delays = Vec::new();
    let mut logged = Vec::new();
    for _ in 0..10 {
        logged.extend(state.polled(KEY, Err("HTTP 503".into()), t0, UNIX));
        delays.push(state.next_due().unwrap().duration_since(t0).as_secs());
    }
    assert_eq!(delays, [1, 2, 4, 8, 16, 32, 64, 128, 256, 300]);
    assert_eq!(logged.len(), 1, "{logged:?}");
    assert!(logged[0].starts_with("pointwork: openrouter-pareto: z-ai/glm-5.2: telemetry poll failed: HTTP 503;"));
    let t = state.telemetry();
    let m = t.model(KEY, rule.fingerprint()).unwrap();
    assert_eq!((m.verdict.winner.as_deref(), m.stale), (Some("baseten/fp8-fast"), true));
    assert_eq!((t.polls, t.poll_failures), (11, 10));
    let log = state.polled(KEY, Ok(rows()), t0, UNIX);
    assert_eq!(log, ["pointwork: openrouter-pareto: z-ai/glm-5.2: telemetry poll recovered after 10 failed polls"]);
    assert!(!state.telemetry().model(KEY, rule.fingerprint()).unwrap().stale);
    assert_eq!(state.next_due(), Some(t0 + Duration::from_secs(300)), "back to the normal pace");
}

#[test]
fn a_learned_allow_list_reselects_at_once_without_a_poll() {
    let rule = ParetoRule { promotion_polls: 3, ..ParetoRule::default() };
    let t0 = Instant::now();
    let mut state = PollerState::new(settings(vec![(KEY, rule.clone())]), Contents::default(), t0);
    state.polled(KEY, Ok(rows()), t0, UNIX);
    let log = state.allow_list_learned(vec!["novita".into(), " z-ai ".into(), "novita".into()], UNIX + 10.0);
    assert_eq!(
        log,
        [
            "pointwork: openrouter-pareto: the account's allowed providers: novita, z-ai",
            "pointwork: openrouter-pareto: z-ai/glm-5.2: winner novita/fp8 (was baseten/fp8-fast)",
        ]
    );
    let t = state.telemetry();
    let m = t.model(KEY, rule.fingerprint()).unwrap();
    // The incumbent is no longer eligible: replaced at once, whatever promotion_polls says.
    assert_eq!(m.verdict.winner.as_deref(), Some("novita/fp8"));
    assert_eq!(m.verdict.selection.safe_set, ["novita/fp8", "z-ai/fp8"]);
    assert_eq!(m.verdict.streak, 1, "a re-selection replays the last poll, it is no new poll");
    assert_eq!(m.polled_at, UNIX);
    assert_eq!(t.allow_list.as_ref().map(|a| a.discovered_at), Some(UNIX + 10.0));
    assert_eq!(t.polls, 1);
    // The same list again only refreshes its discovery time.
    assert_eq!(state.allow_list_learned(vec!["z-ai".into(), "novita".into()], UNIX + 20.0), Vec::<String>::new());
    assert_eq!(state.telemetry().allow_list.map(|a| a.discovered_at), Some(UNIX + 20.0));
    // The next poll filters by it too; once it is past its TTL, it no longer does.
    state.polled(KEY, Ok(rows()), t0, UNIX + 300.0);
    assert_eq!(winner(&state, KEY, &rule).as_deref(), Some("novita/fp8"));
    let later = UNIX + 20.0 + CooldownSettings::default().allowlist_ttl_s;
    for _ in 0..3 {
        state.polled(KEY, Ok(rows()), t0, later);
    }
    assert_eq!(winner(&state, KEY, &rule).as_deref(), Some("baseten/fp8-fast"), "promoted after 3 polls");
    assert!(state.allow_list_learned(Vec::new(), later).is_empty(), "an empty list teaches nothing");
}

#[test]
fn two_rules_of_one_model_share_its_rows_and_select_apart() {
    let fp8 = ParetoRule::default();
    let sg = ParetoRule { exclude_regions: vec!["SG".into()], min_context: 200_000, ..ParetoRule::default() };
    let t0 = Instant::now();
    let mut state = PollerState::new(settings(vec![(KEY, fp8.clone()), (KEY, sg.clone())]), Contents::default(), t0);
    assert_eq!(state.due(t0), [KEY], "one fetch for both");
    let log = state.polled(KEY, Ok(rows()), t0, UNIX);
    assert_eq!(log.len(), 2);
    assert!(log.iter().all(|l| l.contains("[rule ")), "{log:?}");
    let t = state.telemetry();
    assert_eq!(t.models.len(), 2);
    assert!(t.models.windows(2).all(|w| (&w[0].key, w[0].fingerprint) < (&w[1].key, w[1].fingerprint)));
    let strict = t.model(KEY, sg.fingerprint()).unwrap();
    assert_eq!(strict.verdict.selection.safe_set, ["novita/fp8", "baseten/fp8-fast", "baseten/fp8"]);
    assert_eq!(strict.region("z-ai/fp8"), Some(RegionVerdict::Excluded));
    assert_eq!(strict.region("parasail/fp8"), Some(RegionVerdict::Unknown));
    assert_eq!(strict.region("novita/fp8"), Some(RegionVerdict::Allowed));
    assert_eq!(t.model(KEY, fp8.fingerprint()).unwrap().verdict.selection.safe_set.len(), 6);
}

#[test]
fn a_reload_keeps_verdicts_by_fingerprint_polls_new_ones_and_drops_the_rest() {
    let (a, b) = (ParetoRule::default(), ParetoRule { min_context: 200_000, ..ParetoRule::default() });
    let t0 = Instant::now();
    let mut state = PollerState::new(settings(vec![(KEY, a.clone()), ("other/m", a.clone())]), Contents::default(), t0);
    state.polled(KEY, Ok(rows()), t0, UNIX);
    state.polled("other/m", Ok(rows()), t0, UNIX);
    assert_eq!(state.next_due(), Some(t0 + Duration::from_secs(300)));
    // Same fingerprint (only a log flag differs), and a new model: the verdict stays, the new one is due.
    let t1 = t0 + Duration::from_secs(10);
    let logged = ParetoRule { log_decisions: true, ..a.clone() };
    state.reconfigure(settings(vec![(KEY, logged), ("new/m", a.clone())]), t1);
    assert_eq!(state.due(t1), ["new/m"]);
    let t = state.telemetry();
    assert_eq!(t.models.iter().map(|m| m.key.as_str()).collect::<Vec<_>>(), [KEY]);
    assert!(!t.models[0].stale);
    // A changed fingerprint: polled at once, the old verdict no longer published...
    state.reconfigure(settings(vec![(KEY, b.clone())]), t1);
    assert_eq!(state.due(t1), [KEY]);
    assert!(state.telemetry().models.is_empty());
    assert_eq!(state.cache_entries().len(), 2, "...but kept for the cache file");
    // ...and back again: revived stale until polled.
    state.reconfigure(settings(vec![(KEY, a.clone())]), t1);
    let t = state.telemetry();
    assert_eq!((t.models.len(), t.models[0].stale), (1, true));
    assert_eq!(t.models[0].verdict.winner.as_deref(), Some("baseten/fp8-fast"));
}

#[test]
fn the_cache_is_published_stale_and_the_first_poll_builds_on_it() {
    let rule = ParetoRule { promotion_polls: 2, ..ParetoRule::default() };
    let t0 = Instant::now();
    let mut first = PollerState::new(settings(vec![(KEY, rule.clone())]), Contents::default(), t0);
    first.polled(KEY, Ok(rows()), t0, UNIX);
    let cached =
        Contents { models: first.cache_entries().into_iter().cloned().collect(), allow_list: None, skipped: 0 };
    let mut other = cached.models[0].clone();
    other.key = "not/configured".into();
    let cached = Contents { models: vec![cached.models[0].clone(), other], ..cached };
    let mut state = PollerState::new(settings(vec![(KEY, rule.clone())]), cached, t0);
    let t = state.telemetry();
    assert_eq!(t.models.len(), 1, "only the configured rules are published");
    assert!(t.models[0].stale);
    assert_eq!(t.models[0].verdict.winner.as_deref(), Some("baseten/fp8-fast"));
    assert_eq!(state.cache_entries().len(), 2, "the other entry stays in the file");
    // The poll continues the cached streak, and logs no change.
    assert_eq!(state.polled(KEY, Ok(rows()), t0, UNIX + 300.0), Vec::<String>::new());
    let m = state.telemetry().model(KEY, rule.fingerprint()).cloned().unwrap();
    assert_eq!((m.stale, m.verdict.streak), (false, 2));
}

#[test]
fn a_reader_adopts_the_holders_verdicts_of_its_own_rules_and_the_newer_allow_list() {
    let rule = ParetoRule::default();
    let other = ParetoRule { min_context: 123, ..ParetoRule::default() };
    let t0 = Instant::now();
    // The holder polled both rules.
    let mut holder =
        PollerState::new(settings(vec![(KEY, rule.clone()), (KEY, other.clone())]), Contents::default(), t0);
    holder.polled(KEY, Ok(rows()), t0, UNIX);
    let published = holder.telemetry();
    // The reader has only the first rule, and polled once itself (e.g. while Redis was away).
    let mut reader = PollerState::new(settings(vec![(KEY, rule.clone())]), Contents::default(), t0);
    reader.polled(KEY, Ok(rows()), t0, UNIX - 600.0);
    let log = reader.adopt(published.models.clone(), None, "gw-a");
    assert_eq!(log, Vec::<String>::new(), "the same winner: nothing to log");
    let allow = AllowList { providers: vec!["baseten".into()], discovered_at: UNIX - 5.0 };
    reader.adopt(Vec::new(), Some(allow.clone()), "gw-a");
    let t = reader.telemetry();
    assert_eq!(t.model(KEY, rule.fingerprint()), published.model(KEY, rule.fingerprint()));
    assert!(t.model(KEY, other.fingerprint()).is_none(), "not a rule of this instance");
    assert_eq!(t.allow_list, Some(allow.clone()));
    // An older allow-list does not replace a newer one.
    let older = AllowList { providers: vec!["x".into()], discovered_at: UNIX - 100.0 };
    reader.adopt(Vec::new(), Some(older), "gw-a");
    assert_eq!(reader.telemetry().allow_list, Some(allow));
    // Its own rows are forgotten: an allow-list re-selects nothing here (the holder does).
    assert_eq!(reader.allow_list_learned(vec!["novita".into()], UNIX).len(), 1, "only the allow-list is logged");
    assert_eq!(winner(&reader, KEY, &rule).as_deref(), Some("baseten/fp8-fast"));
    // A new winner is logged with the instance that polled.
    let mut changed = published.model(KEY, rule.fingerprint()).unwrap().clone();
    changed.verdict.winner = Some("z-ai/fp8".into());
    let log = reader.adopt(vec![changed], None, "gw-a");
    assert_eq!(
        log,
        ["pointwork: openrouter-pareto: z-ai/glm-5.2: winner z-ai/fp8 (was baseten/fp8-fast), polled by instance gw-a"]
    );
}
