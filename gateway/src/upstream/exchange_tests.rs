//! Tests of `exchange.rs`: relaying and collecting bodies.

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
    assert_eq!(chunked.relay(b"3\r\nabc\r\n", &mut out, &mut scratch, &mut tail, &mut None), Ok((8, 3)));
    assert_eq!(out, b"3\r\nabc\r\n");
    let mut out = Vec::new();
    let mut until_close = BodyProgress::new(BodyFraming::UntilClose);
    assert_eq!(until_close.relay(b"data: x\n\n", &mut out, &mut scratch, &mut tail, &mut None), Ok((9, 9)));
    assert_eq!(out, b"9\r\ndata: x\n\n\r\n");
    let mut out = Vec::new();
    let mut length = BodyProgress::new(BodyFraming::Length(2));
    assert_eq!(length.relay(b"abc", &mut out, &mut scratch, &mut tail, &mut None), Ok((2, 2)));
    assert_eq!(out, b"ab");
}
