//! Streaming a Responses answer: typed server-sent events (`event: TYPE`, `data: {"type": TYPE,
//! "sequence_number": N, …}`) — `response.created`, `response.in_progress`, then per output item
//! `response.output_item.added`, a message's `response.content_part.added`,
//! `response.output_text.delta`…, `response.output_text.done`, `response.content_part.done` (a
//! call's `response.function_call_arguments.delta`…, `.done`), `response.output_item.done`, and
//! `response.completed` with the usage. Each delta is a content frame, the chunk delay apart; a
//! cut-off stream just closes (as OpenAI's does), without `response.completed`.

use std::time::Duration;

use serde_json::{json, Value};

use crate::conn::chunked::ChunkedPlan;
use crate::openai::body::content_piece;
use crate::responses::body::{output_text, OutputItem, ResponseAnswer};

/// The events of `answer` in order, each content split into `chunks` deltas; `true` marks a delta.
pub(crate) fn events(answer: &ResponseAnswer, chunks: u32) -> Vec<(Value, bool)> {
    let mut events = vec![
        (json!({"type": "response.created", "response": answer.json(false)}), false),
        (json!({"type": "response.in_progress", "response": answer.json(false)}), false),
    ];
    for (output_index, item) in answer.output.iter().enumerate() {
        let item_id = item.id();
        events.push((
            json!({"type": "response.output_item.added", "output_index": output_index, "item": item.json(false)}),
            false,
        ));
        let content = item.content();
        let pieces = (0..chunks).map(|index| content_piece(content, index, chunks));
        match item {
            OutputItem::Message { text, .. } => {
                let at = json!({"item_id": item_id, "output_index": output_index, "content_index": 0});
                events
                    .push((with(&at, json!({"type": "response.content_part.added", "part": output_text("")})), false));
                for piece in pieces {
                    events.push((
                        with(&at, json!({"type": "response.output_text.delta", "delta": piece, "logprobs": []})),
                        true,
                    ));
                }
                events.push((
                    with(&at, json!({"type": "response.output_text.done", "text": text, "logprobs": []})),
                    false,
                ));
                events
                    .push((with(&at, json!({"type": "response.content_part.done", "part": output_text(text)})), false));
            }
            OutputItem::FunctionCall { arguments, name, .. } => {
                let at = json!({"item_id": item_id, "output_index": output_index});
                for piece in pieces {
                    events.push((
                        with(&at, json!({"type": "response.function_call_arguments.delta", "delta": piece})),
                        true,
                    ));
                }
                let done =
                    json!({"type": "response.function_call_arguments.done", "name": name, "arguments": arguments});
                events.push((with(&at, done), false));
            }
        }
        events.push((
            json!({"type": "response.output_item.done", "output_index": output_index, "item": item.json(true)}),
            false,
        ));
    }
    events.push((json!({"type": "response.completed", "response": answer.json(true)}), false));
    for (number, (event, _)) in events.iter_mut().enumerate() {
        if let Value::Object(fields) = event {
            fields.insert("sequence_number".to_owned(), Value::from(number));
        }
    }
    events
}

/// `base`'s fields, then `fields`' (the event's type first in the JSON).
fn with(base: &Value, fields: Value) -> Value {
    let mut merged = fields;
    if let (Value::Object(merged), Value::Object(base)) = (&mut merged, base) {
        merged.extend(base.clone());
    }
    merged
}

/// `event: TYPE\ndata: JSON\n\n`.
fn sse(event: &Value) -> Vec<u8> {
    let kind = event.get("type").and_then(Value::as_str).unwrap_or_default();
    format!("event: {kind}\ndata: {event}\n\n").into_bytes()
}

/// Plans the stream: the events before a delta go with it as one frame, those after the last
/// delta are the closing.
pub(crate) fn plan_stream(
    answer: &ResponseAnswer,
    head: Vec<u8>,
    chunks: u32,
    chunk_delay: Duration,
    abort_after: Option<u32>,
    close: bool,
) -> ChunkedPlan {
    let mut plan = ChunkedPlan::new(head, chunk_delay, abort_after, close);
    let mut pending = Vec::new();
    for (event, is_delta) in events(answer, chunks) {
        pending.extend_from_slice(&sse(&event));
        if is_delta {
            plan.frame(&std::mem::take(&mut pending));
        }
    }
    plan.close_with(&pending);
    plan
}
