//! Parsing a request head (request line + header fields) and deciding how its body is framed.

use crate::{has_token, header_is, parse_content_length, BodyFraming};
use std::mem::MaybeUninit;

/// The request methods Pointwork routes; anything else gets a 405 or 404.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Get,
    Head,
    Post,
    Put,
    Delete,
    Options,
    Other,
}

impl Method {
    fn parse(m: &str) -> Method {
        match m {
            "GET" => Method::Get,
            "HEAD" => Method::Head,
            "POST" => Method::Post,
            "PUT" => Method::Put,
            "DELETE" => Method::Delete,
            "OPTIONS" => Method::Options,
            _ => Method::Other,
        }
    }
}

/// Limits applied while parsing a head.
#[derive(Clone, Copy, Debug)]
pub struct HeadLimits {
    pub max_header_bytes: usize,
    pub max_headers: usize,
    /// The request target's bytes (414 beyond).
    pub max_uri_bytes: usize,
}

/// What the server needs from a request head. Header values the handlers read are copied out,
/// so the read buffer can be reused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestHead {
    pub method: Method,
    pub path: String,
    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    pub minor_version: u8,
    pub framing: BodyFraming,
    pub keep_alive: bool,
    pub expect_continue: bool,
    /// Where the `Authorization` value sits in the buffer the head was parsed from (no copy:
    /// most API requests carry one).
    pub authorization: Option<std::ops::Range<usize>>,
    /// Where an `x-litellm-tags` value (comma-separated request tags) sits in the buffer.
    pub tags: Option<std::ops::Range<usize>>,
    /// The `x-llmeu-*` headers (the policy router's request overrides): where each name and
    /// value sit in the buffer. Empty, and no allocation, for a request without them.
    pub llmeu: Vec<(std::ops::Range<usize>, std::ops::Range<usize>)>,
    /// The Anthropic API's headers: `x-api-key` (a key, like `Authorization: Bearer`),
    /// `anthropic-version` and `anthropic-beta` (forwarded to Anthropic deployments).
    pub anthropic: AnthropicHeaders,
    /// W3C Trace Context: `traceparent` and `tracestate`.
    pub trace: TraceHeaders,
    /// Bytes of the head, including the final CRLF CRLF.
    pub head_len: usize,
}

/// Why a head was refused; each maps to a status and a message for the client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HeadError {
    UriTooLong,
    TooLarge,
    TooManyHeaders,
    Malformed(String),
}

impl HeadError {
    pub fn status(&self) -> u16 {
        match self {
            HeadError::UriTooLong => 414,
            HeadError::TooLarge | HeadError::TooManyHeaders => 431,
            HeadError::Malformed(_) => 400,
        }
    }

    pub fn message(&self) -> String {
        match self {
            HeadError::UriTooLong => "request target too long".to_string(),
            HeadError::TooLarge => "request header fields too large".to_string(),
            HeadError::TooManyHeaders => "too many request header fields".to_string(),
            HeadError::Malformed(why) => format!("malformed request: {why}"),
        }
    }
}

/// The slot of an Anthropic or Trace Context header named `name`, if it is one (checked by
/// length first: most headers are not).
fn known_slot<'a>(
    h: &'a mut AnthropicHeaders,
    t: &'a mut TraceHeaders,
    name: &str,
) -> Option<&'a mut Option<std::ops::Range<usize>>> {
    match name.len() {
        9 if header_is(name, "x-api-key") => Some(&mut h.api_key),
        17 if header_is(name, "anthropic-version") => Some(&mut h.version),
        14 if header_is(name, "anthropic-beta") => Some(&mut h.beta),
        11 if header_is(name, "traceparent") => Some(&mut t.parent),
        10 if header_is(name, "tracestate") => Some(&mut t.state),
        _ => None,
    }
}

/// Where the W3C Trace Context headers sit in the buffer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceHeaders {
    pub parent: Option<std::ops::Range<usize>>,
    pub state: Option<std::ops::Range<usize>>,
}

/// Where the Anthropic API's request headers sit in the buffer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AnthropicHeaders {
    pub api_key: Option<std::ops::Range<usize>>,
    pub version: Option<std::ops::Range<usize>>,
    pub beta: Option<std::ops::Range<usize>>,
}

/// The request header LiteLLM reads tags from (`x-litellm-tags: paid, eu`), added to the body's
/// `metadata.tags` for tag filtering.
pub const TAGS_HEADER: &str = "x-litellm-tags";

/// The policy router's request-override headers (`x-llmeu-residency`, …; see `llmeu.rs`).
pub const LLMEU_HEADER_PREFIX: &str = "x-llmeu-";

/// Stack room for header slots; larger limits fall back to the heap.
const STACK_HEADERS: usize = 128;

/// Parses a request head from the start of `buf`. `Ok(None)` means more bytes are needed.
pub fn parse_request_head(buf: &[u8], limits: HeadLimits) -> Result<Option<RequestHead>, HeadError> {
    // Uninitialised slots: initialising 128 of them cost more than parsing a short head.
    if limits.max_headers <= STACK_HEADERS {
        let mut slots = [const { MaybeUninit::<httparse::Header<'_>>::uninit() }; STACK_HEADERS];
        parse_with(buf, limits, &mut slots[..limits.max_headers])
    } else {
        let mut slots = vec![MaybeUninit::<httparse::Header<'_>>::uninit(); limits.max_headers];
        parse_with(buf, limits, &mut slots)
    }
}

fn parse_with<'b>(
    buf: &'b [u8],
    limits: HeadLimits,
    slots: &mut [MaybeUninit<httparse::Header<'b>>],
) -> Result<Option<RequestHead>, HeadError> {
    let mut req = httparse::Request::new(&mut []);
    let head_len = match httparse::ParserConfig::default().parse_request_with_uninit_headers(&mut req, buf, slots) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => {
            // A request line still without its end: its target is too long once what arrived
            // of it passed the limit (a long method is not: the answer must not depend on how
            // the line was cut into reads).
            if !buf.contains(&b'\n') && partial_target_len(buf) > limits.max_uri_bytes {
                return Err(HeadError::UriTooLong);
            }
            return if buf.len() > limits.max_header_bytes { Err(HeadError::TooLarge) } else { Ok(None) };
        }
        Err(httparse::Error::TooManyHeaders) => return Err(HeadError::TooManyHeaders),
        Err(e) => return Err(HeadError::Malformed(e.to_string())),
    };
    if head_len > limits.max_header_bytes {
        return Err(HeadError::TooLarge);
    }
    // RFC 9112 §2.2: a bare LF where CRLF is required (httparse accepts it) — refused, as a
    // proxy in front of us could read the head differently.
    if has_bare_lf(&buf[..head_len]) {
        return Err(HeadError::Malformed("bare LF in the request head (CRLF required)".to_string()));
    }
    let minor_version = req.version.unwrap_or(1);
    let method = Method::parse(req.method.unwrap_or(""));
    let target = req.path.unwrap_or("/");
    if target.len() > limits.max_uri_bytes {
        return Err(HeadError::UriTooLong);
    }
    let path = origin_form(target).to_string();

    let mut content_length: Option<u64> = None;
    let mut chunked = false;
    let mut transfer_encoding = false;
    let mut connection_close = minor_version == 0;
    let mut has_host = false;
    let mut expect_continue = false;
    let mut authorization = None;
    let mut tags = None;
    let mut llmeu = Vec::new();
    let mut anthropic = AnthropicHeaders::default();
    let mut trace = TraceHeaders::default();
    for h in req.headers.iter() {
        if header_is(h.name, "content-length") {
            let n = parse_content_length(h.value)
                .ok_or_else(|| HeadError::Malformed("invalid Content-Length".to_string()))?;
            if content_length.is_some_and(|prev| prev != n) {
                return Err(HeadError::Malformed("conflicting Content-Length values".to_string()));
            }
            content_length = Some(n);
        } else if header_is(h.name, "transfer-encoding") {
            // A second field line continues the list (RFC 9110 §5.3): `chunked` twice, refused.
            if transfer_encoding {
                return Err(HeadError::Malformed("Transfer-Encoding sent more than once".to_string()));
            }
            transfer_encoding = true;
            chunked = transfer_coding_is_chunked(h.value)?;
        } else if header_is(h.name, "connection") {
            if has_token(h.value, "close") {
                connection_close = true;
            } else if has_token(h.value, "keep-alive") && minor_version == 0 {
                connection_close = false;
            }
        } else if header_is(h.name, "host") {
            // RFC 9112 §3.2: more than one Host, or one that is not a host[:port], is a 400.
            if has_host {
                return Err(HeadError::Malformed("more than one Host header".to_string()));
            }
            if !is_host(h.value) {
                return Err(HeadError::Malformed("invalid Host header".to_string()));
            }
            has_host = true;
        } else if header_is(h.name, "expect") {
            // An HTTP/1.0 client cannot know 100 Continue: the expectation is ignored (RFC 9110 §10.1.1).
            expect_continue = minor_version == 1 && has_token(h.value, "100-continue");
        } else if header_is(h.name, "authorization") {
            let start = h.value.as_ptr() as usize - buf.as_ptr() as usize;
            authorization = Some(start..start + h.value.len());
        } else if header_is(h.name, TAGS_HEADER) {
            let start = h.value.as_ptr() as usize - buf.as_ptr() as usize;
            tags = Some(start..start + h.value.len());
        } else if let Some(slot) = known_slot(&mut anthropic, &mut trace, h.name) {
            let start = h.value.as_ptr() as usize - buf.as_ptr() as usize;
            *slot = Some(start..start + h.value.len());
        } else if h.name.len() > LLMEU_HEADER_PREFIX.len()
            && h.name.as_bytes()[..LLMEU_HEADER_PREFIX.len()].eq_ignore_ascii_case(LLMEU_HEADER_PREFIX.as_bytes())
        {
            let name = h.name.as_ptr() as usize - buf.as_ptr() as usize;
            let value = h.value.as_ptr() as usize - buf.as_ptr() as usize;
            llmeu.push((name..name + h.name.len(), value..value + h.value.len()));
        }
    }
    if minor_version == 1 && !has_host {
        return Err(HeadError::Malformed("missing Host header".to_string()));
    }
    let framing = match (transfer_encoding, content_length) {
        (true, Some(_)) => {
            return Err(HeadError::Malformed("both Transfer-Encoding and Content-Length".to_string()));
        }
        (true, None) if minor_version == 0 => {
            return Err(HeadError::Malformed("Transfer-Encoding in HTTP/1.0".to_string()));
        }
        (true, None) if chunked => BodyFraming::Chunked,
        (true, None) => return Err(HeadError::Malformed("unsupported Transfer-Encoding".to_string())),
        (false, Some(n)) => BodyFraming::Length(n),
        (false, None) => BodyFraming::Length(0),
    };
    Ok(Some(RequestHead {
        method,
        path,
        minor_version,
        framing,
        keep_alive: !connection_close,
        expect_continue,
        authorization,
        tags,
        llmeu,
        anthropic,
        trace,
        head_len,
    }))
}

/// Whether a head httparse accepted has an LF without its CR. httparse lets a CR stand only
/// right before an LF (ending a line, or an empty line before the request line), so the head
/// has a bare LF exactly when it holds more LFs than CRs: one counting pass, which the compiler
/// vectorises, instead of a search per line.
fn has_bare_lf(head: &[u8]) -> bool {
    let (mut cr, mut lf) = (0usize, 0usize);
    // Byte-wide counters (a chunk cannot overflow them) keep the vectorised loop byte-wide.
    for chunk in head.chunks(255) {
        let (mut c, mut l) = (0u8, 0u8);
        for &b in chunk {
            c += u8::from(b == b'\r');
            l += u8::from(b == b'\n');
        }
        cr += usize::from(c);
        lf += usize::from(l);
    }
    lf != cr
}

/// The bytes of the request target in an unfinished request line: after the method's space, up
/// to the next space or the end of what arrived.
fn partial_target_len(line: &[u8]) -> usize {
    let Some(space) = memchr::memchr(b' ', line) else { return 0 };
    let target = &line[space + 1..];
    memchr::memchr(b' ', target).unwrap_or(target.len())
}

/// The path and query of a request target: an absolute-form target (`http://host/path`, which a
/// server MUST accept, RFC 9112 §3.2.2) loses its scheme and authority.
fn origin_form(target: &str) -> &str {
    if target.starts_with('/') {
        return target;
    }
    let scheme = |s: &str| target.get(..s.len()).is_some_and(|t| t.eq_ignore_ascii_case(s));
    let rest = if scheme("http://") {
        &target[7..]
    } else if scheme("https://") {
        &target[8..]
    } else {
        return target;
    };
    match rest.find(['/', '?']) {
        Some(i) if rest.as_bytes()[i] == b'/' => &rest[i..],
        _ => "/",
    }
}

/// A Host value: `uri-host [":" port]` (RFC 3986 reg-name, IPv4 or an IP literal in brackets),
/// possibly empty. Spaces, controls and other delimiters are not a host.
fn is_host(value: &[u8]) -> bool {
    value.iter().all(|&b| HOST_BYTES[usize::from(b)])
}

/// The bytes of a Host value, as a table: one load per byte on every request.
const HOST_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric()
            || matches!(
                c,
                b'-' | b'.'
                    | b'_'
                    | b'~'
                    | b'!'
                    | b'$'
                    | b'&'
                    | b'\''
                    | b'('
                    | b')'
                    | b'*'
                    | b'+'
                    | b','
                    | b';'
                    | b'='
                    | b':'
                    | b'['
                    | b']'
                    | b'%'
            );
        b += 1;
    }
    table
};

/// Only `chunked` is accepted, and it must be the one and final coding.
fn transfer_coding_is_chunked(value: &[u8]) -> Result<bool, HeadError> {
    let mut codings = value.split(|&b| b == b',').map(<[u8]>::trim_ascii).filter(|c| !c.is_empty());
    match (codings.next(), codings.next()) {
        (Some(c), None) if c.eq_ignore_ascii_case(b"chunked") => Ok(true),
        _ => Err(HeadError::Malformed("unsupported Transfer-Encoding".to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: HeadLimits = HeadLimits { max_header_bytes: 1024, max_headers: 8, max_uri_bytes: 64 };

    fn parse(raw: &str) -> Result<Option<RequestHead>, HeadError> {
        parse_request_head(raw.as_bytes(), LIMITS)
    }

    #[test]
    fn host_must_be_one_valid_host() {
        assert!(parse("GET / HTTP/1.1\r\nHost: api.example.com:443\r\n\r\n").unwrap().is_some());
        assert!(parse("GET / HTTP/1.1\r\nHost: [::1]:4000\r\n\r\n").unwrap().is_some());
        for bad in ["Host: a b\r\n", "Host: x\r\nHost: x\r\n", "Host: a/b\r\n", "Host: a@b\r\n"] {
            let raw = format!("GET / HTTP/1.1\r\n{bad}\r\n");
            assert!(matches!(parse(&raw), Err(HeadError::Malformed(_))), "{bad:?}");
        }
    }

    #[test]
    fn llmeu_headers_are_found_whatever_their_case() {
        let raw = "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nX-LLMEU-Residency: eu-owned\r\nx-llmeu-task: coding\r\nx-llmeu: no\r\n\r\n";
        let head = parse(raw).unwrap().unwrap();
        let found: Vec<(&str, &str)> = head.llmeu.iter().map(|(n, v)| (&raw[n.clone()], &raw[v.clone()])).collect();
        assert_eq!(found, [("X-LLMEU-Residency", "eu-owned"), ("x-llmeu-task", "coding")]);
        assert!(parse("GET / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap().unwrap().llmeu.is_empty());
    }

    #[test]
    fn absolute_form_targets_keep_their_path() {
        assert_eq!(origin_form("http://x/v1/models?a=1"), "/v1/models?a=1");
        assert_eq!(origin_form("HTTPS://x:443"), "/");
        assert_eq!(origin_form("http://x?q"), "/");
        assert_eq!(origin_form("/v1/models"), "/v1/models");
        assert_eq!(origin_form("*"), "*");
    }

    #[test]
    fn transfer_encoding_twice_and_expect_in_http_1_0() {
        let twice = "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n";
        assert!(matches!(parse(twice), Err(HeadError::Malformed(_))));
        let old = parse("POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n").unwrap().unwrap();
        assert!(!old.expect_continue);
    }

    #[test]
    fn parses_a_post_with_length() {
        let raw = "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 12\r\n\r\n{}";
        let h = parse(raw).unwrap().unwrap();
        assert_eq!(h.method, Method::Post);
        assert_eq!(h.path, "/v1/chat/completions");
        assert_eq!(h.framing, BodyFraming::Length(12));
        assert!(h.keep_alive);
        assert_eq!(h.head_len, raw.len() - 2);
    }

    #[test]
    fn a_bare_lf_anywhere_in_the_head_is_refused() {
        for raw in [
            "GET / HTTP/1.1\nHost: x\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: x\nFoo: y\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: x\r\n\n",
            "GET / HTTP/1.1\nHost: x\n\n",
        ] {
            assert!(matches!(parse(raw), Err(HeadError::Malformed(_))), "{raw:?}");
        }
        assert!(parse("GET / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap().is_some());
        // An empty line before the request line (a client's CRLF after its last body) is fine;
        // a bare one is not.
        assert!(parse("\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap().is_some());
        assert!(matches!(parse("\nGET / HTTP/1.1\r\nHost: x\r\n\r\n"), Err(HeadError::Malformed(_))));
        // A CR anywhere but before an LF is httparse's refusal, so counting is exact.
        assert!(parse("GET / HTTP/1.1\r\nHost: x\ry\r\n\r\n").is_err());
        assert!(parse("GET /\r HTTP/1.1\r\nHost: x\r\n\r\n").is_err());
    }

    #[test]
    fn a_long_target_is_refused_with_414_complete_or_not() {
        let long = format!("GET /{} HTTP/1.1\r\nHost: x\r\n\r\n", "a".repeat(80));
        assert_eq!(parse(&long), Err(HeadError::UriTooLong));
        assert_eq!(HeadError::UriTooLong.status(), 414);
        // Still arriving, with no end of line in sight.
        let partial = format!("GET /{}", "a".repeat(120));
        assert_eq!(parse(&partial), Err(HeadError::UriTooLong));
        let fits = format!("GET /{} HTTP/1.1\r\nHost: x\r\n\r\n", "a".repeat(60));
        assert!(parse(&fits).unwrap().is_some());
    }

    #[test]
    fn a_long_method_is_not_a_long_target_however_the_line_arrives() {
        // Found by fuzz/fuzz_targets/request_head.rs: the whole unfinished request line was
        // counted as its target, so a long method got a 414 when the line arrived in pieces.
        let limits = HeadLimits { max_header_bytes: 514, max_headers: 16, max_uri_bytes: 17 };
        let raw = b"VVVVVVVVVVVVsssssssssssssssssssss v5/embdings HTTP/1.1\r\nHost:x\r\nLength: 3\r\n\
                    Trnrfes-Encoding:chunked\r\n\r\n";
        let head = parse_request_head(raw, limits).unwrap().unwrap();
        assert_eq!((head.method, head.path.as_str()), (Method::Other, "v5/embdings"));
        for cut in 0..raw.len() {
            assert_eq!(parse_request_head(&raw[..cut], limits), Ok(None), "the first {cut} bytes");
        }
        let long = b"VVVVVVVVVVVVsssssssssssssssssssss v5/embeddings/and/more";
        assert_eq!(parse_request_head(long, limits), Err(HeadError::UriTooLong));
    }

    #[test]
    fn partial_heads_wait_for_more_until_the_limit() {
        assert_eq!(parse("GET / HTTP/1.1\r\nHost: x\r\n"), Ok(None));
        let big = format!("GET / HTTP/1.1\r\nX: {}\r\n", "a".repeat(2000));
        assert_eq!(parse(&big), Err(HeadError::TooLarge));
    }

    #[test]
    fn keep_alive_follows_version_and_connection() {
        let h10 = parse("GET / HTTP/1.0\r\n\r\n").unwrap().unwrap();
        assert!(!h10.keep_alive);
        let h10ka = parse("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").unwrap().unwrap();
        assert!(h10ka.keep_alive);
        let close = parse("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap().unwrap();
        assert!(!close.keep_alive);
    }

    #[test]
    fn chunked_and_ambiguous_framing() {
        let h = parse("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n").unwrap().unwrap();
        assert_eq!(h.framing, BodyFraming::Chunked);
        for bad in [
            "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n",
            "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
            "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: +3\r\n\r\n",
            "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
            "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
            "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
            "GET / HTTP/1.1\r\n\r\n",
        ] {
            assert!(matches!(parse(bad), Err(HeadError::Malformed(_))), "{bad:?}");
        }
        let same =
            parse("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n").unwrap().unwrap();
        assert_eq!(same.framing, BodyFraming::Length(3));
    }

    #[test]
    fn too_many_headers() {
        let raw = format!("GET / HTTP/1.1\r\nHost: x\r\n{}\r\n", "A: b\r\n".repeat(9));
        assert_eq!(parse(&raw), Err(HeadError::TooManyHeaders));
    }
}
