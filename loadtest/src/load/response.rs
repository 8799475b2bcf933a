//! Reading one HTTP/1.1 response: a pure state machine over the bytes of one connection, with no
//! IO and no clock. The connection feeds it what it reads and stamps the progress it reports.

use super::chunked::ChunkedDecoder;
use super::sse::SseScanner;
use super::stats::ErrorKind;

/// A response head above this is a bad response.
pub const MAX_HEAD: usize = 64 * 1024;
const MAX_HEADERS: usize = 64;

#[derive(Debug, Clone)]
enum Body {
    Length(u64),
    Chunked(ChunkedDecoder),
    UntilEof,
}

#[derive(Debug, Clone)]
enum Phase {
    Head,
    Body(Body),
}

/// What one `feed` call saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Progress {
    /// Bytes of the input used; the connection keeps the rest (a head not complete yet).
    pub consumed: usize,
    /// The first byte of the body (of the first event, for streams) was in this input.
    pub first_byte: bool,
    /// Stream events completed in this input.
    pub events: u64,
    /// The response is complete.
    pub complete: Option<Complete>,
}

/// A whole response, properly framed (and for a 2xx stream, ended with `[DONE]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Complete {
    pub status: u16,
    /// The connection can carry the next request.
    pub keep_alive: bool,
}

/// The response to one request.
#[derive(Debug, Clone)]
pub struct ResponseParser {
    /// The request asked for a stream: a 2xx answer must be server-sent events, chunked, ending
    /// with `data: [DONE]`.
    stream: bool,
    phase: Phase,
    status: u16,
    keep_alive: bool,
    body_started: bool,
    /// Scanning events: a 2xx answer to a stream request.
    sse: Option<SseScanner>,
}

impl ResponseParser {
    pub fn new(stream: bool) -> Self {
        ResponseParser { stream, phase: Phase::Head, status: 0, keep_alive: true, body_started: false, sse: None }
    }

    /// The request asked for a stream.
    pub fn stream(&self) -> bool {
        self.stream
    }

    /// Feeds the bytes read so far that were not consumed yet.
    pub fn feed(&mut self, input: &[u8]) -> Result<Progress, ErrorKind> {
        let mut progress = Progress::default();
        if let Phase::Head = self.phase {
            match self.parse_head(input)? {
                None => return Ok(progress),
                Some(head_len) => progress.consumed = head_len,
            }
            if let Phase::Body(Body::Length(0)) = self.phase {
                progress.complete = Some(self.finish()?);
                return Ok(progress);
            }
        }
        let rest = &input[progress.consumed..];
        if rest.is_empty() {
            return Ok(progress);
        }
        let Phase::Body(body) = &mut self.phase else { unreachable!("the head is parsed above") };
        let first_byte = !self.body_started;
        self.body_started = true;
        let sse = &mut self.sse;
        let mut events = 0;
        let mut data_seen = false;
        let (used, done) = match body {
            Body::Length(remaining) => {
                let used = rest.len().min(usize::try_from(*remaining).unwrap_or(usize::MAX));
                *remaining -= used as u64;
                (used, *remaining == 0)
            }
            Body::Chunked(decoder) => {
                let used = decoder
                    .feed(rest, |data| {
                        data_seen |= !data.is_empty();
                        if let Some(sse) = sse.as_mut() {
                            events += sse.feed(data);
                        }
                    })
                    .map_err(|_| ErrorKind::BadResponse)?;
                (used, decoder.is_done())
            }
            Body::UntilEof => (rest.len(), false),
        };
        progress.first_byte = first_byte;
        if matches!(body, Body::Chunked(_)) && !data_seen && first_byte {
            // Only framing so far (a chunk size line): the first byte of the first event is
            // still to come.
            self.body_started = false;
            progress.first_byte = false;
        }
        progress.events = events;
        progress.consumed += used;
        if done {
            if progress.consumed != input.len() {
                // Bytes after the response: nothing was asked for them (no pipelining).
                return Err(ErrorKind::BadResponse);
            }
            progress.complete = Some(self.finish()?);
        }
        Ok(progress)
    }

    /// The peer closed the connection (a read returned 0).
    pub fn eof(&mut self, buffered: usize) -> Result<Complete, ErrorKind> {
        match &self.phase {
            Phase::Head if buffered == 0 => Err(ErrorKind::Closed),
            Phase::Head => Err(ErrorKind::BadResponse),
            Phase::Body(Body::UntilEof) => {
                self.keep_alive = false;
                self.finish()
            }
            Phase::Body(_) if self.sse.is_some() => Err(ErrorKind::TruncatedStream),
            Phase::Body(_) => Err(ErrorKind::Closed),
        }
    }

    fn finish(&mut self) -> Result<Complete, ErrorKind> {
        if let Some(sse) = &self.sse {
            if !sse.done {
                return Err(ErrorKind::TruncatedStream);
            }
        }
        let complete = Complete { status: self.status, keep_alive: self.keep_alive };
        let stream = self.stream;
        *self = ResponseParser::new(stream);
        Ok(complete)
    }

    /// `Some(head length)` once the head is complete.
    fn parse_head(&mut self, input: &[u8]) -> Result<Option<usize>, ErrorKind> {
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut response = httparse::Response::new(&mut headers);
        let head_len = match response.parse(input) {
            Ok(httparse::Status::Complete(len)) => len,
            Ok(httparse::Status::Partial) if input.len() > MAX_HEAD => return Err(ErrorKind::BadResponse),
            Ok(httparse::Status::Partial) => return Ok(None),
            Err(_) => return Err(ErrorKind::BadResponse),
        };
        let status = response.code.ok_or(ErrorKind::BadResponse)?;
        if (100..200).contains(&status) {
            // An interim response (100 Continue, 103 Early Hints): the real one follows.
            if status == 101 {
                return Err(ErrorKind::BadResponse);
            }
            return match self.parse_head(&input[head_len..])? {
                Some(len) => Ok(Some(head_len + len)),
                // Wait for the final head; the interim one is parsed again then.
                None => Ok(None),
            };
        }
        let mut keep_alive = response.version == Some(1);
        let mut length: Option<u64> = None;
        let mut chunked = false;
        let mut transfer_encoding = false;
        for header in response.headers.iter() {
            let value = header.value;
            if header.name.eq_ignore_ascii_case("content-length") {
                let parsed = std::str::from_utf8(value)
                    .ok()
                    .filter(|text| !text.is_empty() && text.bytes().all(|byte| byte.is_ascii_digit()))
                    .and_then(|text| text.parse::<u64>().ok())
                    .ok_or(ErrorKind::BadResponse)?;
                if length.is_some_and(|known| known != parsed) {
                    return Err(ErrorKind::BadResponse);
                }
                length = Some(parsed);
            } else if header.name.eq_ignore_ascii_case("transfer-encoding") {
                transfer_encoding = true;
                let last = value.rsplit(|&byte| byte == b',').next().unwrap_or_default();
                chunked = last.trim_ascii().eq_ignore_ascii_case(b"chunked");
            } else if header.name.eq_ignore_ascii_case("connection") {
                for token in value.split(|&byte| byte == b',').map(<[u8]>::trim_ascii) {
                    if token.eq_ignore_ascii_case(b"close") {
                        keep_alive = false;
                    } else if token.eq_ignore_ascii_case(b"keep-alive") && response.version == Some(0) {
                        keep_alive = true;
                    }
                }
            }
        }
        let body = match (transfer_encoding, length) {
            (true, Some(_)) => return Err(ErrorKind::BadResponse),
            _ if status == 204 || status == 304 => Body::Length(0),
            (true, None) if chunked => Body::Chunked(ChunkedDecoder::default()),
            (true, None) => Body::UntilEof,
            (false, Some(length)) => Body::Length(length),
            (false, None) => Body::UntilEof,
        };
        let success = (200..300).contains(&status);
        if self.stream && success {
            if !matches!(body, Body::Chunked(_)) {
                // A 2xx answer to a stream request must be a chunked event stream.
                return Err(ErrorKind::BadResponse);
            }
            self.sse = Some(SseScanner::default());
        }
        if matches!(body, Body::UntilEof) {
            keep_alive = false;
        }
        self.status = status;
        self.keep_alive = keep_alive;
        self.phase = Phase::Body(body);
        Ok(Some(head_len))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 5\r\n\r\nhello";
    const STREAM: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n\
        a\r\ndata: {}\n\n\r\na\r\ndata: {}\n\n\r\n\
        e\r\ndata: [DONE]\n\n\r\n0\r\n\r\n";

    /// Feeds `input` in pieces of `piece` bytes the way a connection does: unconsumed bytes stay
    /// buffered. Returns the total events, whether a first byte was seen, and the end.
    fn run(stream: bool, input: &[u8], piece: usize) -> (u64, u32, Result<Complete, ErrorKind>) {
        let mut parser = ResponseParser::new(stream);
        let mut buffer = Vec::new();
        let (mut events, mut first_bytes) = (0, 0);
        for part in input.chunks(piece) {
            buffer.extend_from_slice(part);
            match parser.feed(&buffer) {
                Err(kind) => return (events, first_bytes, Err(kind)),
                Ok(progress) => {
                    events += progress.events;
                    first_bytes += u32::from(progress.first_byte);
                    buffer.drain(..progress.consumed);
                    if let Some(complete) = progress.complete {
                        return (events, first_bytes, Ok(complete));
                    }
                }
            }
        }
        (events, first_bytes, parser.eof(buffer.len()))
    }

    #[test]
    fn content_length_response_in_any_pieces() {
        for piece in 1..=OK.len() {
            let (_, first, end) = run(false, OK, piece);
            assert_eq!(end, Ok(Complete { status: 200, keep_alive: true }), "piece {piece}");
            assert_eq!(first, 1);
        }
    }

    #[test]
    fn stream_in_any_pieces() {
        for piece in 1..=STREAM.len() {
            let (events, first, end) = run(true, STREAM, piece);
            assert_eq!(end, Ok(Complete { status: 200, keep_alive: true }), "piece {piece}");
            assert_eq!((events, first), (2, 1), "piece {piece}");
        }
    }

    #[test]
    fn stream_without_done_or_last_chunk_is_truncated() {
        let cut = STREAM.len() - b"e\r\ndata: [DONE]\n\n\r\n0\r\n\r\n".len();
        assert_eq!(run(true, &STREAM[..cut], 7).2, Err(ErrorKind::TruncatedStream));
        let no_last_chunk = &STREAM[..STREAM.len() - 5];
        assert_eq!(run(true, no_last_chunk, 7).2, Err(ErrorKind::TruncatedStream));
        let mut no_done = STREAM[..cut].to_vec();
        no_done.extend_from_slice(b"0\r\n\r\n");
        assert_eq!(run(true, &no_done, 7).2, Err(ErrorKind::TruncatedStream));
    }

    #[test]
    fn error_statuses_complete_with_their_status() {
        let response = b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 2\r\n\r\n{}";
        assert_eq!(run(true, response, 3).2, Ok(Complete { status: 500, keep_alive: true }));
        let response = b"HTTP/1.1 429 Too Many Requests\r\nconnection: close\r\ncontent-length: 0\r\n\r\n";
        assert_eq!(run(false, response, 100).2, Ok(Complete { status: 429, keep_alive: false }));
    }

    #[test]
    fn non_stream_answer_to_a_stream_request_is_bad() {
        assert_eq!(run(true, OK, 100).2, Err(ErrorKind::BadResponse));
    }

    #[test]
    fn framing_and_closes() {
        assert_eq!(run(false, b"", 1).2, Err(ErrorKind::Closed));
        assert_eq!(run(false, b"HTTP/1.1 200 OK\r\n", 4).2, Err(ErrorKind::BadResponse));
        assert_eq!(run(false, &OK[..OK.len() - 2], 4).2, Err(ErrorKind::Closed));
        assert_eq!(run(false, b"garbage\r\n\r\n", 4).2, Err(ErrorKind::BadResponse));
        let both = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\ntransfer-encoding: chunked\r\n\r\n";
        assert_eq!(run(false, both, 100).2, Err(ErrorKind::BadResponse));
        let twice = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-length: 3\r\n\r\nabc";
        assert_eq!(run(false, twice, 100).2, Err(ErrorKind::BadResponse));
        let mut extra = OK.to_vec();
        extra.extend_from_slice(b"HTTP");
        assert_eq!(run(false, &extra, 1000).2, Err(ErrorKind::BadResponse));
        let until_eof = b"HTTP/1.0 200 OK\r\n\r\nbody";
        assert_eq!(run(false, until_eof, 3).2, Ok(Complete { status: 200, keep_alive: false }));
        let interim = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n";
        for piece in 1..=interim.len() {
            assert_eq!(run(false, interim, piece).2, Ok(Complete { status: 204, keep_alive: true }));
        }
    }

    #[test]
    fn parser_resets_for_the_next_response() {
        let mut parser = ResponseParser::new(true);
        for _ in 0..3 {
            let progress = parser.feed(STREAM).unwrap();
            assert_eq!(progress.events, 2);
            assert!(progress.first_byte);
            assert_eq!(progress.complete.map(|complete| complete.status), Some(200));
        }
    }
}
