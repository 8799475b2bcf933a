//! A chat-completions stream → the Responses event stream.
//!
//! `response.created` and `response.in_progress` at the first chunk; then one output item per
//! kind of content in the order it comes: reasoning (`delta.reasoning_content` or
//! `delta.reasoning`) as a reasoning item with one summary part, text and refusals as a message
//! item (one content part per run), each tool call (by its chat `index`) as a function, custom
//! or local-shell call. A reasoning or message item is closed when another kind starts; tool
//! calls stay open until the answer's `finish_reason` (a chat stream may interleave calls by
//! index), then close in order. Function-call arguments stream as they come; a custom call's
//! input and a local-shell call's action are written whole at its close (the `{"input": …}`
//! wrapper the chat function needs must not reach the client). `response.completed` (or
//! `response.incomplete` for `length` / `content_filter`) ends the stream once the usage chunk,
//! `[DONE]` or the body's end arrives; an upstream error event, a garbled event or a stream cut
//! short ends it with `response.failed`.

use serde_json::{json, Value};

use super::echo::ResponseEcho;
use super::events::{error_code, EventWriter};
use super::output_items::{status_for, usage_of};
use crate::sse::{SseEvent, SseSplitter};
use crate::StreamTranslator;

#[path = "stream_chunk.rs"]
mod stream_chunk;
#[path = "stream_items.rs"]
mod stream_items;
use stream_chunk::Chunk;
use stream_items::{OpenCall, OpenText};

/// Chat chunks in, Responses events out.
#[derive(Debug)]
pub struct ChatToResponsesStream {
    splitter: SseSplitter,
    state: StreamState,
}

/// The translation's state between events.
#[derive(Debug)]
struct StreamState {
    echo: ResponseEcho,
    events: EventWriter,
    started: bool,
    /// Output items by output index: `Some` once done, `None` while open.
    output: Vec<Option<Value>>,
    /// The reasoning or message item being written.
    text: Option<OpenText>,
    /// Tool calls not yet closed, in output order.
    calls: Vec<OpenCall>,
    finish_reason: Option<String>,
    /// The upstream's chat usage object.
    usage: Option<Value>,
    /// The final response object, once `response.completed` / `.incomplete` is out.
    completed: Option<Value>,
    /// A terminal event is out: nothing more is written.
    done: bool,
}

impl ChatToResponsesStream {
    pub fn new(echo: ResponseEcho) -> ChatToResponsesStream {
        let state = StreamState {
            echo,
            events: EventWriter::default(),
            started: false,
            output: Vec::new(),
            text: None,
            calls: Vec::new(),
            finish_reason: None,
            usage: None,
            completed: None,
            done: false,
        };
        ChatToResponsesStream { splitter: SseSplitter::new(), state }
    }

    /// The final response object, once `response.completed` or `response.incomplete` was written.
    pub fn completed(&self) -> Option<&Value> {
        self.state.completed.as_ref()
    }

    /// Ends the stream with `response.failed` for a failure the gateway saw (`status` picks the
    /// error code), keeping this stream's sequence numbers. Nothing after a terminal event.
    pub fn fail_with(&mut self, out: &mut Vec<u8>, status: u16, message: &str) {
        self.state.fail(out, error_code(status), message);
    }
}

impl StreamTranslator for ChatToResponsesStream {
    fn feed(&mut self, input: &[u8], out: &mut Vec<u8>) {
        if self.state.done {
            return;
        }
        let Self { splitter, state } = self;
        if splitter.feed(input, |event| state.on_event(event, out)).is_err() {
            state.fail(out, "server_error", "the upstream sent a stream event larger than the gateway accepts");
        }
    }

    fn finish(&mut self, out: &mut Vec<u8>, complete: bool) {
        if self.state.done {
            return;
        }
        let Self { splitter, state } = self;
        if splitter.finish(|event| state.on_event(event, out)).is_err() {
            state.fail(out, "server_error", "the upstream sent a stream event larger than the gateway accepts");
        }
        if complete && state.finish_reason.is_some() {
            state.complete(out);
        } else {
            state.fail(out, "server_error", "the upstream stream ended before the answer was complete");
        }
    }

    fn usage(&self) -> Option<(u64, u64)> {
        let usage = self.state.usage.as_ref()?;
        let count = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
        Some((count("prompt_tokens"), count("completion_tokens")))
    }
}

/// An `error` event in the Responses API's shape, for a failure after the stream's head when no
/// [`ChatToResponsesStream`] is at hand (its `sequence_number` is 0; with a translator, use
/// [`ChatToResponsesStream::fail_with`]).
pub fn responses_stream_error(status: u16, message: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let code = if status == 429 || status >= 500 { error_code(status) } else { crate::openai_error_type(status) };
    EventWriter::default().push(&mut out, "error", &json!({"code": code, "message": message, "param": null}));
    out
}

impl StreamState {
    fn on_event(&mut self, event: SseEvent<'_>, out: &mut Vec<u8>) {
        if self.done {
            return;
        }
        if event.data == b"[DONE]" {
            return self.complete(out);
        }
        let chunk = match serde_json::from_slice::<Chunk<'_>>(event.data) {
            Ok(chunk) => chunk,
            Err(_) => {
                let message = "the upstream sent a stream event that is not a chat completion chunk";
                return self.fail(out, "server_error", message);
            }
        };
        if let Some(error) = &chunk.error {
            let message = error.get("message").and_then(Value::as_str).unwrap_or("the upstream failed mid-stream");
            let status = error.get("code").and_then(Value::as_u64).and_then(|c| u16::try_from(c).ok());
            return self.fail(out, status.map_or("server_error", error_code), message);
        }
        self.start(out);
        for choice in chunk.choices.iter().flatten().filter(|c| c.index == 0) {
            if let Some(delta) = &choice.delta {
                if let Some(reasoning) = delta.reasoning_content.as_deref().or(delta.reasoning.as_deref()) {
                    self.reasoning_delta(reasoning, out);
                }
                if let Some(text) = delta.content.as_deref() {
                    self.message_delta(false, text, out);
                }
                if let Some(refusal) = delta.refusal.as_deref() {
                    self.message_delta(true, refusal, out);
                }
                for (position, call) in delta.tool_calls.iter().flatten().enumerate() {
                    self.call_delta(position, call, out);
                }
            }
            if let Some(finish) = &choice.finish_reason {
                if finish == "error" {
                    return self.fail(out, "server_error", "the upstream ended the answer with an error");
                }
                self.finish_reason = Some(finish.to_string());
                self.close_all(out);
            }
        }
        if let Some(usage) = chunk.usage.filter(Value::is_object) {
            self.usage = Some(usage);
        }
        if self.finish_reason.is_some() && self.usage.is_some() {
            self.complete(out);
        }
    }

    fn start(&mut self, out: &mut Vec<u8>) {
        if self.started {
            return;
        }
        self.started = true;
        let response = self.echo.response("in_progress", Vec::new(), None, Value::Null, Value::Null);
        let fields = json!({"response": response});
        self.events.push(out, "response.created", &fields);
        self.events.push(out, "response.in_progress", &fields);
    }

    /// Closes every open item, text first, then the calls in output order.
    fn close_all(&mut self, out: &mut Vec<u8>) {
        self.close_text(out);
        for call in std::mem::take(&mut self.calls) {
            self.close_call(call, out);
        }
    }

    fn finished_items(&self) -> Vec<Value> {
        self.output.iter().flatten().cloned().collect()
    }

    /// The answer is whole: every item closed, then `response.completed` or `.incomplete`.
    fn complete(&mut self, out: &mut Vec<u8>) {
        if self.done {
            return;
        }
        self.start(out);
        self.close_all(out);
        let (status, incomplete) = status_for(self.finish_reason.as_deref());
        let usage = usage_of(self.usage.as_ref());
        let response = self.echo.response(status, self.finished_items(), Some(usage), Value::Null, incomplete);
        let kind = if status == "incomplete" { "response.incomplete" } else { "response.completed" };
        self.events.push(out, kind, &json!({"response": response}));
        self.completed = Some(response);
        self.done = true;
    }

    /// `response.failed` with the items finished so far; open items are left as they are.
    fn fail(&mut self, out: &mut Vec<u8>, code: &str, message: &str) {
        if self.done {
            return;
        }
        self.start(out);
        let usage = self.usage.as_ref().map(|u| usage_of(Some(u)));
        let error = json!({"code": code, "message": message});
        let response = self.echo.response("failed", self.finished_items(), usage, error, Value::Null);
        self.events.push(out, "response.failed", &json!({"response": response}));
        self.done = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_standalone_error_event() {
        let out = String::from_utf8(responses_stream_error(429, "slow down")).unwrap();
        assert_eq!(
            out,
            "event: error\ndata: {\"type\":\"error\",\"sequence_number\":0,\"code\":\"rate_limit_exceeded\",\"message\":\"slow down\",\"param\":null}\n\n"
        );
        assert!(String::from_utf8(responses_stream_error(404, "x")).unwrap().contains("\"code\":\"not_found_error\""));
    }
}
