//! W3C Trace Context (`traceparent`, `tracestate`): a caller's trace is continued, and the
//! upstream learns the attempt's span as its parent.

use pointwork_core::Rng;

/// The W3C Trace Context headers' values, as sent.
#[derive(Clone, Copy, Default)]
pub struct TraceContext<'a> {
    pub parent: Option<&'a [u8]>,
    pub state: Option<&'a [u8]>,
}

/// A caller's `traceparent`: version `00`, a trace id and parent span id that are not all
/// zeros, and the flags. Anything else starts a new trace (W3C: an invalid header is ignored).
pub fn parse_traceparent(value: &[u8]) -> Option<([u8; 16], [u8; 8], u8)> {
    let value = value.trim_ascii();
    // `00-` 32 hex `-` 16 hex `-` 2 hex; a future version may append fields after a `-`.
    if value.len() < 55 || (value.len() > 55 && value[55] != b'-') {
        return None;
    }
    let version = hex_byte(&value[0..2])?;
    if version == 0xff
        || (version == 0 && value.len() != 55)
        || value[2] != b'-'
        || value[35] != b'-'
        || value[52] != b'-'
    {
        return None;
    }
    let mut trace = [0u8; 16];
    let mut parent = [0u8; 8];
    for (i, b) in trace.iter_mut().enumerate() {
        *b = hex_byte(&value[3 + 2 * i..5 + 2 * i])?;
    }
    for (i, b) in parent.iter_mut().enumerate() {
        *b = hex_byte(&value[36 + 2 * i..38 + 2 * i])?;
    }
    let flags = hex_byte(&value[53..55])?;
    if trace == [0; 16] || parent == [0; 8] {
        return None;
    }
    Some((trace, parent, flags))
}

/// Lower-case hex only, as the specification writes it.
fn hex_byte(two: &[u8]) -> Option<u8> {
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    Some(digit(two[0])? << 4 | digit(two[1])?)
}

/// `00-<trace>-<span>-01`: the header an upstream gets (sampled: every request is exported).
pub fn traceparent(trace: &[u8; 16], span: &[u8; 8]) -> [u8; 55] {
    let mut out = [0u8; 55];
    out[..3].copy_from_slice(b"00-");
    write_hex(&mut out[3..35], trace);
    out[35] = b'-';
    write_hex(&mut out[36..52], span);
    out[52..55].copy_from_slice(b"-01");
    out
}

pub fn hex(bytes: &[u8]) -> String {
    let mut out = vec![0u8; bytes.len() * 2];
    write_hex(&mut out, bytes);
    String::from_utf8(out).unwrap_or_default()
}

fn write_hex(out: &mut [u8], bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for (i, b) in bytes.iter().enumerate() {
        out[2 * i] = DIGITS[usize::from(b >> 4)];
        out[2 * i + 1] = DIGITS[usize::from(b & 15)];
    }
}

/// A `tracestate` worth keeping: printable ASCII, at most 512 bytes (W3C's limit for
/// propagation).
pub fn valid_tracestate(value: &[u8]) -> Option<&str> {
    let value = value.trim_ascii();
    let ok = !value.is_empty() && value.len() <= 512 && value.iter().all(|&b| (0x20..0x7f).contains(&b));
    ok.then(|| std::str::from_utf8(value).ok()).flatten()
}

/// A new trace id (never all zeros, which W3C Trace Context forbids).
pub(super) fn new_trace_id(ids: &mut Rng) -> [u8; 16] {
    let mut id = [0u8; 16];
    id[..8].copy_from_slice(&ids.next_u64().to_le_bytes());
    id[8..].copy_from_slice(&ids.next_u64().to_le_bytes());
    if id == [0; 16] {
        id[15] = 1;
    }
    id
}

/// A new span id (never zero).
pub(super) fn new_span_id(ids: &mut Rng) -> [u8; 8] {
    match ids.next_u64() {
        0 => 1u64.to_le_bytes(),
        n => n.to_le_bytes(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn reads_the_specifications_example() {
        let (trace, parent, flags) = parse_traceparent(SAMPLE.as_bytes()).unwrap();
        assert_eq!(hex(&trace), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(hex(&parent), "00f067aa0ba902b7");
        assert_eq!(flags, 1);
        assert_eq!(&traceparent(&trace, &parent)[..], SAMPLE.as_bytes());
    }

    #[test]
    fn refuses_what_the_specification_refuses() {
        for bad in [
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "",
        ] {
            assert_eq!(parse_traceparent(bad.as_bytes()), None, "{bad}");
        }
        // A later version may add fields.
        let future = "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-comes";
        assert!(parse_traceparent(future.as_bytes()).is_some());
    }

    #[test]
    fn tracestate_is_kept_when_printable_and_short() {
        assert_eq!(valid_tracestate(b" congo=t61rcWkgMzE "), Some("congo=t61rcWkgMzE"));
        assert_eq!(valid_tracestate(b"a=\x01"), None);
        assert_eq!(valid_tracestate(&[b'a'; 513]), None);
    }
}
