//! Tests of `exchange.rs`: relaying and collecting bodies.

use super::head::{head_has_ended, starts_final_head};
use super::*;

#[test]
fn collect_keeps_the_body_without_framing() {
    let mut out = Vec::new();
    let mut until_close = BodyProgress::new(BodyFraming::UntilClose);
    assert_eq!(until_close.collect(b"{\"error\":1}", &mut out), Ok(11));
    assert_eq!(out, b"{\"error\":1}");

    let mut out = Vec::new();
    let mut chunked = BodyProgress::new(BodyFraming::Chunked);
    assert_eq!(chunked.collect(b"3\r\nabc\r\n0\r\n\r\nXX", &mut out), Ok(13));
    assert!(chunked.is_done());
    assert_eq!(out, b"abc");

    let mut out = Vec::new();
    let mut length = BodyProgress::new(BodyFraming::Length(4));
    assert_eq!(length.collect(b"abcdef", &mut out), Ok(4));
    assert!(length.is_done());
    assert_eq!(out, b"abcd");
}

#[test]
fn relay_rechunks_what_the_client_gets_chunked() {
    let (mut out, mut scratch, mut tail) = (Vec::new(), Vec::new(), UsageTail::default());
    let mut chunked = BodyProgress::new(BodyFraming::Chunked);
    assert_eq!(chunked.relay(b"3\r\nabc\r\n", &mut out, &mut scratch, &mut tail, None, &mut None), Ok((8, 3)));
    assert_eq!(out, b"3\r\nabc\r\n");
    let mut out = Vec::new();
    let mut until_close = BodyProgress::new(BodyFraming::UntilClose);
    assert_eq!(until_close.relay(b"data: x\n\n", &mut out, &mut scratch, &mut tail, None, &mut None), Ok((9, 9)));
    assert_eq!(out, b"9\r\ndata: x\n\n\r\n");
    let mut out = Vec::new();
    let mut length = BodyProgress::new(BodyFraming::Length(2));
    assert_eq!(length.relay(b"abc", &mut out, &mut scratch, &mut tail, None, &mut None), Ok((2, 2)));
    assert_eq!(out, b"ab");
}

#[test]
fn a_head_has_ended_at_its_empty_line_and_final_heads_are_told_apart() {
    assert!(!head_has_ended(b""));
    assert!(!head_has_ended(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n"));
    assert!(!head_has_ended(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r"));
    assert!(head_has_ended(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}"));
    assert!(head_has_ended(b"HTTP/1.1 200 OK\ncontent-length: 2\n\n{}"));
    assert!(!starts_final_head(b"HTTP/1.1 100 Continue\r\n\r\n"));
    assert!(!starts_final_head(b"HTTP/1.1 103 Early Hints\r\n\r\n"));
    assert!(starts_final_head(b"HTTP/1.1 101 Switching Protocols\r\n\r\n"));
    assert!(starts_final_head(b"HTTP/1.1 200 OK\r\n\r\n"));
    assert!(starts_final_head(b"HTTP/1.0 404 Not Found\r\n\r\n"));
    // Not a status line: parsed, to fail as garbage.
    assert!(!starts_final_head(b"garbage\r\n\r\n"));
}

#[test]
fn hop_by_hop_and_stateful_headers_are_skipped_in_any_case() {
    let skipped = [
        "connection",
        "Keep-Alive",
        "TRANSFER-ENCODING",
        "content-length",
        "te",
        "Trailer",
        "upgrade",
        "proxy-connection",
        "Set-Cookie",
        "alt-svc",
    ];
    for name in skipped {
        assert!(is_skipped_header(name), "{name}");
    }
    for name in ["content-type", "x-request-id", "tea", "trailers", "connections", "openai-processing-ms", ""] {
        assert!(!is_skipped_header(name), "{name}");
    }
}

#[test]
fn the_200_status_line_written_first_is_the_one_status_line_writes() {
    let mut line = Vec::new();
    write::status_line(&mut line, 200);
    assert_eq!(line, STATUS_LINE_200);
}
