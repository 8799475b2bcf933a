//! One attempt against one deployment: send the request, read the response head, and either
//! relay the response to the client or, when nothing has reached the client yet, report a
//! failure the retry loop may act on.

use std::time::{Duration, Instant};

use pointwork_core::{Dialect, Failure};

use super::body_block::{done_event_at, BodyBlock};
use super::conn::{connect, ConnectError, UpstreamConn};
use super::side::Upstreams;
use super::target::Target;
use super::tee::{show, Tee};
use crate::errors::{openai_error, upstream_error_body};
use crate::http::chunked::{encode_chunk, ChunkedDecoder, LAST_CHUNK};
use crate::http::header_is;
use crate::http::response::{parse_response_head_each, HeadFacts};
use crate::http::write;
use crate::http::BodyFraming;
use crate::tcp_or_tls::ClientConn;
use crate::usage::{AnswerFacts, Reading, Usage, UsageEventCut, UsageTail};

/// Largest upstream response head accepted.
const MAX_RESPONSE_HEAD: usize = 64 * 1024;
/// Largest upstream error body kept to relay or wrap.
const MAX_ERROR_BODY: usize = 1024 * 1024;
/// Largest non-streaming body read whole to carry a [`BodyBlock`].
const MAX_BLOCK_BODY: usize = 32 * 1024 * 1024;
/// The status line of a 200, the answer most relays carry.
const STATUS_LINE_200: &[u8] = b"HTTP/1.1 200 OK\r\n";
const RETRY_AFTER: &str = "retry-after";

/// Whether an upstream header describes one hop, the framing, or state we must not pass on
/// (`connection`, `keep-alive`, `transfer-encoding`, `content-length`, `te`, `trailer`, `upgrade`,
/// `proxy-connection`, `set-cookie`, `alt-svc`). Sorted by length first: most headers of an
/// answer are of none of these lengths and cost one comparison.
fn is_skipped_header(name: &str) -> bool {
    let is = |want: &str| name.eq_ignore_ascii_case(want);
    match name.len() {
        2 => is("te"),
        7 => is("trailer") || is("upgrade") || is("alt-svc"),
        10 => is("connection") || is("keep-alive") || is("set-cookie"),
        14 => is("content-length"),
        16 => is("proxy-connection"),
        17 => is("transfer-encoding"),
        _ => false,
    }
}

/// What to send and how long to wait.
pub struct Exchange<'a> {
    pub target: &'a Target,
    pub provider: &'static str,
    /// The complete upstream request: head and body.
    pub request: Vec<u8>,
    pub stream: bool,
    /// What is read of the answer: its token usage at the end of the body, its facts and body
    /// for an exporter (see [`UsageTail`]).
    pub reading: Reading,
    /// Non-streaming: the whole response must arrive within it. Streaming: the head, and then
    /// every gap between body reads.
    pub timeout: Duration,
    /// When the attempt started (the caller's clock read, a pick's time before the exchange).
    pub started: Instant,
}

/// The client connection the response goes to.
pub struct ClientSide<'a> {
    pub stream: &'a mut ClientConn,
    /// Extra rendered header lines (`name: value\r\n`…), e.g. the `x-pointwork-*` headers.
    pub extra_headers: &'a [u8],
    pub keep_alive: bool,
    /// Called once the whole body arrived, with its usage, *before* its last bytes go to the
    /// client: what the gateway learns from a response (spend against a budget) is known to
    /// every shard before the client can send its next request.
    pub on_body_end: &'a dyn Fn(Option<Usage>),
    /// A member to add to a successful response (the policy router's `llmeu` block).
    pub body_block: Option<BodyBlock<'a>>,
    /// The answer is in the other dialect than the client's: translate it.
    pub translate: Option<Translate<'a>>,
    /// The client's API (the shape of an error written mid-stream).
    pub dialect: Dialect,
    /// The gateway asked the stream for its usage: cut the usage-only event (see
    /// [`UsageEventCut`]).
    pub cut_usage_event: bool,
    /// Reads everything written to the client (the response cache's tee of a miss).
    pub tee: Option<&'a dyn Tee>,
}

pub use super::attempt_error::AttemptError;

/// A response that was (at least in part) relayed to the client.
#[derive(Debug)]
pub struct Delivered {
    pub status: u16,
    /// Bytes written to the client (head included).
    pub bytes_out: u64,
    /// Streams only: from the attempt's start to the first body bytes relayed (the first token).
    pub first_body: Option<Duration>,
    /// From the attempt's start to the end of the relay.
    pub took: Duration,
    /// The token usage the body reported, if it did.
    pub usage: Option<Usage>,
    /// The answer's model, finish reasons and body, when an exporter reads them.
    pub answer: Option<Box<AnswerFacts>>,
    /// Set when the upstream failed in the middle of the body.
    pub body_failure: Option<Failure>,
    /// The client went away or a write to it failed: its connection must close.
    pub client_failed: bool,
    /// `false` when the client connection cannot carry another response (body cut short).
    pub client_reusable: bool,
}

pub enum Outcome {
    Delivered(Delivered),
    Failed(AttemptError),
}

enum BodyProgress {
    Length(u64),
    Chunked(ChunkedDecoder),
    UntilClose,
}

impl BodyProgress {
    fn new(framing: BodyFraming) -> BodyProgress {
        match framing {
            BodyFraming::Length(n) => BodyProgress::Length(n),
            BodyFraming::Chunked => BodyProgress::Chunked(ChunkedDecoder::new()),
            BodyFraming::UntilClose => BodyProgress::UntilClose,
        }
    }

    fn is_done(&self) -> bool {
        match self {
            BodyProgress::Length(n) => *n == 0,
            BodyProgress::Chunked(d) => d.is_done(),
            BodyProgress::UntilClose => false,
        }
    }

    /// Consumes upstream body bytes, appending what the client gets to `out` (re-chunked when
    /// the client framing is chunked). Returns the bytes consumed.
    /// Returns the bytes consumed and how many body bytes they decoded to (fed to `tail`).
    /// `before_done`: an event to put before the stream's `data: [DONE]` (taken once put).
    fn relay(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
        scratch: &mut Vec<u8>,
        tail: &mut UsageTail,
        cut: Option<&mut UsageEventCut>,
        before_done: &mut Option<Vec<u8>>,
    ) -> Result<(usize, usize), Failure> {
        match self {
            BodyProgress::Length(_) => {
                let before = out.len();
                let used = self.collect(input, out)?;
                tail.push(&out[before..]);
                Ok((used, out.len() - before))
            }
            BodyProgress::Chunked(decoder) => {
                scratch.clear();
                let fed = decoder.feed(input, scratch);
                // What decoded before a framing error is the upstream's answer: it still goes out,
                // then the error event.
                tail.push(scratch);
                let decoded = scratch.len();
                if let Some(cut) = cut {
                    cut.cut(scratch);
                }
                encode_chunk_with(scratch, out, before_done);
                fed.map(|used| (used, decoded)).map_err(|_| Failure::Protocol)
            }
            BodyProgress::UntilClose => {
                tail.push(input);
                match cut {
                    Some(cut) => {
                        scratch.clear();
                        scratch.extend_from_slice(input);
                        cut.cut(scratch);
                        encode_chunk_with(scratch, out, before_done);
                    }
                    None => encode_chunk_with(input, out, before_done),
                }
                Ok((input.len(), input.len()))
            }
        }
    }

    /// Consumes upstream body bytes, appending the decoded body to `out` (no framing) — for
    /// error bodies kept in memory, and for `Content-Length` bodies relayed as they are.
    fn collect(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<usize, Failure> {
        match self {
            BodyProgress::Length(remaining) => {
                let take = input.len().min(usize::try_from(*remaining).unwrap_or(usize::MAX));
                out.extend_from_slice(&input[..take]);
                *remaining -= take as u64;
                Ok(take)
            }
            BodyProgress::Chunked(decoder) => decoder.feed(input, out).map_err(|_| Failure::Protocol),
            BodyProgress::UntilClose => {
                out.extend_from_slice(input);
                Ok(input.len())
            }
        }
    }
}

/// Encodes `data` as a chunk, with `before_done`'s event in front of a `data: [DONE]` in it.
fn encode_chunk_with(data: &[u8], out: &mut Vec<u8>, before_done: &mut Option<Vec<u8>>) {
    match before_done.as_ref().and_then(|_| done_event_at(data)) {
        Some(at) => {
            encode_chunk(&data[..at], out);
            encode_chunk(&before_done.take().unwrap_or_default(), out);
            encode_chunk(&data[at..], out);
        }
        None => encode_chunk(data, out),
    }
}

/// Runs one attempt. A pooled connection that refuses the request's write (the upstream had
/// closed it) is replaced by a fresh one once, transparently: nothing was delivered on it. Once
/// the request is written, the body is never sent again within the attempt — an upstream that
/// then closes without answering may have acted on it — and the failure is the attempt's.
pub async fn run(up: &Upstreams, ex: Exchange<'_>, client: ClientSide<'_>) -> Outcome {
    let started = ex.started;
    let mut request = ex.request;
    let mut allow_stale_retry = true;
    loop {
        let (mut conn, reused) = match take_or_connect(up, ex.target, started).await {
            Ok(c) => c,
            Err(e) => return Outcome::Failed(connect_error(e, ex.target, ex.provider)),
        };
        let (res, back) = conn.write_all(request).await;
        request = back;
        if res.is_err() {
            if reused && allow_stale_retry {
                allow_stale_retry = false;
                continue;
            }
            return Outcome::Failed(protocol_error(ex.provider, "could not send the request upstream"));
        }
        // A stream's timeout is idle time from here; a whole answer's counts from the start.
        let head_deadline = if ex.stream { Instant::now() + ex.timeout } else { started + ex.timeout };
        let buf = up.buffers.take(16 * 1024);
        match read_head(&mut conn, buf, head_deadline).await {
            Err(HeadFailure::Closed) => {
                return Outcome::Failed(protocol_error(
                    ex.provider,
                    "upstream closed the connection before responding",
                ));
            }
            Err(HeadFailure::Timeout) => return Outcome::Failed(timeout_error(ex.provider, ex.timeout)),
            Err(HeadFailure::Malformed(why)) => return Outcome::Failed(protocol_error(ex.provider, &why)),
            Ok(buf) => {
                up.buffers.give(request);
                let attempt = Attempt {
                    pool_key: &ex.target.pool_key,
                    provider: ex.provider,
                    stream: ex.stream,
                    timeout: ex.timeout,
                    started,
                    reading: ex.reading,
                };
                return respond(up, conn, buf, attempt, client).await;
            }
        }
    }
}

/// `now`: the attempt's start (the pool's idle timeout is seconds; a clock read costs more).
///
/// Boxed futures, here and in `respond` and `proxy::serve`: a branch most requests skip (a new
/// connection, an error body, a translation, a policy) would otherwise size every request's
/// future, which each `.await` copies whole (a request copied ~27 KB of futures before).
async fn take_or_connect(up: &Upstreams, target: &Target, now: Instant) -> Result<(UpstreamConn, bool), ConnectError> {
    let pooled = up.pool.borrow_mut().take(&target.pool_key, now);
    if let Some(conn) = pooled {
        return Ok((conn, true));
    }
    let conn = Box::pin(connect(target, &up.tls, up.connect_timeout)).await?;
    Ok((conn, false))
}

/// What one attempt is, once its response head arrived.
struct Attempt<'a> {
    pool_key: &'a str,
    provider: &'static str,
    stream: bool,
    timeout: Duration,
    started: Instant,
    reading: Reading,
}

/// Handles a complete head in `buf`: error statuses are collected and reported (nothing sent),
/// success statuses are relayed to the client.
async fn respond(
    up: &Upstreams,
    conn: UpstreamConn,
    buf: Vec<u8>,
    attempt: Attempt<'_>,
    client: ClientSide<'_>,
) -> Outcome {
    let Attempt { pool_key, provider, stream, timeout, started, reading } = attempt;
    // read_head returned once an empty line ended the head: it parses here, or fails as garbage.
    // The client's head is written as the headers are read (no list of them is built); most
    // answers are 200s, whose status line goes first and is replaced in the rare other case.
    let mut out = up.buffers.take(buf.len() + 512);
    out.extend_from_slice(STATUS_LINE_200);
    let mut retry_after = None;
    let parsed = parse_response_head_each(&buf, MAX_RESPONSE_HEAD, |name, value| {
        if !is_skipped_header(name) {
            if name.len() == RETRY_AFTER.len() && header_is(name, RETRY_AFTER) {
                retry_after = Some(value);
            }
            write::header(&mut out, name, value);
        }
    });
    let head = match parsed {
        Ok(Some(h)) => h,
        Ok(None) => return Outcome::Failed(protocol_error(provider, "upstream response head vanished")),
        Err(e) => return Outcome::Failed(protocol_error(provider, &e.to_string())),
    };
    let HeadFacts { status, keep_alive, head_len, framing } = head;
    let body = BodyProgress::new(framing);
    let idle_or_total = |now: Instant| {
        if stream {
            timeout
        } else {
            timeout.saturating_sub(now.saturating_duration_since(started))
        }
    };
    if status >= 400 {
        let retry_after = retry_after.map(|v| String::from_utf8_lossy(v).into_owned());
        up.buffers.give(out);
        let (body_bytes, reusable_conn, _) =
            Box::pin(collect_body(conn, buf, head_len, body, &idle_or_total, MAX_ERROR_BODY)).await;
        if let Some(conn) = reusable_conn.filter(|_| keep_alive) {
            up.pool.borrow_mut().put(pool_key, conn, Instant::now());
        }
        return Outcome::Failed(AttemptError {
            failure: Failure::Status(status),
            status,
            body: upstream_error_body(status, provider, &body_bytes),
            retry_after,
        });
    }
    if status != 200 {
        let mut line = Vec::with_capacity(64);
        write::status_line(&mut line, status);
        out.splice(..STATUS_LINE_200.len(), line);
    }
    if let Some(translate) = client.translate {
        let upstream = UpstreamSide { conn, keep_alive, pool_key, started, reading, stream };
        return Box::pin(respond_translated(
            up,
            upstream,
            buf,
            head_len,
            body,
            status,
            out,
            &idle_or_total,
            client,
            translate,
        ))
        .await;
    }
    if let (Some(block), false) = (client.body_block, stream) {
        let upstream = UpstreamSide { conn, keep_alive, pool_key, started, reading, stream };
        let relay = respond_with_block(up, upstream, buf, head_len, body, status, out, &idle_or_total, client, block);
        return Box::pin(relay).await;
    }
    match framing {
        BodyFraming::Length(n) => write::header_decimal(&mut out, "content-length", n),
        _ => write::header(&mut out, "transfer-encoding", b"chunked"),
    }
    out.extend_from_slice(client.extra_headers);
    if !client.keep_alive {
        write::header(&mut out, "connection", b"close");
    }
    write::end_head(&mut out);
    let upstream = UpstreamSide { conn, keep_alive, pool_key, started, reading, stream };
    relay_body(up, upstream, buf, head_len, body, status, out, &idle_or_total, client).await
}

/// The upstream end of a relay.
struct UpstreamSide<'a> {
    conn: UpstreamConn,
    keep_alive: bool,
    pool_key: &'a str,
    started: Instant,
    reading: Reading,
    /// Only a stream's first body bytes are timed (its time to first token).
    stream: bool,
}

/// What a relay has done so far.
#[derive(Default)]
struct Relayed {
    bytes_out: u64,
    first_body: Option<Duration>,
    tail: UsageTail,
}

impl Relayed {
    fn delivered(
        self,
        status: u16,
        took: Duration,
        body_failure: Option<Failure>,
        client_ok: bool,
        reusable: bool,
    ) -> Outcome {
        let Relayed { bytes_out, first_body, mut tail } = self;
        Outcome::Delivered(Delivered {
            status,
            bytes_out,
            first_body,
            took,
            usage: tail.usage(),
            answer: tail.answer(),
            body_failure,
            client_failed: !client_ok,
            client_reusable: client_ok && reusable,
        })
    }
}

#[allow(clippy::too_many_arguments)]
async fn relay_body(
    up: &Upstreams,
    upstream: UpstreamSide<'_>,
    mut buf: Vec<u8>,
    head_len: usize,
    mut body: BodyProgress,
    status: u16,
    mut out: Vec<u8>,
    wait: &impl Fn(Instant) -> Duration,
    client: ClientSide<'_>,
) -> Outcome {
    let UpstreamSide { mut conn, keep_alive, pool_key, started, reading, stream } = upstream;
    let chunked_to_client = !matches!(body, BodyProgress::Length(_));
    let mut scratch = Vec::new();
    let mut consumed = head_len;
    let mut body_failure = None;
    let mut relayed = Relayed { tail: UsageTail::new(reading), ..Relayed::default() };
    // A stream's block goes before its `data: [DONE]`, or at its end when none comes.
    let mut block_event = client.body_block.filter(|_| chunked_to_client).map(|b| b.sse_event());
    let mut cut = (client.cut_usage_event && chunked_to_client).then(UsageEventCut::default);
    loop {
        let (tail, cutting) = (&mut relayed.tail, cut.as_mut());
        match body.relay(&buf[consumed..], &mut out, &mut scratch, tail, cutting, &mut block_event) {
            Ok((n, decoded)) => {
                consumed += n;
                if stream && decoded > 0 && relayed.first_body.is_none() {
                    relayed.first_body = Some(started.elapsed());
                }
            }
            Err(f) => body_failure = Some(f),
        }
        let done = body.is_done();
        if done {
            (client.on_body_end)(relayed.tail.usage());
        }
        if done && chunked_to_client {
            if let Some(cut) = &mut cut {
                scratch.clear();
                cut.finish(&mut scratch);
                encode_chunk(&scratch, &mut out);
            }
            encode_chunk(&block_event.take().unwrap_or_default(), &mut out);
            out.extend_from_slice(LAST_CHUNK);
        }
        if body_failure.is_some() && chunked_to_client {
            out.extend_from_slice(&stream_error_chunk(client.dialect));
        }
        if !out.is_empty() {
            relayed.bytes_out += out.len() as u64;
            show(client.tee, &out);
            let (res, back) = client.stream.write_all(out).await;
            out = back;
            out.clear();
            if res.is_err() {
                return relayed.delivered(status, started.elapsed(), body_failure, false, false);
            }
        }
        if done {
            // One clock read for the pool's idle time and the attempt's duration.
            let now = Instant::now();
            if keep_alive && consumed == buf.len() {
                up.pool.borrow_mut().put(pool_key, conn, now);
            }
            up.buffers.give(buf);
            up.buffers.give(out);
            return relayed.delivered(status, now.saturating_duration_since(started), None, true, true);
        }
        if body_failure.is_some() {
            return relayed.delivered(status, started.elapsed(), body_failure, true, chunked_to_client);
        }
        buf.clear();
        consumed = 0;
        match monoio::time::timeout(wait(Instant::now()), conn.read_more(buf)).await {
            Ok((Ok(n), back)) if n > 0 => buf = back,
            Ok((Ok(_), back)) if matches!(body, BodyProgress::UntilClose) => {
                let _ = back;
                relayed.bytes_out += LAST_CHUNK.len() as u64;
                show(client.tee, LAST_CHUNK);
                let (res, _) = client.stream.write_all(LAST_CHUNK.to_vec()).await;
                return relayed.delivered(status, started.elapsed(), None, res.is_ok(), true);
            }
            Ok((_, back)) => {
                buf = back;
                buf.clear();
                body_failure = Some(Failure::Protocol);
            }
            Err(_) => {
                buf = Vec::new();
                body_failure = Some(Failure::Timeout);
            }
        }
    }
}

/// The end of a chunked response whose upstream failed mid-body: one SSE error event in the
/// client's API's shape (OpenAI's `data: {"error":…}`, Anthropic's and the Responses API's
/// `event: error`), then the
/// last chunk, so the client sees an error rather than a silent end.
fn stream_error_chunk(dialect: Dialect) -> Vec<u8> {
    const WHY: &str = "the upstream connection failed in the middle of the response";
    let event = match dialect {
        Dialect::OpenAiChat | Dialect::Gemini | Dialect::BedrockConverse => {
            let mut event = b"data: ".to_vec();
            event.extend_from_slice(&openai_error(502, WHY, None));
            event.extend_from_slice(b"\n\n");
            event
        }
        Dialect::AnthropicMessages => crate::dialect::anthropic_stream_error(502, WHY),
        Dialect::OpenAiResponses => crate::dialect::responses::responses_stream_error(502, WHY),
    };
    let mut out = Vec::new();
    encode_chunk(&event, &mut out);
    out.extend_from_slice(LAST_CHUNK);
    out
}

fn connect_error(e: ConnectError, target: &Target, provider: &str) -> AttemptError {
    match e {
        ConnectError::Timeout => AttemptError {
            failure: Failure::Timeout,
            status: 504,
            body: openai_error(504, &format!("{provider}: connect to {} timed out", target.authority), None),
            retry_after: None,
        },
        ConnectError::Failed(why) => AttemptError {
            failure: Failure::Connect,
            status: 502,
            body: openai_error(502, &format!("{provider}: {why}"), None),
            retry_after: None,
        },
    }
}

fn protocol_error(provider: &str, why: &str) -> AttemptError {
    AttemptError {
        failure: Failure::Protocol,
        status: 502,
        body: openai_error(502, &format!("{provider}: {why}"), None),
        retry_after: None,
    }
}

fn timeout_error(provider: &str, after: Duration) -> AttemptError {
    AttemptError {
        failure: Failure::Timeout,
        status: 504,
        body: openai_error(504, &format!("{provider}: no response within {:.1}s", after.as_secs_f64()), None),
        retry_after: None,
    }
}

#[path = "exchange_head.rs"]
mod head;
use head::{read_head, HeadFailure};

#[path = "exchange_whole.rs"]
mod whole;
use whole::{collect_body, respond_with_block};

#[path = "exchange_translate.rs"]
mod translate;
use translate::respond_translated;
pub use translate::{Responding, ResponsesTurn, Translate};

#[cfg(test)]
#[path = "exchange_tests.rs"]
mod tests;
