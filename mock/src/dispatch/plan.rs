//! What the connection does once a request is read: the [`Plan`] dispatch hands back, with the
//! streams it may carry out.

use std::time::Duration;

use crate::anthropic::stream::AnthropicStreamPlan;
use crate::azure::stream::AzureStreamPlan;
use crate::conn::chunked::ChunkedPlan;
use crate::openai::stream::StreamPlan;
use crate::wire::head::RequestHead;

/// What the connection does once the request is read.
#[derive(Debug, PartialEq)]
pub(crate) struct Plan {
    /// Waited before anything is sent.
    pub latency: Duration,
    pub action: Action,
}

#[derive(Debug, PartialEq)]
pub(crate) enum Action {
    /// The output buffer holds a whole response.
    Send {
        close: bool,
    },
    /// The output buffer holds a whole response: send this many bytes of it, then close.
    SendPartThenClose {
        len: usize,
    },
    Stream(StreamPlan),
    /// A streamed Anthropic Messages answer.
    AnthropicStream(AnthropicStreamPlan),
    /// A streamed Azure OpenAI chat.
    AzureStream(AzureStreamPlan),
    /// A stream framed in advance: Gemini's events, Bedrock's event stream.
    Chunked(ChunkedPlan),
    Reset,
    Hang,
}

/// The request as the connection read it.
pub(crate) struct Request<'a> {
    pub head: &'a RequestHead,
    pub head_bytes: &'a [u8],
    pub body: &'a [u8],
}
