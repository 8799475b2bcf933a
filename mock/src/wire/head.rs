//! The request side of HTTP/1.1: reading a head with `httparse` and finding where its body ends
//! (content-length or chunked). Pure functions over bytes; the connection does the IO.

use std::time::Duration;

use crate::fault::Fault;
use crate::wire::routes::Route;

/// A head larger than this is refused.
pub(crate) const MAX_HEAD_BYTES: usize = 64 * 1024;
/// More header lines than this are refused.
pub(crate) const MAX_HEADERS: usize = 64;
/// A body larger than this is refused.
pub(crate) const MAX_BODY_BYTES: usize = 32 * 1024 * 1024;

pub(crate) const FAULT_HEADER: &str = "x-mock-fault";
pub(crate) const LATENCY_HEADER: &str = "x-mock-latency-ms";
pub(crate) const CHUNKS_HEADER: &str = "x-mock-chunks";
pub(crate) const CHUNK_DELAY_HEADER: &str = "x-mock-chunk-delay-ms";
pub(crate) const REPLY_HEADER: &str = "x-mock-reply";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Method {
    Get,
    Post,
    Delete,
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BodyFraming {
    Empty,
    Length(usize),
    Chunked,
}

/// Per-request replacements for the server's behaviour, from `x-mock-*` headers.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Overrides {
    pub fault: Option<Fault>,
    pub latency: Option<Duration>,
    pub chunks: Option<u32>,
    pub chunk_delay: Option<Duration>,
    /// The `x-mock-reply` value (trimmed, UTF-8) as `(start, end)` offsets into the request
    /// head, which the connection keeps until the answer is planned.
    pub reply: Option<(usize, usize)>,
}

impl Overrides {
    /// The `x-mock-reply` text out of the head the overrides were read from.
    pub(crate) fn reply<'a>(&self, head_bytes: &'a [u8]) -> Option<&'a str> {
        let (start, end) = self.reply?;
        // Checked as UTF-8 when the head was read.
        head_bytes.get(start..end).and_then(|value| std::str::from_utf8(value).ok())
    }
}

/// What the server needs from a request head; the bytes stay in the connection's buffer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct RequestHead {
    pub method: Method,
    pub route: Route,
    pub head_len: usize,
    pub framing: BodyFraming,
    pub keep_alive: bool,
    /// The client waits for `100 Continue` before sending its body (curl does above 1 KiB).
    pub expects_continue: bool,
    /// `Err` names the `x-mock-*` header whose value could not be read.
    pub overrides: Result<Overrides, &'static str>,
}

#[derive(Debug, PartialEq)]
pub(crate) enum HeadParse {
    Complete(RequestHead),
    Partial,
    Invalid(&'static str),
}

pub(crate) fn parse_head(buf: &[u8]) -> HeadParse {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    let head_len = match request.parse(buf) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) if buf.len() > MAX_HEAD_BYTES => {
            return HeadParse::Invalid("request head too large")
        }
        Ok(httparse::Status::Partial) => return HeadParse::Partial,
        Err(httparse::Error::TooManyHeaders) => return HeadParse::Invalid("too many headers"),
        Err(_) => return HeadParse::Invalid("malformed request head"),
    };
    if head_len > MAX_HEAD_BYTES {
        return HeadParse::Invalid("request head too large");
    }
    // Invariant: a complete parse fills method, path and version.
    let method = match request.method.unwrap_or("") {
        "GET" => Method::Get,
        "POST" => Method::Post,
        "DELETE" => Method::Delete,
        _ => Method::Other,
    };
    let route = Route::from_path(request.path.unwrap_or(""));
    let http11 = request.version == Some(1);

    let mut content_length: Option<usize> = None;
    let mut chunked = false;
    let mut connection_close = false;
    let mut connection_keep_alive = false;
    let mut expects_continue = false;
    let mut overrides = Ok(Overrides::default());
    for header in request.headers.iter() {
        let name = header.name;
        let value = header.value;
        if name.eq_ignore_ascii_case("content-length") {
            let Some(length) = parse_decimal(value) else {
                return HeadParse::Invalid("invalid content-length");
            };
            if content_length.is_some_and(|seen| seen != length) {
                return HeadParse::Invalid("conflicting content-length headers");
            }
            content_length = Some(length);
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            if chunked || !trim(value).eq_ignore_ascii_case(b"chunked") {
                return HeadParse::Invalid("unsupported transfer-encoding");
            }
            chunked = true;
        } else if name.eq_ignore_ascii_case("connection") {
            for token in value.split(|&byte| byte == b',') {
                let token = trim(token);
                connection_close |= token.eq_ignore_ascii_case(b"close");
                connection_keep_alive |= token.eq_ignore_ascii_case(b"keep-alive");
            }
        } else if name.eq_ignore_ascii_case("expect") {
            expects_continue = trim(value).eq_ignore_ascii_case(b"100-continue");
        } else if name.len() > 7 && name.as_bytes()[..7].eq_ignore_ascii_case(b"x-mock-") {
            if let Ok(found) = overrides.as_mut() {
                // httparse hands out slices of `buf` (an empty value need not be one: see
                // `read_override`), so this is the value's offset in the head.
                let offset = (value.as_ptr() as usize).wrapping_sub(buf.as_ptr() as usize);
                if let Err(bad_header) = read_override(found, name, value, offset) {
                    overrides = Err(bad_header);
                }
            }
        }
    }
    let framing = match (chunked, content_length) {
        (true, Some(_)) => return HeadParse::Invalid("both transfer-encoding and content-length"),
        (true, None) => BodyFraming::Chunked,
        (false, Some(0) | None) => BodyFraming::Empty,
        (false, Some(length)) => BodyFraming::Length(length),
    };
    HeadParse::Complete(RequestHead {
        method,
        route,
        head_len,
        framing,
        keep_alive: if http11 { !connection_close } else { connection_keep_alive && !connection_close },
        expects_continue: expects_continue && http11,
        overrides,
    })
}

/// Reads one `x-mock-*` header whose value starts `offset` bytes into the head.
fn read_override(overrides: &mut Overrides, name: &str, value: &[u8], offset: usize) -> Result<(), &'static str> {
    let text = std::str::from_utf8(value).map(str::trim);
    if name.eq_ignore_ascii_case(FAULT_HEADER) {
        let fault = text.ok().and_then(|spec| spec.parse().ok());
        overrides.fault = Some(fault.ok_or(FAULT_HEADER)?);
    } else if name.eq_ignore_ascii_case(LATENCY_HEADER) {
        let millis = parse_decimal(value).ok_or(LATENCY_HEADER)?;
        overrides.latency = Some(Duration::from_millis(millis as u64));
    } else if name.eq_ignore_ascii_case(CHUNKS_HEADER) {
        let chunks = parse_decimal(value)
            .and_then(|count| u32::try_from(count).ok())
            .filter(|&count| count >= 1)
            .ok_or(CHUNKS_HEADER)?;
        overrides.chunks = Some(chunks);
    } else if name.eq_ignore_ascii_case(CHUNK_DELAY_HEADER) {
        let millis = parse_decimal(value).ok_or(CHUNK_DELAY_HEADER)?;
        overrides.chunk_delay = Some(Duration::from_millis(millis as u64));
    } else if name.eq_ignore_ascii_case(REPLY_HEADER) {
        std::str::from_utf8(value).map_err(|_| REPLY_HEADER)?;
        let trimmed = trim(value);
        overrides.reply = Some(if trimmed.is_empty() {
            (0, 0)
        } else {
            let start = offset + (trimmed.as_ptr() as usize - value.as_ptr() as usize);
            (start, start + trimmed.len())
        });
    }
    Ok(())
}

/// Digits only (no sign, no spaces inside), without overflow.
fn parse_decimal(value: &[u8]) -> Option<usize> {
    let digits = trim(value);
    if digits.is_empty() || digits.len() > 18 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(digits.iter().fold(0usize, |total, digit| total * 10 + usize::from(digit - b'0')))
}

fn trim(value: &[u8]) -> &[u8] {
    value.trim_ascii()
}

/// Progress of decoding a chunked body that starts at the beginning of `buf`.
#[derive(Debug, PartialEq)]
pub(crate) enum ChunkedBody {
    /// The decoded body and how many bytes of `buf` it took, trailers included.
    Complete {
        body: Vec<u8>,
        consumed: usize,
    },
    Partial,
    Invalid(&'static str),
}

/// Decodes a whole chunked body. Called again from the start when more bytes arrive, which is
/// fine for a mock's request sizes.
pub(crate) fn decode_chunked(buf: &[u8]) -> ChunkedBody {
    let mut body = Vec::new();
    let mut position = 0;
    loop {
        let (size_len, size) = match httparse::parse_chunk_size(&buf[position..]) {
            Ok(httparse::Status::Complete(found)) => found,
            Ok(httparse::Status::Partial) => return ChunkedBody::Partial,
            Err(_) => return ChunkedBody::Invalid("invalid chunk size"),
        };
        position += size_len;
        let Ok(size) = usize::try_from(size) else {
            return ChunkedBody::Invalid("chunk too large");
        };
        if size == 0 {
            return match skip_trailers(&buf[position..]) {
                Some(trailer_len) => ChunkedBody::Complete { body, consumed: position + trailer_len },
                None if buf.len() - position > MAX_HEAD_BYTES => ChunkedBody::Invalid("trailers too large"),
                None => ChunkedBody::Partial,
            };
        }
        if body.len().saturating_add(size) > MAX_BODY_BYTES {
            return ChunkedBody::Invalid("request body too large");
        }
        let chunk_end = position.saturating_add(size);
        if buf.len() < chunk_end.saturating_add(2) {
            return ChunkedBody::Partial;
        }
        if &buf[chunk_end..chunk_end + 2] != b"\r\n" {
            return ChunkedBody::Invalid("chunk not followed by CRLF");
        }
        body.extend_from_slice(&buf[position..chunk_end]);
        position = chunk_end + 2;
    }
}

/// Length of the trailer section up to and including its closing empty line.
fn skip_trailers(buf: &[u8]) -> Option<usize> {
    let mut position = 0;
    loop {
        let line_end = memchr::memmem::find(&buf[position..], b"\r\n")?;
        position += line_end + 2;
        if line_end == 0 {
            return Some(position);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn complete(raw: &str) -> RequestHead {
        match parse_head(raw.as_bytes()) {
            HeadParse::Complete(head) => head,
            other => panic!("expected a complete head, got {other:?}"),
        }
    }

    #[test]
    fn reads_method_route_and_length() {
        let head = complete("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 12\r\n\r\n{}");
        assert_eq!(head.method, Method::Post);
        assert_eq!(head.route, Route::ChatCompletions);
        assert_eq!(head.framing, BodyFraming::Length(12));
        assert!(head.keep_alive);
    }

    #[test]
    fn partial_until_the_blank_line() {
        assert_eq!(parse_head(b"GET /health HTTP/1.1\r\nHost"), HeadParse::Partial);
    }

    #[test]
    fn connection_close_and_http10_end_keep_alive() {
        assert!(!complete("GET / HTTP/1.1\r\nConnection: close\r\n\r\n").keep_alive);
        assert!(!complete("GET / HTTP/1.0\r\n\r\n").keep_alive);
        assert!(complete("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n").keep_alive);
    }

    #[test]
    fn refuses_ambiguous_framing() {
        for raw in [
            "POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
            "POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
            "POST / HTTP/1.1\r\nContent-Length: -3\r\n\r\n",
            "POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
            "NOT HTTP AT ALL\r\n\r\n",
        ] {
            assert!(matches!(parse_head(raw.as_bytes()), HeadParse::Invalid(_)), "{raw:?}");
        }
    }

    #[test]
    fn notices_expect_continue() {
        let raw = "POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n";
        assert!(complete(raw).expects_continue);
        assert!(!complete("POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\n").expects_continue);
    }

    #[test]
    fn reads_override_headers() {
        let head = complete(
            "POST / HTTP/1.1\r\nX-Mock-Fault: status:503\r\nx-mock-latency-ms: 20\r\n\
             x-mock-chunks: 3\r\nx-mock-chunk-delay-ms: 5\r\n\r\n",
        );
        let overrides = head.overrides.expect("valid overrides");
        assert_eq!(overrides.fault, Some(Fault::Status { status: 503, retry_after: None }));
        assert_eq!(overrides.latency, Some(Duration::from_millis(20)));
        assert_eq!(overrides.chunks, Some(3));
        assert_eq!(overrides.chunk_delay, Some(Duration::from_millis(5)));
    }

    #[test]
    fn reads_the_reply_header_out_of_the_head() {
        let raw = "POST / HTTP/1.1\r\nHost: x\r\nX-Mock-Reply:   {\"label\": \"complex\"} ünï  \r\n\r\n";
        let head = complete(raw);
        let overrides = head.overrides.expect("valid overrides");
        assert_eq!(overrides.reply(&raw.as_bytes()[..head.head_len]), Some("{\"label\": \"complex\"} ünï"));
        let head = complete("POST / HTTP/1.1\r\nx-mock-reply:\r\n\r\n");
        assert_eq!(head.overrides.expect("valid").reply(b"POST / HTTP/1.1\r\nx-mock-reply:\r\n\r\n"), Some(""));
        let head = complete("POST / HTTP/1.1\r\n\r\n");
        assert_eq!(head.overrides.expect("valid").reply, None);
        let head = match parse_head(b"POST / HTTP/1.1\r\nx-mock-reply: \xff\xfe\r\n\r\n") {
            HeadParse::Complete(head) => head,
            other => panic!("expected a complete head, got {other:?}"),
        };
        assert_eq!(head.overrides, Err(REPLY_HEADER));
    }

    #[test]
    fn names_the_bad_override_header() {
        let head = complete("GET / HTTP/1.1\r\nx-mock-chunks: 0\r\n\r\n");
        assert_eq!(head.overrides, Err(CHUNKS_HEADER));
        let head = complete("GET / HTTP/1.1\r\nx-mock-fault: explode\r\n\r\n");
        assert_eq!(head.overrides, Err(FAULT_HEADER));
    }

    #[test]
    fn decodes_chunked_bodies_with_trailers() {
        let raw = b"4\r\nWiki\r\n5;ext=1\r\npedia\r\n0\r\nx-trailer: 1\r\n\r\nNEXT";
        assert_eq!(decode_chunked(raw), ChunkedBody::Complete { body: b"Wikipedia".to_vec(), consumed: raw.len() - 4 });
    }

    #[test]
    fn chunked_body_is_partial_until_the_last_line() {
        let raw = b"4\r\nWiki\r\n0\r\n\r\n";
        for cut in 0..raw.len() {
            assert_eq!(decode_chunked(&raw[..cut]), ChunkedBody::Partial, "{cut}");
        }
    }

    #[test]
    fn refuses_broken_chunks() {
        assert!(matches!(decode_chunked(b"zz\r\n"), ChunkedBody::Invalid(_)));
        assert!(matches!(decode_chunked(b"2\r\nabc\r\n"), ChunkedBody::Invalid(_)));
    }
}
