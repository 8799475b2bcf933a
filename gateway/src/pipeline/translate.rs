//! An attempt whose deployment speaks another dialect than the client's API (a Messages
//! request to an OpenAI-compatible provider, a chat request to Anthropic, any to Gemini or
//! Bedrock, a Responses request to any deployment without `/responses`): the request body
//! translated (`crate::dialect`), and how the answer is to be translated back. Gemini and
//! Bedrock are reached from chat completions: a Messages request goes to chat first, and a
//! Responses request always does.

use pointwork_core::{Deployment, Dialect, RouteKind};

use super::parameters::{edited, request_defaults};
use crate::dialect::responses::responses_request_to_chat;
use crate::dialect::{bedrock, chat_request_to_messages, gemini, messages_request_to_chat};
use crate::dialect::{TranslatedRequest, Untranslatable};
use crate::errors::openai_error;
use crate::http::write;
use crate::request::UpstreamHead;
use crate::respond::Reply;
use crate::responses::Turn;
use crate::routers::Cx;
use crate::upstream::exchange::{Responding, Translate};

/// Whether an attempt of `cx`'s request on `d` is translated.
pub(crate) fn needed(cx: &Cx<'_>, d: &Deployment) -> bool {
    match cx.route {
        RouteKind::Responses => !cx.shard.hub.responses.native(d),
        route => d.translates(route),
    }
}

/// The upstream request: `head`, then the body as it would be forwarded (model spliced, the
/// gateway's own members cut) translated into the provider's dialect, with what the translation
/// dropped — or the 400 naming the field that cannot be translated.
pub(crate) fn request(
    cx: &Cx<'_>,
    to: &Deployment,
    head: UpstreamHead<'_>,
    model_json: &[u8],
) -> Result<TranslatedRequest, Reply> {
    let (body, extracted) = (cx.request.body, cx.extracted);
    let mut forwarded = Vec::with_capacity(extracted.forwarded_len(body, model_json));
    extracted.append_forwarded(&mut forwarded, body, model_json);
    let upstream_model: String = serde_json::from_slice(model_json).unwrap_or_default();
    let translated = translate_request(cx.route, to, &forwarded, &upstream_model, cx.responses);
    let translated = translated.and_then(|t| {
        let body = crate::providers::rewrite_body(to, t.body)?;
        Ok(TranslatedRequest { body, dropped: t.dropped })
    });
    let translated = translated.map_err(|u| Reply::json(400, openai_error(400, &u.to_string(), Some(&u.field))))?;
    let mut out = Vec::with_capacity(head.len() + 32 + translated.body.len());
    head.write_to(&mut out);
    write::header_decimal(&mut out, "content-length", translated.body.len() as u64);
    write::end_head(&mut out);
    out.extend_from_slice(&translated.body);
    Ok(TranslatedRequest { body: out, dropped: translated.dropped })
}

/// `forwarded` (the client's body, model spliced) in deployment `d`'s dialect, with `d`'s
/// request defaults added where the parameters are OpenAI's (the chat body every translation
/// but Messages to Anthropic goes through) or Anthropic's.
fn translate_request(
    route: RouteKind,
    d: &Deployment,
    forwarded: &[u8],
    model: &str,
    turn: Option<&Turn>,
) -> Result<TranslatedRequest, Untranslatable> {
    let to = d.dialect();
    let kept = |body| TranslatedRequest { body, dropped: Vec::new() };
    let mut chat = match (route, to, turn) {
        (RouteKind::Responses, _, Some(turn)) => {
            let chat = responses_request_to_chat(forwarded, model, &turn.history)?;
            turn.input_read(chat.input_items);
            TranslatedRequest { body: chat.body, dropped: chat.dropped }
        }
        (RouteKind::Messages, Dialect::Gemini | Dialect::BedrockConverse | Dialect::OpenAiChat, _) => {
            messages_request_to_chat(forwarded, model)?
        }
        _ => kept(forwarded.to_vec()),
    };
    if d.edits_parameters() && route != RouteKind::Embeddings {
        let shape = match (route, to) {
            (RouteKind::Messages, Dialect::AnthropicMessages) => Dialect::AnthropicMessages,
            _ => Dialect::OpenAiChat,
        };
        let defaults: Vec<(&str, &str)> = request_defaults(d, Some(shape)).collect();
        let rename = d.max_tokens_as_max_completion_tokens && to == Dialect::OpenAiChat;
        chat.body = edited(&chat.body, &defaults, rename);
    }
    let body = match (route, to) {
        (RouteKind::Embeddings, Dialect::Gemini) => gemini::embeddings_request_to_gemini(forwarded, model)?,
        (RouteKind::Embeddings, Dialect::BedrockConverse) => bedrock::embeddings_request_to_bedrock(forwarded, model)?,
        (_, Dialect::Gemini) => gemini::chat_request_to_gemini(&chat.body)?,
        (_, Dialect::BedrockConverse) => bedrock::chat_request_to_converse_for(&chat.body, model)?,
        (RouteKind::Messages, Dialect::AnthropicMessages) => return Ok(chat),
        (_, Dialect::AnthropicMessages) => chat_request_to_messages(&chat.body, model)?,
        (_, Dialect::OpenAiChat | Dialect::OpenAiResponses) => return Ok(chat),
    };
    Ok(TranslatedRequest { body, dropped: chat.dropped })
}

/// How the answer goes back from deployment `d` into the client's dialect, named `model` as
/// the client asked: translated (`translating`), or, for a native Responses answer that is
/// kept, read for its id on the way; `None` when it goes through as it is.
pub(crate) fn answer<'a>(cx: &'a Cx<'a>, d: &'a Deployment, translating: bool) -> Option<Translate<'a>> {
    let responses = cx.responses.map(|turn| Responding { turn, deployment: &d.id });
    let from = match translating {
        true => d.dialect(),
        false if cx.responses.is_some_and(Turn::remembers) => Dialect::OpenAiResponses,
        false => return None,
    };
    let (route, body) = (cx.route, cx.request.body);
    // An OpenAI client's stream gets the usage chunk only when it asked for it, as from OpenAI.
    let include_usage = route.dialect() == Dialect::OpenAiChat
        && serde_json::from_slice::<serde_json::Value>(body)
            .is_ok_and(|v| v["stream_options"]["include_usage"] == serde_json::Value::Bool(true));
    let base64 = route == RouteKind::Embeddings
        && serde_json::from_slice::<serde_json::Value>(body).is_ok_and(|v| v["encoding_format"] == "base64");
    let (upstream_model, model) = (&d.upstream_model, &cx.extracted.facts.model);
    Some(Translate { route, from, upstream_model, model, include_usage, base64, responses })
}
