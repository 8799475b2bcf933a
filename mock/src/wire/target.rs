//! The parts of a request head that the provider modules read: the request target (path and
//! query as received), header lookups, query values and percent-decoding.

/// The request target (path and query) of a request head as received.
pub(crate) fn request_target(head: &[u8]) -> &str {
    let line = head.split(|&byte| byte == b'\r' || byte == b'\n').next().unwrap_or_default();
    let target = line.split(|&byte| byte == b' ').nth(1).unwrap_or_default();
    std::str::from_utf8(target).unwrap_or_default()
}

/// A header's value (trimmed), the first of that name.
pub(crate) fn header<'h>(head: &'h [u8], name: &str) -> Option<&'h str> {
    headers(head).find_map(|(key, value)| key.eq_ignore_ascii_case(name).then_some(value))
}

/// Every header line of a head as (name, trimmed value), in order.
pub(crate) fn headers(head: &[u8]) -> impl Iterator<Item = (&str, &str)> {
    let head = std::str::from_utf8(head).unwrap_or_default();
    head.split("\r\n").skip(1).filter_map(|line| {
        let (key, value) = line.split_once(':')?;
        Some((key.trim(), value.trim()))
    })
}

/// The first value of `name` in a query string, percent-decoded.
pub(crate) fn query_value(query: &str, name: &str) -> Option<String> {
    query.split('&').find_map(|pair| {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        (percent_decode(key) == name).then(|| percent_decode(value))
    })
}

/// Percent-decoding (`+` stays a plus: this is for paths and query values).
pub(crate) fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let hex = |at: usize| bytes.get(at).and_then(|&byte| (byte as char).to_digit(16));
        match (bytes[index], hex(index + 1), hex(index + 2)) {
            (b'%', Some(high), Some(low)) => {
                out.push((high * 16 + low) as u8);
                index += 3;
            }
            (byte, _, _) => {
                out.push(byte);
                index += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::response::status_of;

    #[test]
    fn headers_queries_and_decoding() {
        let head = b"POST /a?key=k%3D1&x HTTP/1.1\r\nHost: h\r\nX-Goog-Api-Key:  abc \r\n\r\n";
        assert_eq!(header(head, "x-goog-api-key"), Some("abc"));
        assert_eq!(header(head, "missing"), None);
        assert_eq!(headers(head).count(), 2);
        assert_eq!(query_value("key=k%3D1&x", "key").as_deref(), Some("k=1"));
        assert_eq!(query_value("key=k%3D1&x", "x").as_deref(), Some(""));
        assert_eq!(query_value("alt=sse", "key"), None);
        assert_eq!(percent_decode("anthropic.claude-v1%3A0%zz"), "anthropic.claude-v1:0%zz");
    }

    #[test]
    fn reads_the_target_and_the_status() {
        assert_eq!(request_target(b"GET /api/v1/models?x=1 HTTP/1.1\r\nHost: a\r\n\r\n"), "/api/v1/models?x=1");
        assert_eq!(status_of(b"HTTP/1.1 429 Too Many Requests\r\n"), 429);
        assert_eq!(status_of(b""), 0);
    }
}
