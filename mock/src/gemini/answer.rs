//! The Gemini API (Google AI Studio) as Google answers it: `POST /v1beta/models/{model}:generateContent`,
//! `:streamGenerateContent` (server-sent events with `?alt=sse`, else a streamed JSON array, see
//! [`gemini_stream`](crate::gemini::stream)), `:embedContent`, `:batchEmbedContents` and
//! `:countTokens`, each with an API key (`x-goog-api-key` or `?key=`). Answers and errors are
//! Google's (`{"error":{"code","message","status"}}`); Vertex AI's Gemini routes
//! ([`vertex`](crate::vertex::answer)) answer through the same code.

use serde_json::{json, Value};

use crate::dispatch::call::{embedding_vector, Call};
use crate::dispatch::plan::Action;
use crate::fault::Fault;
use crate::gemini::content::GeminiAnswer;
use crate::gemini::request::{read_contents, read_generate};
use crate::gemini::stream::plan_stream;
use crate::wire::head::Method;
use crate::wire::response::Head;
use crate::wire::routes::Route;
use crate::wire::target::{percent_decode, query_value};

const NO_KEY: &str = "Method doesn't allow unregistered callers (callers without established identity). Please use \
                      API Key or other form of API consumer identity to call this API.";
const BAD_KEY: &str = "API key not valid. Please pass a valid API key.";
/// The window a `status:400` fault claims without `--context-window` (Gemini's 1M).
const DEFAULT_WINDOW: u64 = 1_048_576;
const DEFAULT_DIMENSIONS: usize = 768;

/// Which Google front a request came through: Vertex AI words some errors its own way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Front {
    Gemini,
    Vertex,
}

/// `google.rpc.Code`'s name for an HTTP status, as Google's JSON errors carry it.
pub(crate) fn status_name(code: u16) -> &'static str {
    match code {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        409 => "ABORTED",
        429 => "RESOURCE_EXHAUSTED",
        499 => "CANCELLED",
        501 => "NOT_IMPLEMENTED",
        503 => "UNAVAILABLE",
        504 => "DEADLINE_EXCEEDED",
        500..=599 => "INTERNAL",
        _ => "FAILED_PRECONDITION",
    }
}

/// `{"error":{"code","message","status"[,"details"]}}`.
pub(crate) fn google_error_body(code: u16, message: &str, details: Option<Value>) -> Vec<u8> {
    let mut error = json!({"code": code, "message": message, "status": status_name(code)});
    if let Some(details) = details {
        error["details"] = details;
    }
    json!({ "error": error }).to_string().into_bytes()
}

/// An `ErrorInfo` detail.
pub(crate) fn error_info(reason: &str, service: &str) -> Value {
    json!({"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason, "domain": "googleapis.com",
           "metadata": {"service": service}})
}

impl Call<'_> {
    pub(crate) fn google_write(&self, out: &mut Vec<u8>, status: u16, body: &[u8]) -> usize {
        Head::json(status, &self.shared.name, self.close).write_with_body(out, body)
    }

    pub(crate) fn google_error(&self, out: &mut Vec<u8>, code: u16, message: &str, details: Option<Value>) -> usize {
        self.google_write(out, code, &google_error_body(code, message, details))
    }
}

/// Answers a request to a Gemini API route: the key, the method, then `fault` or the answer.
pub(crate) fn answer(call: &Call<'_>, fault: impl FnOnce() -> Option<Fault>, out: &mut Vec<u8>) -> Action {
    let close = call.close;
    let header_key = call.header("x-goog-api-key").map(str::to_owned);
    match header_key.or_else(|| query_value(call.query(), "key")) {
        None => {
            call.google_error(out, 403, NO_KEY, None);
            return Action::Send { close };
        }
        Some(key) if key.is_empty() || call.shared.gemini_api_key.as_ref().is_some_and(|expected| *expected != key) => {
            let service = "generativelanguage.googleapis.com";
            let details = json!([
                error_info("API_KEY_INVALID", service),
                {"@type": "type.googleapis.com/google.rpc.LocalizedMessage", "locale": "en-US", "message": BAD_KEY},
            ]);
            call.google_error(out, 400, BAD_KEY, Some(details));
            return Action::Send { close };
        }
        Some(_) => {}
    }
    let target = call.path().strip_prefix("/v1beta/models/").or_else(|| call.path().strip_prefix("/v1/models/"));
    let (model, method) = target.and_then(|target| target.split_once(':')).unwrap_or_default();
    let model = percent_decode(model);
    if call.route == Route::GeminiOther || call.method != Method::Post {
        let version = if call.path().starts_with("/v1beta/") { "v1beta" } else { "v1" };
        let message = format!(
            "models/{model} is not found for API version {version}, or is not supported for {method}. Call \
             ListModels to see the list of available models and their supported methods."
        );
        call.google_error(out, 404, &message, None);
        return Action::Send { close };
    }
    let (abort_after, filtered) = match fault() {
        None => (None, false),
        Some(Fault::Status { status, retry_after }) => {
            status_fault(call, Front::Gemini, out, status, retry_after);
            return Action::Send { close };
        }
        Some(Fault::Reset) => return Action::Reset,
        Some(Fault::Hang) => return Action::Hang,
        Some(Fault::AbortAfter { chunks }) => (Some(chunks), false),
        Some(Fault::ContentFilter { .. }) => (None, true),
    };
    let action = match call.route {
        Route::GeminiGenerateContent | Route::GeminiStreamGenerateContent => {
            return generate(call, &model, abort_after, filtered, out)
        }
        Route::GeminiEmbedContent | Route::GeminiBatchEmbedContents => embed(call, &model, out),
        _ => count_tokens(call, out),
    };
    cut(action, abort_after, out, close)
}

/// `abort-after` on a whole answer: half the body, then a close.
fn cut(head_len: usize, abort_after: Option<u32>, out: &[u8], close: bool) -> Action {
    match abort_after {
        None => Action::Send { close },
        Some(_) => Action::SendPartThenClose { len: head_len + (out.len() - head_len) / 2 },
    }
}

/// generateContent and streamGenerateContent (Gemini's and Vertex AI's): checked, then the
/// answer, a block for the `--refuse` word (or a `content_filter` fault), or the stream.
pub(crate) fn generate(
    call: &Call<'_>,
    model: &str,
    abort_after: Option<u32>,
    filtered: bool,
    out: &mut Vec<u8>,
) -> Action {
    let close = call.close;
    let parsed = match read_generate(call.body) {
        Ok(parsed) => parsed,
        Err(message) => {
            call.google_error(out, 400, &message, None);
            return Action::Send { close };
        }
    };
    if let Some((tokens, window)) = call.beyond_window() {
        call.google_error(out, 400, &too_long(tokens, window), None);
        return Action::Send { close };
    }
    let blocked = filtered || call.refused();
    let text = if blocked { String::new() } else { call.text().to_owned() };
    let function = if blocked { None } else { parsed.function };
    let function_bytes = function.as_ref().map_or(0, |function| function.name.len() + function.input.len());
    let answer = GeminiAnswer {
        number: call.number,
        model: model.to_owned(),
        candidates_tokens: (text.len() + function_bytes).div_ceil(4) as u64,
        text,
        function,
        blocked,
        prompt_tokens: (call.body.len() / 4) as u64,
    };
    let streamed = matches!(call.route, Route::GeminiStreamGenerateContent | Route::VertexStreamGenerateContent);
    if !streamed {
        let head_len = call.google_write(out, 200, answer.whole().to_string().as_bytes());
        return cut(head_len, abort_after, out, close);
    }
    let sse = query_value(call.query(), "alt").as_deref() == Some("sse");
    Action::Chunked(plan_stream(&answer, call, sse, abort_after))
}

/// Gemini's context-window sentence.
fn too_long(tokens: u64, window: u64) -> String {
    format!("The input token count ({tokens}) exceeds the maximum number of tokens allowed ({window}).")
}

/// A `status:S` fault in Google's shape.
pub(crate) fn status_fault(call: &Call<'_>, front: Front, out: &mut Vec<u8>, status: u16, retry_after: Option<u32>) {
    let name = &call.shared.name;
    let (message, details) = match (status, front) {
        (400, _) => {
            let window = call.shared.context_window.unwrap_or(DEFAULT_WINDOW);
            (too_long(call.prompt_tokens().max(window + 1), window), None)
        }
        (429, Front::Gemini) => (
            "You exceeded your current quota, please check your plan and billing details. For more information on \
             this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits."
                .to_owned(),
            Some(json!([{"@type": "type.googleapis.com/google.rpc.RetryInfo",
                         "retryDelay": format!("{}s", retry_after.unwrap_or(1))}])),
        ),
        (429, Front::Vertex) => (
            "Resource exhausted. Please try again later. Please refer to \
             https://cloud.google.com/vertex-ai/generative-ai/docs/error-code-429 for more details."
                .to_owned(),
            None,
        ),
        (500, _) => (
            "An internal error has occurred. Please retry or report in \
             https://developers.generativeai.google/guide/troubleshooting"
                .to_owned(),
            None,
        ),
        (503, _) => ("The model is overloaded. Please try again later.".to_owned(), None),
        (504, _) => ("Deadline expired before operation could complete.".to_owned(), None),
        _ => (format!("mock {name} injected status {status}"), None),
    };
    let extra = retry_after.map(|seconds| format!("retry-after: {seconds}\r\n")).unwrap_or_default();
    let head = Head { extra: &extra, ..Head::json(status, name, call.close) };
    head.write_with_body(out, &google_error_body(status, &message, details));
}

/// embedContent (`{"embedding":{"values"}}`) and batchEmbedContents (`{"embeddings":[…]}`),
/// `outputDimensionality` floats each (768 by default).
fn embed(call: &Call<'_>, model: &str, out: &mut Vec<u8>) -> usize {
    let body: Value = match serde_json::from_slice(call.body) {
        Ok(body) => body,
        Err(_) => return call.google_error(out, 400, "Invalid JSON payload received. Unexpected token.", None),
    };
    let dimensions = |request: &Value| {
        request.get("outputDimensionality").and_then(Value::as_u64).map_or(DEFAULT_DIMENSIONS, |n| n as usize)
    };
    let content_ok = |request: &Value| {
        request
            .get("content")
            .and_then(|content| content.get("parts"))
            .and_then(Value::as_array)
            .is_some_and(|p| !p.is_empty())
    };
    if call.route == Route::GeminiEmbedContent {
        if !content_ok(&body) {
            return call.google_error(out, 400, "* EmbedContentRequest.content: content is not specified\n", None);
        }
        let answer = json!({"embedding": {"values": embedding_vector(0, dimensions(&body))}});
        return call.google_write(out, 200, answer.to_string().as_bytes());
    }
    let Some(requests) = body.get("requests").and_then(Value::as_array).filter(|requests| !requests.is_empty()) else {
        return call.google_error(out, 400, "* BatchEmbedContentsRequest.requests: requests is not specified\n", None);
    };
    let mut embeddings = Vec::with_capacity(requests.len());
    for (index, request) in requests.iter().enumerate() {
        let named = request.get("model").and_then(Value::as_str);
        if named.is_some_and(|named| named != format!("models/{model}")) {
            let message = format!(
                "* BatchEmbedContentsRequest.requests[{index}].model: Model names should match the model in the URL.\n"
            );
            return call.google_error(out, 400, &message, None);
        }
        if !content_ok(request) {
            let message = format!("* BatchEmbedContentsRequest.requests[{index}].content: content is not specified\n");
            return call.google_error(out, 400, &message, None);
        }
        embeddings.push(json!({"values": embedding_vector(index, dimensions(request))}));
    }
    call.google_write(out, 200, json!({ "embeddings": embeddings }).to_string().as_bytes())
}

/// countTokens: `{"totalTokens": body bytes / 4}` for `contents` or a `generateContentRequest`.
fn count_tokens(call: &Call<'_>, out: &mut Vec<u8>) -> usize {
    let body: Value = serde_json::from_slice(call.body).unwrap_or(Value::Null);
    let contents = body.get("contents").or_else(|| body.pointer("/generateContentRequest/contents"));
    if let Err(message) = read_contents(contents, "CountTokensRequest") {
        return call.google_error(out, 400, &message, None);
    }
    let tokens = call.body.len() / 4;
    let answer = json!({"totalTokens": tokens, "promptTokensDetails": [{"modality": "TEXT", "tokenCount": tokens}]});
    call.google_write(out, 200, answer.to_string().as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anthropic::messages::ToolCall;

    fn answer(function: Option<ToolCall>, blocked: bool) -> GeminiAnswer {
        GeminiAnswer {
            number: 2,
            model: "gemini-2.0-flash".into(),
            text: if blocked { String::new() } else { "Hello from mock g".into() },
            function,
            blocked,
            prompt_tokens: 10,
            candidates_tokens: 5,
        }
    }

    #[test]
    fn whole_answers_and_blocks_have_googles_shape() {
        let tool = ToolCall { name: "get_weather".into(), input: r#"{"city":"mock"}"#.into() };
        let whole = answer(Some(tool), false).whole();
        assert_eq!(
            whole["candidates"][0],
            json!({"content": {"parts": [{"text": "Hello from mock g"}, {"functionCall": {"name": "get_weather", "args": {"city": "mock"}}}],
                   "role": "model"}, "finishReason": "STOP", "index": 0})
        );
        assert_eq!(whole["usageMetadata"]["totalTokenCount"], 15);
        assert_eq!(
            (whole["modelVersion"].as_str(), whole["responseId"].as_str()),
            (Some("gemini-2.0-flash"), Some("mock-2"))
        );
        let blocked = answer(None, true).whole();
        assert!(blocked.get("candidates").is_none());
        assert_eq!(blocked["promptFeedback"]["blockReason"], "SAFETY");
        assert_eq!(blocked["usageMetadata"]["totalTokenCount"], 10);
    }

    #[test]
    fn errors_carry_the_rpc_status() {
        let body: Value = serde_json::from_slice(&google_error_body(429, "slow", None)).expect("JSON");
        assert_eq!(body, json!({"error": {"code": 429, "message": "slow", "status": "RESOURCE_EXHAUSTED"}}));
        assert_eq!(
            [400, 401, 403, 404, 500, 503, 504].map(status_name),
            [
                "INVALID_ARGUMENT",
                "UNAUTHENTICATED",
                "PERMISSION_DENIED",
                "NOT_FOUND",
                "INTERNAL",
                "UNAVAILABLE",
                "DEADLINE_EXCEEDED"
            ]
        );
        assert_eq!(too_long(9, 8), "The input token count (9) exceeds the maximum number of tokens allowed (8).");
    }
}
