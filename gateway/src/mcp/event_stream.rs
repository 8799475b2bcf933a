//! What the gateway's event streams to MCP clients are made of: one `message` event as one
//! HTTP chunk, and the next item of the channel that feeds a stream. A leaf: the forwarded
//! calls' streams and the sessions' `GET` streams share it.

use std::pin::Pin;

use futures_channel::mpsc::UnboundedReceiver;
use futures_core::Stream;
use serde_json::Value;

/// One `message` event as one chunk.
pub fn event_chunk(out: &mut Vec<u8>, message: &Value) {
    let data = message.to_string();
    let event_len = "event: message\ndata: ".len() + data.len() + 2;
    out.extend_from_slice(format!("{event_len:x}\r\n").as_bytes());
    out.extend_from_slice(b"event: message\ndata: ");
    out.extend_from_slice(data.as_bytes());
    out.extend_from_slice(b"\n\n\r\n");
}

/// The channel's next item, `None` once it ends.
pub async fn next<T>(items: &mut UnboundedReceiver<T>) -> Option<T> {
    std::future::poll_fn(|cx| Pin::new(&mut *items).poll_next(cx)).await
}
