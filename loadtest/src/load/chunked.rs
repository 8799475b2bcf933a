//! A chunked transfer-coding decoder (RFC 9112 §7.1) that takes its input in pieces of any size
//! and hands the chunk data on without copying. Line endings must be CRLF.

/// Chunk sizes above this are refused (a 16-digit hex size would overflow nothing, but no mock or
/// gateway answer is anywhere near it: it is a framing error).
const MAX_CHUNK: u64 = 1 << 40;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Hex digits of a chunk size; `any` once at least one was read.
    Size {
        size: u64,
        any: bool,
    },
    /// A chunk extension, skipped up to its CR.
    Extension {
        size: u64,
    },
    /// The LF after a size line's CR.
    SizeLf {
        size: u64,
    },
    Data {
        remaining: u64,
    },
    DataCr,
    DataLf,
    /// After the last chunk: the start of a trailer line or the final CRLF.
    TrailerStart,
    TrailerLine,
    TrailerLf,
    EndLf,
    Done,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkError;

#[derive(Debug, Clone)]
pub struct ChunkedDecoder {
    state: State,
}

impl Default for ChunkedDecoder {
    fn default() -> Self {
        ChunkedDecoder { state: State::Size { size: 0, any: false } }
    }
}

impl ChunkedDecoder {
    /// The last chunk and the trailer section have been read.
    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// Decodes `input`, calling `data` with every piece of chunk data. Returns how many bytes
    /// were used: all of them unless the body ended inside `input`.
    pub fn feed(&mut self, input: &[u8], mut data: impl FnMut(&[u8])) -> Result<usize, ChunkError> {
        let mut at = 0;
        while at < input.len() {
            let byte = input[at];
            self.state = match self.state {
                State::Size { size, any } => match byte {
                    b'0'..=b'9' | b'a'..=b'f' | b'A'..=b'F' => {
                        let digit = (byte as char).to_digit(16).unwrap_or(0) as u64;
                        let size = size * 16 + digit;
                        if size > MAX_CHUNK {
                            return Err(ChunkError);
                        }
                        State::Size { size, any: true }
                    }
                    b';' | b' ' | b'\t' if any => State::Extension { size },
                    b'\r' if any => State::SizeLf { size },
                    _ => return Err(ChunkError),
                },
                State::Extension { size } => match byte {
                    b'\r' => State::SizeLf { size },
                    b'\n' => return Err(ChunkError),
                    _ => State::Extension { size },
                },
                State::SizeLf { size } => match (byte, size) {
                    (b'\n', 0) => State::TrailerStart,
                    (b'\n', size) => State::Data { remaining: size },
                    _ => return Err(ChunkError),
                },
                State::Data { remaining } => {
                    let take = (input.len() - at).min(usize::try_from(remaining).unwrap_or(usize::MAX));
                    data(&input[at..at + take]);
                    at += take;
                    let remaining = remaining - take as u64;
                    self.state = if remaining == 0 { State::DataCr } else { State::Data { remaining } };
                    continue;
                }
                State::DataCr => match byte {
                    b'\r' => State::DataLf,
                    _ => return Err(ChunkError),
                },
                State::DataLf => match byte {
                    b'\n' => State::Size { size: 0, any: false },
                    _ => return Err(ChunkError),
                },
                State::TrailerStart => match byte {
                    b'\r' => State::EndLf,
                    b'\n' => return Err(ChunkError),
                    _ => State::TrailerLine,
                },
                State::TrailerLine => match byte {
                    b'\r' => State::TrailerLf,
                    b'\n' => return Err(ChunkError),
                    _ => State::TrailerLine,
                },
                State::TrailerLf => match byte {
                    b'\n' => State::TrailerStart,
                    _ => return Err(ChunkError),
                },
                State::EndLf => match byte {
                    b'\n' => {
                        self.state = State::Done;
                        return Ok(at + 1);
                    }
                    _ => return Err(ChunkError),
                },
                State::Done => return Ok(at),
            };
            at += 1;
        }
        Ok(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_in_pieces(input: &[u8], piece: usize) -> Result<(Vec<u8>, bool, usize), ChunkError> {
        let mut decoder = ChunkedDecoder::default();
        let mut out = Vec::new();
        let mut used = 0;
        for part in input.chunks(piece.max(1)) {
            used += decoder.feed(part, |data| out.extend_from_slice(data))?;
            if decoder.is_done() {
                break;
            }
        }
        Ok((out, decoder.is_done(), used))
    }

    #[test]
    fn decodes_in_any_pieces() {
        let body = b"5\r\nhello\r\n1;ext=1\r\n \r\nA\r\n0123456789\r\n0\r\nx-t: 1\r\n\r\nNEXT";
        for piece in 1..=body.len() {
            let (out, done, used) = decode_in_pieces(body, piece).unwrap();
            assert_eq!(out, b"hello 0123456789", "piece {piece}");
            assert!(done);
            assert_eq!(used, body.len() - 4, "stops at the end of the body (piece {piece})");
        }
    }

    #[test]
    fn incomplete_is_not_done() {
        let (_, done, _) = decode_in_pieces(b"5\r\nhello\r\n", 3).unwrap();
        assert!(!done);
        let (_, done, _) = decode_in_pieces(b"0\r\n", 3).unwrap();
        assert!(!done);
    }

    #[test]
    fn refuses_bad_framing() {
        for bad in [
            &b"\r\n"[..],
            b"x\r\n",
            b"5\nhello\r\n",
            b"5\r\nhelloX\r\n",
            b"5\r\nhello\n0\r\n\r\n",
            b"0\r\n\n",
            b"fffffffffffffffff\r\n",
        ] {
            assert!(decode_in_pieces(bad, 64).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
    }
}
