//! OpenAI `chat.completion.chunk` SSE events, written in place: one writer for every stream
//! translator that answers in OpenAI's dialect (from Anthropic's Messages, Bedrock's Converse
//! and Gemini's `generateContent`).

use std::io::Write;

use serde_json::Value;

use super::{push_json, push_json_str};

/// The role chunk's delta, first in every choice.
pub(crate) const ROLE_DELTA: &[u8] = br#"{"role":"assistant","content":""}"#;
/// The stream's last event.
pub(crate) const DONE: &[u8] = b"data: [DONE]\n\n";

/// One stream's chunks: their shared head once started.
#[derive(Debug, Default)]
pub(crate) struct ChatChunks {
    /// `data: {"id":…,"object":"chat.completion.chunk","created":…,"model":…`.
    head: Vec<u8>,
}

impl ChatChunks {
    pub(crate) fn is_started(&self) -> bool {
        !self.head.is_empty()
    }

    /// Starts the stream: every chunk carries `id`, `created` and `model` from now on.
    pub(crate) fn start(&mut self, id: &str, created: u64, model: &str) {
        self.head.clear();
        self.head.extend_from_slice(b"data: {\"id\":");
        push_json_str(&mut self.head, id);
        let _ = write!(self.head, ",\"object\":\"chat.completion.chunk\",\"created\":{created},\"model\":");
        push_json_str(&mut self.head, model);
    }

    /// One chunk of choice `index`: `delta` (JSON), its logprobs, its finish reason.
    pub(crate) fn chunk(
        &self,
        out: &mut Vec<u8>,
        index: u64,
        delta: &[u8],
        logprobs: Option<&Value>,
        finish: Option<&str>,
    ) {
        self.choice_head(out, index);
        out.extend_from_slice(delta);
        out.extend_from_slice(b",\"logprobs\":");
        match logprobs {
            Some(logprobs) => push_json(out, logprobs),
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b",\"finish_reason\":");
        match finish {
            Some(reason) => push_json_str(out, reason),
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b"}]}\n\n");
    }

    /// A chunk of choice 0 whose delta is `{"<field>":"<text>"}`, built without a JSON value (the
    /// hot path of a streamed answer).
    pub(crate) fn text(&self, out: &mut Vec<u8>, field: &str, text: &str) {
        self.choice_head(out, 0);
        out.push(b'{');
        push_json_str(out, field);
        out.push(b':');
        push_json_str(out, text);
        out.extend_from_slice(b"},\"logprobs\":null,\"finish_reason\":null}]}\n\n");
    }

    /// The usage chunk (no choices) OpenAI sends last when `stream_options.include_usage` asks.
    pub(crate) fn usage(&self, out: &mut Vec<u8>, usage: &Value) {
        out.extend_from_slice(&self.head);
        out.extend_from_slice(b",\"choices\":[],\"usage\":");
        push_json(out, usage);
        out.extend_from_slice(b"}\n\n");
    }

    fn choice_head(&self, out: &mut Vec<u8>, index: u64) {
        out.extend_from_slice(&self.head);
        match index {
            0 => out.extend_from_slice(b",\"choices\":[{\"index\":0,\"delta\":"),
            _ => {
                let _ = write!(out, ",\"choices\":[{{\"index\":{index},\"delta\":");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_are_openais_events() {
        let mut chunks = ChatChunks::default();
        assert!(!chunks.is_started());
        chunks.start("chatcmpl-1", 7, "m\"x");
        let mut out = Vec::new();
        chunks.chunk(&mut out, 0, ROLE_DELTA, None, None);
        chunks.text(&mut out, "content", "hé\n");
        chunks.chunk(&mut out, 2, b"{}", Some(&serde_json::json!({"content": []})), Some("stop"));
        chunks.usage(&mut out, &serde_json::json!({"prompt_tokens": 1}));
        out.extend_from_slice(DONE);
        let head = r#"data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":7,"model":"m\"x""#;
        assert_eq!(
            String::from_utf8(out).unwrap(),
            format!(
                "{head},\"choices\":[{{\"index\":0,\"delta\":{{\"role\":\"assistant\",\"content\":\"\"}},\"logprobs\":null,\"finish_reason\":null}}]}}\n\n\
                 {head},\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"hé\\n\"}},\"logprobs\":null,\"finish_reason\":null}}]}}\n\n\
                 {head},\"choices\":[{{\"index\":2,\"delta\":{{}},\"logprobs\":{{\"content\":[]}},\"finish_reason\":\"stop\"}}]}}\n\n\
                 {head},\"choices\":[],\"usage\":{{\"prompt_tokens\":1}}}}\n\n\
                 data: [DONE]\n\n"
            )
        );
    }
}
