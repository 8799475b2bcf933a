//! Sending a stream whose frames are known in advance (Gemini's server-sent events or JSON array,
//! Bedrock's event stream): a chunked body, each frame its own HTTP chunk, the chunk delay
//! between content frames, and what a cut-off stream ends with.

use std::time::Duration;

use crate::conn::link::{pause, Connection, Ending, Transport};
use crate::wire::response::{write_chunk, LAST_CHUNK};

/// A stream, its frames framed as HTTP chunks.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ChunkedPlan {
    /// The response head (announcing the chunked body).
    pub head: Vec<u8>,
    /// Sent with the head and the first content frame.
    pub opening: Vec<u8>,
    /// The content frames, each one HTTP chunk (or several), `chunk_delay` apart.
    pub frames: Vec<Vec<u8>>,
    /// Sent after the last content frame, then the last chunk.
    pub closing: Vec<u8>,
    pub chunk_delay: Duration,
    /// `abort-after:K`: send K content frames, then `abort_tail`.
    pub abort_after: Option<u32>,
    /// What a cut-off stream ends with: these chunks and the last chunk (Bedrock's exception
    /// frame); `None`: a plain close without the last chunk.
    pub abort_tail: Option<Vec<u8>>,
    pub close: bool,
}

impl ChunkedPlan {
    /// A plan with `head`; frames are added with [`Self::frame`].
    pub(crate) fn new(head: Vec<u8>, chunk_delay: Duration, abort_after: Option<u32>, close: bool) -> Self {
        ChunkedPlan {
            head,
            opening: Vec::new(),
            frames: Vec::new(),
            closing: Vec::new(),
            chunk_delay,
            abort_after,
            abort_tail: None,
            close,
        }
    }

    /// Appends `data` as one chunk of a new content frame.
    pub(crate) fn frame(&mut self, data: &[u8]) {
        let mut framed = Vec::with_capacity(data.len() + 12);
        write_chunk(&mut framed, data);
        self.frames.push(framed);
    }

    /// Appends `data` as one chunk of the closing.
    pub(crate) fn close_with(&mut self, data: &[u8]) {
        write_chunk(&mut self.closing, data);
    }

    /// The whole body's data as a client would see it when nothing is cut (tests).
    #[cfg(test)]
    pub(crate) fn data(&self) -> Vec<u8> {
        let mut framed = self.opening.clone();
        self.frames.iter().for_each(|frame| framed.extend_from_slice(frame));
        framed.extend_from_slice(&self.closing);
        dechunk(&framed)
    }
}

/// The data of framed chunks (tests).
#[cfg(test)]
pub(crate) fn dechunk(framed: &[u8]) -> Vec<u8> {
    let mut data = Vec::new();
    let mut rest = framed;
    while let Some(line_end) = rest.windows(2).position(|pair| pair == b"\r\n") {
        let size = usize::from_str_radix(std::str::from_utf8(&rest[..line_end]).unwrap_or("0"), 16).unwrap_or(0);
        data.extend_from_slice(&rest[line_end + 2..line_end + 2 + size]);
        rest = &rest[line_end + 2 + size + 2..];
    }
    data
}

impl<S: Transport> Connection<S> {
    /// Sends the head with the opening and the first frame, each further frame on its own, then
    /// the closing and the last chunk together; cut short, the abort tail (or a plain close).
    /// `None` to go on with the next request.
    pub(crate) async fn send_chunked(&mut self, plan: ChunkedPlan) -> Option<Ending> {
        self.output.clear();
        self.output.extend_from_slice(&plan.head);
        self.output.extend_from_slice(&plan.opening);
        let sent_frames = plan.abort_after.map_or(plan.frames.len(), |limit| plan.frames.len().min(limit as usize));
        for (index, frame) in plan.frames[..sent_frames].iter().enumerate() {
            if index > 0 {
                pause(plan.chunk_delay).await;
            }
            self.output.extend_from_slice(frame);
            if !self.send(self.output.len()).await {
                return Some(Ending::Close);
            }
        }
        if plan.abort_after.is_some() {
            let Some(tail) = &plan.abort_tail else {
                if !self.output.is_empty() {
                    self.send(self.output.len()).await;
                }
                return Some(Ending::Close);
            };
            self.output.extend_from_slice(tail);
        } else {
            self.output.extend_from_slice(&plan.closing);
        }
        self.output.extend_from_slice(LAST_CHUNK);
        let sent = self.send(self.output.len()).await;
        (plan.close || !sent).then_some(Ending::Close)
    }
}
