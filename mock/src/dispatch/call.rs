//! One request to a route whose provider module checks and answers it whole (Gemini, Vertex AI,
//! Bedrock): what [`dispatch`](crate::dispatch::decide) decided for it, and helpers to read it.

use std::time::Duration;

use crate::state::Shared;
use crate::wire::head::Method;
use crate::wire::routes::Route;
use crate::wire::target::header;
use crate::wire::target::request_target;

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

/// A deterministic unit-range vector of `dimensions` floats for embedding number `index`.
pub(crate) fn embedding_vector(index: usize, dimensions: usize) -> Vec<f64> {
    (0..dimensions).map(|dimension| ((index * 8 + dimension) % 17) as f64 / 16.0 - 0.5).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedding_vectors_have_the_asked_dimensions() {
        assert_eq!(embedding_vector(1, 3).len(), 3);
    }
}
