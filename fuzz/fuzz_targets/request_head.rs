//! The request head parser (`http1/src/request.rs`) under fuzzer-chosen limits.
//!
//! Input: 5 bytes of limits (max header bytes, max headers, max URI bytes), then the bytes read
//! from the client. Besides "never panics", an accepted head must agree with its own bytes:
//! CRLF line ends only, the limits kept, the framing and the header ranges matching the header
//! lines, and the same answer whatever follows the head or however it arrived.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pointwork_http1::request::{parse_request_head, HeadLimits, Method, RequestHead, TAGS_HEADER};
use pointwork_http1::{has_token, parse_content_length, BodyFraming};

fuzz_target!(|data: &[u8]| {
    let Some((limits, buf)) = split_limits(data) else { return };
    let Ok(Some(head)) = parse_request_head(buf, limits) else { return };
    check_head(buf, limits, &head);

    // The bytes after the head (the body, a pipelined request) do not change it.
    let alone = parse_request_head(&buf[..head.head_len], limits);
    assert_eq!(alone, Ok(Some(head.clone())), "the head alone parses differently");
    // Nor does arriving in pieces: every strict prefix of an accepted head asks for more bytes.
    for cut in [head.head_len - 1, head.head_len / 2, 1.min(head.head_len - 1)] {
        let partial = parse_request_head(&buf[..cut], limits);
        assert_eq!(partial, Ok(None), "the first {cut} bytes of an accepted head are not a partial head");
    }
});

/// The limits come first: header bytes up to 64 KiB, 0–199 header slots (both the stack and
/// the heap path), a URI limit up to 64 KiB.
fn split_limits(data: &[u8]) -> Option<(HeadLimits, &[u8])> {
    let (l, buf) = data.split_first_chunk::<5>()?;
    let limits = HeadLimits {
        max_header_bytes: usize::from(u16::from_le_bytes([l[0], l[1]])),
        max_headers: usize::from(l[2]) % 200,
        max_uri_bytes: usize::from(u16::from_le_bytes([l[3], l[4]])),
    };
    Some((limits, buf))
}

fn check_head(buf: &[u8], limits: HeadLimits, head: &RequestHead) {
    assert!(head.head_len <= buf.len() && head.head_len <= limits.max_header_bytes);
    let raw = &buf[..head.head_len];
    assert!(raw.ends_with(b"\r\n\r\n"), "a head ends with CRLF CRLF");
    for (i, &b) in raw.iter().enumerate() {
        assert!(b != b'\n' || (i > 0 && raw[i - 1] == b'\r'), "bare LF at {i} accepted");
    }
    assert!(head.path.len() <= limits.max_uri_bytes);
    assert!(head.minor_version <= 1);

    // httparse skips empty lines before the request line (RFC 9112 §2.2 allows that).
    let mut lines = raw[..raw.len() - 4].split(|&b| b == b'\n').map(|l| l.strip_suffix(b"\r").unwrap_or(l));
    let request_line = lines.find(|l| !l.is_empty()).expect("a request line");
    let method = request_line.split(|&b| b == b' ').next().unwrap_or_default();
    let expected_method = match method {
        b"GET" => Method::Get,
        b"HEAD" => Method::Head,
        b"POST" => Method::Post,
        b"PUT" => Method::Put,
        b"DELETE" => Method::Delete,
        b"OPTIONS" => Method::Options,
        _ => Method::Other,
    };
    assert_eq!(head.method, expected_method);

    let headers: Vec<(&[u8], &[u8])> = lines
        .map(|line| {
            let colon = line.iter().position(|&b| b == b':').expect("a header line has a colon");
            (&line[..colon], trim_whitespace(&line[colon + 1..]))
        })
        .collect();
    assert!(headers.len() <= limits.max_headers);
    let named = |name: &str| -> Vec<&[u8]> {
        headers.iter().filter(|(n, _)| n.eq_ignore_ascii_case(name.as_bytes())).map(|h| h.1).collect()
    };

    let lengths: Vec<u64> =
        named("content-length").into_iter().map(|v| parse_content_length(v).expect("a valid length")).collect();
    let transfer_encodings = named("transfer-encoding").len();
    match head.framing {
        BodyFraming::Length(n) => {
            assert_eq!(transfer_encodings, 0, "Content-Length framing with a Transfer-Encoding");
            assert!(lengths.iter().all(|&l| l == n), "framing {n} but Content-Length {lengths:?}");
            assert!(!lengths.is_empty() || n == 0);
        }
        BodyFraming::Chunked => {
            assert!(transfer_encodings > 0 && lengths.is_empty());
            assert_eq!(head.minor_version, 1);
        }
        BodyFraming::UntilClose => panic!("a request body is never delimited by the close"),
    }
    if head.minor_version == 1 {
        assert!(!named("host").is_empty(), "HTTP/1.1 without Host accepted");
        let close = named("connection").into_iter().any(|v| has_token(v, "close"));
        assert_eq!(head.keep_alive, !close);
    }

    // The ranges point at the last header of that name, inside the head.
    for (range, name) in [(&head.authorization, "authorization"), (&head.tags, TAGS_HEADER)] {
        assert_eq!(range.as_ref().map(|r| &buf[r.clone()]), named(name).last().copied(), "{name}'s range");
        assert!(range.as_ref().is_none_or(|r| r.end <= head.head_len));
    }
}

/// A header value without the spaces and tabs around it (RFC 9112 §5.1: optional whitespace).
fn trim_whitespace(mut v: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = v {
        v = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = v {
        v = rest;
    }
    v
}
