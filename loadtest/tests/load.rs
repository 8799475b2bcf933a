//! `pointwork-load` against the mock over real sockets: what it counts, how it classifies
//! failures, how close the open loop keeps to its rate, and the JSON it writes.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::Command as Process;
use std::time::Duration;

use pointwork_loadtest::load::{parse_args, run, Command, Report};
use pointwork_mock::{spawn, MockOptions, MockServer};
use serde_json::Value;

fn mock(options: MockOptions) -> MockServer {
    spawn(MockOptions { record: false, ..options }).expect("mock starts")
}

fn url(server: &MockServer) -> String {
    format!("{}/v1/chat/completions", server.url())
}

/// Runs the generator in-process with `args` (whitespace separated) after `--url URL`.
fn load(url: &str, args: &str) -> Report {
    let line = format!("--url {url} --no-progress {args}");
    match parse_args(line.split_whitespace().map(str::to_owned)) {
        Ok(Command::Run(options)) => run(&options).expect("the run starts"),
        Ok(Command::Help) => panic!("help"),
        Err(message) => panic!("bad options {line:?}: {message}"),
    }
}

/// The mock's `GET /mock/stats`.
fn mock_stats(addr: SocketAddr) -> Value {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.write_all(b"GET /mock/stats HTTP/1.1\r\nhost: mock\r\nconnection: close\r\n\r\n").expect("write");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("read");
    let (_, body) = answer.split_once("\r\n\r\n").expect("a head");
    serde_json::from_str(body).expect("JSON stats")
}

fn kind(report: &Report, name: &str) -> u64 {
    report.errors.by_kind[name]
}

#[test]
fn closed_loop_sends_exactly_the_requests_asked_for() {
    let server = mock(MockOptions::default());
    let report = load(&url(&server), "--requests 500 --concurrency 8 --threads 2");
    assert_eq!(report.mode, "closed");
    assert_eq!(report.requests.ok, 500);
    assert_eq!(report.requests.total, 500);
    assert_eq!(report.requests.errors, 0);
    assert_eq!(report.latency_us.as_ref().map(|p| p.count), Some(500));
    assert_eq!(report.connections.opened, 8, "keep-alive: one connection each, opened before the start");
    let stats = mock_stats(server.addr());
    assert_eq!(stats["requests"], 500);
    assert_eq!(stats["provider_connections"], 8);
}

#[test]
fn closed_loop_runs_for_the_duration() {
    let server = mock(MockOptions::default());
    let report = load(&url(&server), "--duration 400ms --concurrency 4 --threads 2");
    assert!(report.requests.ok > 100, "{report:?}");
    assert_eq!(report.requests.errors, 0);
    assert!((0.4..1.0).contains(&report.elapsed_s), "elapsed {}", report.elapsed_s);
    assert_eq!(mock_stats(server.addr())["requests"], report.requests.ok);
}

#[test]
fn open_loop_keeps_its_rate() {
    let server = mock(MockOptions::default());
    let report = load(&url(&server), "--rate 2000 --duration 1s --concurrency 16 --threads 2");
    assert_eq!(report.mode, "open");
    // Requests k = 0, 1, … with k / 2000 < 1 s: exactly 2000, whatever the machine.
    assert_eq!(report.requests.ok + report.requests.errors + report.requests.not_sent, 2000);
    assert_eq!(report.requests.ok, 2000, "{report:?}");
    assert!((1.0..1.5).contains(&report.elapsed_s), "elapsed {}", report.elapsed_s);
    let lag = report.send_lag_us.as_ref().expect("open loop records the send lag");
    assert_eq!(lag.count, 2000);
    // The median send is on time to well under a millisecond even on a busy machine.
    assert!(lag.p50 < 1000.0, "{lag:?}");
    assert_eq!(mock_stats(server.addr())["requests"], 2000);

    let report = load(&url(&server), "--rate 1000 --requests 300 --concurrency 4");
    assert_eq!(report.requests.ok, 300);
    assert!((0.29..0.8).contains(&report.elapsed_s), "300 requests at 1000/s: {}", report.elapsed_s);
}

#[test]
fn open_loop_latency_counts_from_the_intended_start() {
    // 2 connections, 20 ms per answer: at most 100 answers a second for 500 scheduled.
    let server = mock(MockOptions { latency: Duration::from_millis(20), ..MockOptions::default() });
    let report = load(&url(&server), "--rate 500 --duration 1s --concurrency 2 --threads 1");
    assert!(report.requests.ok >= 40 && report.requests.ok <= 110, "{report:?}");
    assert!(report.requests.not_sent > 300, "the rest could not be sent: {report:?}");
    assert_eq!(
        report.requests.ok + report.requests.not_sent + report.requests.errors + report.requests.unfinished,
        500
    );
    let latency = report.latency_us.as_ref().expect("latency");
    // Queued behind busy connections, late requests wait far longer than the 20 ms answer.
    assert!(latency.max > 500_000.0, "coordinated omission would hide the queue: {latency:?}");
    assert!(latency.p50 > 100_000.0, "{latency:?}");
}

#[test]
fn error_statuses_count_by_status() {
    let server = mock(MockOptions { fault: Some("status:500".parse().unwrap()), ..MockOptions::default() });
    let report = load(&url(&server), "--requests 50 --concurrency 4");
    assert_eq!(report.requests.ok, 0);
    assert_eq!(report.requests.errors, 50);
    assert_eq!(report.errors.by_status.get("500"), Some(&50));
    assert!(report.latency_us.is_none(), "failures have no latency");

    let server =
        mock(MockOptions { fault: Some("status:429".parse().unwrap()), fault_ratio: 0.5, ..MockOptions::default() });
    let report = load(&url(&server), "--requests 100 --concurrency 1");
    assert_eq!(report.requests.ok, 50);
    assert_eq!(report.errors.by_status.get("429"), Some(&50));
    assert_eq!(report.connections.opened, 1, "error statuses keep the connection");
}

#[test]
fn a_stream_cut_short_is_a_truncated_stream() {
    let server = mock(MockOptions { fault: Some("abort-after:2".parse().unwrap()), ..MockOptions::default() });
    let report = load(&url(&server), "--requests 30 --concurrency 3 --stream");
    assert_eq!(report.requests.ok, 0);
    assert_eq!(kind(&report, "truncated_stream"), 30);
    assert_eq!(report.events, Some(0), "events of failed streams are not counted");
    // A cut non-streaming answer is a close before the whole response.
    let report = load(&url(&server), "--requests 10 --concurrency 2");
    assert_eq!(kind(&report, "closed"), 10);
}

#[test]
fn resets_timeouts_and_refused_connects_count_by_kind() {
    let server = mock(MockOptions { fault: Some("reset".parse().unwrap()), ..MockOptions::default() });
    let report = load(&url(&server), "--requests 40 --concurrency 4");
    assert_eq!(kind(&report, "reset"), 40, "{report:?}");
    assert_eq!(report.requests.ok, 0);
    drop(server);

    let server = mock(MockOptions { fault: Some("hang".parse().unwrap()), ..MockOptions::default() });
    let report = load(&url(&server), "--requests 4 --concurrency 2 --timeout 200ms");
    assert_eq!(kind(&report, "timeout"), 4, "{report:?}");
    drop(server);

    // A port nobody listens on: the mock's, once it is gone.
    let server = mock(MockOptions::default());
    let gone = url(&server);
    drop(server);
    let report = load(&gone, "--requests 5 --concurrency 1");
    assert_eq!(kind(&report, "connect"), 5, "{report:?}");
}

#[test]
fn streams_count_their_events() {
    let server = mock(MockOptions { chunks: 5, ..MockOptions::default() });
    let report = load(&url(&server), "--requests 40 --concurrency 4 --stream");
    assert_eq!(report.requests.ok, 40, "{report:?}");
    assert_eq!(report.events, Some(200));
    assert_eq!(report.ttfb_us.as_ref().map(|p| p.count), Some(40));
    assert_eq!(report.inter_event_us.as_ref().map(|p| p.count), Some(160), "4 gaps per 5-event stream");

    let server = mock(MockOptions { chunks: 3, chunk_delay: Duration::from_millis(5), ..MockOptions::default() });
    let report = load(&url(&server), "--requests 8 --concurrency 2 --stream");
    assert_eq!(report.events, Some(24));
    let gaps = report.inter_event_us.as_ref().expect("gaps");
    assert!(gaps.p50 >= 4_000.0, "events 5 ms apart: {gaps:?}");
    let ttfb = report.ttfb_us.as_ref().expect("ttfb");
    let latency = report.latency_us.as_ref().expect("latency");
    assert!(ttfb.p50 < latency.p50, "{ttfb:?} {latency:?}");
}

#[test]
fn several_urls_share_the_connections_round_robin() {
    let (a, b, c) = (mock(MockOptions::default()), mock(MockOptions::default()), mock(MockOptions::default()));
    let args = format!("--url {} --url {} --requests 600 --concurrency 7 --threads 2", url(&b), url(&c));
    let report = load(&url(&a), &args);
    assert_eq!(report.requests.ok, 600, "{report:?}");
    assert_eq!(report.connections.opened, 7);
    let targets = report.targets.as_ref().expect("one report per target");
    // Connections 0, 3, 6 on a; 1, 4 on b; 2, 5 on c.
    let connections: Vec<_> = targets.iter().map(|t| t.connections).collect();
    assert_eq!(connections, [3, 2, 2]);
    for (target, server) in targets.iter().zip([&a, &b, &c]) {
        assert_eq!(target.url, url(server));
        let stats = mock_stats(server.addr());
        assert_eq!(stats["provider_connections"], target.connections as u64, "{}", target.url);
        assert_eq!(stats["requests"], target.requests.ok, "{}", target.url);
        assert!(target.requests.ok > 0 && target.requests.errors == 0, "{target:?}");
        assert_eq!(target.latency_us.as_ref().map(|p| p.count), Some(target.requests.ok));
    }
    assert_eq!(targets.iter().map(|t| t.requests.ok).sum::<u64>(), 600);
    let total: f64 = targets.iter().map(|t| t.throughput_rps).sum();
    assert!((total - report.throughput_rps).abs() < 1.0, "{total} vs {}", report.throughput_rps);
    assert_eq!(report.url, format!("{} {} {}", url(&a), url(&b), url(&c)));
    let text = report.to_text();
    assert!(text.contains("round-robin over 3 URLs"), "{text}");
    assert!(text.contains(&format!("target 2    {} (2 connections)", url(&b))), "{text}");

    // One URL: no per-target part.
    assert!(load(&url(&a), "--requests 10 --concurrency 2").targets.is_none());
}

#[test]
fn idle_connections_are_held_and_counted() {
    let server = mock(MockOptions::default());
    let report = load(&url(&server), "--idle-connections 300 --duration 300ms");
    assert_eq!(report.mode, "idle");
    let idle = report.idle.as_ref().expect("idle report");
    assert_eq!((idle.requested, idle.ok, idle.still_open), (300, 300, 300), "{report:?}");
    assert_eq!(mock_stats(server.addr())["provider_connections"], 300);
}

#[test]
fn the_binary_writes_the_report_as_json() {
    let server = mock(MockOptions { chunks: 2, ..MockOptions::default() });
    let dir = std::env::temp_dir().join(format!("pointwork-load-json-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("report.json");
    let status = Process::new(env!("CARGO_BIN_EXE_pointwork-load"))
        .args(["--url", &url(&server), "--requests", "20", "-c", "2", "--stream", "--json"])
        .arg(&out)
        .output()
        .expect("pointwork-load runs");
    assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stderr));
    let text = String::from_utf8(status.stdout).unwrap();
    assert!(text.contains("20 ok, 0 errors"), "{text}");
    let json: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(json["mode"], "closed");
    assert_eq!(json["requests"]["ok"], 20);
    assert_eq!(json["requests"]["errors"], 0);
    assert_eq!(json["events"], 40);
    assert!(json["throughput_rps"].as_f64().is_some_and(|rps| rps > 0.0));
    for histogram in ["latency_us", "ttfb_us", "inter_event_us"] {
        for field in ["count", "min", "mean", "p50", "p90", "p99", "p99_9", "max"] {
            assert!(json[histogram][field].is_number(), "{histogram}.{field}: {json}");
        }
    }
    assert!(json["send_lag_us"].is_null(), "closed loop");
    assert!(json["targets"].is_null(), "one URL");
    for kind in ["connect", "timeout", "reset", "closed", "bad_response", "truncated_stream"] {
        assert_eq!(json["errors"]["by_kind"][kind], 0, "{kind}");
    }
    assert!(json["errors"]["by_status"].as_object().is_some_and(|map| map.is_empty()));

    // A failed run exits 1.
    let status = Process::new(env!("CARGO_BIN_EXE_pointwork-load"))
        .args(["--url", &url(&server), "--requests", "3", "-c", "1", "--header", "x-mock-fault:status:503"])
        .output()
        .expect("pointwork-load runs");
    assert_eq!(status.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&status.stdout).contains("status 503: 3"));
}

#[test]
fn keys_go_in_turn_over_every_connection_and_thread() {
    let server = spawn(MockOptions::default()).expect("mock starts");
    let file = std::env::temp_dir().join(format!("pointwork-load-keys-test-{}", std::process::id()));
    std::fs::write(&file, "sk-a\nsk-b\n\nsk-c\nsk-d\nsk-e\n").expect("keys file");
    let report = load(&url(&server), &format!("--requests 20 --concurrency 4 --threads 2 --keys {}", file.display()));
    std::fs::remove_file(&file).expect("remove the keys file");
    assert_eq!(report.requests.ok, 20);
    // The mock's record of what it was sent: each of the 5 keys on 4 of the 20 requests.
    let mut stream = TcpStream::connect(server.addr()).expect("connect");
    stream.write_all(b"GET /mock/requests HTTP/1.1\r\nhost: mock\r\nconnection: close\r\n\r\n").expect("write");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("read");
    let (_, body) = answer.split_once("\r\n\r\n").expect("a head");
    let recorded: Value = serde_json::from_str(body).expect("JSON requests");
    let mut keys: Vec<String> = recorded
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|request| {
            let headers = request["headers"].as_array()?;
            let auth = headers
                .iter()
                .find(|pair| pair[0].as_str().is_some_and(|name| name.eq_ignore_ascii_case("authorization")))?;
            Some(auth[1].as_str()?.to_owned())
        })
        .collect();
    keys.sort();
    let expected: Vec<String> =
        ["a", "b", "c", "d", "e"].iter().flat_map(|key| std::iter::repeat_n(format!("Bearer sk-{key}"), 4)).collect();
    assert_eq!(keys, expected);
}
