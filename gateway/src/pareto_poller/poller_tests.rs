//! The whole poller against a tiny OpenRouter on 127.0.0.1 serving the repository's fixtures.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use pointwork_core::pareto::{select, CooldownSettings, ParetoRule, ParetoSettings, TelemetrySettings};

use super::test_support::{fixture, Framing, Reply, Server, TempDir, ENDPOINTS, STATS};
use super::*;

const KEY: &str = "z-ai/glm-5.2";
const MODELS: &str = r#"{"data":[{"id":"z-ai/glm-5.2","canonical_slug":"z-ai/glm-5.2-20260101"}]}"#;
const STATS_TARGET: &str = "/api/frontend/v1/stats/endpoint?permaslug=z-ai%2Fglm-5.2-20260101&variant=standard";
const ENDPOINTS_TARGET: &str = "/api/v1/models/z-ai/glm-5.2/endpoints";
const WAIT: Duration = Duration::from_secs(10);

/// OpenRouter's three APIs from the fixtures (stats chunked); every answer a 503 while `down`.
fn openrouter(down: Arc<AtomicBool>) -> Server {
    let (stats, endpoints) = (fixture(STATS), fixture(ENDPOINTS));
    Server::start(move |target| {
        if down.load(Ordering::SeqCst) {
            return Reply::status(503);
        }
        match target {
            "/api/v1/models" => Reply::ok(MODELS),
            ENDPOINTS_TARGET => Reply::ok(endpoints.clone()),
            STATS_TARGET => Reply { status: 200, body: stats.clone(), framing: Framing::Chunked },
            _ => Reply::status(404),
        }
    })
}

fn settings(base_url: &str, cache_dir: Option<PathBuf>, rules: Vec<ParetoRule>) -> Arc<ParetoSettings> {
    Arc::new(ParetoSettings {
        rules: rules.into_iter().map(|r| (KEY.to_string(), r)).collect(),
        cooldown: CooldownSettings::default(),
        telemetry: TelemetrySettings {
            base_url: base_url.to_string(),
            poll_interval: Duration::from_secs(3600),
            timeout: Duration::from_secs(5),
            cache_dir,
            ..TelemetrySettings::default()
        },
        routing_log: "/dev/null".into(),
        error_log: "/dev/null".into(),
    })
}

/// The winner core's `select` finds on the fixtures (`core/tests/pareto_select.rs` asserts it).
fn expected_winner(rule: &ParetoRule) -> String {
    let stats = parse::stats(&fixture(STATS)).unwrap().rows;
    let uptime = parse::endpoints(&fixture(ENDPOINTS)).unwrap().rows;
    select(&stats, &uptime, rule, None).winner.unwrap()
}

fn winner_of(t: &ParetoTelemetry, rule: &ParetoRule) -> Option<String> {
    t.model(KEY, rule.fingerprint()).and_then(|m| m.verdict.winner.clone())
}

#[test]
fn the_first_poll_at_start_publishes_the_winner_and_a_503_keeps_it_stale() {
    let down = Arc::new(AtomicBool::new(false));
    let server = openrouter(down.clone());
    let rule = ParetoRule::default();
    let expected = expected_winner(&rule);
    assert_eq!(expected, "baseten/fp8-fast");
    // An hour's interval: only the poll at start can answer within the wait.
    let poller = start(settings(&server.base_url, None, vec![rule.clone()]));
    let t = poller.wait_for(WAIT, |t| t.polls == 1).expect("the first poll at start");
    assert_eq!(winner_of(&t, &rule), Some(expected.clone()));
    let m = t.model(KEY, rule.fingerprint()).unwrap();
    assert!(!m.stale && m.polled_at > 0.0);
    assert_eq!(t.poll_failures, 0);
    let mut requests = server.requests();
    requests.sort();
    assert_eq!(requests, [STATS_TARGET, "/api/v1/models", ENDPOINTS_TARGET]);

    down.store(true, Ordering::SeqCst);
    poller.poll_now();
    let t = poller.wait_for(WAIT, |t| t.poll_failures >= 1).expect("a failed poll");
    let m = t.model(KEY, rule.fingerprint()).unwrap();
    assert!(m.stale, "marked stale");
    assert_eq!(m.verdict.winner, Some(expected.clone()), "the verdict is kept");

    // The retry a second later finds the server back.
    down.store(false, Ordering::SeqCst);
    let t = poller.wait_for(WAIT, |t| t.model(KEY, rule.fingerprint()).is_some_and(|m| !m.stale));
    let t = t.expect("recovered by the backoff's retry");
    assert_eq!(winner_of(&t, &rule), Some(expected));
    poller.stop();
}

#[test]
fn an_allow_list_reselects_without_a_fetch_and_a_reload_keeps_by_fingerprint() {
    let server = openrouter(Arc::new(AtomicBool::new(false)));
    let rule = ParetoRule::default();
    let poller = start(settings(&server.base_url, None, vec![rule.clone()]));
    poller.wait_for(WAIT, |t| t.polls == 1).expect("the first poll");
    let fetched = server.requests().len();

    poller.allow_list_learned(vec!["novita".into(), "z-ai".into()]);
    let t = poller.wait_for(WAIT, |t| t.allow_list.is_some()).expect("the allow-list published");
    assert_eq!(winner_of(&t, &rule).as_deref(), Some("novita/fp8"));
    assert_eq!((t.polls, server.requests().len()), (1, fetched), "nothing fetched");

    // A second rule for the model: polled at once, the first kept as it was.
    let wide = ParetoRule { precision: vec!["fp8".into(), "fp4".into()], min_context: 200_000, ..rule.clone() };
    poller.reconfigure(settings(&server.base_url, None, vec![rule.clone(), wide.clone()]));
    let t = poller.wait_for(WAIT, |t| t.model(KEY, wide.fingerprint()).is_some()).expect("the new rule polled");
    assert_eq!(t.polls, 2, "one fetch for the new rule");
    assert_eq!(winner_of(&t, &rule).as_deref(), Some("novita/fp8"));
    assert_eq!(winner_of(&t, &wide).as_deref(), Some("novita/fp8"), "the allow-list filters it too");
    poller.stop();
}

#[test]
fn the_cache_routes_a_restart_before_its_first_poll_answers() {
    let dir = TempDir::new("poller-cache");
    let down = Arc::new(AtomicBool::new(false));
    let server = openrouter(down.clone());
    let rule = ParetoRule::default();
    let first = start(settings(&server.base_url, Some(dir.path().to_path_buf()), vec![rule.clone()]));
    first.wait_for(WAIT, |t| t.polls == 1).expect("the first poll");
    first.allow_list_learned(vec!["baseten".into()]);
    first.wait_for(WAIT, |t| t.allow_list.is_some()).expect("the allow-list");
    first.stop();
    // Written before each publication.
    let text = std::fs::read_to_string(dir.path().join(CACHE_FILE_NAME)).unwrap();
    assert!(text.contains("\"baseten\""), "{text}");

    down.store(true, Ordering::SeqCst);
    let second = start(settings(&server.base_url, Some(dir.path().to_path_buf()), vec![rule.clone()]));
    let t = second.wait_for(WAIT, |t| !t.models.is_empty()).expect("the cached verdict");
    let m = t.model(KEY, rule.fingerprint()).unwrap();
    assert!(m.stale, "stale until a poll succeeds");
    assert_eq!(m.verdict.winner.as_deref(), Some("baseten/fp8-fast"));
    assert_eq!(t.allow_list.as_ref().map(|a| a.providers.clone()), Some(vec!["baseten".to_string()]));
    let t = second.wait_for(WAIT, |t| t.poll_failures >= 1).expect("the failed poll");
    assert_eq!(winner_of(&t, &rule).as_deref(), Some("baseten/fp8-fast"), "the server is down: the cache serves");
    second.stop();
}

#[test]
fn the_hub_side_starts_reconfigures_and_stops_the_poller() {
    let server = openrouter(Arc::new(AtomicBool::new(false)));
    let shared = ParetoShared::default();
    assert!(shared.poller().is_none());
    shared.allow_list_learned(vec!["novita".into()]); // the walk is off: nothing happens
    let rule = ParetoRule::default();
    shared.configure(Some(settings(&server.base_url, None, vec![rule.clone()])));
    let poller = shared.poller().expect("started");
    poller.wait_for(WAIT, |t| t.polls == 1).expect("the first poll");
    assert_eq!(winner_of(&shared.telemetry.load(), &rule).as_deref(), Some("baseten/fp8-fast"));
    shared.allow_list_learned(vec!["novita".into()]);
    poller.wait_for(WAIT, |t| t.allow_list.is_some()).expect("the note reached the poller");
    shared.configure(None);
    assert!(shared.poller().is_none());
    assert_eq!(**shared.telemetry.load(), ParetoTelemetry::default());
}
