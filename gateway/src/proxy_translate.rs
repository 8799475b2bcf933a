//! An attempt whose deployment speaks the other dialect than the client's API (a Messages
//! request to an OpenAI-compatible provider, a chat request to Anthropic): the request body
//! translated (`crate::dialect`), and how the answer is to be translated back.

use pointwork_core::{Dialect, RouteKind};

use crate::dialect::{chat_request_to_messages, messages_request_to_chat};
use crate::errors::openai_error;
use crate::facts::Extracted;
use crate::http::write;
use crate::proxy::UpstreamHead;
use crate::respond::Reply;
use crate::upstream::exchange::Translate;

/// The upstream request: `head`, then the body as it would be forwarded (model spliced, the
/// gateway's own members cut) translated into the provider's dialect — or the 400 naming the
/// field that cannot be translated.
pub(crate) fn request(
    route: RouteKind,
    head: UpstreamHead<'_>,
    body: &[u8],
    extracted: &Extracted,
    model_json: &[u8],
) -> Result<Vec<u8>, Reply> {
    let mut forwarded = Vec::with_capacity(extracted.forwarded_len(body, model_json));
    extracted.append_forwarded(&mut forwarded, body, model_json);
    let upstream_model: String = serde_json::from_slice(model_json).unwrap_or_default();
    let translated = match route.dialect() {
        Dialect::AnthropicMessages => messages_request_to_chat(&forwarded, &upstream_model),
        _ => chat_request_to_messages(&forwarded, &upstream_model),
    };
    let translated = translated.map_err(|u| Reply::json(400, openai_error(400, &u.to_string(), Some(&u.field))))?;
    let mut out = Vec::with_capacity(head.len() + 32 + translated.len());
    head.write_to(&mut out);
    write::header_decimal(&mut out, "content-length", translated.len() as u64);
    write::end_head(&mut out);
    out.extend_from_slice(&translated);
    Ok(out)
}

/// How the answer goes back: into the client's dialect, named `model` as the client asked.
pub(crate) fn answer<'a>(route: RouteKind, model: &'a str, body: &[u8]) -> Translate<'a> {
    // An OpenAI client's stream gets the usage chunk only when it asked for it, as from OpenAI.
    let include_usage = route.dialect() == Dialect::OpenAiChat
        && serde_json::from_slice::<serde_json::Value>(body)
            .is_ok_and(|v| v["stream_options"]["include_usage"] == serde_json::Value::Bool(true));
    Translate { to: route.dialect(), model, include_usage }
}
