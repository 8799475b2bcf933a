//! One request to a route whose provider module checks and answers it whole (Gemini, Vertex AI,
//! Bedrock): what [`dispatch`](super::dispatch) decided for it, and helpers to read it.

use std::time::Duration;

use super::http::Method;
use super::openrouter::request_target;
use super::routes::Route;
use super::state::Shared;

pub(crate) struct Call<'a> {
    pub shared: &'a Shared,
    pub route: Route,
    pub method: Method,
    pub head_bytes: &'a [u8],
    pub body: &'a [u8],
    /// The request's number (ids like `mock-N`).
    pub number: u64,
    /// Waited before the answer (reported as Bedrock's `latencyMs`).
    pub latency: Duration,
    pub chunks: u32,
    pub chunk_delay: Duration,
    /// `x-mock-reply`, else the behaviour's reply.
    pub reply: Option<&'a str>,
    pub close: bool,
}

impl Call<'_> {
    /// The request target as sent: path and query.
    pub(crate) fn target(&self) -> &str {
        request_target(self.head_bytes)
    }

    /// The path as sent (percent-encoding kept).
    pub(crate) fn path(&self) -> &str {
        let target = self.target();
        target.split_once('?').map_or(target, |(path, _)| path)
    }

    /// The query string as sent, `""` without one.
    pub(crate) fn query(&self) -> &str {
        self.target().split_once('?').map_or("", |(_, query)| query)
    }

    /// The first value of a header (trimmed).
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        header(self.head_bytes, name)
    }

    /// The answer's text: the reply, else "Hello from mock NAME".
    pub(crate) fn text(&self) -> &str {
        self.shared.text.content_or(self.reply)
    }

    /// The body holds the `--refuse` word.
    pub(crate) fn refused(&self) -> bool {
        let word = self.shared.refuse.as_deref();
        word.is_some_and(|word| memchr::memmem::find(self.body, word.as_bytes()).is_some())
    }

    /// The prompt's size: a token per 4 body bytes, rounded up (as for chats).
    pub(crate) fn prompt_tokens(&self) -> u64 {
        (self.body.len() as u64).div_ceil(4)
    }

    /// The prompt's tokens when beyond `--context-window`, with the window.
    pub(crate) fn beyond_window(&self) -> Option<(u64, u64)> {
        let tokens = self.prompt_tokens();
        self.shared.context_window.filter(|&window| tokens > window).map(|window| (tokens, window))
    }

    /// The answer's size in tokens: its bytes / 4, rounded up.
    pub(crate) fn answer_tokens(text: &str) -> u64 {
        (text.len() as u64).div_ceil(4)
    }
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

/// A deterministic unit-range vector of `dimensions` floats for embedding number `index`.
pub(crate) fn embedding_vector(index: usize, dimensions: usize) -> Vec<f64> {
    (0..dimensions).map(|dimension| ((index * 8 + dimension) % 17) as f64 / 16.0 - 0.5).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(embedding_vector(1, 3).len(), 3);
    }
}
