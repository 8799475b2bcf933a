//! Fault injection: by option, by ratio, per request header, and the per-request overrides.

use std::io::ErrorKind;
use std::time::{Duration, Instant};

use pointwork_mock::{Fault, MockOptions};

use crate::client::{Broken, Client};
use crate::{chat_body, start, start_named};

fn with_fault(fault: Fault) -> MockOptions {
    MockOptions { name: "faulty".into(), fault: Some(fault), ..MockOptions::default() }
}

#[test]
fn status_fault_answers_with_an_openai_error() {
    let server = start(with_fault(Fault::Status { status: 503, retry_after: None }));
    let mut client = Client::connect(server.addr());
    let response = client.post_json("/v1/chat/completions", &chat_body("m", false));
    assert_eq!(response.status, 503);
    assert_eq!(response.header("x-mock-name"), Some("faulty"));
    assert_eq!(response.header("retry-after"), None);
    let error = &response.json()["error"];
    assert_eq!(error["message"], "mock faulty injected status 503");
    assert_eq!(error["type"], "server_error");
    assert!(error["param"].is_null());
    // The connection stays usable after an injected status, and /mock/* is never faulted.
    assert_eq!(client.get("/mock/stats").status, 200);
}

#[test]
fn header_fault_with_retry_after_is_a_rate_limit() {
    let server = start_named("rl");
    let mut client = Client::connect(server.addr());
    let response = client.request(
        "POST",
        "/v1/chat/completions",
        &[("x-mock-fault", "status:429:retry-after=3")],
        chat_body("m", false).to_string().as_bytes(),
    );
    assert_eq!(response.status, 429);
    assert_eq!(response.header("retry-after"), Some("3"));
    let error = &response.json()["error"];
    assert_eq!(error["type"], "rate_limit_error");
    assert_eq!(error["code"], "rate_limit_exceeded");

    let unauthorized = client.request("GET", "/v1/models", &[("x-mock-fault", "status:401")], b"");
    assert_eq!(unauthorized.status, 401);
    assert_eq!(unauthorized.json()["error"]["code"], "invalid_api_key");

    assert_eq!(client.get("/v1/models").status, 200, "no fault without the header");
}

#[test]
fn header_fault_overrides_the_option() {
    let server = start(with_fault(Fault::Status { status: 500, retry_after: None }));
    let mut client = Client::connect(server.addr());
    let response = client.request("GET", "/v1/models", &[("x-mock-fault", "status:418")], b"");
    assert_eq!(response.status, 418);
    assert_eq!(client.get("/v1/models").status, 500);
}

#[test]
fn reset_fault_resets_the_connection_without_a_response() {
    let server = start_named("rst");
    let mut client = Client::connect(server.addr());
    client.send(
        "POST",
        "/v1/chat/completions",
        &[("x-mock-fault", "reset")],
        chat_body("m", false).to_string().as_bytes(),
    );
    let (received, ended) = client.read_to_end();
    assert!(received.is_empty(), "no response bytes before the reset");
    let error = ended.expect_err("a reset, not an orderly close");
    assert_eq!(error.kind(), ErrorKind::ConnectionReset);
}

#[test]
fn hang_fault_never_answers_and_does_not_block_others() {
    let server = start(with_fault(Fault::Hang));
    let mut hanging = Client::connect(server.addr());
    hanging.set_read_timeout(Duration::from_millis(300));
    hanging.send("POST", "/v1/chat/completions", &[], chat_body("m", false).to_string().as_bytes());

    // Another connection is served meanwhile (/mock/* is not faulted).
    let mut other = Client::connect(server.addr());
    assert_eq!(other.get("/mock/stats").status, 200);

    let (received, ended) = hanging.read_to_end();
    assert!(received.is_empty());
    let error = ended.expect_err("still open: the read times out");
    assert!(matches!(error.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut), "{error:?}");

    // Stopping the server ends the hanging connection too.
    hanging.set_read_timeout(Duration::from_secs(5));
    server.shutdown();
    let (_, ended) = hanging.read_to_end();
    assert!(ended.is_ok(), "closed by shutdown: {ended:?}");
}

#[test]
fn abort_after_cuts_a_stream_after_k_events() {
    let server = start(with_fault(Fault::AbortAfter { chunks: 3 }));
    let mut client = Client::connect(server.addr());
    client.send("POST", "/v1/chat/completions", &[], chat_body("m", true).to_string().as_bytes());
    let Err(Broken::Closed(partial)) = client.try_read_response() else {
        panic!("the stream must end without its last chunk");
    };
    assert_eq!(partial.status, 200);
    let events = partial.events();
    assert_eq!(events.len(), 3, "{events:?}");
    assert!(!events.iter().any(|event| event == "[DONE]"));
}

#[test]
fn abort_after_cuts_a_whole_body_in_half() {
    let server = start_named("half");
    let mut client = Client::connect(server.addr());
    client.send(
        "POST",
        "/v1/chat/completions",
        &[("x-mock-fault", "abort-after:1")],
        chat_body("m", false).to_string().as_bytes(),
    );
    let Err(Broken::Closed(partial)) = client.try_read_response() else {
        panic!("the body must be cut short");
    };
    let announced: usize =
        partial.header("content-length").and_then(|length| length.parse().ok()).expect("content-length");
    assert_eq!(partial.body.len(), announced / 2);
}

#[test]
fn fault_ratio_picks_the_same_requests_every_time() {
    let server =
        start(MockOptions { fault_ratio: 0.5, ..with_fault(Fault::Status { status: 503, retry_after: None }) });
    let mut client = Client::connect(server.addr());
    let statuses: Vec<u16> = (0..6).map(|_| client.get("/v1/models").status).collect();
    assert_eq!(statuses, [200, 503, 200, 503, 200, 503]);

    let quarter =
        start(MockOptions { fault_ratio: 0.25, ..with_fault(Fault::Status { status: 500, retry_after: None }) });
    let mut client = Client::connect(quarter.addr());
    let statuses: Vec<u16> = (0..8).map(|_| client.get("/health").status).collect();
    assert_eq!(statuses, [200, 200, 200, 500, 200, 200, 200, 500]);
}

#[test]
fn latency_header_delays_the_head() {
    let server = start_named("slow");
    let mut client = Client::connect(server.addr());
    let started = Instant::now();
    let response = client.request("GET", "/v1/models", &[("x-mock-latency-ms", "250")], b"");
    assert_eq!(response.status, 200);
    assert!(started.elapsed() >= Duration::from_millis(250));

    let started = Instant::now();
    client.get("/v1/models");
    assert!(started.elapsed() < Duration::from_millis(200), "no latency by default");
}

#[test]
fn latency_option_applies_to_every_provider_request() {
    let server = start(MockOptions { latency: Duration::from_millis(200), ..MockOptions::default() });
    let mut client = Client::connect(server.addr());
    let started = Instant::now();
    client.get("/health");
    assert!(started.elapsed() >= Duration::from_millis(200));
}

#[test]
fn chunk_headers_override_count_and_delay() {
    let server = start_named("chunks");
    let mut client = Client::connect(server.addr());
    let response = client.request(
        "POST",
        "/v1/chat/completions",
        &[("x-mock-chunks", "3"), ("x-mock-chunk-delay-ms", "100")],
        chat_body("m", true).to_string().as_bytes(),
    );
    let events = response.events();
    assert_eq!(events.len(), 3 + 1, "{events:?}");
    let first = response.chunks[0].0;
    let third = response.chunks[2].0;
    // Two delays of 100 ms lie between them; allow for the client reading the first late.
    assert!(third.duration_since(first) >= Duration::from_millis(100));
}

#[test]
fn bad_override_header_is_a_400() {
    let server = start_named("bad");
    let mut client = Client::connect(server.addr());
    let response = client.request("GET", "/v1/models", &[("x-mock-fault", "explode")], b"");
    assert_eq!(response.status, 400);
    let message = response.json()["error"]["message"].to_string();
    assert!(message.contains("x-mock-fault"), "{message}");
}
