//! Streaming an Anthropic answer: the event sequence of `tests/fixtures/anthropic_messages_stream.sse`
//! (`message_start`, `content_block_start`, `ping`, `content_block_delta`…, `content_block_stop`,
//! `message_delta`, `message_stop`; a tool call as `input_json_delta` pieces like
//! `anthropic_messages_stream_tool_use.sse`), each event its own HTTP chunk, the chunk delay
//! between deltas; an interrupted stream ends with the `event: error` of
//! `anthropic_messages_stream_error.sse`.

use std::time::Duration;

use crate::anthropic::errors::stream_error_event;
use crate::anthropic::messages::{Block, Message};
use crate::conn::link::{pause, Connection, Ending, Transport};
use crate::openai::body::content_piece;
use crate::wire::response::{write_chunk, Head, EVENT_STREAM, LAST_CHUNK};

/// A stream, its events framed as HTTP chunks in advance.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AnthropicStreamPlan {
    /// `request-id: req_mock_N`.
    pub request_id: u64,
    pub close: bool,
    pub chunk_delay: Duration,
    /// `message_start`: sent with the head and the first delta.
    pub opening: Vec<u8>,
    /// Each `content_block_delta`, after the block start (and stop of the block before) that
    /// precede it; `chunk_delay` apart.
    pub deltas: Vec<Vec<u8>>,
    /// The last block's stop, `message_delta` and `message_stop`.
    pub closing: Vec<u8>,
    /// Send this many deltas, then the `error` event instead of the rest.
    pub abort_after: Option<u32>,
}

/// Plans the stream of `message`, each block's content in `chunks` deltas (a tool's input after
/// an empty first piece, as Anthropic sends it).
pub(crate) fn plan_stream(
    message: &Message,
    chunks: u32,
    chunk_delay: Duration,
    abort_after: Option<u32>,
    close: bool,
) -> AnthropicStreamPlan {
    let mut start = Vec::new();
    message.write(&mut start, true);
    let mut opening = Vec::new();
    push_event(&mut opening, "message_start", &format!("{{\"type\":\"message_start\",\"message\":{}}}", text(&start)));

    let blocks = message.blocks();
    let mut pending = Vec::new();
    let mut deltas = Vec::new();
    for (index, block) in blocks.iter().enumerate() {
        let data =
            format!("{{\"type\":\"content_block_start\",\"index\":{index},\"content_block\":{}}}", block.json(true));
        push_event(&mut pending, "content_block_start", &data);
        if index == 0 {
            push_event(&mut pending, "ping", "{\"type\":\"ping\"}");
        }
        let (kind, field, content, first_empty) = match block {
            Block::Text(text) => ("text_delta", "text", *text, false),
            Block::ToolUse { tool, .. } => ("input_json_delta", "partial_json", tool.input.as_str(), true),
        };
        let pieces =
            first_empty.then_some("").into_iter().chain((0..chunks).map(|i| content_piece(content, i, chunks)));
        for piece in pieces {
            let data = format!(
                "{{\"type\":\"content_block_delta\",\"index\":{index},\"delta\":{{\"type\":\"{kind}\",\"{field}\":{}}}}}",
                crate::anthropic::messages::json_string(piece)
            );
            push_event(&mut pending, "content_block_delta", &data);
            deltas.push(std::mem::take(&mut pending));
        }
        push_event(
            &mut pending,
            "content_block_stop",
            &format!("{{\"type\":\"content_block_stop\",\"index\":{index}}}"),
        );
    }
    if blocks.is_empty() {
        push_event(&mut pending, "ping", "{\"type\":\"ping\"}");
    }
    let message_delta = format!(
        "{{\"type\":\"message_delta\",\"delta\":{{\"stop_reason\":\"{}\",\"stop_sequence\":null}},\"usage\":{{\
         \"input_tokens\":{},\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":0,\"output_tokens\":{}}}}}",
        message.stop_reason, message.input_tokens, message.output_tokens
    );
    push_event(&mut pending, "message_delta", &message_delta);
    push_event(&mut pending, "message_stop", "{\"type\":\"message_stop\"}");
    AnthropicStreamPlan {
        request_id: message.number,
        close,
        chunk_delay,
        opening,
        deltas,
        closing: pending,
        abort_after,
    }
}

fn text(bytes: &[u8]) -> &str {
    // The message is written from strings.
    std::str::from_utf8(bytes).unwrap_or_default()
}

/// Appends `event: NAME\ndata: DATA\n\n` as one HTTP chunk.
fn push_event(out: &mut Vec<u8>, name: &str, data: &str) {
    write_chunk(out, format!("event: {name}\ndata: {data}\n\n").as_bytes());
}

impl<S: Transport> Connection<S> {
    /// Sends the head with `message_start` and the first delta, each further delta on its own,
    /// then the closing events and the last chunk together (or the `error` event and the last
    /// chunk, when cut short). `None` to go on with the next request.
    pub(crate) async fn send_anthropic_stream(&mut self, plan: AnthropicStreamPlan) -> Option<Ending> {
        let shared = self.shared.clone();
        self.output.clear();
        Head {
            content_type: EVENT_STREAM,
            request_id: Some(plan.request_id),
            ..Head::json(200, &shared.name, plan.close)
        }
        .write_chunked(&mut self.output);
        self.output.extend_from_slice(&plan.opening);
        let sent_deltas = plan.abort_after.map_or(plan.deltas.len(), |limit| plan.deltas.len().min(limit as usize));
        for (index, delta) in plan.deltas[..sent_deltas].iter().enumerate() {
            if index > 0 {
                pause(plan.chunk_delay).await;
            }
            self.output.extend_from_slice(delta);
            if !self.send(self.output.len()).await {
                return Some(Ending::Close);
            }
        }
        match plan.abort_after {
            Some(_) => write_chunk(&mut self.output, stream_error_event().as_bytes()),
            None => self.output.extend_from_slice(&plan.closing),
        }
        self.output.extend_from_slice(LAST_CHUNK);
        let sent = self.send(self.output.len()).await;
        (plan.close || !sent).then_some(Ending::Close)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anthropic::messages::{MessagesCall, ToolCall};
    use serde_json::Value;

    /// The events of framed chunks: (name, data).
    fn parse_events(framed: &[u8]) -> Vec<(String, Value)> {
        let mut data = Vec::new();
        let mut rest = framed;
        while let Some(line_end) = rest.windows(2).position(|pair| pair == b"\r\n") {
            let size = usize::from_str_radix(std::str::from_utf8(&rest[..line_end]).expect("hex"), 16).expect("size");
            data.extend_from_slice(&rest[line_end + 2..line_end + 2 + size]);
            rest = &rest[line_end + 2 + size + 2..];
        }
        String::from_utf8(data)
            .expect("utf-8")
            .split_terminator("\n\n")
            .map(|event| {
                let (name, json) = event.split_once('\n').expect("two lines");
                let name = name.strip_prefix("event: ").expect("event line").to_owned();
                (name, serde_json::from_str(json.strip_prefix("data: ").expect("data line")).expect("JSON"))
            })
            .collect()
    }

    fn all_events(plan: &AnthropicStreamPlan) -> Vec<(String, Value)> {
        let mut framed = plan.opening.clone();
        plan.deltas.iter().for_each(|delta| framed.extend_from_slice(delta));
        framed.extend_from_slice(&plan.closing);
        parse_events(&framed)
    }

    fn message(tool: Option<ToolCall>) -> Message {
        let call = MessagesCall { model: "claude-x".into(), stream: true, tool };
        Message::answer(9, call, "Hello from mock m1", 400)
    }

    fn names(events: &[(String, Value)]) -> Vec<&str> {
        events.iter().map(|(name, _)| name.as_str()).collect()
    }

    #[test]
    fn text_streams_as_the_fixtures_sequence() {
        let plan = plan_stream(&message(None), 3, Duration::ZERO, None, false);
        assert_eq!(plan.deltas.len(), 3);
        let events = all_events(&plan);
        assert_eq!(
            names(&events),
            [
                "message_start",
                "content_block_start",
                "ping",
                "content_block_delta",
                "content_block_delta",
                "content_block_delta",
                "content_block_stop",
                "message_delta",
                "message_stop"
            ]
        );
        assert!(events.iter().all(|(name, data)| data["type"] == name.as_str()), "type matches the event name");
        let start = &events[0].1["message"];
        assert_eq!(start["id"], "msg_mock_9");
        assert_eq!(start["model"], "claude-x");
        assert_eq!(start["content"], Value::Array(vec![]));
        assert!(start["stop_reason"].is_null());
        assert_eq!(start["usage"]["input_tokens"], 100);
        let text: String = events.iter().filter_map(|(_, data)| data["delta"]["text"].as_str()).collect();
        assert_eq!(text, "Hello from mock m1");
        let delta = &events[7].1;
        assert_eq!(delta["delta"]["stop_reason"], "end_turn");
        assert_eq!(delta["usage"]["output_tokens"], 5);
    }

    #[test]
    fn a_tool_call_streams_its_input_as_json_deltas() {
        let tool = ToolCall { name: "get_weather".into(), input: r#"{"location":"mock"}"#.into() };
        let plan = plan_stream(&message(Some(tool)), 2, Duration::ZERO, None, false);
        assert_eq!(plan.deltas.len(), 2 + 3, "text pieces, then an empty piece and the input's");
        let events = all_events(&plan);
        let tool_start = events.iter().find(|(name, data)| name == "content_block_start" && data["index"] == 1);
        let block = &tool_start.expect("tool block start").1["content_block"];
        assert_eq!(block["type"], "tool_use");
        assert_eq!(block["id"], "toolu_mock_9");
        assert_eq!(block["name"], "get_weather");
        assert_eq!(block["input"], serde_json::json!({}));
        let pieces: Vec<&str> = events.iter().filter_map(|(_, data)| data["delta"]["partial_json"].as_str()).collect();
        assert_eq!(pieces[0], "");
        assert_eq!(pieces.concat(), r#"{"location":"mock"}"#);
        let stops: Vec<&Value> = events.iter().filter(|(name, _)| name == "content_block_stop").map(|e| &e.1).collect();
        assert_eq!(stops.len(), 2);
        let delta = events.iter().find(|(name, _)| name == "message_delta").expect("message_delta");
        assert_eq!(delta.1["delta"]["stop_reason"], "tool_use");
        // The text block's stop and the tool block's start come before the first input delta.
        assert_eq!(
            names(&parse_events(&plan.deltas[2])),
            ["content_block_stop", "content_block_start", "content_block_delta"]
        );
    }

    #[test]
    fn a_refusal_has_no_blocks() {
        let refusal = Message::refusal(2, "c".into(), 40);
        let plan = plan_stream(&refusal, 4, Duration::ZERO, None, false);
        assert!(plan.deltas.is_empty());
        let events = all_events(&plan);
        assert_eq!(names(&events), ["message_start", "ping", "message_delta", "message_stop"]);
        assert_eq!(events[2].1["delta"]["stop_reason"], "refusal");
    }

    #[test]
    fn the_first_delta_carries_the_block_start_and_ping() {
        let plan = plan_stream(&message(None), 8, Duration::ZERO, Some(2), true);
        assert_eq!(names(&parse_events(&plan.opening)), ["message_start"]);
        assert_eq!(names(&parse_events(&plan.deltas[0])), ["content_block_start", "ping", "content_block_delta"]);
        assert_eq!(names(&parse_events(&plan.deltas[1])), ["content_block_delta"]);
        assert_eq!(plan.abort_after, Some(2));
        assert!(plan.close);
    }
}
