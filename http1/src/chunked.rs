//! A chunked transfer-coding decoder (RFC 9112 §7.1): a state machine fed with whatever bytes
//! arrived, appending the decoded data to an output buffer.

use std::fmt;

/// Longest chunk-size line we accept, extensions included.
const MAX_SIZE_LINE: usize = 1024;
/// Most trailer bytes we accept before the final CRLF.
const MAX_TRAILER: usize = 8192;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// Reading hex digits of a chunk size.
    Size,
    /// After the size: optional extensions until CR.
    Extension,
    /// Expecting the LF that ends the size line.
    SizeLf,
    /// Copying chunk data.
    Data,
    DataCr,
    DataLf,
    /// At the start of a trailer field line (or the final empty line).
    TrailerStart,
    /// A trailer field's name, up to its colon; then its value, up to CR.
    TrailerName,
    TrailerValue,
    TrailerLf,
    FinalLf,
    Done,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChunkedError {
    InvalidSize,
    SizeOverflow,
    SizeLineTooLong,
    MissingCrlf,
    TrailerTooLong,
    InvalidTrailer,
}

impl fmt::Display for ChunkedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ChunkedError::InvalidSize => "invalid chunk size",
            ChunkedError::SizeOverflow => "chunk size too large",
            ChunkedError::SizeLineTooLong => "chunk size line too long",
            ChunkedError::MissingCrlf => "chunk not terminated by CRLF",
            ChunkedError::TrailerTooLong => "chunked trailer too long",
            ChunkedError::InvalidTrailer => "invalid chunked trailer field",
        })
    }
}

/// Decodes one chunked body. Feed it bytes with [`ChunkedDecoder::feed`] until it reports done.
#[derive(Debug)]
pub struct ChunkedDecoder {
    step: Step,
    size: u64,
    digits: usize,
    line_len: usize,
    trailer_len: usize,
}

impl Default for ChunkedDecoder {
    fn default() -> Self {
        ChunkedDecoder { step: Step::Size, size: 0, digits: 0, line_len: 0, trailer_len: 0 }
    }
}

impl ChunkedDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn is_done(&self) -> bool {
        self.step == Step::Done
    }

    /// Decodes from `input`, appending data to `out`. Returns how many input bytes were consumed;
    /// fewer than `input.len()` only once the body is complete (the rest belongs to the next message).
    pub fn feed(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<usize, ChunkedError> {
        let mut i = 0;
        while i < input.len() {
            let b = input[i];
            match self.step {
                Step::Size => {
                    if let Some(d) = hex_value(b) {
                        self.digits += 1;
                        if self.digits > 16 {
                            return Err(ChunkedError::SizeOverflow);
                        }
                        self.size = self.size.checked_mul(16).ok_or(ChunkedError::SizeOverflow)? + d;
                    } else if self.digits == 0 {
                        return Err(ChunkedError::InvalidSize);
                    } else if b == b'\r' {
                        self.step = Step::SizeLf;
                    } else if b == b'\n' {
                        return Err(ChunkedError::MissingCrlf);
                    } else if b == b';' || b == b' ' || b == b'\t' {
                        self.step = Step::Extension;
                    } else {
                        return Err(ChunkedError::InvalidSize);
                    }
                    self.count_line()?;
                    i += 1;
                }
                Step::Extension => {
                    if b == b'\r' {
                        self.step = Step::SizeLf;
                    } else if b == b'\n' {
                        return Err(ChunkedError::MissingCrlf);
                    }
                    self.count_line()?;
                    i += 1;
                }
                Step::SizeLf => {
                    if b != b'\n' {
                        return Err(ChunkedError::MissingCrlf);
                    }
                    i += 1;
                    self.line_len = 0;
                    self.digits = 0;
                    self.step = if self.size == 0 { Step::TrailerStart } else { Step::Data };
                }
                Step::Data => {
                    let take = (input.len() - i).min(usize::try_from(self.size).unwrap_or(usize::MAX));
                    out.extend_from_slice(&input[i..i + take]);
                    i += take;
                    self.size -= take as u64;
                    if self.size == 0 {
                        self.step = Step::DataCr;
                    }
                }
                Step::DataCr => {
                    self.expect(b, b'\r', Step::DataLf)?;
                    i += 1;
                }
                Step::DataLf => {
                    self.expect(b, b'\n', Step::Size)?;
                    i += 1;
                }
                // Trailer lines are field lines (RFC 9112 §7.1.2), read as strictly as the head's:
                // a bare LF or a line that is no `name: value` could end the body differently
                // for another parser — a smuggled request.
                Step::TrailerStart => {
                    self.step = match b {
                        b'\r' => Step::FinalLf,
                        _ if is_tchar(b) => Step::TrailerName,
                        _ => return Err(ChunkedError::InvalidTrailer),
                    };
                    self.count_trailer()?;
                    i += 1;
                }
                Step::TrailerName => {
                    match b {
                        b':' => self.step = Step::TrailerValue,
                        _ if is_tchar(b) => {}
                        _ => return Err(ChunkedError::InvalidTrailer),
                    }
                    self.count_trailer()?;
                    i += 1;
                }
                Step::TrailerValue => {
                    match b {
                        b'\r' => self.step = Step::TrailerLf,
                        b'\t' => {}
                        _ if b < 0x20 || b == 0x7f => return Err(ChunkedError::InvalidTrailer),
                        _ => {}
                    }
                    self.count_trailer()?;
                    i += 1;
                }
                Step::TrailerLf => {
                    self.expect(b, b'\n', Step::TrailerStart)?;
                    i += 1;
                }
                Step::FinalLf => {
                    self.expect(b, b'\n', Step::Done)?;
                    i += 1;
                }
                Step::Done => return Ok(i),
            }
        }
        Ok(i)
    }

    fn expect(&mut self, got: u8, want: u8, next: Step) -> Result<(), ChunkedError> {
        if got != want {
            return Err(ChunkedError::MissingCrlf);
        }
        self.step = next;
        Ok(())
    }

    fn count_line(&mut self) -> Result<(), ChunkedError> {
        self.line_len += 1;
        if self.line_len > MAX_SIZE_LINE {
            return Err(ChunkedError::SizeLineTooLong);
        }
        Ok(())
    }

    fn count_trailer(&mut self) -> Result<(), ChunkedError> {
        self.trailer_len += 1;
        if self.trailer_len > MAX_TRAILER {
            return Err(ChunkedError::TrailerTooLong);
        }
        Ok(())
    }
}

/// A token character (RFC 9110 §5.6.2), the bytes of a field name.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn hex_value(b: u8) -> Option<u64> {
    match b {
        b'0'..=b'9' => Some(u64::from(b - b'0')),
        b'a'..=b'f' => Some(u64::from(b - b'a' + 10)),
        b'A'..=b'F' => Some(u64::from(b - b'A' + 10)),
        _ => None,
    }
}

/// Appends `data` to `out` as one chunk (nothing for empty data: an empty chunk ends the body).
pub fn encode_chunk(data: &[u8], out: &mut Vec<u8>) {
    if data.is_empty() {
        return;
    }
    write_hex(data.len(), out);
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
}

/// The last chunk and the end of a chunked body (no trailers).
pub const LAST_CHUNK: &[u8] = b"0\r\n\r\n";

fn write_hex(mut n: usize, out: &mut Vec<u8>) {
    let mut digits = [0u8; 16];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b"0123456789abcdef"[n & 15];
        n >>= 4;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(input: &[u8]) -> Result<(Vec<u8>, usize, bool), ChunkedError> {
        let mut d = ChunkedDecoder::new();
        let mut out = Vec::new();
        let n = d.feed(input, &mut out)?;
        Ok((out, n, d.is_done()))
    }

    #[test]
    fn decodes_chunks_extensions_and_trailers() {
        let (out, n, done) = decode_all(b"5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-T: 1\r\n\r\nNEXT").unwrap();
        assert_eq!(out, b"hello world");
        assert!(done);
        assert_eq!(n, 40);
    }

    #[test]
    fn decodes_byte_by_byte() {
        let input = b"a\r\n0123456789\r\n0\r\n\r\n";
        let mut d = ChunkedDecoder::new();
        let mut out = Vec::new();
        for b in input {
            assert_eq!(d.feed(std::slice::from_ref(b), &mut out).unwrap(), 1);
        }
        assert!(d.is_done());
        assert_eq!(out, b"0123456789");
    }

    #[test]
    fn rejects_bad_framing() {
        assert_eq!(decode_all(b"x\r\n").unwrap_err(), ChunkedError::InvalidSize);
        assert_eq!(decode_all(b"\r\n").unwrap_err(), ChunkedError::InvalidSize);
        assert_eq!(decode_all(b"11111111111111111\r\n").unwrap_err(), ChunkedError::SizeOverflow);
        assert_eq!(decode_all(b"3\r\nabcX").unwrap_err(), ChunkedError::MissingCrlf);
        assert_eq!(decode_all(b"3\nabc").unwrap_err(), ChunkedError::MissingCrlf);
        let long = [b"1;".as_slice(), &[b'a'; 2000]].concat();
        assert_eq!(decode_all(&long).unwrap_err(), ChunkedError::SizeLineTooLong);
    }

    #[test]
    fn trailer_lines_are_strict_field_lines() {
        assert!(decode_all(b"0\r\nX-A: 1\r\nX-B:\t2\r\n\r\n").unwrap().2);
        for bad in [
            &b"0\r\n\nGET /smuggled HTTP/1.1\r\n\r\n"[..], // a bare LF ending the body
            b"0\r\nno colon here\r\n\r\n",
            b"0\r\n: empty name\r\n\r\n",
            b"0\r\nX-A: a\x00b\r\n\r\n",
            b"0\r\nX-A: 1\nX-B: 2\r\n\r\n",
        ] {
            let err = decode_all(bad).unwrap_err();
            assert!(matches!(err, ChunkedError::InvalidTrailer), "{:?}: {err:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn encodes_what_it_decodes() {
        let mut enc = Vec::new();
        encode_chunk(&[7u8; 300], &mut enc);
        encode_chunk(b"", &mut enc);
        enc.extend_from_slice(LAST_CHUNK);
        assert!(enc.starts_with(b"12c\r\n"));
        let (out, n, done) = decode_all(&enc).unwrap();
        assert_eq!((out, n, done), (vec![7u8; 300], enc.len(), true));
    }
}
