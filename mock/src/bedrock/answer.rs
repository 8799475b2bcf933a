//! Amazon Bedrock's runtime as the real service answers it: `POST /model/{modelId}/converse`,
//! `/converse-stream` (an event stream, see [`bedrock_stream`](crate::bedrock::stream)) and
//! `/invoke` (Titan and Cohere embeddings, see [`bedrock_embed`](crate::bedrock::embed)), each
//! SigV4-signed ([`bedrock_auth`](crate::bedrock::auth)). Errors are Bedrock's: a JSON
//! `{"message": …}` with `x-amzn-ErrorType: NAME:http://internal.amazon.com/coral/NAMESPACE/`
//! and `x-amzn-RequestId`.

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::json;

use crate::bedrock::auth::{AuthRefusal, SignedRequest};
use crate::bedrock::converse::ConverseAnswer;
use crate::bedrock::embed::invoke;
use crate::bedrock::request::read_converse;
use crate::bedrock::stream::plan_stream;
use crate::dispatch::call::Call;
use crate::dispatch::plan::Action;
use crate::fault::Fault;
use crate::wire::head::Method;
use crate::wire::response::Head;
use crate::wire::routes::Route;
use crate::wire::target::percent_decode;

pub(crate) const EVENT_STREAM_TYPE: &str = "application/vnd.amazon.eventstream";
/// Where Bedrock's own exceptions live; the front end's (auth) are `com.amazon.coral.service`.
const BEDROCK_NAMESPACE: &str = "com.amazon.bedrock";
const CORAL_NAMESPACE: &str = "com.amazon.coral.service";
pub(crate) const INVALID_MODEL: &str = "The provided model identifier is invalid.";
pub(crate) const TOO_LONG: &str = "Input is too long for requested model.";
const THROTTLED: &str = "Too many requests, please wait before trying again.";
const GUARDRAIL_MESSAGE: &str = "Sorry, the model cannot answer this question.";
/// Picks the exception a cut-off ConverseStream ends with (`abort-after:K`).
pub(crate) const STREAM_EXCEPTION_HEADER: &str = "x-mock-bedrock-exception";

impl Call<'_> {
    /// `x-amzn-RequestId` (from the request's number).
    fn aws_request_id(&self) -> String {
        format!("00000000-0000-4000-8000-{:012x}", self.number)
    }

    /// Appends a JSON response with Bedrock's headers; returns the head's length.
    pub(crate) fn bedrock_write(&self, out: &mut Vec<u8>, status: u16, body: &[u8], extra: &str) -> usize {
        let extra = format!("x-amzn-RequestId: {}\r\n{extra}", self.aws_request_id());
        Head { extra: &extra, ..Head::json(status, &self.shared.name, self.close) }.write_with_body(out, body)
    }

    /// A Bedrock exception: `{"message": …}` and `x-amzn-ErrorType`.
    pub(crate) fn bedrock_error(&self, out: &mut Vec<u8>, status: u16, kind: &str, message: &str) -> usize {
        let namespace = if is_front_end(kind) { CORAL_NAMESPACE } else { BEDROCK_NAMESPACE };
        let extra = format!("x-amzn-ErrorType: {kind}:http://internal.amazon.com/coral/{namespace}/\r\n");
        self.bedrock_write(out, status, json!({ "message": message }).to_string().as_bytes(), &extra)
    }

    fn bedrock_refusal(&self, out: &mut Vec<u8>, refusal: &AuthRefusal) {
        let mut extra =
            format!("x-amzn-ErrorType: {}:http://internal.amazon.com/coral/{CORAL_NAMESPACE}/\r\n", refusal.kind);
        if let Some(canonical) = &refusal.canonical_request {
            extra.push_str(&format!("x-mock-canonical-request: {}\r\n", canonical.replace('\n', "\\n")));
        }
        let body = json!({ "message": refusal.message }).to_string();
        self.bedrock_write(out, 403, body.as_bytes(), &extra);
    }
}

/// The exceptions Bedrock's front end answers before the service sees the request.
fn is_front_end(kind: &str) -> bool {
    matches!(
        kind,
        "MissingAuthenticationTokenException"
            | "IncompleteSignatureException"
            | "InvalidSignatureException"
            | "UnrecognizedClientException"
            | "UnknownOperationException"
    )
}

/// Answers a request to a Bedrock route: the signature, the operation, the model (with
/// `--bedrock-models`), then `fault` or the answer.
pub(crate) fn answer(call: &Call<'_>, fault: impl FnOnce() -> Option<Fault>, out: &mut Vec<u8>) -> Action {
    let close = call.close;
    let method = match call.method {
        Method::Get => "GET",
        Method::Post => "POST",
        Method::Delete => "DELETE",
        Method::Other => "OTHER",
    };
    let signed =
        SignedRequest { method, path: call.path(), query: call.query(), head: call.head_bytes, body: call.body };
    if let Err(refusal) = call.shared.aws.check(&signed, unix_seconds()) {
        call.bedrock_refusal(out, &refusal);
        return Action::Send { close };
    }
    if call.route == Route::BedrockOther || call.method != Method::Post {
        call.bedrock_error(out, 404, "UnknownOperationException", "Unknown operation");
        return Action::Send { close };
    }
    let encoded = call.path().strip_prefix("/model/").and_then(|rest| rest.split('/').next()).unwrap_or_default();
    let model = percent_decode(encoded);
    if call.shared.bedrock_models.as_ref().is_some_and(|models| !models.contains(&model)) {
        call.bedrock_error(out, 400, "ValidationException", INVALID_MODEL);
        return Action::Send { close };
    }
    let abort_after = match fault() {
        None => None,
        Some(Fault::Status { status, retry_after }) => {
            status_fault(call, out, status, retry_after);
            return Action::Send { close };
        }
        Some(Fault::Reset) => return Action::Reset,
        Some(Fault::Hang) => return Action::Hang,
        Some(Fault::AbortAfter { chunks }) => Some(chunks),
        Some(Fault::ContentFilter { .. }) => return converse(call, out, None, true),
    };
    let action = match call.route {
        Route::BedrockInvoke => {
            invoke(call, &model, out);
            Action::Send { close }
        }
        _ => converse(call, out, abort_after, false),
    };
    match (action, abort_after) {
        (Action::Send { .. }, Some(_)) => {
            let head_len = out.windows(4).position(|window| window == b"\r\n\r\n").map_or(0, |at| at + 4);
            Action::SendPartThenClose { len: head_len + (out.len() - head_len) / 2 }
        }
        (action, _) => action,
    }
}

/// Converse and ConverseStream: checked, then the answer (or, for the `--refuse` word or a
/// `content_filter` fault, the refusal: `guardrail_intervened` when the request names a
/// guardrail, else `content_filtered` without content).
fn converse(call: &Call<'_>, out: &mut Vec<u8>, abort_after: Option<u32>, filtered: bool) -> Action {
    let close = call.close;
    let parsed = match read_converse(call.body) {
        Ok(parsed) => parsed,
        Err(message) => {
            call.bedrock_error(out, 400, "ValidationException", &message);
            return Action::Send { close };
        }
    };
    if call.beyond_window().is_some() {
        call.bedrock_error(out, 400, "ValidationException", TOO_LONG);
        return Action::Send { close };
    }
    let input_tokens = (call.body.len() / 4) as u64;
    let latency_ms = call.latency.as_millis() as u64;
    let answer = if filtered || call.refused() {
        let (text, stop_reason) =
            if parsed.guardrail { (GUARDRAIL_MESSAGE, "guardrail_intervened") } else { ("", "content_filtered") };
        let output_tokens = Call::answer_tokens(text);
        ConverseAnswer {
            number: call.number,
            text: text.to_owned(),
            tool: None,
            stop_reason,
            input_tokens,
            output_tokens,
            latency_ms,
        }
    } else {
        let text = call.text().to_owned();
        let tool_bytes = parsed.tool.as_ref().map_or(0, |tool| tool.name.len() + tool.input.len());
        let output_tokens = (text.len() + tool_bytes).div_ceil(4) as u64;
        let stop_reason = if parsed.tool.is_some() { "tool_use" } else { "end_turn" };
        ConverseAnswer {
            number: call.number,
            text,
            tool: parsed.tool,
            stop_reason,
            input_tokens,
            output_tokens,
            latency_ms,
        }
    };
    if call.route != Route::BedrockConverseStream {
        call.bedrock_write(out, 200, &answer.body(), "");
        return Action::Send { close };
    }
    let extra = format!("x-amzn-RequestId: {}\r\n", call.aws_request_id());
    let mut head = Vec::new();
    Head { content_type: EVENT_STREAM_TYPE, extra: &extra, ..Head::json(200, &call.shared.name, close) }
        .write_chunked(&mut head);
    let exception = call.header(STREAM_EXCEPTION_HEADER).unwrap_or_default();
    Action::Chunked(plan_stream(&answer, head, call.chunks, call.chunk_delay, abort_after, exception, close))
}

/// A `status:S` fault in Bedrock's shape: the exception Bedrock answers with that status.
fn status_fault(call: &Call<'_>, out: &mut Vec<u8>, status: u16, retry_after: Option<u32>) {
    let name = &call.shared.name;
    let injected = format!("mock {name} injected status {status}");
    let (kind, message) = match status {
        400 => ("ValidationException", TOO_LONG),
        403 => ("AccessDeniedException", "You don't have access to the model with the specified model ID."),
        404 => {
            ("ResourceNotFoundException", "Could not resolve the foundation model from the provided model identifier.")
        }
        408 => ("ModelTimeoutException", "Model has timed out in processing the request. Try your request again."),
        424 => ("ModelErrorException", "The model returned an error. Try your request again."),
        429 => ("ThrottlingException", THROTTLED),
        500 => (
            "InternalServerException",
            "The system encountered an unexpected error during processing. Try your request again.",
        ),
        503 => ("ServiceUnavailableException", "Bedrock is unable to process your request."),
        501..=599 => ("InternalServerException", injected.as_str()),
        _ => ("ValidationException", injected.as_str()),
    };
    let mut extra = format!("x-amzn-ErrorType: {kind}:http://internal.amazon.com/coral/{BEDROCK_NAMESPACE}/\r\n");
    if let Some(seconds) = retry_after {
        extra.push_str(&format!("retry-after: {seconds}\r\n"));
    }
    call.bedrock_write(out, status, json!({ "message": message }).to_string().as_bytes(), &extra);
}

fn unix_seconds() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |since| since.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anthropic::messages::ToolCall;
    use serde_json::Value;

    #[test]
    fn the_whole_answer_has_converses_shape() {
        let tool = ToolCall { name: "get_weather".into(), input: r#"{"city":"mock"}"#.into() };
        let answer = ConverseAnswer {
            number: 3,
            text: "hi".into(),
            tool: Some(tool),
            stop_reason: "tool_use",
            input_tokens: 7,
            output_tokens: 2,
            latency_ms: 12,
        };
        let body: Value = serde_json::from_slice(&answer.body()).expect("JSON");
        assert_eq!(
            body,
            json!({
                "output": {"message": {"role": "assistant", "content": [
                    {"text": "hi"},
                    {"toolUse": {"toolUseId": "tooluse_mock_3", "name": "get_weather", "input": {"city": "mock"}}},
                ]}},
                "stopReason": "tool_use",
                "usage": {"inputTokens": 7, "outputTokens": 2, "totalTokens": 9},
                "metrics": {"latencyMs": 12},
            })
        );
        assert!(is_front_end("UnrecognizedClientException") && !is_front_end("ThrottlingException"));
    }
}
