//! Streaming an Azure OpenAI chat: first an event with only `prompt_filter_results` (empty id,
//! model and choices, as Azure sends it), then OpenAI's content events each with the choice's
//! `content_filter_results`, the usage event when asked for, `data: [DONE]`. Under
//! `content_filter:completion` the last content event ends with `finish_reason`
//! `content_filter` and the violence category filtered.

use std::time::Duration;

use serde_json::{json, Value};

use crate::azure::filter::{filter_results, prompt_filter_results};
use crate::conn::link::{pause, Connection, Ending, Transport};
use crate::openai::body::{write_chunk_event, write_usage_event, AnswerId, AnswerText, DONE_EVENT};
use crate::openai::stream::StreamPlan;
use crate::wire::response::{write_chunk, Head, EVENT_STREAM, LAST_CHUNK};

/// A stream, its events framed as HTTP chunks in advance.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AzureStreamPlan {
    /// The request's number, for `apim-request-id`.
    pub number: u64,
    pub close: bool,
    pub chunk_delay: Duration,
    /// The `prompt_filter_results` event: sent with the head and the first content event.
    pub opening: Vec<u8>,
    /// The content events, `chunk_delay` apart.
    pub events: Vec<Vec<u8>>,
    /// The usage event (when asked for) and `[DONE]`.
    pub closing: Vec<u8>,
    /// Send this many content events, then close without `[DONE]` or the last chunk.
    pub abort_after: Option<u32>,
}

/// Plans the Azure stream of `plan`'s answer; `filtered` ends it with the content filter.
pub(crate) fn plan_stream(text: &AnswerText, plan: &StreamPlan, filtered: bool) -> AzureStreamPlan {
    let id = AnswerId { number: plan.number, created: plan.created, model: &plan.model, provider: None };
    let content = text.content_or(plan.reply.as_deref());
    let preamble = json!({
        "choices": [], "created": 0, "id": "", "model": "", "object": "",
        "prompt_filter_results": prompt_filter_results(None),
    });
    let mut opening = Vec::new();
    push_event(&mut opening, &preamble);
    let events = (0..plan.chunks)
        .map(|index| {
            let mut written = Vec::new();
            write_chunk_event(&mut written, &id, text, content, index, plan.chunks);
            let mut event = event_json(&written);
            let last = index + 1 == plan.chunks;
            let choice = &mut event["choices"][0];
            choice["content_filter_results"] = filter_results((filtered && last).then_some("violence"), false);
            if filtered && last {
                choice["finish_reason"] = json!("content_filter");
            }
            let mut framed = Vec::new();
            push_event(&mut framed, &event);
            framed
        })
        .collect();
    let mut closing = Vec::new();
    if let Some(usage) = &plan.usage {
        let mut written = Vec::new();
        write_usage_event(&mut written, &id, text, usage);
        push_event(&mut closing, &event_json(&written));
    }
    write_chunk(&mut closing, DONE_EVENT);
    AzureStreamPlan {
        number: plan.number,
        close: plan.close,
        chunk_delay: plan.chunk_delay,
        opening,
        events,
        closing,
        abort_after: plan.abort_after,
    }
}

/// The JSON of a `data: {…}\n\n` event.
fn event_json(event: &[u8]) -> Value {
    let data = event.strip_prefix(b"data: ").unwrap_or(event);
    serde_json::from_slice(data.trim_ascii_end()).unwrap_or_default()
}

/// Appends `data: JSON\n\n` as one HTTP chunk.
fn push_event(out: &mut Vec<u8>, event: &Value) {
    write_chunk(out, format!("data: {event}\n\n").as_bytes());
}

impl<S: Transport> Connection<S> {
    /// Sends the head with the opening and the first content event, each further event on its
    /// own, then the closing events and the last chunk together; cut short, a plain close.
    /// `None` to go on with the next request.
    pub(crate) async fn send_azure_stream(&mut self, plan: AzureStreamPlan) -> Option<Ending> {
        let shared = self.shared.clone();
        let extra = format!("apim-request-id: 00000000-0000-4000-8000-{:012x}\r\nx-ms-region: mock\r\n", plan.number);
        self.output.clear();
        Head { content_type: EVENT_STREAM, extra: &extra, ..Head::json(200, &shared.name, plan.close) }
            .write_chunked(&mut self.output);
        self.output.extend_from_slice(&plan.opening);
        let sent_events = plan.abort_after.map_or(plan.events.len(), |limit| plan.events.len().min(limit as usize));
        for (index, event) in plan.events[..sent_events].iter().enumerate() {
            if index > 0 {
                pause(plan.chunk_delay).await;
            }
            self.output.extend_from_slice(event);
            if !self.send(self.output.len()).await {
                return Some(Ending::Close);
            }
        }
        if plan.abort_after.is_some() {
            if !self.output.is_empty() {
                self.send(self.output.len()).await;
            }
            return Some(Ending::Close);
        }
        self.output.extend_from_slice(&plan.closing);
        self.output.extend_from_slice(LAST_CHUNK);
        let sent = self.send(self.output.len()).await;
        (plan.close || !sent).then_some(Ending::Close)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::openai::body::Usage;

    /// The `data:` payloads of framed chunks.
    fn payloads(framed: &[u8]) -> Vec<String> {
        let mut data = Vec::new();
        let mut rest = framed;
        while let Some(line_end) = rest.windows(2).position(|pair| pair == b"\r\n") {
            let size = usize::from_str_radix(std::str::from_utf8(&rest[..line_end]).expect("hex"), 16).expect("size");
            data.extend_from_slice(&rest[line_end + 2..line_end + 2 + size]);
            rest = &rest[line_end + 2 + size + 2..];
        }
        let text = String::from_utf8(data).expect("utf-8");
        text.split_terminator("\n\n").map(|event| event.strip_prefix("data: ").expect("data").to_owned()).collect()
    }

    fn stream_plan(usage: Option<Usage>) -> StreamPlan {
        StreamPlan {
            number: 3,
            created: 1_700_000_000,
            model: "gpt-4o-prod".into(),
            chunks: 3,
            chunk_delay: Duration::ZERO,
            usage,
            abort_after: None,
            close: false,
            provider: None,
            reply: None,
        }
    }

    #[test]
    fn opens_with_the_prompt_filter_results_and_ends_with_done() {
        let text = AnswerText::new("az");
        let plan = plan_stream(&text, &stream_plan(Some(Usage::new(40, 3))), false);
        let opening: Value = serde_json::from_str(&payloads(&plan.opening)[0]).expect("JSON");
        assert_eq!(opening["choices"], json!([]));
        assert_eq!(opening["id"], "");
        assert_eq!(opening["prompt_filter_results"][0]["prompt_index"], 0);
        assert_eq!(opening["prompt_filter_results"][0]["content_filter_results"]["jailbreak"]["detected"], false);
        assert_eq!(plan.events.len(), 3);
        let events: Vec<Value> =
            plan.events.iter().map(|event| serde_json::from_str(&payloads(event)[0]).expect("JSON")).collect();
        let content: String = events.iter().filter_map(|e| e["choices"][0]["delta"]["content"].as_str()).collect();
        assert_eq!(content, "Hello from mock az");
        assert!(events.iter().all(|e| e["model"] == "gpt-4o-prod"));
        assert!(events.iter().all(|e| e["choices"][0]["content_filter_results"]["violence"]["filtered"] == false));
        assert_eq!(events[2]["choices"][0]["finish_reason"], "stop");
        let closing = payloads(&plan.closing);
        assert_eq!(closing.len(), 2);
        let usage: Value = serde_json::from_str(&closing[0]).expect("JSON");
        assert_eq!(usage["usage"]["completion_tokens"], 3);
        assert_eq!(closing[1], "[DONE]");
    }

    #[test]
    fn a_filtered_completion_ends_with_finish_reason_content_filter() {
        let text = AnswerText::new("az");
        let plan = plan_stream(&text, &stream_plan(None), true);
        let last: Value = serde_json::from_str(&payloads(&plan.events[2])[0]).expect("JSON");
        assert_eq!(last["choices"][0]["finish_reason"], "content_filter");
        assert_eq!(
            last["choices"][0]["content_filter_results"]["violence"],
            json!({"filtered": true, "severity": "medium"})
        );
        let first: Value = serde_json::from_str(&payloads(&plan.events[0])[0]).expect("JSON");
        assert!(first["choices"][0]["finish_reason"].is_null());
        assert_eq!(payloads(&plan.closing), ["[DONE]"]);
    }
}
