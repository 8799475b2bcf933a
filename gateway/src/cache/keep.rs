//! The tee of a miss: it reads what the client is sent (head and framed body, as written) and
//! keeps the body, de-chunked, while it fits. Whether the answer is then stored is decided once
//! it has ended (`look::Miss::store`).

use crate::http::chunked::ChunkedDecoder;
use crate::http::response::parse_response_head;
use crate::http::BodyFraming;

/// Largest response head read.
const MAX_HEAD: usize = 64 * 1024;

/// What the client was sent, kept.
pub(crate) struct Keep {
    max: usize,
    /// The head until it has ended; then unused.
    head: Vec<u8>,
    framing: Option<Framing>,
    body: Vec<u8>,
    /// The answer cannot be stored: not a 200, malformed, or over `max`.
    spoiled: bool,
}

enum Framing {
    Length(u64),
    Chunked(ChunkedDecoder),
}

impl Keep {
    /// Keeps bodies of at most `max` bytes.
    pub(crate) fn new(max: usize) -> Keep {
        Keep { max, head: Vec::new(), framing: None, body: Vec::new(), spoiled: false }
    }

    /// Reads `bytes`, the next that went to the client.
    pub(crate) fn saw(&mut self, mut bytes: &[u8]) {
        if self.spoiled {
            return;
        }
        if self.framing.is_none() {
            let before = self.head.len();
            self.head.extend_from_slice(bytes);
            let framing = match parse_response_head(&self.head, MAX_HEAD) {
                Ok(Some(head)) if head.status == 200 => {
                    bytes = &bytes[head.head_len - before..];
                    head.framing
                }
                Ok(None) => return,
                Ok(Some(_)) | Err(_) => return self.spoil(),
            };
            self.head = Vec::new();
            self.framing = Some(match framing {
                BodyFraming::Length(n) => Framing::Length(n),
                BodyFraming::Chunked => Framing::Chunked(ChunkedDecoder::new()),
                BodyFraming::UntilClose => return self.spoil(),
            });
        }
        let fits = match &mut self.framing {
            Some(Framing::Length(left)) => {
                let take = bytes.len().min(usize::try_from(*left).unwrap_or(usize::MAX));
                *left -= take as u64;
                self.body.extend_from_slice(&bytes[..take]);
                take == bytes.len()
            }
            Some(Framing::Chunked(decoder)) => decoder.feed(bytes, &mut self.body).is_ok(),
            None => false,
        };
        if !fits || self.body.len() > self.max {
            self.spoil();
        }
    }

    fn spoil(&mut self) {
        self.spoiled = true;
        self.body = Vec::new();
        self.head = Vec::new();
    }

    /// The whole body, when a 200 arrived whole and within the bound.
    pub(crate) fn finish(self) -> Option<Vec<u8>> {
        let complete = match &self.framing {
            Some(Framing::Length(left)) => *left == 0,
            Some(Framing::Chunked(decoder)) => decoder.is_done(),
            None => false,
        };
        (complete && !self.spoiled).then_some(self.body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whole_body_is_kept_in_pieces_as_it_went_out() {
        let mut keep = Keep::new(1024);
        keep.saw(b"HTTP/1.1 200 OK\r\ncontent-le");
        keep.saw(b"ngth: 11\r\n\r\nhello");
        keep.saw(b" world");
        assert_eq!(keep.finish().as_deref(), Some(&b"hello world"[..]));
    }

    #[test]
    fn a_chunked_stream_is_kept_de_chunked_once_it_ended() {
        let mut keep = Keep::new(1024);
        keep.saw(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\ndata:\r\n");
        keep.saw(b"3\r\n x\n\r\n");
        let mut unfinished = Keep::new(1024);
        unfinished.saw(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\ndata:\r\n");
        assert_eq!(unfinished.finish(), None);
        keep.saw(b"0\r\n\r\n");
        assert_eq!(keep.finish().as_deref(), Some(&b"data: x\n"[..]));
    }

    #[test]
    fn errors_short_bodies_and_large_ones_are_not_kept() {
        let mut error = Keep::new(1024);
        error.saw(b"HTTP/1.1 429 Too Many Requests\r\ncontent-length: 2\r\n\r\n{}");
        assert_eq!(error.finish(), None);
        let mut short = Keep::new(1024);
        short.saw(b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc");
        assert_eq!(short.finish(), None);
        let mut large = Keep::new(4);
        large.saw(b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n0123456789");
        assert_eq!(large.finish(), None);
    }
}
