//! The OpenAI request fields the mock reads and the bodies it answers with. Chat bodies are
//! written from a template (the hot path of a benchmark); the rarer ones go through serde_json.

use std::borrow::Cow;

use serde::Deserialize;

/// The fields of a chat request that shape the answer; everything else is skipped unparsed.
#[derive(Debug, Deserialize)]
pub(crate) struct ChatRequest<'a> {
    #[serde(borrow, default)]
    pub model: Option<Cow<'a, str>>,
    #[serde(default)]
    pub stream: Option<bool>,
    #[serde(default)]
    pub stream_options: Option<StreamOptions>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct StreamOptions {
    #[serde(default)]
    pub include_usage: Option<bool>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct EmbeddingsRequest<'a> {
    #[serde(borrow, default)]
    pub model: Option<Cow<'a, str>>,
    #[serde(default)]
    pub input: Option<serde_json::Value>,
}

/// Token counts the mock reports: prompt ≈ body bytes / 4, one completion token per chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

impl Usage {
    pub(crate) fn new(body_len: usize, completion_tokens: u32) -> Self {
        Usage { prompt_tokens: (body_len / 4) as u64, completion_tokens: u64::from(completion_tokens) }
    }

    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"prompt_tokens\":");
        write_u64(out, self.prompt_tokens);
        out.extend_from_slice(b",\"completion_tokens\":");
        write_u64(out, self.completion_tokens);
        out.extend_from_slice(b",\"total_tokens\":");
        write_u64(out, self.prompt_tokens + self.completion_tokens);
        out.push(b'}');
    }
}

/// Texts fixed for the life of a server, derived from its name.
#[derive(Debug)]
pub(crate) struct AnswerText {
    /// "Hello from mock NAME": the default answer (see [`Self::content_or`]).
    pub content: String,
    pub system_fingerprint: String,
}

impl AnswerText {
    pub(crate) fn new(name: &str) -> Self {
        AnswerText { content: format!("Hello from mock {name}"), system_fingerprint: format!("mock-{name}") }
    }

    /// The answer's text: `reply` (`--reply`, `/mock/control` or `x-mock-reply`) if given, else
    /// the default.
    pub(crate) fn content_or<'a>(&'a self, reply: Option<&'a str>) -> &'a str {
        reply.unwrap_or(&self.content)
    }
}

/// What identifies one answer across its body or its stream events.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AnswerId<'a> {
    pub number: u64,
    pub created: u64,
    pub model: &'a str,
    /// The OpenRouter provider that served, written as `"provider"` (OpenRouter's field).
    pub provider: Option<&'a str>,
}

impl AnswerId<'_> {
    fn write_common(&self, out: &mut Vec<u8>, object: &str, text: &AnswerText) {
        out.extend_from_slice(b"{\"id\":\"chatcmpl-mock-");
        write_u64(out, self.number);
        out.extend_from_slice(b"\",\"object\":\"");
        out.extend_from_slice(object.as_bytes());
        out.extend_from_slice(b"\",\"created\":");
        write_u64(out, self.created);
        out.extend_from_slice(b",\"model\":");
        write_json_string(out, self.model);
        out.extend_from_slice(b",\"system_fingerprint\":");
        write_json_string(out, &text.system_fingerprint);
        if let Some(provider) = self.provider {
            out.extend_from_slice(b",\"provider\":");
            write_json_string(out, provider);
        }
    }
}

/// Appends a `chat.completion` object answering `content`.
pub(crate) fn write_chat_completion(
    out: &mut Vec<u8>,
    id: &AnswerId<'_>,
    text: &AnswerText,
    content: &str,
    usage: &Usage,
) {
    id.write_common(out, "chat.completion", text);
    out.extend_from_slice(b",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":");
    write_json_string(out, content);
    out.extend_from_slice(b",\"refusal\":null},\"logprobs\":null,\"finish_reason\":\"stop\"}],\"usage\":");
    usage.write(out);
    out.push(b'}');
}

/// Appends `data: {chat.completion.chunk}\n\n` for content event `index` of `count`: the first
/// carries the role, the last the finish reason, and the pieces together make `content`.
pub(crate) fn write_chunk_event(
    out: &mut Vec<u8>,
    id: &AnswerId<'_>,
    text: &AnswerText,
    content: &str,
    index: u32,
    count: u32,
) {
    out.extend_from_slice(b"data: ");
    id.write_common(out, "chat.completion.chunk", text);
    out.extend_from_slice(b",\"choices\":[{\"index\":0,\"delta\":{");
    if index == 0 {
        out.extend_from_slice(b"\"role\":\"assistant\",");
    }
    out.extend_from_slice(b"\"content\":");
    write_json_string(out, content_piece(content, index, count));
    out.extend_from_slice(b"},\"logprobs\":null,\"finish_reason\":");
    if index + 1 == count {
        out.extend_from_slice(b"\"stop\"");
    } else {
        out.extend_from_slice(b"null");
    }
    out.extend_from_slice(b"}]}\n\n");
}

/// Appends the final usage event sent when `stream_options.include_usage` is true.
pub(crate) fn write_usage_event(out: &mut Vec<u8>, id: &AnswerId<'_>, text: &AnswerText, usage: &Usage) {
    out.extend_from_slice(b"data: ");
    id.write_common(out, "chat.completion.chunk", text);
    out.extend_from_slice(b",\"choices\":[],\"usage\":");
    usage.write(out);
    out.extend_from_slice(b"}\n\n");
}

pub(crate) const DONE_EVENT: &[u8] = b"data: [DONE]\n\n";

/// Piece `index` of `count` near-equal pieces of `content`, cut at character boundaries.
pub(crate) fn content_piece(content: &str, index: u32, count: u32) -> &str {
    let cut = |position: u32| {
        let mut at = content.len() * position as usize / count.max(1) as usize;
        while !content.is_char_boundary(at) {
            at += 1;
        }
        at
    };
    &content[cut(index)..cut(index + 1)]
}

/// Appends an embedding list with one 8-float vector per input.
pub(crate) fn embeddings_body(model: &str, inputs: usize, usage: &Usage) -> Vec<u8> {
    let data: Vec<serde_json::Value> = (0..inputs)
        .map(|index| {
            let vector: Vec<f64> = (0..8).map(|dimension| ((index * 8 + dimension) % 17) as f64 / 16.0 - 0.5).collect();
            serde_json::json!({ "object": "embedding", "index": index, "embedding": vector })
        })
        .collect();
    serde_json::json!({
        "object": "list",
        "data": data,
        "model": model,
        "usage": { "prompt_tokens": usage.prompt_tokens, "total_tokens": usage.prompt_tokens },
    })
    .to_string()
    .into_bytes()
}

/// How many embeddings an `input` asks for: a string or a token list is one, a list of strings
/// or of token lists is one each. `None` when the input is missing or empty.
pub(crate) fn embedding_input_count(input: Option<&serde_json::Value>) -> Option<usize> {
    use serde_json::Value;
    match input? {
        Value::String(_) => Some(1),
        Value::Array(items) if items.is_empty() => None,
        Value::Array(items) if items.iter().all(Value::is_number) => Some(1),
        Value::Array(items) => Some(items.len()),
        _ => None,
    }
}

/// Model ids the mock lists.
pub(crate) const MODEL_IDS: [&str; 2] = ["mock-chat", "mock-embedding"];

pub(crate) fn models_body(created: u64) -> Vec<u8> {
    let data: Vec<serde_json::Value> = MODEL_IDS
        .iter()
        .map(|id| {
            serde_json::json!({
                "id": id, "object": "model", "created": created, "owned_by": "pointwork-mock"
            })
        })
        .collect();
    serde_json::json!({ "object": "list", "data": data }).to_string().into_bytes()
}

fn write_u64(out: &mut Vec<u8>, value: u64) {
    crate::wire::response::write_decimal(out, value);
}

/// Appends `value` as a JSON string, copying it as is when nothing needs escaping.
pub(crate) fn write_json_string(out: &mut Vec<u8>, value: &str) {
    let plain = value.bytes().all(|byte| byte >= 0x20 && byte != b'"' && byte != b'\\');
    if plain {
        out.push(b'"');
        out.extend_from_slice(value.as_bytes());
        out.push(b'"');
    } else {
        // Serialising a str into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut *out, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id() -> AnswerId<'static> {
        AnswerId { number: 7, created: 1_700_000_000, model: "gpt-\"x\"", provider: None }
    }

    #[test]
    fn chat_completion_is_valid_openai_json() {
        let text = AnswerText::new("m1");
        let mut out = Vec::new();
        write_chat_completion(&mut out, &id(), &text, &text.content, &Usage::new(400, 8));
        let body: serde_json::Value = serde_json::from_slice(&out).expect("json");
        assert_eq!(body["id"], "chatcmpl-mock-7");
        assert_eq!(body["object"], "chat.completion");
        assert_eq!(body["model"], "gpt-\"x\"");
        assert_eq!(body["choices"][0]["message"]["role"], "assistant");
        assert_eq!(body["choices"][0]["message"]["content"], "Hello from mock m1");
        assert_eq!(body["choices"][0]["finish_reason"], "stop");
        assert_eq!(body["usage"]["prompt_tokens"], 100);
        assert_eq!(body["usage"]["total_tokens"], 108);
        assert_eq!(body["system_fingerprint"], "mock-m1");
    }

    #[test]
    fn stream_pieces_make_the_whole_answer() {
        let text = AnswerText::new("m1");
        for count in [1u32, 3, 8, 40] {
            let mut joined = String::new();
            for index in 0..count {
                let mut out = Vec::new();
                write_chunk_event(&mut out, &id(), &text, &text.content, index, count);
                let json =
                    out.strip_prefix(b"data: ").and_then(|rest| rest.strip_suffix(b"\n\n")).expect("event framing");
                let event: serde_json::Value = serde_json::from_slice(json).expect("json");
                let choice = &event["choices"][0];
                assert_eq!(choice["delta"].get("role").is_some(), index == 0);
                assert_eq!(choice["finish_reason"] == "stop", index + 1 == count);
                joined.push_str(choice["delta"]["content"].as_str().expect("content"));
            }
            assert_eq!(joined, text.content, "{count} pieces");
        }
    }

    /// The pieces of a streamed answer, joined.
    fn streamed(text: &AnswerText, content: &str, count: u32) -> String {
        let mut joined = String::new();
        for index in 0..count {
            let mut out = Vec::new();
            write_chunk_event(&mut out, &id(), text, content, index, count);
            let json = out.strip_prefix(b"data: ").and_then(|rest| rest.strip_suffix(b"\n\n")).expect("event framing");
            let event: serde_json::Value = serde_json::from_slice(json).expect("json");
            joined.push_str(event["choices"][0]["delta"]["content"].as_str().expect("content"));
        }
        joined
    }

    #[test]
    fn a_reply_replaces_the_answer_whole_and_streamed() {
        let text = AnswerText::new("m1");
        assert_eq!(text.content_or(None), "Hello from mock m1");
        let reply = "{\"tier\": \"complex\"}\n\tüñï — \\ done";
        assert_eq!(text.content_or(Some(reply)), reply);
        let mut out = Vec::new();
        write_chat_completion(&mut out, &id(), &text, text.content_or(Some(reply)), &Usage::new(400, 8));
        let body: serde_json::Value = serde_json::from_slice(&out).expect("json");
        assert_eq!(body["choices"][0]["message"]["content"], reply);
        assert_eq!(body["system_fingerprint"], "mock-m1");
        for count in [1u32, 2, 8, 64] {
            assert_eq!(streamed(&text, reply, count), reply, "{count} pieces");
        }
        assert_eq!(streamed(&text, "", 3), "");
    }

    #[test]
    fn counts_embedding_inputs() {
        use serde_json::json;
        assert_eq!(embedding_input_count(Some(&json!("a"))), Some(1));
        assert_eq!(embedding_input_count(Some(&json!(["a", "b"]))), Some(2));
        assert_eq!(embedding_input_count(Some(&json!([1, 2, 3]))), Some(1));
        assert_eq!(embedding_input_count(Some(&json!([[1], [2]]))), Some(2));
        assert_eq!(embedding_input_count(Some(&json!([]))), None);
        assert_eq!(embedding_input_count(None), None);
    }

    #[test]
    fn escapes_only_when_needed() {
        let mut out = Vec::new();
        write_json_string(&mut out, "plain");
        write_json_string(&mut out, "a\"b\n");
        assert_eq!(out, b"\"plain\"\"a\\\"b\\n\"");
    }
}
