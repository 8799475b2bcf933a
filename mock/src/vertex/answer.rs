//! Vertex AI as Google answers it: `POST /v1/projects/{p}/locations/{l}/publishers/google/models/{m}:generateContent`
//! and `:streamGenerateContent` (the Gemini API's bodies and answers, see [`gemini`](crate::gemini::answer)),
//! and Claude on Vertex, `…/publishers/anthropic/models/{m}:rawPredict` and `:streamRawPredict`
//! (Anthropic's Messages body with `"anthropic_version": "vertex-2023-10-16"` instead of `model`,
//! answered by the Anthropic mock). Every request carries `Authorization: Bearer TOKEN`, a token
//! from the mock's Google token endpoint ([`google_token`](crate::vertex::token)).

use serde_json::{json, Value};

use crate::anthropic::exchange::{Answered, Exchange, Pacing};
use crate::dispatch::call::Call;
use crate::dispatch::plan::Action;
use crate::fault::Fault;
use crate::gemini::answer::{error_info, generate, status_fault, Front};
use crate::vertex::token::TokenState;
use crate::wire::head::Method;
use crate::wire::routes::{vertex_path, Route};
use crate::wire::target::percent_decode;

const ANTHROPIC_VERSION: &str = "vertex-2023-10-16";
const SERVICE: &str = "aiplatform.googleapis.com";
const MISSING_CREDENTIALS: &str = "Request is missing required authentication credential. Expected OAuth 2 access \
                                   token, login cookie or other valid authentication credential. See \
                                   https://developers.google.com/identity/sign-in/web/devconsole-project.";
const INVALID_CREDENTIALS: &str = "Request had invalid authentication credentials. Expected OAuth 2 access token, \
                                   login cookie or other valid authentication credential. See \
                                   https://developers.google.com/identity/sign-in/web/devconsole-project.";

/// Answers a request to a Vertex AI route: the token, the path and project, then `fault` or
/// the answer.
pub(crate) fn answer(call: &Call<'_>, fault: impl FnOnce() -> Option<Fault>, out: &mut Vec<u8>) -> Action {
    let close = call.close;
    let token = call
        .header("authorization")
        .and_then(|value| value.strip_prefix("Bearer ").or_else(|| value.strip_prefix("bearer ")).map(str::trim));
    let refusal = match token.map(|token| call.shared.google.check(token)) {
        None => Some((401, MISSING_CREDENTIALS, "CREDENTIALS_MISSING")),
        Some(TokenState::Unknown) => Some((401, INVALID_CREDENTIALS, "ACCESS_TOKEN_TYPE_UNSUPPORTED")),
        Some(TokenState::Expired) => Some((401, INVALID_CREDENTIALS, "ACCESS_TOKEN_EXPIRED")),
        Some(TokenState::NarrowScope) => {
            Some((403, "Request had insufficient authentication scopes.", "ACCESS_TOKEN_SCOPE_INSUFFICIENT"))
        }
        Some(TokenState::Valid) => None,
    };
    if let Some((code, message, reason)) = refusal {
        call.google_error(out, code, message, Some(json!([error_info(reason, SERVICE)])));
        return Action::Send { close };
    }
    let parts = vertex_path(call.path());
    let (Some(parts), false) = (parts, call.route == Route::VertexOther || call.method != Method::Post) else {
        call.google_error(out, 404, "Method not found.", None);
        return Action::Send { close };
    };
    if call.shared.vertex_project.as_deref().is_some_and(|project| project != parts.project) {
        let message = format!(
            "Permission 'aiplatform.endpoints.predict' denied on resource '//aiplatform.googleapis.com/projects/{}/\
             locations/{}/publishers/{}/models/{}' (or it may not exist).",
            parts.project, parts.location, parts.publisher, parts.model
        );
        call.google_error(out, 403, &message, Some(json!([error_info("IAM_PERMISSION_DENIED", SERVICE)])));
        return Action::Send { close };
    }
    let model = percent_decode(parts.model);
    if matches!(call.route, Route::VertexRawPredict | Route::VertexStreamRawPredict) {
        return raw_predict(call, &model, fault, out);
    }
    match fault() {
        None => generate(call, &model, None, false, out),
        Some(Fault::Status { status, retry_after }) => {
            status_fault(call, Front::Vertex, out, status, retry_after);
            Action::Send { close }
        }
        Some(Fault::Reset) => Action::Reset,
        Some(Fault::Hang) => Action::Hang,
        Some(Fault::AbortAfter { chunks }) => generate(call, &model, Some(chunks), false, out),
        Some(Fault::ContentFilter { .. }) => generate(call, &model, None, true, out),
    }
}

/// Claude on Vertex: `anthropic_version` checked, then the body (with the path's model) answered
/// as `/v1/messages` answers it; `:streamRawPredict` always streams. Errors and faults are
/// Anthropic's, as Vertex relays them.
fn raw_predict(call: &Call<'_>, model: &str, fault: impl FnOnce() -> Option<Fault>, out: &mut Vec<u8>) -> Action {
    let close = call.close;
    let exchange = |body| Exchange { shared: call.shared, body, number: call.number, close };
    let mut body: Value = match serde_json::from_slice(call.body) {
        Ok(Value::Object(body)) => Value::Object(body),
        _ => {
            exchange(call.body).error(out, 400, "invalid request body: expected a JSON object");
            return Action::Send { close };
        }
    };
    match body.get("anthropic_version").and_then(Value::as_str) {
        Some(ANTHROPIC_VERSION) => {}
        None => {
            exchange(call.body).error(out, 400, "anthropic_version: Field required");
            return Action::Send { close };
        }
        Some(_) => {
            exchange(call.body).error(out, 400, &format!("anthropic_version: Input should be '{ANTHROPIC_VERSION}'"));
            return Action::Send { close };
        }
    }
    if let Some(object) = body.as_object_mut() {
        object.remove("anthropic_version");
        object.entry("model").or_insert_with(|| json!(model));
        if call.route == Route::VertexStreamRawPredict {
            object.insert("stream".to_owned(), json!(true));
        }
    }
    let rewritten = body.to_string().into_bytes();
    let exchange = exchange(&rewritten);
    let abort_after = match fault() {
        None => None,
        Some(Fault::Status { status, retry_after }) => {
            exchange.fault(out, status, retry_after);
            return Action::Send { close };
        }
        Some(Fault::Reset) => return Action::Reset,
        Some(Fault::Hang) => return Action::Hang,
        Some(Fault::AbortAfter { chunks }) => Some(chunks),
        Some(Fault::ContentFilter { .. }) => {
            let message = format!("mock {}: the request was blocked by a content filter", call.shared.name);
            exchange.error(out, 400, &message);
            return Action::Send { close };
        }
    };
    let pacing = Pacing { chunks: call.chunks, chunk_delay: call.chunk_delay, abort_after };
    match exchange.messages(out, pacing, call.reply) {
        Answered::Stream(stream) => Action::AnthropicStream(stream),
        Answered::Written { head_len } => match abort_after {
            None => Action::Send { close },
            Some(_) => Action::SendPartThenClose { len: head_len + (out.len() - head_len) / 2 },
        },
    }
}
