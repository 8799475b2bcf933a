//! An Anthropic Messages stream → an OpenAI chat-completions stream, event by event.
//!
//! `message_start` becomes the role chunk, `text_delta` content, `thinking_delta`
//! `reasoning_content`, a `tool_use` block's start the tool call's id and name (OpenAI tool index
//! counted from 0) and its `input_json_delta`s the arguments' fragments, `message_delta` the
//! finish chunk, `message_stop` the usage chunk (when the client asked for
//! `stream_options.include_usage`) and `data: [DONE]`. `ping`, `content_block_stop`,
//! `signature_delta`, `citations_delta` and unknown event types write nothing; an `error` event
//! becomes OpenAI's mid-stream `data: {"error":…}` and ends the stream without `[DONE]`.

use std::borrow::Cow;
use std::io::Write;

use serde::Deserialize;
use serde_json::{json, Value};

use super::chat_chunks::{ChatChunks, DONE, ROLE_DELTA};
use super::errors::push_openai_stream_error;
use super::mapping::{finish_reason_for, Tokens};
use super::sse::{SseEvent, SseSplitter};
use super::{push_json, push_json_str, unix_now, StreamTranslator};

#[derive(Deserialize)]
struct Event<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(default)]
    index: u64,
    #[serde(borrow, default)]
    message: Option<MessageStart<'a>>,
    #[serde(borrow, default)]
    content_block: Option<Block<'a>>,
    #[serde(borrow, default)]
    delta: Option<Delta<'a>>,
    #[serde(default)]
    usage: Option<Value>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct MessageStart<'a> {
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(default)]
    usage: Option<Value>,
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
    #[serde(default)]
    input: Option<Value>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    partial_json: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    thinking: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    stop_reason: Option<Cow<'a, str>>,
}

/// Anthropic events in, OpenAI chunks out (ending with `data: [DONE]`).
#[derive(Debug)]
pub struct MessagesToChatStream {
    splitter: SseSplitter,
    state: State,
}

#[derive(Debug)]
struct State {
    model: String,
    created: u64,
    include_usage: bool,
    chunks: ChatChunks,
    /// Anthropic block index → OpenAI tool call index, for tool_use blocks.
    tools: Vec<(u64, u64)>,
    /// The usage fields as last reported (`message_start`, then `message_delta` overriding).
    usage: Option<serde_json::Map<String, Value>>,
    finished: bool,
    done: bool,
}

impl MessagesToChatStream {
    /// A translator for one stream; `model` is what the client asked for, `include_usage` whether
    /// it asked for the usage chunk. `created` is read from the clock now.
    pub fn new(model: &str, include_usage: bool) -> MessagesToChatStream {
        MessagesToChatStream::with_created(model, include_usage, unix_now())
    }

    /// The same with the chunks' `created` given.
    pub fn with_created(model: &str, include_usage: bool, created: u64) -> MessagesToChatStream {
        let state = State {
            model: model.to_string(),
            created,
            include_usage,
            chunks: ChatChunks::default(),
            tools: Vec::new(),
            usage: None,
            finished: false,
            done: false,
        };
        MessagesToChatStream { splitter: SseSplitter::new(), state }
    }
}

impl StreamTranslator for MessagesToChatStream {
    fn feed(&mut self, input: &[u8], out: &mut Vec<u8>) {
        if self.state.done {
            return;
        }
        let Self { splitter, state } = self;
        if splitter.feed(input, |event| state.on_event(event, out)).is_err() {
            state.fail(out, "the upstream sent a stream event larger than the gateway accepts");
        }
    }

    fn finish(&mut self, out: &mut Vec<u8>, _complete: bool) {
        if self.state.done {
            return;
        }
        let Self { splitter, state } = self;
        if splitter.finish(|event| state.on_event(event, out)).is_err() {
            state.fail(out, "the upstream sent a stream event larger than the gateway accepts");
        }
        // Anthropic always ends a whole answer with message_stop: without it the answer is cut.
        state.fail(out, "the upstream stream ended before the answer was complete");
    }

    fn usage(&self) -> Option<(u64, u64)> {
        self.state.tokens().map(|t| (t.prompt, t.completion))
    }
}

impl State {
    fn on_event(&mut self, event: SseEvent<'_>, out: &mut Vec<u8>) {
        if self.done {
            return;
        }
        let event = match serde_json::from_slice::<Event<'_>>(event.data) {
            Ok(event) => event,
            Err(_) => return self.fail(out, "the upstream sent a stream event that is not a Messages event"),
        };
        match &*event.kind {
            "message_start" => {
                let message = event.message.as_ref();
                self.start(message.and_then(|m| m.id.as_deref()), out);
                self.merge_usage(message.and_then(|m| m.usage.as_ref()));
            }
            "content_block_start" => self.block_start(event.index, event.content_block.as_ref(), out),
            "content_block_delta" => self.block_delta(event.index, event.delta.as_ref(), out),
            "message_delta" => {
                self.merge_usage(event.usage.as_ref());
                let stop_reason = event.delta.as_ref().and_then(|d| d.stop_reason.as_deref());
                if let Some(stop_reason) = stop_reason {
                    self.finish_chunk(finish_reason_for(stop_reason), out);
                }
            }
            "message_stop" => self.stop(out),
            "error" => {
                let error = event.error.as_ref();
                let kind = error.and_then(|e| e.get("type")).and_then(Value::as_str).unwrap_or("api_error");
                let message = error.and_then(|e| e.get("message")).and_then(Value::as_str);
                push_openai_stream_error(out, kind, message.unwrap_or("the upstream failed mid-stream"), None);
                self.done = true;
            }
            // ping, content_block_stop, and event types a later API version adds.
            _ => {}
        }
    }

    fn start(&mut self, id: Option<&str>, out: &mut Vec<u8>) {
        if self.chunks.is_started() {
            return;
        }
        let id = id.filter(|id| !id.is_empty()).unwrap_or("chatcmpl-pointwork");
        self.chunks.start(id, self.created, &self.model);
        self.chunks.chunk(out, 0, ROLE_DELTA, None, None);
    }

    /// One chunk: `delta` (JSON), the finish reason.
    fn chunk(&mut self, out: &mut Vec<u8>, delta: &[u8], finish_reason: Option<&str>) {
        self.start(None, out);
        self.chunks.chunk(out, 0, delta, None, finish_reason);
    }

    /// A chunk whose delta is `{"<field>":"<text>"}`.
    fn text_chunk(&mut self, out: &mut Vec<u8>, field: &str, text: &str) {
        self.start(None, out);
        self.chunks.text(out, field, text);
    }

    fn block_start(&mut self, index: u64, block: Option<&Block<'_>>, out: &mut Vec<u8>) {
        let Some(block) = block else { return };
        match &*block.kind {
            "text" => {
                if let Some(text) = block.text.as_deref().filter(|t| !t.is_empty()) {
                    self.text_chunk(out, "content", text);
                }
            }
            "tool_use" => {
                let tool_index = self.tools.len() as u64;
                self.tools.push((index, tool_index));
                let arguments = match &block.input {
                    Some(input @ Value::Object(fields)) if !fields.is_empty() => input.to_string(),
                    _ => String::new(),
                };
                let call = json!({"index": tool_index, "id": block.id.as_deref().unwrap_or(""), "type": "function",
                    "function": {"name": block.name.as_deref().unwrap_or(""), "arguments": arguments}});
                let mut delta = b"{\"tool_calls\":[".to_vec();
                push_json(&mut delta, &call);
                delta.extend_from_slice(b"]}");
                self.chunk(out, &delta, None);
            }
            _ => {}
        }
    }

    fn block_delta(&mut self, index: u64, delta: Option<&Delta<'_>>, out: &mut Vec<u8>) {
        let Some(delta) = delta else { return };
        match delta.kind.as_deref() {
            Some("text_delta") => {
                if let Some(text) = delta.text.as_deref().filter(|t| !t.is_empty()) {
                    self.text_chunk(out, "content", text);
                }
            }
            Some("thinking_delta") => {
                if let Some(text) = delta.thinking.as_deref().filter(|t| !t.is_empty()) {
                    self.text_chunk(out, "reasoning_content", text);
                }
            }
            Some("input_json_delta") => {
                let tool = self.tools.iter().find(|&&(block, _)| block == index).map(|&(_, tool)| tool);
                let fragment = delta.partial_json.as_deref().filter(|f| !f.is_empty());
                if let (Some(tool), Some(fragment)) = (tool, fragment) {
                    let mut chunk = Vec::with_capacity(fragment.len() + 64);
                    let _ = write!(chunk, "{{\"tool_calls\":[{{\"index\":{tool},\"function\":{{\"arguments\":");
                    push_json_str(&mut chunk, fragment);
                    chunk.extend_from_slice(b"}}]}");
                    self.chunk(out, &chunk, None);
                }
            }
            // signature_delta, citations_delta and delta types a later API version adds.
            _ => {}
        }
    }

    fn finish_chunk(&mut self, reason: &str, out: &mut Vec<u8>) {
        if !self.finished {
            self.finished = true;
            self.chunk(out, b"{}", Some(reason));
        }
    }

    fn merge_usage(&mut self, usage: Option<&Value>) {
        if let Some(Value::Object(fields)) = usage {
            let merged = self.usage.get_or_insert_with(serde_json::Map::new);
            for (key, value) in fields {
                if !value.is_null() {
                    merged.insert(key.clone(), value.clone());
                }
            }
        }
    }

    fn tokens(&self) -> Option<Tokens> {
        self.usage.as_ref().map(|fields| Tokens::from_anthropic(&Value::Object(fields.clone())))
    }

    /// `message_stop`: the finish chunk if `message_delta` gave none, usage, `[DONE]`.
    fn stop(&mut self, out: &mut Vec<u8>) {
        self.finish_chunk("stop", out);
        if self.include_usage {
            self.chunks.usage(out, &self.tokens().unwrap_or_default().to_openai());
        }
        out.extend_from_slice(DONE);
        self.done = true;
    }

    fn fail(&mut self, out: &mut Vec<u8>, message: &str) {
        if !self.done {
            push_openai_stream_error(out, "api_error", message, None);
            self.done = true;
        }
    }
}

#[cfg(test)]
#[path = "messages_to_chat_stream_tests.rs"]
mod tests;
