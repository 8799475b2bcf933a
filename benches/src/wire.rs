//! Wire samples for the codec benches: an OpenAI SDK request head, an OpenAI response head,
//! and one streamed chat event as an upstream sends it (one event per chunk).

/// The head the OpenAI Python SDK (1.x, httpx) sends for a chat completion: 17 header fields.
pub const REQUEST_HEAD: &str = "POST /v1/chat/completions HTTP/1.1\r\n\
Host: localhost:4000\r\n\
Accept-Encoding: gzip, deflate\r\n\
Connection: keep-alive\r\n\
Accept: application/json\r\n\
Content-Type: application/json\r\n\
User-Agent: OpenAI/Python 1.99.9\r\n\
X-Stainless-Lang: python\r\n\
X-Stainless-Package-Version: 1.99.9\r\n\
X-Stainless-OS: Linux\r\n\
X-Stainless-Arch: x64\r\n\
X-Stainless-Runtime: CPython\r\n\
X-Stainless-Runtime-Version: 3.12.3\r\n\
Authorization: Bearer sk-proj-4bQ9x1Zr8mK2vN7tY3wL6pH0cJ5dF2gS9aE1uI4oR7kT8yW3\r\n\
X-Stainless-Async: false\r\n\
x-stainless-retry-count: 0\r\n\
x-stainless-read-timeout: 600\r\n\
Content-Length: 1024\r\n\
\r\n";

/// The head api.openai.com sends with a non-streamed chat completion (behind Cloudflare):
/// 24 header fields.
pub const RESPONSE_HEAD: &str = "HTTP/1.1 200 OK\r\n\
Date: Sat, 29 Nov 2025 12:00:00 GMT\r\n\
Content-Type: application/json\r\n\
Content-Length: 1234\r\n\
Connection: keep-alive\r\n\
access-control-expose-headers: X-Request-ID\r\n\
openai-organization: user-abcdefghijklmnopqrstuvwx\r\n\
openai-processing-ms: 543\r\n\
openai-project: proj_AbCdEfGhIjKlMnOpQrStUvWx\r\n\
openai-version: 2020-10-01\r\n\
x-envoy-upstream-service-time: 547\r\n\
x-ratelimit-limit-requests: 10000\r\n\
x-ratelimit-limit-tokens: 30000000\r\n\
x-ratelimit-remaining-requests: 9999\r\n\
x-ratelimit-remaining-tokens: 29999950\r\n\
x-ratelimit-reset-requests: 6ms\r\n\
x-ratelimit-reset-tokens: 0s\r\n\
x-request-id: req_0123456789abcdef0123456789abcdef\r\n\
strict-transport-security: max-age=31536000; includeSubDomains; preload\r\n\
cf-cache-status: DYNAMIC\r\n\
set-cookie: __cf_bm=Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2FycGx5d2FsZG8-1764417600-1.0.1.1-abcdefghijklmnop; path=/; expires=Sat, 29-Nov-25 12:30:00 GMT; domain=.api.openai.com; HttpOnly; Secure; SameSite=None\r\n\
X-Content-Type-Options: nosniff\r\n\
Server: cloudflare\r\n\
CF-RAY: 8e0a1b2c3d4e5f60-AMS\r\n\
alt-svc: h3=\":443\"; ma=86400\r\n\
\r\n";

/// One `data:` event of the OpenAI stream fixture (a content delta), with its blank line.
pub fn sse_event() -> Vec<u8> {
    let stream = crate::fixture("openai_chat_stream.sse");
    let text = String::from_utf8(stream).expect("the fixture is UTF-8");
    let event = text.split_inclusive("\n\n").nth(1).expect("the fixture has several events");
    event.as_bytes().to_vec()
}

/// `event` framed as one chunk of a chunked body.
pub fn sse_chunk(event: &[u8]) -> Vec<u8> {
    let mut chunk = format!("{:x}\r\n", event.len()).into_bytes();
    chunk.extend_from_slice(event);
    chunk.extend_from_slice(b"\r\n");
    chunk
}

#[cfg(test)]
mod tests {
    use super::*;
    use pointwork_http1::chunked::{encode_chunk, ChunkedDecoder};
    use pointwork_http1::request::{parse_request_head, HeadLimits};
    use pointwork_http1::response::parse_response_head;
    use pointwork_http1::BodyFraming;

    #[test]
    fn the_heads_parse_as_the_gateway_expects() {
        let limits = HeadLimits { max_header_bytes: 64 * 1024, max_headers: 100, max_uri_bytes: 8 * 1024 };
        let req = parse_request_head(REQUEST_HEAD.as_bytes(), limits).unwrap().unwrap();
        assert_eq!(req.framing, BodyFraming::Length(1024));
        assert_eq!(req.head_len, REQUEST_HEAD.len());
        assert_eq!(REQUEST_HEAD.matches("\r\n").count() - 2, 17);
        let res = parse_response_head(RESPONSE_HEAD.as_bytes(), 64 * 1024).unwrap().unwrap();
        assert_eq!(res.status, 200);
        assert_eq!(res.framing, BodyFraming::Length(1234));
        assert_eq!(res.headers.len(), 24);
    }

    #[test]
    fn a_chunk_passes_through_unchanged() {
        let event = sse_event();
        assert!(event.starts_with(b"data: {") && event.ends_with(b"}\n\n"), "{event:?}");
        let chunk = sse_chunk(&event);
        let mut decoder = ChunkedDecoder::new();
        let (mut scratch, mut out) = (Vec::new(), Vec::new());
        for _ in 0..3 {
            scratch.clear();
            out.clear();
            assert_eq!(decoder.feed(&chunk, &mut scratch).unwrap(), chunk.len());
            encode_chunk(&scratch, &mut out);
            assert_eq!(out, chunk);
        }
    }
}
