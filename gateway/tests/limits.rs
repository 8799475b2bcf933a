//! The client-side limits over real sockets: the request target's length (414), the time a head
//! may take however it is trickled (408), and the connections a shard keeps open.

mod common;

use std::time::{Duration, Instant};

use common::{config, deployment, Gateway, Mock};

fn gateway_with(pointwork: &str) -> (Gateway, Mock) {
    let a = Mock::start("a", &[]);
    let yaml =
        config(&[deployment("gpt", "dep-a", "openai/gpt-4o-mini", &a, "")], &format!("pointwork: {pointwork}\n"));
    (Gateway::start(&yaml), a)
}

#[test]
fn a_request_target_past_the_limit_gets_414_and_the_gateway_keeps_serving() {
    let (gateway, _a) = gateway_with("{limits: {max_uri_bytes: 100}}");
    let mut client = gateway.client();
    client.send_raw(format!("GET /v1/models?{} HTTP/1.1\r\nhost: x\r\n\r\n", "q".repeat(200)).as_bytes());
    let r = client.read_response();
    assert_eq!(r.status, 414, "{}", r.text());
    assert!(r.text().contains("request target too long"), "{}", r.text());
    assert!(client.is_closed_by_peer());
    assert_eq!(gateway.get("/v1/models").status, 200);
}

#[test]
fn a_head_trickled_byte_by_byte_gets_408_within_request_head() {
    let (gateway, _a) = gateway_with("{timeouts: {request_head: 1s}}");
    let mut client = gateway.client();
    client.set_read_timeout(Duration::from_secs(10));
    let started = Instant::now();
    let head = b"GET /v1/models HTTP/1.1\r\nhost: x\r\nx-slow: ";
    // One byte every 100 ms: each read comes well within any per-read timeout; the head as a
    // whole does not.
    let mut sent = 0;
    for byte in head.iter().chain(b"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa".iter()) {
        if std::io::Write::write_all(client.stream_mut(), &[*byte]).is_err() {
            break; // the gateway answered and closed
        }
        sent += 1;
        std::thread::sleep(Duration::from_millis(100));
        if started.elapsed() > Duration::from_secs(3) {
            break;
        }
    }
    let r = client.read_response();
    assert_eq!(r.status, 408, "{}", r.text());
    let took = started.elapsed();
    assert!(took < Duration::from_secs(3), "the 1 s head deadline took {took:?} ({sent} bytes sent)");
    assert_eq!(gateway.get("/v1/models").status, 200);
}

#[test]
fn connections_past_the_shards_cap_are_closed_while_the_open_ones_are_served() {
    let (gateway, _a) = gateway_with("{limits: {max_connections_per_shard: 2}}");
    let mut first = gateway.client();
    let mut second = gateway.client();
    assert_eq!(first.request("GET", "/v1/models", &[], b"").status, 200);
    assert_eq!(second.request("GET", "/v1/models", &[], b"").status, 200);
    // A third connection: accepted by the kernel, closed at once by the shard.
    let mut third = gateway.client();
    third.set_read_timeout(Duration::from_secs(10));
    assert!(third.is_closed_by_peer(), "a connection past the cap was kept");
    // The first two still work, and once one closes a new one is served.
    assert_eq!(first.request("GET", "/v1/models", &[], b"").status, 200);
    drop(second);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let mut fresh = gateway.client();
        fresh.set_read_timeout(Duration::from_secs(10));
        fresh.send("GET", "/v1/models", &[], b"");
        match fresh.read_head() {
            Ok(head) => {
                assert_eq!(head.status, 200);
                break;
            }
            // The shard may not have seen the close yet: try again.
            Err(_) => assert!(Instant::now() < deadline, "no room freed after a close"),
        }
    }
    assert_eq!(first.request("GET", "/v1/models", &[], b"").status, 200);
}
