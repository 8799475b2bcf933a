//! A request sent on to one server, answered to the client: as a server-sent event stream
//! (its notifications — progress — as they come, then the response) when the client accepts
//! one, else as one JSON response. A client's `notifications/cancelled`, or its going away,
//! cancels the call upstream. Every such request is recorded (access log, `/metrics`, and a
//! span for the exporters when one runs).

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;
use std::time::Instant;

use futures_channel::oneshot;
use futures_core::Stream;
use serde_json::Value;

use crate::export::mcp_record::{McpCall, McpCallRecord, McpError};
use crate::export::trace_context::TraceContext;
use crate::http::write;
use crate::mcp::event_stream::event_chunk;
use crate::mcp::methods::{self, Forwarded, Reach};
use crate::mcp::outcome::Outcome;
use crate::mcp::rpc::{self, RpcError};
use crate::mcp::upstream::Answer;
use crate::shard::Shard;
use crate::tcp_or_tls::ClientConn;

/// Where a forwarded request comes from, for its record.
pub struct CallPlace<'a> {
    pub shard: &'a Shard,
    pub path: &'a str,
    pub session: &'a str,
    /// The caller's key by name.
    pub caller: Option<&'a str>,
    pub started: Instant,
    /// The caller's Trace Context (`traceparent`, `tracestate`), continued by the request's
    /// span when an exporter runs.
    pub trace: TraceContext<'a>,
}

/// The session of the REST face's calls, which come in none.
pub const REST_SESSION: &str = "rest";

enum Step {
    Answer(Answer),
    Cancelled,
}

/// The next thing that happens to a call: an answer, or the client cancelling it.
async fn step(cancel: &mut oneshot::Receiver<()>, forwarded: &mut Forwarded<'_>) -> Step {
    std::future::poll_fn(|cx| {
        if Pin::new(&mut *cancel).poll(cx).is_ready() {
            return Poll::Ready(Step::Cancelled);
        }
        Pin::new(&mut forwarded.answers).poll_next(cx).map(|a| {
            Step::Answer(a.unwrap_or_else(|| Answer::Failed("the MCP server's session ended without an answer".into())))
        })
    })
    .await
}

/// The request's response, `None` when the client cancelled it.
pub async fn whole(
    call: &CallPlace<'_>,
    reach: &Reach<'_>,
    method: &str,
    id: &Value,
    mut forwarded: Forwarded<'_>,
) -> Option<Result<Value, RpcError>> {
    let clients = &call.shard.hub.mcp_clients;
    let mut cancel = clients.register(call.session, id);
    let answer = loop {
        match step(&mut cancel, &mut forwarded).await {
            Step::Answer(Answer::Notification(_)) => continue,
            Step::Answer(answer) => break Some(answer),
            Step::Cancelled => break None,
        }
    };
    clients.unregister(call.session, id);
    let error = answer.as_ref().and_then(|a| failure(call, a));
    record(call, &forwarded, (method, id), answer.as_ref().map_or(Outcome::Cancelled, Outcome::of), error);
    answer.map(|a| methods::finish(reach.settings, &forwarded, a))
}

/// Streams the request's notifications and response as server-sent events; returns whether
/// the connection stays open.
pub async fn stream(
    call: &CallPlace<'_>,
    reach: &Reach<'_>,
    method: &str,
    id: Value,
    mut forwarded: Forwarded<'_>,
    client: &mut ClientConn,
    keep_alive: bool,
) -> bool {
    let clients = &call.shard.hub.mcp_clients;
    let mut cancel = clients.register(call.session, &id);
    let mut out = Vec::with_capacity(512);
    write::status_line(&mut out, 200);
    write::header(&mut out, "content-type", b"text/event-stream");
    write::header(&mut out, "cache-control", b"no-cache");
    write::header(&mut out, "transfer-encoding", b"chunked");
    if !keep_alive {
        write::header(&mut out, "connection", b"close");
    }
    write::end_head(&mut out);
    let mut open = true;
    let (outcome, error) = loop {
        let event = match step(&mut cancel, &mut forwarded).await {
            Step::Answer(Answer::Notification(n)) => n,
            Step::Answer(answer) => {
                let ended = (Outcome::of(&answer), failure(call, &answer));
                let response = rpc::response(&id, methods::finish(reach.settings, &forwarded, answer));
                event_chunk(&mut out, &response);
                break ended;
            }
            Step::Cancelled => break (Outcome::Cancelled, None),
        };
        event_chunk(&mut out, &event);
        let (res, buf) = client.write_all(std::mem::take(&mut out)).await;
        out = buf;
        out.clear();
        if res.is_err() {
            // The client is gone: dropping the answers cancels the call upstream.
            open = false;
            break (Outcome::Cancelled, None);
        }
    };
    clients.unregister(call.session, &id);
    record(call, &forwarded, (method, &id), outcome, error);
    if !open {
        return false;
    }
    out.extend_from_slice(b"0\r\n\r\n");
    let (res, _) = client.write_all(out).await;
    res.is_ok() && keep_alive
}

/// What went wrong with `answer`, for the exporters (only when one runs).
fn failure(call: &CallPlace<'_>, answer: &Answer) -> Option<McpError> {
    call.shard.export.as_ref().and_then(|_| McpError::of(answer))
}

fn record(
    call: &CallPlace<'_>,
    forwarded: &Forwarded<'_>,
    (method, id): (&str, &Value),
    outcome: Outcome,
    error: Option<McpError>,
) {
    let took = call.started.elapsed();
    let server = forwarded.server.name.as_str();
    call.shard.hub.mcp_clients.count(server, method, &forwarded.target, outcome, took);
    call.shard.access_log.borrow_mut().write_mcp(&crate::access_log::McpEntry {
        time: std::time::SystemTime::now(),
        shard: call.shard.id,
        path: call.path,
        server,
        method,
        target: &forwarded.target,
        key: call.caller,
        outcome: outcome.name(),
        total: took,
    });
    if let Some(export) = &call.shard.export {
        let in_session = call.session != REST_SESSION;
        let span = McpCall {
            trace: &call.trace,
            started: call.started,
            path: call.path,
            method,
            server: forwarded.server,
            target: &forwarded.target,
            session: in_session.then_some(call.session),
            request_id: in_session.then_some(id),
            key_alias: call.caller,
            outcome,
            error,
        };
        export.send_mcp(McpCallRecord::new(span, &mut call.shard.trace_ids.borrow_mut()));
    }
}
