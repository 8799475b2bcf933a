//! A ConverseStream answer (`application/vnd.amazon.eventstream` frames) → an OpenAI
//! chat-completions stream.
//!
//! Frames are collected across reads (split anywhere), each checked by `aws-smithy-eventstream`
//! (lengths, prelude and message CRCs). `messageStart` becomes the role chunk, a text delta
//! `content`, a `reasoningContent` delta's text `reasoning_content` (its signature and redacted
//! content write nothing), a toolUse block's start the tool call's id and name (OpenAI tool index
//! counted from 0) and its `input` fragments the arguments (a tool block that ends without any
//! becomes `{}`, as LiteLLM does), `messageStop` the finish chunk, and `metadata` (which follows
//! `messageStop`) the usage chunk, when asked for, and `data: [DONE]`. A stream that ends whole
//! after `messageStop` without `metadata` still gets its `[DONE]` (usage zero).
//!
//! An exception frame (`:message-type` `exception`, or the protocol's `error`) becomes OpenAI's
//! mid-stream `data: {"error":…}` with the exception's HTTP status as `code` and its type
//! (`throttlingException` → 429 `rate_limit_error`), ending the stream without `[DONE]`; so do a
//! frame that fails its checks, bytes that are no frame, and a stream cut short.

use std::borrow::Cow;
use std::io::Write;

use aws_smithy_eventstream::frame::{read_message_from, write_message_to};
use aws_smithy_types::event_stream::{Header, HeaderValue, Message};
use aws_smithy_types::str_bytes::StrBytes;
use serde::Deserialize;
use serde_json::{json, Value};

use super::super::chat_chunks::{ChatChunks, DONE, ROLE_DELTA};
use super::super::errors::push_openai_stream_error;
use super::super::mapping::Tokens;
use super::super::{push_json, push_json_str, unix_now, StreamTranslator};
use super::response::finish_reason_for;
use super::{fresh_id, tokens_of};

/// The largest frame accepted: the event stream encoding's own limit (16 MiB).
pub const MAX_FRAME_BYTES: usize = 16 << 20;
/// Prelude (total length, headers length, prelude CRC) and message CRC.
const FRAME_OVERHEAD: usize = 16;

#[derive(Deserialize)]
struct Payload<'a> {
    #[serde(rename = "contentBlockIndex", default)]
    index: u64,
    #[serde(borrow, default)]
    start: Option<Start<'a>>,
    #[serde(borrow, default)]
    delta: Option<Delta<'a>>,
    #[serde(rename = "stopReason", borrow, default)]
    stop_reason: Option<Cow<'a, str>>,
    #[serde(default)]
    usage: Option<Value>,
}

#[derive(Deserialize)]
struct Start<'a> {
    #[serde(rename = "toolUse", borrow, default)]
    tool_use: Option<ToolStart<'a>>,
}

#[derive(Deserialize)]
struct ToolStart<'a> {
    #[serde(rename = "toolUseId", borrow, default)]
    id: Cow<'a, str>,
    #[serde(borrow, default)]
    name: Cow<'a, str>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
    #[serde(rename = "reasoningContent", borrow, default)]
    reasoning: Option<TextOnly<'a>>,
    #[serde(rename = "toolUse", borrow, default)]
    tool_use: Option<ToolDelta<'a>>,
}

#[derive(Deserialize)]
struct TextOnly<'a> {
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct ToolDelta<'a> {
    #[serde(borrow, default)]
    input: Option<Cow<'a, str>>,
}

/// ConverseStream frames in, OpenAI chunks out (ending with `data: [DONE]`).
#[derive(Debug)]
pub struct ConverseStreamToChat {
    /// Bytes of a frame not yet complete.
    pending: Vec<u8>,
    state: State,
}

#[derive(Debug)]
struct State {
    model: String,
    created: u64,
    include_usage: bool,
    /// The chunks' id: Converse has none, so one is made (`chatcmpl-…`).
    pub(super) id: String,
    chunks: ChatChunks,
    /// (Converse block index, OpenAI tool call index, arguments seen) for toolUse blocks.
    tools: Vec<(u64, u64, bool)>,
    usage: Option<Tokens>,
    /// `messageStop` came (and with it the finish chunk).
    stopped: bool,
    done: bool,
}

impl ConverseStreamToChat {
    /// A translator for one stream; `model` is what the client asked for, `include_usage` whether
    /// it asked for the usage chunk. `created` is read from the clock now.
    pub fn new(model: &str, include_usage: bool) -> ConverseStreamToChat {
        ConverseStreamToChat::with_created(model, include_usage, unix_now())
    }

    /// The same with the chunks' `created` given.
    pub fn with_created(model: &str, include_usage: bool, created: u64) -> ConverseStreamToChat {
        let state = State {
            model: model.to_string(),
            created,
            include_usage,
            id: fresh_id(),
            chunks: ChatChunks::default(),
            tools: Vec::new(),
            usage: None,
            stopped: false,
            done: false,
        };
        ConverseStreamToChat { pending: Vec::new(), state }
    }
}

impl StreamTranslator for ConverseStreamToChat {
    fn feed(&mut self, input: &[u8], out: &mut Vec<u8>) {
        if self.state.done {
            return;
        }
        if self.pending.is_empty() {
            let used = self.state.frames(input, out);
            if !self.state.done {
                self.pending.extend_from_slice(&input[used..]);
            }
        } else {
            self.pending.extend_from_slice(input);
            let used = self.state.frames(&self.pending, out);
            self.pending.drain(..used);
        }
        if self.state.done {
            self.pending = Vec::new();
        }
    }

    fn finish(&mut self, out: &mut Vec<u8>, complete: bool) {
        let state = &mut self.state;
        if state.done {
            return;
        }
        if !complete || !self.pending.is_empty() {
            state.fail(out, "the upstream stream ended before the answer was complete");
        } else if state.stopped {
            state.end(out);
        } else {
            // ConverseStream always ends a whole answer with messageStop.
            state.fail(out, "the upstream stream ended before the answer was complete");
        }
    }

    fn usage(&self) -> Option<(u64, u64)> {
        self.state.usage.map(|t| (t.prompt, t.completion))
    }
}

/// A frame's string header, when present.
fn header<'m>(message: &'m Message, name: &str) -> Option<&'m str> {
    let header = message.headers().iter().find(|h| h.name().as_str() == name)?;
    header.value().as_string().ok().map(StrBytes::as_str)
}

/// A Bedrock exception type's HTTP status (ConverseStream's documented exceptions and the
/// operation's others).
fn exception_status(exception: &str) -> u16 {
    match exception {
        "throttlingException" | "ThrottlingException" => 429,
        "validationException" | "ValidationException" | "serviceQuotaExceededException" => 400,
        "accessDeniedException" | "AccessDeniedException" => 403,
        "resourceNotFoundException" | "ResourceNotFoundException" => 404,
        "modelTimeoutException" | "ModelTimeoutException" => 408,
        "modelStreamErrorException" | "ModelStreamErrorException" => 424,
        "serviceUnavailableException" | "ServiceUnavailableException" => 503,
        // internalServerException and anything else.
        _ => 500,
    }
}

impl State {
    /// Handles the whole frames at the start of `data`; returns how many bytes they took.
    fn frames(&mut self, data: &[u8], out: &mut Vec<u8>) -> usize {
        let mut used = 0;
        while !self.done {
            let rest = &data[used..];
            let Some(prelude) = rest.get(..4) else { break };
            let total = u32::from_be_bytes([prelude[0], prelude[1], prelude[2], prelude[3]]) as usize;
            if !(FRAME_OVERHEAD..=MAX_FRAME_BYTES).contains(&total) {
                self.fail(out, "the upstream sent bytes that are not an event stream frame");
                break;
            }
            let Some(frame) = rest.get(..total) else { break };
            used += total;
            match read_message_from(frame) {
                Ok(message) => self.on_message(&message, out),
                Err(e) => self.fail(out, &format!("the upstream sent a corrupt event stream frame ({e})")),
            }
        }
        used
    }

    fn on_message(&mut self, message: &Message, out: &mut Vec<u8>) {
        match header(message, ":message-type").unwrap_or("event") {
            "event" => {}
            "exception" => {
                let kind = header(message, ":exception-type").unwrap_or("internalServerException");
                let payload = serde_json::from_slice::<Value>(message.payload()).unwrap_or(Value::Null);
                let text = ["message", "Message"].iter().find_map(|k| payload.get(*k).and_then(Value::as_str));
                return self.upstream_error(out, exception_status(kind), text.unwrap_or(kind));
            }
            "error" => {
                let code = header(message, ":error-code").unwrap_or("InternalFailure");
                let text = header(message, ":error-message").unwrap_or(code);
                return self.upstream_error(out, exception_status(code), text);
            }
            // Message types a later protocol version adds.
            _ => return,
        }
        let event_type = header(message, ":event-type").unwrap_or("");
        let known = ["messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop", "messageStop"];
        if !known.contains(&event_type) && event_type != "metadata" {
            return; // Event types a later API version adds.
        }
        let payload = match serde_json::from_slice::<Payload<'_>>(message.payload()) {
            Ok(payload) => payload,
            Err(_) => return self.fail(out, "the upstream sent a stream event that is not a Converse event"),
        };
        match event_type {
            "messageStart" => self.start(out),
            "contentBlockStart" => {
                if let Some(tool) = payload.start.as_ref().and_then(|s| s.tool_use.as_ref()) {
                    self.tool_start(payload.index, tool, out);
                }
            }
            "contentBlockDelta" => {
                if let Some(delta) = &payload.delta {
                    self.delta(payload.index, delta, out);
                }
            }
            "contentBlockStop" => {
                let tool = self.tools.iter_mut().find(|(block, _, _)| *block == payload.index);
                if let Some((_, tool, seen @ false)) = tool {
                    *seen = true;
                    let tool = *tool;
                    self.arguments(tool, "{}", out);
                }
            }
            "messageStop" => {
                if !self.stopped {
                    self.stopped = true;
                    let reason = finish_reason_for(payload.stop_reason.as_deref().unwrap_or("end_turn"));
                    self.chunk(out, b"{}", Some(reason));
                }
            }
            _ => {
                if let Some(usage) = &payload.usage {
                    self.usage = Some(tokens_of(usage));
                }
                if self.stopped {
                    self.end(out);
                }
            }
        }
    }

    fn start(&mut self, out: &mut Vec<u8>) {
        if self.chunks.is_started() {
            return;
        }
        self.chunks.start(&self.id, self.created, &self.model);
        self.chunks.chunk(out, 0, ROLE_DELTA, None, None);
    }

    /// One chunk: `delta` (JSON), the finish reason.
    fn chunk(&mut self, out: &mut Vec<u8>, delta: &[u8], finish_reason: Option<&str>) {
        self.start(out);
        self.chunks.chunk(out, 0, delta, None, finish_reason);
    }

    /// A chunk whose delta is `{"<field>":"<text>"}`.
    fn text_chunk(&mut self, out: &mut Vec<u8>, field: &str, text: &str) {
        self.start(out);
        self.chunks.text(out, field, text);
    }

    fn tool_start(&mut self, index: u64, tool: &ToolStart<'_>, out: &mut Vec<u8>) {
        if self.tools.iter().any(|(block, _, _)| *block == index) {
            return;
        }
        let tool_index = self.tools.len() as u64;
        self.tools.push((index, tool_index, false));
        let call = json!({"index": tool_index, "id": tool.id, "type": "function",
            "function": {"name": tool.name, "arguments": ""}});
        let mut delta = b"{\"tool_calls\":[".to_vec();
        push_json(&mut delta, &call);
        delta.extend_from_slice(b"]}");
        self.chunk(out, &delta, None);
    }

    fn delta(&mut self, index: u64, delta: &Delta<'_>, out: &mut Vec<u8>) {
        if let Some(text) = delta.text.as_deref().filter(|t| !t.is_empty()) {
            self.text_chunk(out, "content", text);
        } else if let Some(reasoning) = &delta.reasoning {
            // A signature or redacted content has no text: nothing OpenAI can show.
            if let Some(text) = reasoning.text.as_deref().filter(|t| !t.is_empty()) {
                self.text_chunk(out, "reasoning_content", text);
            }
        } else if let Some(fragment) = delta.tool_use.as_ref().and_then(|t| t.input.as_deref()) {
            let tool = self.tools.iter_mut().find(|(block, _, _)| *block == index);
            if let (Some((_, tool, seen)), false) = (tool, fragment.is_empty()) {
                *seen = true;
                let tool = *tool;
                self.arguments(tool, fragment, out);
            }
        }
        // Citations, images and delta kinds a later API version adds carry nothing to show.
    }

    fn arguments(&mut self, tool: u64, fragment: &str, out: &mut Vec<u8>) {
        let mut chunk = Vec::with_capacity(fragment.len() + 64);
        let _ = write!(chunk, "{{\"tool_calls\":[{{\"index\":{tool},\"function\":{{\"arguments\":");
        push_json_str(&mut chunk, fragment);
        chunk.extend_from_slice(b"}}]}");
        self.chunk(out, &chunk, None);
    }

    /// After `messageStop`: the usage chunk when asked for, `[DONE]`.
    fn end(&mut self, out: &mut Vec<u8>) {
        if self.include_usage {
            self.chunks.usage(out, &self.usage.unwrap_or_default().to_openai());
        }
        out.extend_from_slice(DONE);
        self.done = true;
    }

    fn upstream_error(&mut self, out: &mut Vec<u8>, status: u16, message: &str) {
        let kind = crate::openai_error_type(status);
        push_openai_stream_error(out, kind, message, Some(&status.to_string()));
        self.done = true;
    }

    fn fail(&mut self, out: &mut Vec<u8>, message: &str) {
        if !self.done {
            push_openai_stream_error(out, "api_error", message, None);
            self.done = true;
        }
    }
}

fn frame(headers: [(&str, &str); 3], payload: &[u8]) -> Vec<u8> {
    let mut message = Message::new(payload.to_vec());
    for (name, value) in headers {
        message = message.add_header(Header::new(name.to_string(), HeaderValue::String(value.to_string().into())));
    }
    let mut out = Vec::with_capacity(payload.len() + 128);
    // Writing fails only for a header over 32 KiB or a frame over 4 GiB, which no caller builds.
    write_message_to(&message, &mut out).expect("an event stream frame within the encoding's limits");
    out
}

/// One ConverseStream event frame (`:event-type` `event_type`, JSON `payload`), as Bedrock sends
/// it: for tests, benches and the mock provider.
pub fn encode_event(event_type: &str, payload: &[u8]) -> Vec<u8> {
    frame([(":event-type", event_type), (":content-type", "application/json"), (":message-type", "event")], payload)
}

/// One ConverseStream exception frame (`:exception-type` e.g. `throttlingException`, payload
/// e.g. `{"message":"…"}`).
pub fn encode_exception(exception_type: &str, payload: &[u8]) -> Vec<u8> {
    let headers =
        [(":exception-type", exception_type), (":content-type", "application/json"), (":message-type", "exception")];
    frame(headers, payload)
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
