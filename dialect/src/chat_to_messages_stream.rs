//! An OpenAI chat-completions stream → an Anthropic Messages stream, chunk by chunk.
//!
//! `message_start` at the first chunk (usage unknown yet: zeros, as LiteLLM sends), a
//! `content_block_start` when the kind of content changes (reasoning → `thinking`, content and
//! refusals → `text`, each tool call → `tool_use`), deltas as they come (`text_delta`,
//! `thinking_delta`, `input_json_delta` with the arguments' fragments verbatim), the open block
//! stopped at the `finish_reason`, then `message_delta` (stop reason and the full usage) and
//! `message_stop` once the usage chunk arrives, or at `[DONE]`, or at a complete end of body. A
//! fragment for a tool call whose block was already stopped goes to that block's index (the
//! SDKs accumulate by index).

use std::borrow::Cow;
use std::io::Write;

use serde::Deserialize;
use serde_json::{json, Value};

use super::errors::{anthropic_error_type, push_anthropic_stream_error};
use super::mapping::{stop_reason_for, Tokens};
use super::sse::{SseEvent, SseSplitter};
use super::{push_json, push_json_str, StreamTranslator};

#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    choices: Option<Vec<Choice<'a>>>,
    #[serde(default)]
    usage: Option<Value>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Choice<'a> {
    #[serde(default)]
    index: u64,
    #[serde(borrow, default)]
    delta: Option<Delta<'a>>,
    #[serde(borrow, default)]
    finish_reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(borrow, default)]
    content: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    reasoning_content: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    reasoning: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    refusal: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    tool_calls: Option<Vec<ToolCallDelta<'a>>>,
}

#[derive(Deserialize)]
struct ToolCallDelta<'a> {
    #[serde(default)]
    index: Option<u64>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    function: Option<FunctionDelta<'a>>,
}

#[derive(Deserialize)]
struct FunctionDelta<'a> {
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    arguments: Option<Cow<'a, str>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BlockKind {
    Text,
    Thinking,
    Tool,
}

/// OpenAI chunks in, Anthropic events out.
#[derive(Debug)]
pub struct ChatToMessagesStream {
    splitter: SseSplitter,
    model: String,
    state: State,
}

#[derive(Debug, Default)]
struct State {
    started: bool,
    /// The block being written: its index and kind.
    open: Option<(u64, BlockKind)>,
    next_index: u64,
    /// OpenAI tool call index → Anthropic block index.
    tools: Vec<(u64, u64)>,
    stop_reason: Option<&'static str>,
    refused: bool,
    usage: Option<Tokens>,
    /// `message_stop` or an error event is out: nothing more is written.
    done: bool,
}

impl ChatToMessagesStream {
    /// A translator for one stream; `model` is what the client asked for.
    pub fn new(model: &str) -> ChatToMessagesStream {
        ChatToMessagesStream { splitter: SseSplitter::new(), model: model.to_string(), state: State::default() }
    }
}

impl StreamTranslator for ChatToMessagesStream {
    fn feed(&mut self, input: &[u8], out: &mut Vec<u8>) {
        if self.state.done {
            return;
        }
        let Self { splitter, model, state } = self;
        if splitter.feed(input, |event| state.on_event(event, model, out)).is_err() {
            state.fail(out, "the upstream sent a stream event larger than the gateway accepts");
        }
    }

    fn finish(&mut self, out: &mut Vec<u8>, complete: bool) {
        if self.state.done {
            return;
        }
        let Self { splitter, model, state } = self;
        if splitter.finish(|event| state.on_event(event, model, out)).is_err() {
            state.fail(out, "the upstream sent a stream event larger than the gateway accepts");
        }
        if state.done {
            return;
        }
        if complete && state.stop_reason.is_some() {
            state.complete(model, out);
        } else {
            state.fail(out, "the upstream stream ended before the answer was complete");
        }
    }

    fn usage(&self) -> Option<(u64, u64)> {
        self.state.usage.map(|t| (t.prompt, t.completion))
    }
}

impl State {
    fn on_event(&mut self, event: SseEvent<'_>, model: &str, out: &mut Vec<u8>) {
        if self.done {
            return;
        }
        if event.data == b"[DONE]" {
            return self.complete(model, out);
        }
        let chunk = match serde_json::from_slice::<Chunk<'_>>(event.data) {
            Ok(chunk) => chunk,
            Err(_) => return self.fail(out, "the upstream sent a stream event that is not a chat completion chunk"),
        };
        if let Some(error) = &chunk.error {
            return self.upstream_error(error, out);
        }
        self.start(chunk.id.as_deref(), model, out);
        for choice in chunk.choices.iter().flatten().filter(|c| c.index == 0) {
            if let Some(delta) = &choice.delta {
                self.delta(delta, out);
            }
            if let Some(finish) = &choice.finish_reason {
                if finish == "error" {
                    return self.fail(out, "the upstream ended the answer with an error");
                }
                self.close(out);
                self.stop_reason = Some(if self.refused { "refusal" } else { stop_reason_for(finish) });
            }
        }
        if let Some(usage) = chunk.usage.as_ref().filter(|u| u.is_object()) {
            self.usage = Some(Tokens::from_openai(usage));
        }
        if self.stop_reason.is_some() && self.usage.is_some() {
            self.complete(model, out);
        }
    }

    fn start(&mut self, id: Option<&str>, model: &str, out: &mut Vec<u8>) {
        if self.started {
            return;
        }
        self.started = true;
        let message = json!({"type": "message_start", "message": {
            "id": id.filter(|id| !id.is_empty()).unwrap_or("msg_pointwork"), "type": "message", "role": "assistant",
            "model": model, "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 0, "output_tokens": 0}}});
        push_event(out, "message_start", &message);
    }

    fn delta(&mut self, delta: &Delta<'_>, out: &mut Vec<u8>) {
        if let Some(reasoning) = delta.reasoning_content.as_deref().or(delta.reasoning.as_deref()) {
            self.text_like(BlockKind::Thinking, reasoning, out);
        }
        if let Some(text) = delta.content.as_deref() {
            self.text_like(BlockKind::Text, text, out);
        }
        if let Some(refusal) = delta.refusal.as_deref().filter(|r| !r.is_empty()) {
            self.refused = true;
            self.text_like(BlockKind::Text, refusal, out);
        }
        for (position, call) in delta.tool_calls.iter().flatten().enumerate() {
            self.tool_call(position, call, out);
        }
    }

    fn text_like(&mut self, kind: BlockKind, text: &str, out: &mut Vec<u8>) {
        if text.is_empty() {
            return;
        }
        let index = match self.open {
            Some((index, open)) if open == kind => index,
            _ => {
                let block = match kind {
                    BlockKind::Thinking => json!({"type": "thinking", "thinking": "", "signature": ""}),
                    _ => json!({"type": "text", "text": ""}),
                };
                self.open_block(kind, block, out)
            }
        };
        let (delta_type, field): (&[u8], &[u8]) = match kind {
            BlockKind::Thinking => (b"thinking_delta", b"thinking"),
            _ => (b"text_delta", b"text"),
        };
        push_delta(out, index, delta_type, field, text);
    }

    fn tool_call(&mut self, position: usize, call: &ToolCallDelta<'_>, out: &mut Vec<u8>) {
        let openai_index = match (call.index, &call.id) {
            (Some(index), _) => index,
            (None, Some(_)) => self.tools.len() as u64,
            (None, None) => self.tools.last().map_or(position as u64, |&(index, _)| index),
        };
        let function = call.function.as_ref();
        let block_index = match self.tools.iter().find(|&&(i, _)| i == openai_index) {
            Some(&(_, block)) => block,
            None => {
                let id = call.id.as_deref().map_or_else(|| format!("toolu_pointwork_{openai_index}"), str::to_string);
                let name = function.and_then(|f| f.name.as_deref()).unwrap_or("");
                let block = json!({"type": "tool_use", "id": id, "name": name, "input": {}});
                let block_index = self.open_block(BlockKind::Tool, block, out);
                self.tools.push((openai_index, block_index));
                block_index
            }
        };
        if let Some(arguments) = function.and_then(|f| f.arguments.as_deref()).filter(|a| !a.is_empty()) {
            push_delta(out, block_index, b"input_json_delta", b"partial_json", arguments);
        }
    }

    fn open_block(&mut self, kind: BlockKind, block: Value, out: &mut Vec<u8>) -> u64 {
        self.close(out);
        let index = self.next_index;
        self.next_index += 1;
        self.open = Some((index, kind));
        push_event(
            out,
            "content_block_start",
            &json!({"type": "content_block_start", "index": index, "content_block": block}),
        );
        index
    }

    fn close(&mut self, out: &mut Vec<u8>) {
        if let Some((index, _)) = self.open.take() {
            out.extend_from_slice(b"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":");
            let _ = write!(out, "{index}}}\n\n");
        }
    }

    /// The answer is whole: `message_delta` with the stop reason and usage, `message_stop`.
    fn complete(&mut self, model: &str, out: &mut Vec<u8>) {
        self.start(None, model, out);
        self.close(out);
        let usage = self.usage.unwrap_or_default().to_anthropic();
        let stop_reason = self.stop_reason.unwrap_or("end_turn");
        let delta = json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null}, "usage": usage});
        push_event(out, "message_delta", &delta);
        out.extend_from_slice(b"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
        self.done = true;
    }

    fn upstream_error(&mut self, error: &Value, out: &mut Vec<u8>) {
        let message = error.get("message").and_then(Value::as_str).unwrap_or("the upstream failed mid-stream");
        let status = error.get("code").and_then(Value::as_u64).filter(|c| (400..600).contains(c));
        let kind = status.map_or("api_error", |s| anthropic_error_type(s as u16));
        push_anthropic_stream_error(out, kind, message);
        self.done = true;
    }

    fn fail(&mut self, out: &mut Vec<u8>, message: &str) {
        if !self.done {
            push_anthropic_stream_error(out, "api_error", message);
            self.done = true;
        }
    }
}

fn push_event(out: &mut Vec<u8>, name: &str, data: &Value) {
    out.extend_from_slice(b"event: ");
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\ndata: ");
    push_json(out, data);
    out.extend_from_slice(b"\n\n");
}

/// `content_block_delta` written by hand: the event a stream is made of.
fn push_delta(out: &mut Vec<u8>, index: u64, delta_type: &[u8], field: &[u8], text: &str) {
    out.extend_from_slice(b"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":");
    let _ = write!(out, "{index}");
    out.extend_from_slice(b",\"delta\":{\"type\":\"");
    out.extend_from_slice(delta_type);
    out.extend_from_slice(b"\",\"");
    out.extend_from_slice(field);
    out.extend_from_slice(b"\":");
    push_json_str(out, text);
    out.extend_from_slice(b"}}\n\n");
}

#[cfg(test)]
#[path = "chat_to_messages_stream_tests.rs"]
mod tests;
