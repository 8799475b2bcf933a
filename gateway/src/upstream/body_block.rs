//! A member the gateway adds to a successful response (the policy router's `llmeu` block): in
//! a JSON body, as its last member; in a stream, as one more event before `data: [DONE]` — a
//! chunk with no choices, which the official SDKs read like the usage chunk.

/// The member's name and its value as JSON.
#[derive(Clone, Copy, Debug)]
pub struct BodyBlock<'a> {
    pub name: &'a str,
    pub json: &'a [u8],
}

impl BodyBlock<'_> {
    /// `body` with the block as its last member, or `None` when `body` is not a JSON object
    /// (then it goes as it came).
    pub fn into_object(&self, body: &[u8]) -> Option<Vec<u8>> {
        let end = body.iter().rposition(|b| !b.is_ascii_whitespace())?;
        if body[end] != b'}' || body.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
            return None;
        }
        let empty = body[..end].iter().rposition(|b| !b.is_ascii_whitespace()).is_some_and(|at| body[at] == b'{');
        let mut out = Vec::with_capacity(body.len() + self.name.len() + self.json.len() + 8);
        out.extend_from_slice(&body[..end]);
        if !empty {
            out.push(b',');
        }
        out.push(b'"');
        out.extend_from_slice(self.name.as_bytes());
        out.extend_from_slice(b"\":");
        out.extend_from_slice(self.json);
        out.extend_from_slice(&body[end..]);
        Some(out)
    }

    /// The stream event that carries the block.
    pub fn sse_event(&self) -> Vec<u8> {
        let mut out = br#"data: {"object":"chat.completion.chunk","choices":[],""#.to_vec();
        out.extend_from_slice(self.name.as_bytes());
        out.extend_from_slice(b"\":");
        out.extend_from_slice(self.json);
        out.extend_from_slice(b"}\n\n");
        out
    }
}

/// Where the stream's `data: [DONE]` event starts in `decoded`, if it is there whole.
pub fn done_event_at(decoded: &[u8]) -> Option<usize> {
    memchr::memmem::find(decoded, b"data: [DONE]")
}

#[cfg(test)]
mod tests {
    use super::*;

    const BLOCK: BodyBlock<'static> = BodyBlock { name: "llmeu", json: br#"{"policy_id":"eu"}"# };

    #[test]
    fn the_block_is_the_objects_last_member() {
        let with = |body: &str| BLOCK.into_object(body.as_bytes()).map(|b| String::from_utf8(b).unwrap());
        assert_eq!(with(r#"{"id":"x"}"#).unwrap(), r#"{"id":"x","llmeu":{"policy_id":"eu"}}"#);
        assert_eq!(with("{\n  \"id\": 1\n}\n").unwrap(), "{\n  \"id\": 1\n,\"llmeu\":{\"policy_id\":\"eu\"}}\n");
        assert_eq!(with(" { } ").unwrap(), r#" { "llmeu":{"policy_id":"eu"}} "#);
        assert_eq!(with("[1]"), None);
        assert_eq!(with("not json"), None);
        assert_eq!(with(""), None);
        let parsed: serde_json::Value = serde_json::from_str(&with(r#"{"a":{"b":[1,{}]}}"#).unwrap()).unwrap();
        assert_eq!(parsed["llmeu"]["policy_id"], "eu");
    }

    #[test]
    fn the_stream_event_is_a_chunk_without_choices() {
        let event = BLOCK.sse_event();
        let text = std::str::from_utf8(&event).unwrap();
        assert!(text.starts_with("data: ") && text.ends_with("\n\n"));
        let chunk: serde_json::Value = serde_json::from_str(&text[6..]).unwrap();
        assert_eq!(chunk["choices"], serde_json::json!([]));
        assert_eq!(chunk["llmeu"]["policy_id"], "eu");
        assert_eq!(done_event_at(b"data: {}\n\ndata: [DONE]\n\n"), Some(10));
        assert_eq!(done_event_at(b"data: [DO"), None);
    }
}
