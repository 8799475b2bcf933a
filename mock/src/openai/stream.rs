//! Sending a streamed chat answer: server-sent events in a chunked body, one chunk per event,
//! with the chunk delay between content events.

use std::time::Duration;

use crate::conn::link::{pause, Connection, Ending, Transport};
use crate::openai::body::{write_chunk_event, write_usage_event, AnswerId, Usage, DONE_EVENT};
use crate::wire::response::{write_chunk, Head, EVENT_STREAM, LAST_CHUNK};

/// A streamed chat answer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StreamPlan {
    pub number: u64,
    pub created: u64,
    pub model: String,
    pub chunks: u32,
    pub chunk_delay: Duration,
    pub usage: Option<Usage>,
    /// Close after this many content events, without `[DONE]` or the last chunk.
    pub abort_after: Option<u32>,
    pub close: bool,
    /// The OpenRouter provider that served (`x-mock-provider` and each chunk's `provider`).
    pub provider: Option<String>,
    /// The answer's text when not the default (`--reply`, `/mock/control`, `x-mock-reply`).
    pub reply: Option<String>,
}

impl<S: Transport> Connection<S> {
    /// Sends the head with the first event, then each content event on its own, then the usage
    /// event (when asked for), `[DONE]` and the last chunk together. `None` to go on with the
    /// next request.
    pub(crate) async fn send_stream(&mut self, plan: StreamPlan) -> Option<Ending> {
        // A clone of the Arc, so the answer text stays borrowed while `self` writes.
        let shared = self.shared.clone();
        let provider = plan.provider.as_deref();
        let id = AnswerId { number: plan.number, created: plan.created, model: &plan.model, provider };
        let content = shared.text.content_or(plan.reply.as_deref());
        let content_events = plan.abort_after.map_or(plan.chunks, |limit| limit.min(plan.chunks));

        self.output.clear();
        Head { content_type: EVENT_STREAM, provider, ..Head::json(200, &shared.name, plan.close) }
            .write_chunked(&mut self.output);
        for index in 0..content_events {
            if index > 0 {
                pause(plan.chunk_delay).await;
            }
            self.scratch.clear();
            write_chunk_event(&mut self.scratch, &id, &shared.text, content, index, plan.chunks);
            write_chunk(&mut self.output, &self.scratch);
            if !self.send(self.output.len()).await {
                return Some(Ending::Close);
            }
        }
        if plan.abort_after.is_some() {
            // Zero events: the head has not left yet.
            if !self.output.is_empty() {
                self.send(self.output.len()).await;
            }
            return Some(Ending::Close);
        }

        if let Some(usage) = &plan.usage {
            self.scratch.clear();
            write_usage_event(&mut self.scratch, &id, &shared.text, usage);
            write_chunk(&mut self.output, &self.scratch);
        }
        write_chunk(&mut self.output, DONE_EVENT);
        self.output.extend_from_slice(LAST_CHUNK);
        let sent = self.send(self.output.len()).await;
        (plan.close || !sent).then_some(Ending::Close)
    }
}
