//! ConverseStream's answer: `application/vnd.amazon.eventstream` messages (encoded with
//! `aws-smithy-eventstream`), each its own HTTP chunk: `messageStart`, for a tool call
//! `contentBlockStart`, `contentBlockDelta`s (the text, or a tool's input JSON, in `chunks`
//! pieces), `contentBlockStop`, `messageStop` and `metadata`. A cut-off stream ends with an
//! exception message (`:message-type exception`).

use std::time::Duration;

use aws_smithy_eventstream::frame::write_message_to;
use aws_smithy_types::event_stream::{Header, HeaderValue, Message};
use serde_json::{json, Value};

use crate::bedrock::converse::ConverseAnswer;
use crate::conn::chunked::ChunkedPlan;
use crate::openai::body::content_piece;
use crate::wire::response::write_chunk;

/// The exceptions a ConverseStream may end with, and the message the mock gives each.
pub(crate) const STREAM_EXCEPTIONS: [(&str, &str); 5] = [
    ("throttlingException", "Too many requests, please wait before trying again."),
    (
        "internalServerException",
        "The system encountered an unexpected error during processing. Try your request again.",
    ),
    ("modelStreamErrorException", "An error occurred while streaming the response. Retry your request."),
    ("validationException", "Input is too long for requested model."),
    ("serviceUnavailableException", "Bedrock is unable to process your request."),
];

/// Bedrock pads every event's JSON with a `p` field of varying length (so sizes say nothing of
/// the content); clients must ignore it.
const PADDING: &str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/// One event message, `:message-type event`.
pub(crate) fn event_message(event_type: &str, mut payload: Value, sequence: usize) -> Vec<u8> {
    payload["p"] = json!(&PADDING[..(sequence * 7 % PADDING.len()) + 1]);
    let message = Message::new(payload.to_string().into_bytes())
        .add_header(Header::new(":event-type", HeaderValue::String(event_type.to_owned().into())))
        .add_header(Header::new(":content-type", HeaderValue::String("application/json".into())))
        .add_header(Header::new(":message-type", HeaderValue::String("event".into())));
    encode(&message)
}

/// An exception message, `:message-type exception`, with `{"message": …}`.
pub(crate) fn exception_message(exception_type: &str, text: &str) -> Vec<u8> {
    let message = Message::new(json!({ "message": text }).to_string().into_bytes())
        .add_header(Header::new(":exception-type", HeaderValue::String(exception_type.to_owned().into())))
        .add_header(Header::new(":content-type", HeaderValue::String("application/json".into())))
        .add_header(Header::new(":message-type", HeaderValue::String("exception".into())));
    encode(&message)
}

fn encode(message: &Message) -> Vec<u8> {
    let mut out = Vec::new();
    // Writing headers of these types and a small payload into a Vec cannot fail.
    let _ = write_message_to(message, &mut out);
    out
}

/// Plans the stream of `answer` under `head`; cut short after `abort_after` deltas it ends
/// with `exception` (a name of [`STREAM_EXCEPTIONS`]).
pub(crate) fn plan_stream(
    answer: &ConverseAnswer,
    head: Vec<u8>,
    chunks: u32,
    chunk_delay: Duration,
    abort_after: Option<u32>,
    exception: &str,
    close: bool,
) -> ChunkedPlan {
    let mut plan = ChunkedPlan::new(head, chunk_delay, abort_after, close);
    let mut sequence = 0;
    let mut next = |event_type: &str, payload: Value| {
        sequence += 1;
        event_message(event_type, payload, sequence)
    };
    write_chunk(&mut plan.opening, &next("messageStart", json!({"role": "assistant"})));
    let mut pending = Vec::new();
    let mut index = 0;
    if !answer.text.is_empty() {
        for piece in (0..chunks).map(|at| content_piece(&answer.text, at, chunks)) {
            let delta = json!({"contentBlockIndex": index, "delta": {"text": piece}});
            write_chunk(&mut pending, &next("contentBlockDelta", delta));
            plan.frames.push(std::mem::take(&mut pending));
        }
        write_chunk(&mut pending, &next("contentBlockStop", json!({"contentBlockIndex": index})));
        index += 1;
    }
    if let Some(tool) = &answer.tool {
        let start = json!({"contentBlockIndex": index, "start": {"toolUse": {
            "toolUseId": answer.tool_use_id(), "name": tool.name,
        }}});
        write_chunk(&mut pending, &next("contentBlockStart", start));
        for piece in (0..chunks).map(|at| content_piece(&tool.input, at, chunks)) {
            let delta = json!({"contentBlockIndex": index, "delta": {"toolUse": {"input": piece}}});
            write_chunk(&mut pending, &next("contentBlockDelta", delta));
            plan.frames.push(std::mem::take(&mut pending));
        }
        write_chunk(&mut pending, &next("contentBlockStop", json!({"contentBlockIndex": index})));
    }
    write_chunk(&mut pending, &next("messageStop", json!({"stopReason": answer.stop_reason})));
    write_chunk(
        &mut pending,
        &next("metadata", json!({"usage": answer.usage(), "metrics": {"latencyMs": answer.latency_ms}})),
    );
    plan.closing = pending;
    let (name, text) = STREAM_EXCEPTIONS.iter().find(|(name, _)| *name == exception).unwrap_or(&STREAM_EXCEPTIONS[0]);
    let mut tail = Vec::new();
    write_chunk(&mut tail, &exception_message(name, text));
    plan.abort_tail = Some(tail);
    plan
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anthropic::messages::ToolCall;
    use crate::conn::chunked::dechunk;
    use aws_smithy_eventstream::frame::read_message_from;

    fn header(message: &Message, name: &str) -> String {
        let found = message.headers().iter().find(|header| header.name().as_str() == name).expect(name);
        found.value().as_string().expect("string").as_str().to_owned()
    }

    /// (event type, payload) of each message in a body.
    fn events(mut data: &[u8]) -> Vec<(String, Value)> {
        let mut events = Vec::new();
        while !data.is_empty() {
            let message = read_message_from(&mut data).expect("frame");
            let kind = header(&message, ":event-type");
            assert_eq!(header(&message, ":message-type"), "event");
            events.push((kind, serde_json::from_slice(message.payload()).expect("JSON")));
        }
        events
    }

    fn answer(tool: Option<ToolCall>) -> ConverseAnswer {
        ConverseAnswer {
            number: 4,
            text: "Hello from mock b".into(),
            stop_reason: if tool.is_some() { "tool_use" } else { "end_turn" },
            tool,
            input_tokens: 10,
            output_tokens: 5,
            latency_ms: 0,
        }
    }

    #[test]
    fn text_and_tool_stream_in_bedrocks_event_order() {
        let tool = ToolCall { name: "get_weather".into(), input: r#"{"city":"mock"}"#.into() };
        let plan = plan_stream(&answer(Some(tool)), Vec::new(), 3, Duration::ZERO, None, "", false);
        assert_eq!(plan.frames.len(), 6);
        let events = events(&plan.data());
        let kinds: Vec<&str> = events.iter().map(|(kind, _)| kind.as_str()).collect();
        assert_eq!(
            kinds,
            [
                "messageStart",
                "contentBlockDelta",
                "contentBlockDelta",
                "contentBlockDelta",
                "contentBlockStop",
                "contentBlockStart",
                "contentBlockDelta",
                "contentBlockDelta",
                "contentBlockDelta",
                "contentBlockStop",
                "messageStop",
                "metadata"
            ]
        );
        let text: String = events.iter().filter_map(|(_, e)| e["delta"]["text"].as_str()).collect();
        assert_eq!(text, "Hello from mock b");
        let input: String = events.iter().filter_map(|(_, e)| e["delta"]["toolUse"]["input"].as_str()).collect();
        assert_eq!(input, r#"{"city":"mock"}"#);
        assert_eq!(events[5].1["start"]["toolUse"]["toolUseId"], "tooluse_mock_4");
        assert_eq!(events[10].1["stopReason"], "tool_use");
        assert_eq!(events[11].1["usage"], json!({"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}));
        assert!(events.iter().all(|(_, event)| event["p"].is_string()));
    }

    #[test]
    fn a_cut_stream_ends_with_the_exception_message() {
        let plan =
            plan_stream(&answer(None), Vec::new(), 2, Duration::ZERO, Some(1), "serviceUnavailableException", false);
        let tail = dechunk(plan.abort_tail.as_deref().expect("tail"));
        let message = read_message_from(&mut tail.as_slice()).expect("frame");
        assert_eq!(header(&message, ":message-type"), "exception");
        assert_eq!(header(&message, ":exception-type"), "serviceUnavailableException");
        let payload: Value = serde_json::from_slice(message.payload()).expect("JSON");
        assert_eq!(payload, json!({"message": "Bedrock is unable to process your request."}));
    }
}
