//! The upstream response head parser (`http1/src/response.rs`).
//!
//! Input: two bytes of size limit, then the bytes read from the upstream. An accepted head must
//! keep the limit, list its header lines in order, frame the body as its headers say (RFC 9112
//! §6.3), and parse the same without what follows it; a strict prefix of it asks for more bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pointwork_http1::response::{parse_response_head, ResponseHead};
use pointwork_http1::{header_is, parse_content_length, BodyFraming};

fuzz_target!(|data: &[u8]| {
    let Some((limit, buf)) = data.split_first_chunk::<2>() else { return };
    let max_bytes = usize::from(u16::from_le_bytes(*limit));
    let Ok(Some(head)) = parse_response_head(buf, max_bytes) else { return };
    check_head(buf, max_bytes, &head);

    let alone = parse_response_head(&buf[..head.head_len], max_bytes).ok().flatten().expect("the head alone parses");
    assert_eq!(summary(&alone), summary(&head), "the head alone parses differently");
    for cut in [head.head_len - 1, head.head_len / 2] {
        let partial = parse_response_head(&buf[..cut], max_bytes);
        assert!(matches!(partial, Ok(None)), "the first {cut} bytes of an accepted head: {partial:?}");
    }
});

type Summary<'b> = (u16, BodyFraming, bool, usize, Vec<(&'b str, &'b [u8])>);

fn summary<'b>(head: &ResponseHead<'b>) -> Summary<'b> {
    (head.status, head.framing, head.keep_alive, head.head_len, head.headers.clone())
}

fn check_head(buf: &[u8], max_bytes: usize, head: &ResponseHead<'_>) {
    assert!(head.head_len <= buf.len() && head.head_len <= max_bytes);
    assert!((100..=599).contains(&head.status), "status {}", head.status);
    for (name, value) in &head.headers {
        assert!(!name.is_empty());
        assert_eq!(head.header(name), head.headers.iter().find(|(n, _)| header_is(n, name)).map(|h| h.1));
        assert!(!value.contains(&b'\n'), "a header value spans lines");
    }
    let values = |name: &str| head.headers.iter().filter(|(n, _)| header_is(n, name)).map(|h| h.1).collect::<Vec<_>>();
    let lengths: Vec<u64> = values("content-length").into_iter().map(|v| parse_content_length(v).unwrap()).collect();
    let codings = values("transfer-encoding");
    let no_body = matches!(head.status, 100..=199 | 204 | 304);
    match head.framing {
        BodyFraming::Length(n) => {
            assert!(no_body || (codings.is_empty() && lengths.iter().all(|&l| l == n)), "Length({n}) framing");
            assert!(no_body || !lengths.is_empty(), "Length({n}) framing without Content-Length");
        }
        BodyFraming::Chunked => {
            assert!(!no_body);
            let last = codings.last().expect("chunked framing without Transfer-Encoding");
            let last_coding = last.rsplit(|&b| b == b',').next().unwrap_or_default().trim_ascii();
            assert!(last_coding.eq_ignore_ascii_case(b"chunked"));
        }
        BodyFraming::UntilClose => assert!(!no_body && !head.keep_alive, "a body until the close on a kept connection"),
    }
    // A message with both framings is the smuggling vector: the connection is not reused.
    if !codings.is_empty() && !lengths.is_empty() && !no_body {
        assert!(!head.keep_alive);
    }
}
