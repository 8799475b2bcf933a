//! Writing HTTP/1.1 heads into a byte buffer. The caller appends the first body bytes to the same
//! buffer so a head and its body leave in one write (no Nagle stall, one syscall).

use crate::status::reason;

/// Appends a status line.
pub fn status_line(out: &mut Vec<u8>, status: u16) {
    out.extend_from_slice(b"HTTP/1.1 ");
    push_decimal(out, u64::from(status));
    out.push(b' ');
    out.extend_from_slice(reason(status).as_bytes());
    out.extend_from_slice(b"\r\n");
}

/// Appends one header field (room reserved once: the four parts then copy without a check each).
pub fn header(out: &mut Vec<u8>, name: &str, value: &[u8]) {
    out.reserve(name.len() + value.len() + 4);
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b": ");
    out.extend_from_slice(value);
    out.extend_from_slice(b"\r\n");
}

pub fn header_decimal(out: &mut Vec<u8>, name: &str, value: u64) {
    out.reserve(name.len() + 24);
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b": ");
    push_decimal(out, value);
    out.extend_from_slice(b"\r\n");
}

/// Ends the head.
pub fn end_head(out: &mut Vec<u8>) {
    out.extend_from_slice(b"\r\n");
}

/// Appends `n` in decimal, two digits per division (a status, a length: one to three steps).
pub fn push_decimal(out: &mut Vec<u8>, mut n: u64) {
    const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
        2021222324252627282930313233343536373839\
        4041424344454647484950515253545556575859\
        6061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899";
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    while n >= 100 {
        let pair = (n % 100) as usize * 2;
        n /= 100;
        i -= 2;
        digits[i..i + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    }
    if n >= 10 {
        i -= 2;
        digits[i..i + 2].copy_from_slice(&PAIRS[n as usize * 2..n as usize * 2 + 2]);
    } else {
        i -= 1;
        digits[i] = b'0' + n as u8;
    }
    out.extend_from_slice(&digits[i..]);
}

/// A complete response with a fixed body: head, `Content-Length`, extra headers, body.
pub fn full_response(
    out: &mut Vec<u8>,
    status: u16,
    content_type: &str,
    extra: &[(&str, &[u8])],
    body: &[u8],
    close: bool,
) {
    status_line(out, status);
    header(out, "content-type", content_type.as_bytes());
    header_decimal(out, "content-length", body.len() as u64);
    for (name, value) in extra {
        header(out, name, value);
    }
    if close {
        header(out, "connection", b"close");
    }
    end_head(out);
    out.extend_from_slice(body);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_a_full_response() {
        let mut out = Vec::new();
        full_response(&mut out, 429, "application/json", &[("retry-after", b"3")], b"{}", true);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json\r\ncontent-length: 2\r\nretry-after: 3\r\nconnection: close\r\n\r\n{}"
        );
    }

    #[test]
    fn decimals() {
        for n in [0u64, 7, 9, 10, 99, 100, 101, 999, 1000, 12345, 200_000, u64::MAX / 7, u64::MAX] {
            let mut out = Vec::new();
            push_decimal(&mut out, n);
            assert_eq!(String::from_utf8(out).unwrap(), n.to_string());
        }
    }
}
