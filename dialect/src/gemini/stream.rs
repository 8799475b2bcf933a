//! A Gemini `streamGenerateContent?alt=sse` stream → an OpenAI chat-completions stream.
//!
//! Every `data:` event is one whole `GenerateContentResponse`. Each candidate becomes a choice
//! (its first appearance the role chunk); in each event its thought text becomes a
//! `reasoning_content` delta, its text a `content` delta (with `logprobs` when the event has
//! `logprobsResult`), each `functionCall` part one whole tool-call delta (index, id, name,
//! arguments), and its `finishReason` the finish chunk. `usageMetadata` (the last events carry
//! it) is kept. Gemini sends no end marker: at `finish(complete = true)`, when every choice has
//! finished, the usage chunk (if asked for) and `data: [DONE]` close the stream; a stream cut
//! short, one without a finish reason, an `error` object or an event that is not a response ends
//! with OpenAI's `data: {"error":…}` and no `[DONE]`.

use serde_json::{json, Map, Value};

use super::super::chat_chunks::{ChatChunks, DONE, ROLE_DELTA};
use super::super::errors::push_openai_stream_error;
use super::super::sse::{SseEvent, SseSplitter};
use super::super::{push_json, push_json_str, unix_now, StreamTranslator};
use super::mapping::{
    choice_finish_reason, fresh_suffix, logprobs_to_openai, merge_usage, read_parts, tool_call_id, Usage,
};

/// Gemini events in, OpenAI chunks out (ending with `data: [DONE]`).
#[derive(Debug)]
pub struct GeminiToChatStream {
    splitter: SseSplitter,
    state: State,
}

#[derive(Debug)]
struct State {
    model: String,
    created: u64,
    include_usage: bool,
    /// Started by the first event (which names the id).
    chunks: ChatChunks,
    /// The base of tool call ids: the response id, or a fresh suffix.
    id_base: String,
    choices: Vec<Choice>,
    /// Tool calls so far in the whole response (ids are unique across choices).
    calls_made: usize,
    usage: Option<Map<String, Value>>,
    done: bool,
}

#[derive(Debug)]
struct Choice {
    index: u64,
    tool_calls: u64,
    finished: bool,
}

impl GeminiToChatStream {
    /// A translator for one stream; `model` is what the client asked for, `include_usage` whether
    /// it asked for the usage chunk. `created` is read from the clock now.
    pub fn new(model: &str, include_usage: bool) -> GeminiToChatStream {
        GeminiToChatStream::with_created(model, include_usage, unix_now())
    }

    /// The same with the chunks' `created` given.
    pub fn with_created(model: &str, include_usage: bool, created: u64) -> GeminiToChatStream {
        let state = State {
            model: model.to_string(),
            created,
            include_usage,
            chunks: ChatChunks::default(),
            id_base: String::new(),
            choices: Vec::new(),
            calls_made: 0,
            usage: None,
            done: false,
        };
        GeminiToChatStream { splitter: SseSplitter::new(), state }
    }
}

const TOO_LARGE: &str = "the upstream sent a stream event larger than the gateway accepts";

impl StreamTranslator for GeminiToChatStream {
    fn feed(&mut self, input: &[u8], out: &mut Vec<u8>) {
        if self.state.done {
            return;
        }
        let Self { splitter, state } = self;
        if splitter.feed(input, |event| state.on_event(event, out)).is_err() {
            state.fail(out, TOO_LARGE);
        }
    }

    fn finish(&mut self, out: &mut Vec<u8>, complete: bool) {
        if self.state.done {
            return;
        }
        let Self { splitter, state } = self;
        if splitter.finish(|event| state.on_event(event, out)).is_err() {
            state.fail(out, TOO_LARGE);
        }
        if !complete {
            state.fail(out, "the upstream stream ended before the answer was complete");
        } else if state.choices.is_empty() || state.choices.iter().any(|c| !c.finished) {
            state.fail(out, "the upstream stream ended without a finish reason");
        } else {
            state.close(out);
        }
    }

    fn usage(&self) -> Option<(u64, u64)> {
        let usage = Usage::from_gemini(&Value::Object(self.state.usage.clone()?));
        Some((usage.prompt, usage.completion))
    }
}

impl State {
    fn on_event(&mut self, event: SseEvent<'_>, out: &mut Vec<u8>) {
        if self.done {
            return;
        }
        let response = match serde_json::from_slice::<Value>(event.data) {
            Ok(response @ Value::Object(_)) => response,
            _ => return self.fail(out, "the upstream sent a stream event that is not a GenerateContentResponse"),
        };
        if let Some(error) = response.get("error") {
            return self.upstream_error(error, out);
        }
        self.start(response.get("responseId").and_then(Value::as_str));
        merge_usage(&mut self.usage, response.get("usageMetadata"));
        let candidates = response.get("candidates").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
        for (position, candidate) in candidates.iter().enumerate() {
            let index = candidate.get("index").and_then(Value::as_u64).unwrap_or(position as u64);
            self.candidate(index, candidate, out);
        }
        if candidates.is_empty() && response.pointer("/promptFeedback/blockReason").is_some() {
            // A blocked prompt: one empty choice, filtered.
            let slot = self.choice(0, out);
            self.finish_choice(slot, "content_filter", out);
        }
    }

    fn start(&mut self, response_id: Option<&str>) {
        if self.chunks.is_started() {
            return;
        }
        let response_id = response_id.filter(|id| !id.is_empty());
        self.id_base = response_id.map_or_else(fresh_suffix, str::to_string);
        let id = response_id.map_or_else(|| format!("chatcmpl-{}", self.id_base), str::to_string);
        self.chunks.start(&id, self.created, &self.model);
    }

    /// The choice for a candidate index, its role chunk written when it first appears.
    fn choice(&mut self, index: u64, out: &mut Vec<u8>) -> usize {
        if let Some(slot) = self.choices.iter().position(|c| c.index == index) {
            return slot;
        }
        self.choices.push(Choice { index, tool_calls: 0, finished: false });
        self.chunk(out, index, ROLE_DELTA, None, None);
        self.choices.len() - 1
    }

    fn candidate(&mut self, index: u64, candidate: &Value, out: &mut Vec<u8>) {
        let slot = self.choice(index, out);
        let parts = read_parts(candidate);
        if let Some(reasoning) = &parts.reasoning {
            self.chunk(out, index, &text_delta("reasoning_content", reasoning), None, None);
        }
        if let Some(text) = &parts.text {
            let logprobs = logprobs_to_openai(candidate);
            self.chunk(out, index, &text_delta("content", text), logprobs.as_ref(), None);
        }
        for call in &parts.calls {
            let id = tool_call_id(&self.id_base, self.calls_made, call.signature.as_deref());
            self.calls_made += 1;
            let choice = &mut self.choices[slot];
            let delta = json!({"tool_calls": [{"index": choice.tool_calls, "id": id, "type": "function",
                "function": {"name": call.name, "arguments": call.arguments}}]});
            choice.tool_calls += 1;
            let mut bytes = Vec::with_capacity(call.arguments.len() + 128);
            push_json(&mut bytes, &delta);
            self.chunk(out, index, &bytes, None, None);
        }
        if let Some(reason) = candidate.get("finishReason").and_then(Value::as_str) {
            let reason = choice_finish_reason(reason, self.choices[slot].tool_calls > 0);
            self.finish_choice(slot, reason, out);
        }
    }

    fn finish_choice(&mut self, slot: usize, reason: &str, out: &mut Vec<u8>) {
        let choice = &mut self.choices[slot];
        if !choice.finished {
            choice.finished = true;
            let index = choice.index;
            self.chunk(out, index, b"{}", None, Some(reason));
        }
    }

    /// One chunk of one choice: `delta` (JSON), its logprobs, its finish reason.
    fn chunk(&mut self, out: &mut Vec<u8>, index: u64, delta: &[u8], logprobs: Option<&Value>, finish: Option<&str>) {
        self.start(None);
        self.chunks.chunk(out, index, delta, logprobs, finish);
    }

    /// The usage chunk (when asked for) and `[DONE]`.
    fn close(&mut self, out: &mut Vec<u8>) {
        if self.include_usage {
            let usage = Usage::from_gemini(&Value::Object(self.usage.clone().unwrap_or_default()));
            self.chunks.usage(out, &usage.to_openai());
        }
        out.extend_from_slice(DONE);
        self.done = true;
    }

    /// Google's `{"error":{"code","message","status"}}` mid-stream.
    fn upstream_error(&mut self, error: &Value, out: &mut Vec<u8>) {
        let status = error.get("code").and_then(Value::as_u64).and_then(|c| u16::try_from(c).ok());
        let kind = status.map_or("api_error", crate::openai_error_type);
        let message = error.get("message").and_then(Value::as_str).unwrap_or("the upstream failed mid-stream");
        push_openai_stream_error(out, kind, message, error.get("status").and_then(Value::as_str));
        self.done = true;
    }

    fn fail(&mut self, out: &mut Vec<u8>, message: &str) {
        if !self.done {
            push_openai_stream_error(out, "api_error", message, None);
            self.done = true;
        }
    }
}

/// `{"<field>":"<text>"}`.
fn text_delta(field: &str, text: &str) -> Vec<u8> {
    let mut delta = Vec::with_capacity(text.len() + field.len() + 8);
    delta.push(b'{');
    push_json_str(&mut delta, field);
    delta.push(b':');
    push_json_str(&mut delta, text);
    delta.push(b'}');
    delta
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
