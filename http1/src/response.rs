//! Parsing an upstream response head.

use crate::{has_token, header_is, parse_content_length, BodyFraming};

/// An upstream response head, parsed in place: header slices borrow the read buffer.
#[derive(Debug)]
pub struct ResponseHead<'b> {
    pub status: u16,
    pub framing: BodyFraming,
    pub keep_alive: bool,
    pub head_len: usize,
    pub headers: Vec<(&'b str, &'b [u8])>,
}

impl<'b> ResponseHead<'b> {
    pub fn header(&self, name: &str) -> Option<&'b [u8]> {
        self.headers.iter().find(|(n, _)| header_is(n, name)).map(|(_, v)| *v)
    }
}

/// What a response head says of its answer, its headers aside.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeadFacts {
    pub status: u16,
    pub framing: BodyFraming,
    pub keep_alive: bool,
    pub head_len: usize,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResponseHeadError {
    TooLarge,
    Malformed(String),
}

impl std::fmt::Display for ResponseHeadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ResponseHeadError::TooLarge => f.write_str("upstream response head too large"),
            ResponseHeadError::Malformed(why) => write!(f, "malformed upstream response: {why}"),
        }
    }
}

const MAX_RESPONSE_HEADERS: usize = 128;

/// Parses a response head from the start of `buf`; `Ok(None)` means more bytes are needed.
pub fn parse_response_head(buf: &[u8], max_bytes: usize) -> Result<Option<ResponseHead<'_>>, ResponseHeadError> {
    let mut headers = Vec::new();
    let facts = parse_response_head_each(buf, max_bytes, |name, value| headers.push((name, value)))?;
    Ok(facts.map(|f| ResponseHead {
        status: f.status,
        framing: f.framing,
        keep_alive: f.keep_alive,
        head_len: f.head_len,
        headers,
    }))
}

/// [`parse_response_head`] handing each header to `each` (in order) instead of listing them: the
/// relay writes the client's head as it goes, with no list to allocate. `each` may have seen
/// headers of a head that turns out malformed.
pub fn parse_response_head_each<'b>(
    buf: &'b [u8],
    max_bytes: usize,
    mut each: impl FnMut(&'b str, &'b [u8]),
) -> Result<Option<HeadFacts>, ResponseHeadError> {
    // Uninitialised slots: initialising 128 of them cost more than parsing a short head.
    let mut slots = [const { std::mem::MaybeUninit::<httparse::Header<'_>>::uninit() }; MAX_RESPONSE_HEADERS];
    let mut res = httparse::Response::new(&mut []);
    let head_len = match httparse::ParserConfig::default().parse_response_with_uninit_headers(&mut res, buf, &mut slots)
    {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => {
            return if buf.len() > max_bytes { Err(ResponseHeadError::TooLarge) } else { Ok(None) };
        }
        Err(e) => return Err(ResponseHeadError::Malformed(e.to_string())),
    };
    if head_len > max_bytes {
        return Err(ResponseHeadError::TooLarge);
    }
    let status = res.code.unwrap_or(0);
    // httparse takes any three digits; RFC 9110 §15 allows 100–599, and a status outside it
    // would be relayed as a status line the client cannot read.
    if !(100..=599).contains(&status) {
        return Err(ResponseHeadError::Malformed(format!("invalid status code {status}")));
    }
    let minor_version = res.version.unwrap_or(1);
    let mut content_length = None;
    let mut transfer_encoding = None;
    let mut keep_alive = minor_version == 1;
    for h in res.headers.iter() {
        if header_is(h.name, "content-length") {
            let n = parse_content_length(h.value)
                .ok_or_else(|| ResponseHeadError::Malformed("invalid Content-Length".to_string()))?;
            if content_length.is_some_and(|prev| prev != n) {
                return Err(ResponseHeadError::Malformed("conflicting Content-Length values".to_string()));
            }
            content_length = Some(n);
        } else if header_is(h.name, "transfer-encoding") {
            transfer_encoding = Some(h.value);
        } else if header_is(h.name, "connection") {
            if has_token(h.value, "close") {
                keep_alive = false;
            } else if has_token(h.value, "keep-alive") {
                keep_alive = true;
            }
        }
        each(h.name, h.value);
    }
    let framing = if status == 204 || status == 304 || (100..200).contains(&status) {
        BodyFraming::Length(0)
    } else if let Some(te) = transfer_encoding {
        // RFC 9112 §6.3: chunked last means chunked, whatever Content-Length says; otherwise
        // the body runs until the connection closes.
        let last = te.rsplit(|&b| b == b',').next().unwrap_or_default().trim_ascii();
        keep_alive &= content_length.is_none();
        if last.eq_ignore_ascii_case(b"chunked") {
            BodyFraming::Chunked
        } else {
            keep_alive = false;
            BodyFraming::UntilClose
        }
    } else if let Some(n) = content_length {
        BodyFraming::Length(n)
    } else {
        keep_alive = false;
        BodyFraming::UntilClose
    };
    Ok(Some(HeadFacts { status, framing, keep_alive, head_len }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(raw: &str) -> ResponseHead<'_> {
        parse_response_head(raw.as_bytes(), 4096).unwrap().unwrap()
    }

    #[test]
    fn framing_by_headers() {
        assert_eq!(parse("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n").framing, BodyFraming::Length(5));
        let chunked = parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
        assert_eq!(chunked.framing, BodyFraming::Chunked);
        assert!(chunked.keep_alive);
        let close = parse("HTTP/1.1 200 OK\r\n\r\n");
        assert_eq!(close.framing, BodyFraming::UntilClose);
        assert!(!close.keep_alive);
        assert_eq!(parse("HTTP/1.1 204 No Content\r\n\r\n").framing, BodyFraming::Length(0));
    }

    #[test]
    fn connection_close_and_headers() {
        let h = parse("HTTP/1.1 429 Too Many\r\nRetry-After: 3\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
        assert_eq!(h.status, 429);
        assert!(!h.keep_alive);
        assert_eq!(h.header("retry-after"), Some(&b"3"[..]));
    }

    #[test]
    fn partial_and_malformed() {
        assert!(parse_response_head(b"HTTP/1.1 200 OK\r\n", 4096).unwrap().is_none());
        assert!(parse_response_head(b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", 4096).is_err());
        assert!(parse_response_head(b"garbage\r\n\r\n", 4096).is_err());
        let long = format!("HTTP/1.1 200 OK\r\nX: {}", "a".repeat(100));
        assert_eq!(parse_response_head(long.as_bytes(), 50).unwrap_err(), ResponseHeadError::TooLarge);
    }

    #[test]
    fn a_status_outside_100_to_599_is_malformed() {
        // Found by fuzz/fuzz_targets/response_head.rs: `050` was status 50, relayed as is.
        for bad in [&b"HTTP/1.1 050\n\n"[..], b"HTTP/1.1 099 X\r\n\r\n", b"HTTP/1.1 600 X\r\n\r\n"] {
            assert!(matches!(parse_response_head(bad, 4096), Err(ResponseHeadError::Malformed(_))), "{bad:?}");
        }
        assert_eq!(parse("HTTP/1.1 599 X\r\n\r\n").status, 599);
        assert_eq!(parse("HTTP/1.1 100 Continue\r\n\r\n").status, 100);
    }
}
