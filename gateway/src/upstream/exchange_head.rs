//! Reading an upstream response's head: until its empty line, interim (1xx) heads skipped.

use std::time::Instant;

use super::MAX_RESPONSE_HEAD;
use crate::http::response::parse_response_head;
use crate::upstream::conn::UpstreamConn;

pub(super) enum HeadFailure {
    Closed,
    Timeout,
    Malformed(String),
}

/// Reads until a complete response head (1xx interim responses skipped) is in the buffer. The
/// head is parsed once, by [`respond`]: here a head that has ended is only looked at for a 1xx
/// status, and a partial one parsed so that garbage fails before the deadline.
pub(super) async fn read_head(
    conn: &mut UpstreamConn,
    mut buf: Vec<u8>,
    deadline: Instant,
) -> Result<Vec<u8>, HeadFailure> {
    let deadline = monoio::time::Instant::from_std(deadline);
    loop {
        if head_has_ended(&buf) && starts_final_head(&buf) {
            return Ok(buf);
        }
        if buf.is_empty() {
            // Nothing to parse yet.
        } else {
            match parse_response_head(&buf, MAX_RESPONSE_HEAD) {
                Ok(Some(head)) if (100..200).contains(&head.status) && head.status != 101 => {
                    let n = head.head_len;
                    buf.drain(..n);
                    continue;
                }
                Ok(Some(_)) => return Ok(buf),
                Ok(None) => {}
                Err(e) => return Err(HeadFailure::Malformed(e.to_string())),
            }
        }
        match monoio::time::timeout_at(deadline, conn.read_more(buf)).await {
            Err(_) => return Err(HeadFailure::Timeout),
            Ok((Ok(0), _)) | Ok((Err(_), _)) => return Err(HeadFailure::Closed),
            Ok((Ok(_), back)) => buf = back,
        }
    }
}

/// Whether the buffer holds an empty line, where every response head ends (httparse ends one at
/// a bare LF too).
pub(super) fn head_has_ended(buf: &[u8]) -> bool {
    memchr::memchr_iter(b'\n', buf).any(|at| matches!(buf.get(at + 1..), Some([b'\n', ..] | [b'\r', b'\n', ..])))
}

/// A status line of a final response (not 1xx, or 101): returned unparsed. An interim head is
/// parsed to be skipped, and what is no status line parsed to fail as garbage.
pub(super) fn starts_final_head(buf: &[u8]) -> bool {
    buf.starts_with(b"HTTP/1.") && (buf.get(9) != Some(&b'1') || buf.get(10..12) == Some(b"01"))
}
