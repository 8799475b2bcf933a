//! Answers in another dialect than the client's (part of `exchange.rs`): a whole body read,
//! translated and sent with its new length; a stream translated event by event as it arrives,
//! its end (or its failure) written in the client's dialect.

use super::*;
use crate::dialect::{
    chat_response_to_messages, messages_response_to_chat, ChatToMessagesStream, MessagesToChatStream, StreamTranslator,
};

/// Which way an answer is translated, and the model name the client asked for.
#[derive(Clone, Copy)]
pub struct Translate<'a> {
    /// The client's dialect (the provider speaks the other).
    pub to: Dialect,
    pub model: &'a str,
    /// An OpenAI client's stream asked for `stream_options.include_usage`.
    pub include_usage: bool,
}

impl Translate<'_> {
    fn whole(&self, body: &[u8]) -> Result<Vec<u8>, String> {
        match self.to {
            Dialect::AnthropicMessages => chat_response_to_messages(body, self.model),
            _ => messages_response_to_chat(body, self.model),
        }
    }

    fn stream(&self) -> Box<dyn StreamTranslator> {
        match self.to {
            Dialect::AnthropicMessages => Box::new(ChatToMessagesStream::new(self.model)),
            _ => Box::new(MessagesToChatStream::new(self.model, self.include_usage)),
        }
    }
}

/// The answer translated: whole, or (a stream) event by event. `out` holds the status line and
/// the upstream's headers so far.
#[allow(clippy::too_many_arguments)]
pub(super) async fn respond_translated(
    shard: &Shard,
    upstream: UpstreamSide<'_>,
    buf: Vec<u8>,
    head_len: usize,
    body: BodyProgress,
    status: u16,
    out: Vec<u8>,
    wait: &impl Fn(Instant) -> Duration,
    client: ClientSide<'_>,
    translate: Translate<'_>,
) -> Outcome {
    if upstream.stream {
        return relay_translated(shard, upstream, buf, head_len, body, status, out, wait, client, translate).await;
    }
    let UpstreamSide { conn, keep_alive, pool_key, started, read_usage, .. } = upstream;
    let (collected, reusable, complete) = collect_body(conn, buf, head_len, body, wait, MAX_BLOCK_BODY).await;
    let translated = match complete {
        true => translate.whole(&collected),
        false => Err("the upstream response ended before its body did".to_string()),
    };
    let body = match translated {
        Ok(body) => body,
        Err(why) => {
            return Outcome::Failed(AttemptError {
                failure: Failure::Protocol,
                status: 502,
                body: openai_error(502, &format!("the upstream answer could not be translated: {why}"), None),
                retry_after: None,
            })
        }
    };
    if let Some(conn) = reusable.filter(|_| keep_alive) {
        shard.pool.borrow_mut().put(pool_key, conn, Instant::now());
    }
    let mut relayed = Relayed { tail: UsageTail::new(read_usage), ..Relayed::default() };
    relayed.tail.push(&collected);
    (client.on_body_end)(relayed.tail.usage());
    let sent = super::whole::send_whole(client, out, &body).await;
    relayed.bytes_out = sent.bytes_out;
    relayed.delivered(status, started, None, sent.ok, true)
}

/// A stream translated as it arrives, always chunked to the client (its length changes).
#[allow(clippy::too_many_arguments)]
async fn relay_translated(
    shard: &Shard,
    upstream: UpstreamSide<'_>,
    mut buf: Vec<u8>,
    head_len: usize,
    mut body: BodyProgress,
    status: u16,
    mut out: Vec<u8>,
    wait: &impl Fn(Instant) -> Duration,
    client: ClientSide<'_>,
    translate: Translate<'_>,
) -> Outcome {
    let UpstreamSide { mut conn, keep_alive, pool_key, started, .. } = upstream;
    let mut translator = translate.stream();
    write::header(&mut out, "transfer-encoding", b"chunked");
    out.extend_from_slice(client.extra_headers);
    if !client.keep_alive {
        write::header(&mut out, "connection", b"close");
    }
    write::end_head(&mut out);
    let mut relayed = Relayed::default();
    let (mut decoded, mut translated) = (Vec::new(), Vec::new());
    let mut consumed = head_len;
    // Set when the body ended at the connection's close (complete), or the read failed.
    let (mut closed, mut failure) = (false, None);
    loop {
        decoded.clear();
        translated.clear();
        match body.collect(&buf[consumed..], &mut decoded) {
            Ok(n) => consumed += n,
            Err(f) => failure = failure.or(Some(f)),
        }
        if !decoded.is_empty() && relayed.first_body.is_none() {
            relayed.first_body = Some(started.elapsed());
        }
        translator.feed(&decoded, &mut translated);
        let done = body.is_done() || closed;
        let ended = done || failure.is_some();
        if ended {
            translator.finish(&mut translated, done && failure.is_none());
            let usage = translator.usage().map(|(prompt_tokens, completion_tokens)| Usage {
                prompt_tokens,
                completion_tokens,
                total_tokens: prompt_tokens + completion_tokens,
            });
            (client.on_body_end)(usage);
        }
        if !translated.is_empty() {
            encode_chunk(&translated, &mut out);
        }
        if ended {
            out.extend_from_slice(LAST_CHUNK);
        }
        if !out.is_empty() {
            relayed.bytes_out += out.len() as u64;
            let (res, back) = client.stream.write_all(out).await;
            out = back;
            out.clear();
            if res.is_err() {
                return relayed.delivered(status, started, failure, false, false);
            }
        }
        if ended {
            if done && !closed && keep_alive && consumed == buf.len() {
                shard.pool.borrow_mut().put(pool_key, conn, Instant::now());
            }
            return relayed.delivered(status, started, failure, true, true);
        }
        buf.clear();
        consumed = 0;
        match monoio::time::timeout(wait(Instant::now()), conn.read_more(buf)).await {
            Ok((Ok(n), back)) if n > 0 => buf = back,
            Ok((Ok(_), back)) => {
                buf = back;
                buf.clear();
                // A body that runs until the close is complete at it; any other is cut short.
                match body {
                    BodyProgress::UntilClose => closed = true,
                    _ => failure = Some(Failure::Protocol),
                }
            }
            Ok((Err(_), back)) => {
                buf = back;
                buf.clear();
                failure = Some(Failure::Protocol);
            }
            Err(_) => {
                buf = Vec::new();
                failure = Some(Failure::Timeout);
            }
        }
    }
}
