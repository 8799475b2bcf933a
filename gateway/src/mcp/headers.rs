//! The few request headers the MCP endpoint reads, found in the head as received (the
//! codec keeps only the model routes' headers).

/// The value of header `name` (lowercase), trimmed.
pub fn find<'a>(head: &'a [u8], name: &str) -> Option<&'a [u8]> {
    lines(head).find(|(n, _)| n.eq_ignore_ascii_case(name.as_bytes())).map(|(_, v)| v)
}

/// The value of header `name` when it is UTF-8.
pub fn find_str<'a>(head: &'a [u8], name: &str) -> Option<&'a str> {
    find(head, name).and_then(|v| std::str::from_utf8(v).ok())
}

/// Every header, name lowercased, value as text (those that are not UTF-8 are left out).
pub fn all(head: &[u8]) -> Vec<(String, String)> {
    lines(head)
        .filter_map(|(n, v)| {
            Some((std::str::from_utf8(n).ok()?.to_ascii_lowercase(), std::str::from_utf8(v).ok()?.to_string()))
        })
        .collect()
}

/// The header lines after the request line: name and trimmed value.
fn lines(head: &[u8]) -> impl Iterator<Item = (&[u8], &[u8])> {
    head.split(|b| *b == b'\n').skip(1).filter_map(|line| {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let colon = memchr::memchr(b':', line)?;
        Some((&line[..colon], line[colon + 1..].trim_ascii()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_by_name_in_any_case() {
        let head = b"POST /mcp HTTP/1.1\r\nHost: x\r\nMcp-Session-Id:  abc \r\nX-Litellm-Api-Key: Bearer sk-1\r\n\r\n";
        assert_eq!(find_str(head, "mcp-session-id"), Some("abc"));
        assert_eq!(find(head, "x-litellm-api-key"), Some(&b"Bearer sk-1"[..]));
        assert_eq!(find(head, "accept"), None);
        assert_eq!(all(head)[0], ("host".to_string(), "x".to_string()));
    }
}
