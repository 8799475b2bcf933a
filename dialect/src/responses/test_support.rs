//! Helpers the Responses tests share: echoes, chat chunks, and streams run and read back.

use serde_json::{json, Value};

use super::{ChatToResponsesStream, ResponseEcho};
use crate::sse::{SseEvent, SseSplitter};
use crate::StreamTranslator;

pub(super) const RESPONSE_ID: &str = "resp_t1";

/// The echo of `request` for response [`RESPONSE_ID`], created at 1700000000, model `gpt-client`.
pub(super) fn echo_for(request: &Value) -> ResponseEcho {
    ResponseEcho::new(&serde_json::to_vec(request).unwrap(), RESPONSE_ID, 1_700_000_000, "gpt-client")
}

/// One chat chunk event whose only choice has `delta` and `finish_reason`.
pub(super) fn chunk(delta: Value, finish_reason: Option<&str>) -> String {
    let chunk = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "up",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]});
    format!("data: {chunk}\n\n")
}

/// The usage chunk (no choices) and `[DONE]`.
pub(super) fn usage_and_done(prompt: u64, completion: u64) -> String {
    let usage = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}});
    format!("data: {usage}\n\ndata: [DONE]\n\n")
}

/// A finished stream: its bytes, its events' data, the final response, the usage.
pub(super) struct StreamRun {
    pub(super) bytes: Vec<u8>,
    pub(super) events: Vec<Value>,
    pub(super) completed: Option<Value>,
    pub(super) usage: Option<(u64, u64)>,
}

impl StreamRun {
    pub(super) fn types(&self) -> Vec<&str> {
        self.events.iter().map(|e| e["type"].as_str().unwrap()).collect()
    }

    /// The events of one type.
    pub(super) fn of_type(&self, kind: &str) -> Vec<&Value> {
        self.events.iter().filter(|e| e["type"] == kind).collect()
    }

    /// The terminal event's response object.
    pub(super) fn last_response(&self) -> &Value {
        &self.events.last().unwrap()["response"]
    }
}

fn run_pieces(request: &Value, pieces: &[&[u8]], complete: bool) -> StreamRun {
    let mut stream = ChatToResponsesStream::new(echo_for(request));
    let mut bytes = Vec::new();
    for piece in pieces {
        stream.feed(piece, &mut bytes);
    }
    stream.finish(&mut bytes, complete);
    let completed = stream.completed().cloned();
    StreamRun { events: events_of(&bytes), bytes, completed, usage: stream.usage() }
}

/// Runs `input` through a stream for `request`, in one piece and byte by byte (asserting the
/// same bytes), and checks every event's name, `type` and `sequence_number`.
pub(super) fn run_stream(request: &Value, input: &[u8], complete: bool) -> StreamRun {
    let whole = run_pieces(request, &[input], complete);
    let bytes: Vec<&[u8]> = input.chunks(1).collect();
    let by_byte = run_pieces(request, &bytes, complete);
    assert_eq!(String::from_utf8_lossy(&by_byte.bytes), String::from_utf8_lossy(&whole.bytes), "byte by byte");
    for (i, event) in whole.events.iter().enumerate() {
        assert_eq!(event["sequence_number"], i, "sequence number of event {i}: {event}");
    }
    dump(&whole.bytes);
    whole
}

/// The data of every event, checking that each `event:` name is its data's `type`.
pub(super) fn events_of(bytes: &[u8]) -> Vec<Value> {
    let mut events = Vec::new();
    let mut splitter = SseSplitter::new();
    let mut push = |e: SseEvent<'_>| {
        let data: Value = serde_json::from_slice(e.data).unwrap();
        assert_eq!(data["type"].as_str().unwrap().as_bytes(), e.event, "event name and type");
        events.push(data);
    };
    splitter.feed(bytes, &mut push).unwrap();
    splitter.finish(&mut push).unwrap();
    events
}

/// Appends the output to `$RESPONSES_DUMP_DIR/<n>.out` when set, for validating the shapes with
/// the official SDK outside the test suite.
pub(super) fn dump(bytes: &[u8]) {
    let Ok(dir) = std::env::var("RESPONSES_DUMP_DIR") else { return };
    static COUNT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    std::fs::write(format!("{dir}/{n}.out"), bytes).unwrap();
}
