//! The HTTP/1.1 codec: pure functions and state machines over bytes. IO lives elsewhere.

pub mod chunked;
pub mod request;
pub mod response;
pub mod status;
pub mod write;

/// How a message body is delimited (RFC 9112 §6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyFraming {
    /// A `Content-Length` body (possibly 0).
    Length(u64),
    /// `Transfer-Encoding: chunked`.
    Chunked,
    /// Read until the peer closes (responses only).
    UntilClose,
}

/// Whether `name` equals `want` (ASCII, case-insensitive). Header names here are lower-case literals.
pub fn header_is(name: &str, want: &str) -> bool {
    name.eq_ignore_ascii_case(want)
}

/// Whether a comma-separated header value contains `token` (case-insensitive), e.g. `Connection: close`.
pub fn has_token(value: &[u8], token: &str) -> bool {
    value.split(|&b| b == b',').any(|t| t.trim_ascii().eq_ignore_ascii_case(token.as_bytes()))
}

/// Parses a `Content-Length` value: plain ASCII digits only (no sign, no spaces inside, no overflow).
pub fn parse_content_length(value: &[u8]) -> Option<u64> {
    let v = value.trim_ascii();
    if v.is_empty() || v.len() > 19 || !v.iter().all(u8::is_ascii_digit) {
        return None;
    }
    v.iter().try_fold(0u64, |acc, &d| acc.checked_mul(10)?.checked_add(u64::from(d - b'0')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_length_is_plain_digits() {
        assert_eq!(parse_content_length(b"42"), Some(42));
        assert_eq!(parse_content_length(b" 7 "), Some(7));
        for bad in [&b"+3"[..], b"-1", b"3 3", b"", b"0x10", b"99999999999999999999"] {
            assert_eq!(parse_content_length(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn tokens_are_found_in_lists() {
        assert!(has_token(b"keep-alive, Close", "close"));
        assert!(!has_token(b"closed", "close"));
    }
}
