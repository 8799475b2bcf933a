//! RESP2, the Redis protocol, as a pure codec: a command is an array of bulk strings, a reply
//! is parsed from the bytes received so far (`Ok(None)` until it is whole). The store's IO
//! drives it.

use std::fmt;

/// The longest bulk string Redis stores (`proto-max-bulk-len`, 512 MB).
const BULK_MAX: usize = 512 * 1024 * 1024;
/// The most elements an array reply may announce (the store sends no command answered by one).
const ARRAY_MAX: usize = 1024 * 1024;
/// How deeply arrays may nest.
const DEPTH_MAX: usize = 8;

/// One reply.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Reply {
    /// `+OK`.
    Simple(String),
    /// `-ERR …`: the command failed.
    Error(String),
    Integer(i64),
    /// A bulk string; `None` is the nil reply (`$-1`, e.g. `GET` of a missing key).
    Bulk(Option<Vec<u8>>),
    /// `None` is the nil array.
    Array(Option<Vec<Reply>>),
}

impl Reply {
    /// Whether this is the `+OK` of `SET`, `AUTH` and `SELECT`.
    pub(crate) fn is_ok(&self) -> bool {
        matches!(self, Reply::Simple(s) if s == "OK")
    }
}

impl fmt::Display for Reply {
    /// A short description for logs (never a value's bytes: they may be a cached answer).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reply::Simple(s) => write!(f, "+{s}"),
            Reply::Error(e) => write!(f, "-{e}"),
            Reply::Integer(n) => write!(f, ":{n}"),
            Reply::Bulk(Some(b)) => write!(f, "a bulk string of {} bytes", b.len()),
            Reply::Bulk(None) => f.write_str("nil"),
            Reply::Array(Some(a)) => write!(f, "an array of {} replies", a.len()),
            Reply::Array(None) => f.write_str("a nil array"),
        }
    }
}

/// Bytes that are not RESP2.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct ProtocolError(pub(crate) String);

impl fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Appends a command (`*N` then each argument as a bulk string) to `out`.
pub(crate) fn encode(out: &mut Vec<u8>, args: &[&[u8]]) {
    let mut n = itoa::Buffer::new();
    out.push(b'*');
    out.extend_from_slice(n.format(args.len()).as_bytes());
    out.extend_from_slice(b"\r\n");
    for arg in args {
        out.push(b'$');
        out.extend_from_slice(n.format(arg.len()).as_bytes());
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(arg);
        out.extend_from_slice(b"\r\n");
    }
}

/// Parses the reply at the start of `buf`: the reply and the bytes it took, or `None` when
/// more bytes are needed.
pub(crate) fn parse(buf: &[u8]) -> Result<Option<(Reply, usize)>, ProtocolError> {
    let mut at = 0;
    Ok(parse_at(buf, &mut at, 0)?.map(|reply| (reply, at)))
}

fn parse_at(buf: &[u8], at: &mut usize, depth: usize) -> Result<Option<Reply>, ProtocolError> {
    let Some(line) = line(buf, *at)? else { return Ok(None) };
    let (kind, text) = match line.split_first() {
        Some((kind, text)) => (*kind, text),
        None => return Err(ProtocolError("an empty line where a reply starts".into())),
    };
    let after_line = *at + line.len() + 2;
    let reply = match kind {
        b'+' => Reply::Simple(String::from_utf8_lossy(text).into_owned()),
        b'-' => Reply::Error(String::from_utf8_lossy(text).into_owned()),
        b':' => Reply::Integer(integer(text)?),
        b'$' => {
            let Some(len) = length(text, BULK_MAX)? else {
                *at = after_line;
                return Ok(Some(Reply::Bulk(None)));
            };
            let end = after_line + len;
            if buf.len() < end + 2 {
                return Ok(None);
            }
            if &buf[end..end + 2] != b"\r\n" {
                return Err(ProtocolError("a bulk string not ended by CRLF".into()));
            }
            *at = end + 2;
            return Ok(Some(Reply::Bulk(Some(buf[after_line..end].to_vec()))));
        }
        b'*' => {
            if depth == DEPTH_MAX {
                return Err(ProtocolError(format!("arrays nested more than {DEPTH_MAX} deep")));
            }
            let Some(len) = length(text, ARRAY_MAX)? else {
                *at = after_line;
                return Ok(Some(Reply::Array(None)));
            };
            let mut next = after_line;
            let mut items = Vec::with_capacity(len.min(64));
            for _ in 0..len {
                let Some(item) = parse_at(buf, &mut next, depth + 1)? else { return Ok(None) };
                items.push(item);
            }
            *at = next;
            return Ok(Some(Reply::Array(Some(items))));
        }
        other => return Err(ProtocolError(format!("unknown reply type byte 0x{other:02x}"))),
    };
    *at = after_line;
    Ok(Some(reply))
}

/// The line starting at `at`, without its CRLF; `None` when its end has not arrived.
fn line(buf: &[u8], at: usize) -> Result<Option<&[u8]>, ProtocolError> {
    let rest = &buf[at..];
    let Some(lf) = memchr::memchr(b'\n', rest) else { return Ok(None) };
    match rest[..lf].strip_suffix(b"\r") {
        Some(line) => Ok(Some(line)),
        None => Err(ProtocolError("a line ended by LF without CR".into())),
    }
}

fn integer(text: &[u8]) -> Result<i64, ProtocolError> {
    std::str::from_utf8(text)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| ProtocolError(format!("not an integer: {:?}", String::from_utf8_lossy(text))))
}

/// A bulk string's or an array's length: `None` for -1 (nil).
fn length(text: &[u8], max: usize) -> Result<Option<usize>, ProtocolError> {
    match integer(text)? {
        -1 => Ok(None),
        n if n >= 0 && n as u64 <= max as u64 => Ok(Some(n as usize)),
        n => Err(ProtocolError(format!("length {n} out of range"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(bytes: &[u8]) -> Reply {
        let (reply, used) = parse(bytes).unwrap().expect("a whole reply");
        assert_eq!(used, bytes.len());
        reply
    }

    #[test]
    fn encodes_commands_as_arrays_of_bulk_strings() {
        let mut out = Vec::new();
        encode(&mut out, &[b"SET", b"k", b"a\r\nb\0", b"PX", b"1000"]);
        assert_eq!(out, b"*5\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\na\r\nb\0\r\n$2\r\nPX\r\n$4\r\n1000\r\n");
        let mut out = Vec::new();
        encode(&mut out, &[b"GET", b""]);
        assert_eq!(out, b"*2\r\n$3\r\nGET\r\n$0\r\n\r\n");
    }

    #[test]
    fn parses_every_reply_type() {
        assert_eq!(whole(b"+OK\r\n"), Reply::Simple("OK".into()));
        assert!(whole(b"+OK\r\n").is_ok());
        assert!(!whole(b"+QUEUED\r\n").is_ok());
        assert_eq!(whole(b"-ERR wrong\r\n"), Reply::Error("ERR wrong".into()));
        assert_eq!(whole(b":-42\r\n"), Reply::Integer(-42));
        assert_eq!(whole(b"$-1\r\n"), Reply::Bulk(None));
        assert_eq!(whole(b"$0\r\n\r\n"), Reply::Bulk(Some(Vec::new())));
        assert_eq!(whole(b"$4\r\n\r\n\0\xff\r\n"), Reply::Bulk(Some(b"\r\n\0\xff".to_vec())));
        assert_eq!(whole(b"*-1\r\n"), Reply::Array(None));
        assert_eq!(
            whole(b"*3\r\n:1\r\n$1\r\nx\r\n*1\r\n+a\r\n"),
            Reply::Array(Some(vec![
                Reply::Integer(1),
                Reply::Bulk(Some(b"x".to_vec())),
                Reply::Array(Some(vec![Reply::Simple("a".into())]))
            ]))
        );
    }

    #[test]
    fn waits_for_the_whole_reply_at_every_split() {
        let bytes = b"*2\r\n$5\r\nhello\r\n:7\r\n";
        for cut in 0..bytes.len() {
            assert_eq!(parse(&bytes[..cut]).unwrap(), None, "cut at {cut}");
        }
        assert_eq!(whole(bytes), Reply::Array(Some(vec![Reply::Bulk(Some(b"hello".to_vec())), Reply::Integer(7)])));
    }

    #[test]
    fn parses_pipelined_replies_one_at_a_time() {
        let bytes = b"+OK\r\n+OK\r\n$1\r\nv\r\n";
        let (first, used) = parse(bytes).unwrap().unwrap();
        assert_eq!((first, used), (Reply::Simple("OK".into()), 5));
        let (second, _) = parse(&bytes[5..]).unwrap().unwrap();
        assert!(second.is_ok());
        assert_eq!(parse(&bytes[10..]).unwrap().unwrap(), (Reply::Bulk(Some(b"v".to_vec())), 7));
    }

    #[test]
    fn rejects_what_is_not_resp() {
        for bad in [
            &b"HTTP/1.1 400\r\n"[..],
            b"\r\n",
            b"+OK\n",
            b":x\r\n",
            b"$-2\r\n",
            b"$3\r\nabcd\r\n",
            b"$99999999999\r\n",
            b"*-5\r\n",
        ] {
            assert!(parse(bad).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
        let deep = "*1\r\n".repeat(DEPTH_MAX + 1);
        assert!(parse(deep.as_bytes()).is_err());
    }

    #[test]
    fn describes_replies_without_their_bytes() {
        assert_eq!(Reply::Bulk(Some(b"secret".to_vec())).to_string(), "a bulk string of 6 bytes");
        assert_eq!(Reply::Error("WRONGTYPE x".into()).to_string(), "-WRONGTYPE x");
    }
}
