//! An attempt whose deployment speaks another dialect than the client's API (a Messages
//! request to an OpenAI-compatible provider, a chat request to Anthropic, either to Gemini or
//! Bedrock): the request body translated (`crate::dialect`), and how the answer is to be
//! translated back. Gemini and Bedrock are reached from chat completions: a Messages request
//! goes to chat first.

use pointwork_core::{Deployment, Dialect, RouteKind};

use crate::dialect::{bedrock, chat_request_to_messages, gemini, messages_request_to_chat, Untranslatable};
use crate::errors::openai_error;
use crate::facts::Extracted;
use crate::http::write;
use crate::request::UpstreamHead;
use crate::respond::Reply;
use crate::upstream::exchange::Translate;

/// The upstream request: `head`, then the body as it would be forwarded (model spliced, the
/// gateway's own members cut) translated into the provider's dialect — or the 400 naming the
/// field that cannot be translated.
pub(crate) fn request(
    route: RouteKind,
    to: &Deployment,
    head: UpstreamHead<'_>,
    body: &[u8],
    extracted: &Extracted,
    model_json: &[u8],
) -> Result<Vec<u8>, Reply> {
    let mut forwarded = Vec::with_capacity(extracted.forwarded_len(body, model_json));
    extracted.append_forwarded(&mut forwarded, body, model_json);
    let upstream_model: String = serde_json::from_slice(model_json).unwrap_or_default();
    let translated = translate_request(route, to.dialect(), &forwarded, &upstream_model);
    let translated = translated.and_then(|body| crate::providers::rewrite_body(to, body));
    let translated = translated.map_err(|u| Reply::json(400, openai_error(400, &u.to_string(), Some(&u.field))))?;
    let mut out = Vec::with_capacity(head.len() + 32 + translated.len());
    head.write_to(&mut out);
    write::header_decimal(&mut out, "content-length", translated.len() as u64);
    write::end_head(&mut out);
    out.extend_from_slice(&translated);
    Ok(out)
}

/// `forwarded` (the client's body, model spliced) in dialect `to`.
fn translate_request(route: RouteKind, to: Dialect, forwarded: &[u8], model: &str) -> Result<Vec<u8>, Untranslatable> {
    let via_chat;
    let chat = match (route, to) {
        (RouteKind::Messages, Dialect::Gemini | Dialect::BedrockConverse) => {
            via_chat = messages_request_to_chat(forwarded, model)?;
            &via_chat[..]
        }
        _ => forwarded,
    };
    match (route, to) {
        (RouteKind::Embeddings, Dialect::Gemini) => gemini::embeddings_request_to_gemini(forwarded, model),
        (RouteKind::Embeddings, Dialect::BedrockConverse) => bedrock::embeddings_request_to_bedrock(forwarded, model),
        (_, Dialect::Gemini) => gemini::chat_request_to_gemini(chat),
        (_, Dialect::BedrockConverse) => bedrock::chat_request_to_converse_for(chat, model),
        (RouteKind::Messages, Dialect::AnthropicMessages) => Ok(forwarded.to_vec()),
        (RouteKind::Messages, _) => messages_request_to_chat(forwarded, model),
        _ => chat_request_to_messages(forwarded, model),
    }
}

/// How the answer goes back from the deployment's dialect `from` (its model `upstream_model`)
/// into the client's, named `model` as the client asked.
pub(crate) fn answer<'a>(
    route: RouteKind,
    from: Dialect,
    upstream_model: &'a str,
    model: &'a str,
    body: &[u8],
) -> Translate<'a> {
    // An OpenAI client's stream gets the usage chunk only when it asked for it, as from OpenAI.
    let include_usage = route.dialect() == Dialect::OpenAiChat
        && serde_json::from_slice::<serde_json::Value>(body)
            .is_ok_and(|v| v["stream_options"]["include_usage"] == serde_json::Value::Bool(true));
    let base64 = route == RouteKind::Embeddings
        && serde_json::from_slice::<serde_json::Value>(body).is_ok_and(|v| v["encoding_format"] == "base64");
    Translate { route, from, upstream_model, model, include_usage, base64 }
}
