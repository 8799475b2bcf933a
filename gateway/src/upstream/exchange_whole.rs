//! Whole bodies: an error body kept to relay or wrap, and a successful non-streaming body read
//! whole to carry a [`BodyBlock`] (part of `exchange.rs`).

use super::*;

/// Reads a whole body (up to `max` bytes): the body, the connection when it can be reused, and
/// whether the body arrived complete.
pub(super) async fn collect_body(
    mut conn: UpstreamConn,
    mut buf: Vec<u8>,
    head_len: usize,
    mut body: BodyProgress,
    wait: &impl Fn(Instant) -> Duration,
    max: usize,
) -> (Vec<u8>, Option<UpstreamConn>, bool) {
    let mut collected = Vec::new();
    let mut consumed = head_len;
    loop {
        match body.collect(&buf[consumed..], &mut collected) {
            Ok(n) => consumed += n,
            Err(_) => return (collected, None, false),
        }
        if body.is_done() {
            let clean = consumed == buf.len();
            return (collected, clean.then_some(conn), true);
        }
        if collected.len() > max {
            return (collected, None, false);
        }
        buf.clear();
        consumed = 0;
        match monoio::time::timeout(wait(Instant::now()), conn.read_more(buf)).await {
            Ok((Ok(n), back)) if n > 0 => buf = back,
            // A body that runs until the connection closes is complete at the close.
            Ok((Ok(_), _)) if matches!(body, BodyProgress::UntilClose) => return (collected, None, true),
            _ => return (collected, None, false),
        }
    }
}

/// A non-streaming body read whole, the block added as its last member, then sent with its new
/// length. A body that does not arrive whole is a failure of the attempt (nothing reached the
/// client yet).
#[allow(clippy::too_many_arguments)]
pub(super) async fn respond_with_block(
    up: &Upstreams,
    upstream: UpstreamSide<'_>,
    buf: Vec<u8>,
    head_len: usize,
    body: BodyProgress,
    status: u16,
    out: Vec<u8>,
    wait: &impl Fn(Instant) -> Duration,
    client: ClientSide<'_>,
    block: BodyBlock<'_>,
) -> Outcome {
    let UpstreamSide { conn, keep_alive, pool_key, started, reading, .. } = upstream;
    let (collected, reusable, complete) = collect_body(conn, buf, head_len, body, wait, MAX_BLOCK_BODY).await;
    if !complete {
        return Outcome::Failed(AttemptError {
            failure: Failure::Protocol,
            status: 502,
            body: openai_error(502, "the upstream response ended before its body did", None),
            retry_after: None,
        });
    }
    if let Some(conn) = reusable.filter(|_| keep_alive) {
        up.pool.borrow_mut().put(pool_key, conn, Instant::now());
    }
    let mut relayed = Relayed { tail: UsageTail::new(reading), ..Relayed::default() };
    relayed.tail.push(&collected);
    (client.on_body_end)(relayed.tail.usage());
    let body = block.into_object(&collected).unwrap_or(collected);
    let sent = send_whole(client, out, &body).await;
    relayed.bytes_out = sent.bytes_out;
    relayed.delivered(status, started.elapsed(), None, sent.ok, true)
}

/// What [`send_whole`] wrote.
pub(super) struct Sent {
    pub(super) bytes_out: u64,
    pub(super) ok: bool,
}

/// Finishes the head `out` (the body's length, the gateway's headers) and writes it with the
/// whole `body`.
pub(super) async fn send_whole(client: ClientSide<'_>, mut out: Vec<u8>, body: &[u8]) -> Sent {
    write::header_decimal(&mut out, "content-length", body.len() as u64);
    out.extend_from_slice(client.extra_headers);
    if !client.keep_alive {
        write::header(&mut out, "connection", b"close");
    }
    write::end_head(&mut out);
    out.extend_from_slice(body);
    let bytes_out = out.len() as u64;
    show(client.tee, &out);
    let (res, _) = client.stream.write_all(out).await;
    Sent { bytes_out, ok: res.is_ok() }
}
