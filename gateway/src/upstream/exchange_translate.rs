//! Answers in another dialect than the client's (part of `exchange.rs`): a whole body read,
//! translated and sent with its new length; a stream translated event by event as it arrives,
//! its end (or its failure) written in the client's dialect.

use super::*;
use crate::dialect::bedrock::{self, ConverseStreamToChat};
use crate::dialect::gemini::{self, GeminiToChatStream};
use crate::dialect::responses::ResponseEcho;
use crate::dialect::responses::{chat_response_to_responses, ChatToResponsesStream};
use crate::dialect::sse::SseSplitter;
use crate::dialect::{
    chat_response_to_messages, messages_response_to_chat, ChatToMessagesStream, MessagesToChatStream, StreamTranslator,
};
use pointwork_core::RouteKind;

/// Which way an answer is translated, and the model name the client asked for.
#[derive(Clone, Copy)]
pub struct Translate<'a> {
    /// The client's route (its dialect is the answer's).
    pub route: RouteKind,
    /// The deployment's dialect, and its model. `OpenAiResponses`: a native Responses answer,
    /// passed through as it is and read for its id.
    pub from: Dialect,
    pub upstream_model: &'a str,
    pub model: &'a str,
    /// An OpenAI client's stream asked for `stream_options.include_usage`.
    pub include_usage: bool,
    /// An embeddings client asked for `encoding_format: base64`.
    pub base64: bool,
    /// A Responses request: what its answer is kept as.
    pub responses: Option<Responding<'a>>,
}

/// A Responses answer's turn, and the deployment that answers.
#[derive(Clone, Copy)]
pub struct Responding<'a> {
    pub turn: &'a dyn ResponsesTurn,
    pub deployment: &'a str,
}

/// What a Responses answer is kept as: a request's turn (`crate::responses::Turn`).
pub trait ResponsesTurn {
    /// What a translated answer echoes of its request, and its id.
    fn echo(&self) -> &ResponseEcho;
    /// Keeps a translated answer (`bytes` its size, about) for the conversation's next turn.
    fn remember(&self, response: serde_json::Value, bytes: usize);
    /// Remembers that `deployment` holds the native response `response_id`.
    fn remember_native(&self, response_id: &str, deployment: &str);
}

impl Translate<'_> {
    fn whole(&self, body: &[u8], headers: &[u8]) -> Result<Vec<u8>, String> {
        let chat = match (self.route, self.from) {
            (RouteKind::Embeddings, Dialect::Gemini) => {
                return gemini::gemini_embeddings_to_openai_with(body, self.model, self.base64)
            }
            (RouteKind::Embeddings, Dialect::BedrockConverse) => {
                let tokens = header_value(headers, "x-amzn-bedrock-input-token-count").and_then(|v| v.parse().ok());
                let (model, id) = (self.model, self.upstream_model);
                return bedrock::bedrock_embeddings_to_openai_with(body, model, id, self.base64, tokens);
            }
            (_, Dialect::OpenAiResponses) => {
                if let Some(r) = self.responses {
                    r.turn.remember_native(&native_response_id(body), r.deployment);
                }
                return Ok(body.to_vec());
            }
            (_, Dialect::Gemini) => gemini::gemini_response_to_chat(body, self.model)?,
            (_, Dialect::BedrockConverse) => bedrock::converse_response_to_chat(body, self.model)?,
            (RouteKind::Messages, _) => return chat_response_to_messages(body, self.model),
            (_, Dialect::AnthropicMessages) => messages_response_to_chat(body, self.model)?,
            (_, Dialect::OpenAiChat) => body.to_vec(),
        };
        match (self.route, self.responses) {
            (RouteKind::Messages, _) => chat_response_to_messages(&chat, self.model),
            (RouteKind::Responses, Some(r)) => {
                let (bytes, response) = chat_response_to_responses(&chat, r.turn.echo())?;
                r.turn.remember(response, bytes.len());
                Ok(bytes)
            }
            _ => Ok(chat),
        }
    }

    fn stream<'s>(&self) -> Box<dyn StreamTranslator + 's>
    where
        Self: 's,
    {
        // A Messages or Responses client of another dialect hears a chat translation translated
        // again, with usage.
        let usage = self.include_usage || matches!(self.route, RouteKind::Messages | RouteKind::Responses);
        let to_chat: Option<Box<dyn StreamTranslator>> = match self.from {
            Dialect::Gemini => Some(Box::new(GeminiToChatStream::new(self.model, usage))),
            Dialect::BedrockConverse => Some(Box::new(ConverseStreamToChat::new(self.model, usage))),
            Dialect::AnthropicMessages => Some(Box::new(MessagesToChatStream::new(self.model, usage))),
            Dialect::OpenAiChat => None,
            Dialect::OpenAiResponses => {
                let (splitter, usage) = (SseSplitter::new(), UsageTail::new(Reading::Usage));
                return Box::new(NativeResponses { splitter, read: false, responding: self.responses, usage });
            }
        };
        match (self.route, self.responses, to_chat) {
            (RouteKind::Messages, _, None) => Box::new(ChatToMessagesStream::new(self.model)),
            (RouteKind::Messages, _, Some(first)) => {
                Box::new(Chained { first, then: Box::new(ChatToMessagesStream::new(self.model)), between: Vec::new() })
            }
            (RouteKind::Responses, Some(r), first) => Box::new(ToResponses {
                first,
                then: ChatToResponsesStream::new(r.turn.echo().clone()),
                between: Vec::new(),
                turn: r.turn,
                written: 0,
            }),
            (_, _, Some(first)) => first,
            // Unreachable: a chat client of a chat deployment is not translated.
            (_, _, None) => Box::new(MessagesToChatStream::new(self.model, self.include_usage)),
        }
    }
}

/// Two stream translations in a row.
struct Chained {
    first: Box<dyn StreamTranslator>,
    then: Box<dyn StreamTranslator>,
    between: Vec<u8>,
}

impl StreamTranslator for Chained {
    fn feed(&mut self, input: &[u8], out: &mut Vec<u8>) {
        self.between.clear();
        self.first.feed(input, &mut self.between);
        self.then.feed(&self.between, out);
    }

    fn finish(&mut self, out: &mut Vec<u8>, complete: bool) {
        self.between.clear();
        self.first.finish(&mut self.between, complete);
        self.then.feed(&self.between, out);
        self.then.finish(out, complete);
    }

    fn usage(&self) -> Option<(u64, u64)> {
        self.first.usage()
    }
}

/// A chat stream (translated from the deployment's dialect first, unless it is chat) as the
/// Responses API's events; the completed response is kept for the conversation's next turn.
struct ToResponses<'a> {
    first: Option<Box<dyn StreamTranslator>>,
    then: ChatToResponsesStream,
    between: Vec<u8>,
    turn: &'a dyn ResponsesTurn,
    /// Bytes of events written: about the completed response's size (its text is in them).
    written: usize,
}

impl StreamTranslator for ToResponses<'_> {
    fn feed(&mut self, input: &[u8], out: &mut Vec<u8>) {
        let before = out.len();
        match &mut self.first {
            Some(first) => {
                self.between.clear();
                first.feed(input, &mut self.between);
                self.then.feed(&self.between, out);
            }
            None => self.then.feed(input, out),
        }
        self.written += out.len() - before;
    }

    fn finish(&mut self, out: &mut Vec<u8>, complete: bool) {
        if let Some(first) = &mut self.first {
            self.between.clear();
            first.finish(&mut self.between, complete);
            self.then.feed(&self.between, out);
        }
        self.then.finish(out, complete);
        if let Some(response) = self.then.completed() {
            self.turn.remember(response.clone(), self.written);
        }
    }

    fn usage(&self) -> Option<(u64, u64)> {
        match &self.first {
            Some(first) => first.usage(),
            None => self.then.usage(),
        }
    }
}

/// A native Responses stream, passed through as it is; its first event names the response,
/// whose deployment is remembered for the follow-ups, and its last its usage.
struct NativeResponses<'a> {
    splitter: SseSplitter,
    read: bool,
    responding: Option<Responding<'a>>,
    usage: UsageTail,
}

impl StreamTranslator for NativeResponses<'_> {
    fn feed(&mut self, input: &[u8], out: &mut Vec<u8>) {
        out.extend_from_slice(input);
        self.usage.push(input);
        if self.read {
            return;
        }
        let mut id = None;
        let _ = self.splitter.feed(input, |event| {
            if id.is_none() {
                id = Some(native_response_id(event.data));
            }
        });
        if let (Some(id), Some(r)) = (id, self.responding) {
            self.read = true;
            self.splitter = SseSplitter::new();
            r.turn.remember_native(&id, r.deployment);
        }
    }

    fn finish(&mut self, out: &mut Vec<u8>, complete: bool) {
        if !complete {
            let why = "the upstream connection failed in the middle of the response";
            out.extend_from_slice(&crate::dialect::responses::responses_stream_error(502, why));
        }
    }

    fn usage(&self) -> Option<(u64, u64)> {
        self.usage.usage().map(|u| (u.prompt_tokens, u.completion_tokens))
    }
}

/// The response id of a native answer's body, or of a stream event that carries the response
/// (`response.created`); empty when there is none.
fn native_response_id(json: &[u8]) -> String {
    // Found by the facts' scanner, which stops there: the rest is not read.
    let mut id = String::new();
    crate::facts_scan::top_level_members(json, |key, span| match key {
        b"id" => {
            id = serde_json::from_slice(&json[span]).unwrap_or_default();
            false
        }
        b"response" => {
            id = native_response_id(&json[span]);
            false
        }
        _ => true,
    });
    id
}

/// A response header's value (`name` lowercase), from the head as received.
fn header_value<'h>(head: &'h [u8], name: &str) -> Option<&'h str> {
    let head = std::str::from_utf8(head).ok()?;
    head.split("\r\n").find_map(|line| {
        let (n, v) = line.split_once(':')?;
        n.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// The answer translated: whole, or (a stream) event by event. `out` holds the status line and
/// the upstream's headers so far.
#[allow(clippy::too_many_arguments)]
pub(super) async fn respond_translated(
    up: &Upstreams,
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
        return relay_translated(up, upstream, buf, head_len, body, status, out, wait, client, translate).await;
    }
    let UpstreamSide { conn, keep_alive, pool_key, started, reading, .. } = upstream;
    let head = buf[..head_len].to_vec();
    let (collected, reusable, complete) = collect_body(conn, buf, head_len, body, wait, MAX_BLOCK_BODY).await;
    let translated = match complete {
        true => translate.whole(&collected, &head),
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
        up.pool.borrow_mut().put(pool_key, conn, Instant::now());
    }
    let mut relayed = Relayed { tail: UsageTail::new(reading), ..Relayed::default() };
    relayed.tail.push(&collected);
    (client.on_body_end)(relayed.tail.usage());
    let sent = super::whole::send_whole(client, out, &body).await;
    relayed.bytes_out = sent.bytes_out;
    relayed.delivered(status, started.elapsed(), None, sent.ok, true)
}

/// A stream translated as it arrives, always chunked to the client (its length changes).
#[allow(clippy::too_many_arguments)]
async fn relay_translated(
    up: &Upstreams,
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
            show(client.tee, &out);
            let (res, back) = client.stream.write_all(out).await;
            out = back;
            out.clear();
            if res.is_err() {
                return relayed.delivered(status, started.elapsed(), failure, false, false);
            }
        }
        if ended {
            if done && !closed && keep_alive && consumed == buf.len() {
                up.pool.borrow_mut().put(pool_key, conn, Instant::now());
            }
            return relayed.delivered(status, started.elapsed(), failure, true, true);
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

#[cfg(test)]
mod tests {
    use super::native_response_id;

    #[test]
    fn a_native_answer_names_its_response_first() {
        assert_eq!(native_response_id(br#"{"id":"resp_1","object":"response","output":[{"id":"msg_2"}]}"#), "resp_1");
        let created = br#"{"type":"response.created","sequence_number":0,"response":{"id":"resp_3","output":[]}}"#;
        assert_eq!(native_response_id(created), "resp_3");
        assert_eq!(native_response_id(b"<html>"), "");
    }
}
