//! The stream a client opens with `GET /mcp`: what the gateway tells every session without
//! being asked. A reload that changes `mcp_servers` says the lists changed
//! (`notifications/tools/list_changed`, prompts', resources'); a drain ends the streams, so
//! that they hold no shard past it.

use futures_channel::mpsc::UnboundedReceiver;
use serde_json::json;

use crate::http::write;
use crate::mcp::event_stream::{event_chunk, next};
use crate::tcp_or_tls::ClientConn;

/// What the gateway tells the open streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pushed {
    /// The servers changed: every list may have.
    ListsChanged,
    /// The gateway drains: the stream ends.
    Closing,
}

/// How long a stream stays silent before a comment checks that its client is still there.
const HEARTBEAT: std::time::Duration = std::time::Duration::from_secs(25);

/// The notifications a reload's [`Pushed::ListsChanged`] becomes.
const LIST_CHANGED: [&str; 3] =
    ["notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/list_changed"];

/// Serves one session's stream until the gateway drains or the client goes; the connection is
/// closed after it (its end is the drain's, or the client's).
pub async fn serve(mut pushed: UnboundedReceiver<Pushed>, client: &mut ClientConn) {
    let mut out = Vec::with_capacity(256);
    write::status_line(&mut out, 200);
    write::header(&mut out, "content-type", b"text/event-stream");
    write::header(&mut out, "cache-control", b"no-cache");
    write::header(&mut out, "transfer-encoding", b"chunked");
    write::header(&mut out, "connection", b"close");
    write::end_head(&mut out);
    loop {
        let (res, buf) = client.write_all(std::mem::take(&mut out)).await;
        out = buf;
        out.clear();
        if res.is_err() {
            return;
        }
        match monoio::time::timeout(HEARTBEAT, next(&mut pushed)).await {
            // A comment now and then: a client that went away is noticed by the write failing.
            Err(_) => {
                let comment = b": keep-alive\n\n";
                out.extend_from_slice(format!("{:x}\r\n", comment.len()).as_bytes());
                out.extend_from_slice(comment);
                out.extend_from_slice(b"\r\n");
            }
            Ok(Some(Pushed::ListsChanged)) => {
                for method in LIST_CHANGED {
                    event_chunk(&mut out, &json!({"jsonrpc": "2.0", "method": method}));
                }
            }
            Ok(Some(Pushed::Closing) | None) => {
                let _ = client.write_all(b"0\r\n\r\n".to_vec()).await;
                return;
            }
        }
    }
}
