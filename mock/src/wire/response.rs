//! Response heads and OpenAI-shaped error bodies, written straight into the connection's output
//! buffer so a head and its body leave in one write.

use std::io::Write;

pub(crate) const JSON: &str = "application/json";
pub(crate) const EVENT_STREAM: &str = "text/event-stream";
pub(crate) const MOCK_NAME_HEADER: &str = "x-mock-name";
pub(crate) const MOCK_PROVIDER_HEADER: &str = "x-mock-provider";

/// What every head of one response says besides its length.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Head<'a> {
    pub status: u16,
    pub content_type: &'static str,
    pub name: &'a str,
    pub retry_after: Option<u32>,
    pub close: bool,
    /// The OpenRouter provider that served, sent as `x-mock-provider`.
    pub provider: Option<&'a str>,
    /// Anthropic's answers carry `request-id: req_mock_N`.
    pub request_id: Option<u64>,
    /// Further header lines, each ending in CRLF (Azure's `apim-request-id`, `retry-after-ms`).
    pub extra: &'a str,
}

impl<'a> Head<'a> {
    pub(crate) fn json(status: u16, name: &'a str, close: bool) -> Self {
        Head { status, content_type: JSON, name, retry_after: None, close, provider: None, request_id: None, extra: "" }
    }

    fn write_common(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"HTTP/1.1 ");
        write_decimal(out, u64::from(self.status));
        out.push(b' ');
        out.extend_from_slice(reason_phrase(self.status).as_bytes());
        out.extend_from_slice(b"\r\ncontent-type: ");
        out.extend_from_slice(self.content_type.as_bytes());
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(MOCK_NAME_HEADER.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(self.name.as_bytes());
        out.extend_from_slice(b"\r\n");
        if let Some(provider) = self.provider {
            out.extend_from_slice(MOCK_PROVIDER_HEADER.as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(provider.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        if let Some(number) = self.request_id {
            out.extend_from_slice(b"request-id: req_mock_");
            write_decimal(out, number);
            out.extend_from_slice(b"\r\n");
        }
        if let Some(seconds) = self.retry_after {
            out.extend_from_slice(b"retry-after: ");
            write_decimal(out, u64::from(seconds));
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(self.extra.as_bytes());
        if self.close {
            out.extend_from_slice(b"connection: close\r\n");
        }
    }

    /// Appends a content-length framed response; returns the length of its head.
    pub(crate) fn write_with_body(&self, out: &mut Vec<u8>, body: &[u8]) -> usize {
        let start = out.len();
        self.write_common(out);
        out.extend_from_slice(b"content-length: ");
        write_decimal(out, body.len() as u64);
        out.extend_from_slice(b"\r\n\r\n");
        let head_len = out.len() - start;
        out.extend_from_slice(body);
        head_len
    }

    /// Appends a head announcing a chunked body.
    pub(crate) fn write_chunked(&self, out: &mut Vec<u8>) {
        self.write_common(out);
        out.extend_from_slice(b"cache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n");
    }
}

/// Appends one chunk of a chunked body.
pub(crate) fn write_chunk(out: &mut Vec<u8>, data: &[u8]) {
    // Writing into a Vec cannot fail.
    let _ = write!(out, "{:x}\r\n", data.len());
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
}

/// The chunk that ends a chunked body (no trailers).
pub(crate) const LAST_CHUNK: &[u8] = b"0\r\n\r\n";

pub(crate) fn write_decimal(out: &mut Vec<u8>, mut value: u64) {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (value % 10) as u8;
        value /= 10;
        if value == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[start..]);
}

fn reason_phrase(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        413 => "Content Too Large",
        422 => "Unprocessable Content",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        529 => "Overloaded",
        _ => "Mock Status",
    }
}

/// OpenAI's `type` and `code` for an error status, as its API sends them.
pub(crate) fn openai_error_kind(status: u16) -> (&'static str, Option<&'static str>) {
    match status {
        401 => ("invalid_request_error", Some("invalid_api_key")),
        403 => ("invalid_request_error", Some("permission_denied")),
        404 => ("invalid_request_error", Some("not_found")),
        429 => ("rate_limit_error", Some("rate_limit_exceeded")),
        500..=599 => ("server_error", None),
        _ => ("invalid_request_error", None),
    }
}

/// Appends a complete OpenAI-shaped error response.
pub(crate) fn write_openai_error(out: &mut Vec<u8>, head: &Head<'_>, message: &str) -> usize {
    let (_, code) = openai_error_kind(head.status);
    write_error(out, head, message, code)
}

/// An OpenAI-shaped error with a `code` of the caller's (e.g. `context_length_exceeded`).
pub(crate) fn write_openai_error_with_code(out: &mut Vec<u8>, head: &Head<'_>, message: &str, code: &str) -> usize {
    write_error(out, head, message, Some(code))
}

fn write_error(out: &mut Vec<u8>, head: &Head<'_>, message: &str, code: Option<&str>) -> usize {
    #[derive(serde::Serialize)]
    struct ErrorBody<'a> {
        error: ErrorFields<'a>,
    }
    /// In OpenAI's order.
    #[derive(serde::Serialize)]
    struct ErrorFields<'a> {
        message: &'a str,
        #[serde(rename = "type")]
        kind: &'a str,
        param: Option<&'a str>,
        code: Option<&'a str>,
    }
    let (kind, _) = openai_error_kind(head.status);
    let body = ErrorBody { error: ErrorFields { message, kind, param: None, code } };
    // Plain strings always serialise.
    let bytes = serde_json::to_vec(&body).unwrap_or_default();
    head.write_with_body(out, &bytes)
}

/// The status code of the response at the start of `out`, `0` when there is none.
pub(crate) fn status_of(out: &[u8]) -> u16 {
    out.get(9..12)
        .and_then(|digits| std::str::from_utf8(digits).ok())
        .and_then(|digits| digits.parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_and_body_are_one_buffer() {
        let mut out = Vec::new();
        let head = Head::json(200, "m1", false);
        let head_len = head.write_with_body(&mut out, b"{}");
        let text = String::from_utf8(out).expect("ascii");
        assert_eq!(
            text,
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nx-mock-name: m1\r\n\
             content-length: 2\r\n\r\n{}"
        );
        assert_eq!(head_len, text.len() - 2);
    }

    #[test]
    fn error_body_has_openai_shape_and_retry_after() {
        let mut out = Vec::new();
        let head = Head { retry_after: Some(3), ..Head::json(429, "m1", true) };
        let head_len = write_openai_error(&mut out, &head, "slow down");
        let text = std::str::from_utf8(&out[..head_len]).expect("ascii");
        assert!(text.starts_with("HTTP/1.1 429 Too Many Requests\r\n"));
        assert!(text.contains("retry-after: 3\r\n"));
        assert!(text.contains("connection: close\r\n"));
        let body: serde_json::Value = serde_json::from_slice(&out[head_len..]).expect("json");
        assert_eq!(body["error"]["type"], "rate_limit_error");
        assert_eq!(body["error"]["code"], "rate_limit_exceeded");
        assert_eq!(body["error"]["param"], serde_json::Value::Null);
        assert_eq!(body["error"]["message"], "slow down");
    }

    #[test]
    fn chunks_are_hex_framed() {
        let mut out = Vec::new();
        write_chunk(&mut out, &[b'a'; 26]);
        assert!(out.starts_with(b"1a\r\naaaa"));
        assert!(out.ends_with(b"a\r\n"));
    }

    #[test]
    fn decimals() {
        for value in [0u64, 7, 10, 1234567890, u64::MAX] {
            let mut out = Vec::new();
            write_decimal(&mut out, value);
            assert_eq!(out, value.to_string().as_bytes());
        }
    }
}
