//! Anthropic's error bodies (`{"type":"error","error":{"type","message"},"request_id"}`), the
//! statuses' error types as Anthropic's docs list them, and the bodies made from the fixtures in
//! `tests/fixtures/` by replacing only the parts that name this request (counts, request id).

use crate::anthropic::messages::json_string;
use crate::openrouter::errors::replace_between;

const PROMPT_TOO_LONG: &str = include_str!("../../../tests/fixtures/anthropic_error_400_prompt_too_long.json");
const NOT_FOUND: &str = include_str!("../../../tests/fixtures/anthropic_error_404_not_found.json");
const RATE_LIMIT: &str = include_str!("../../../tests/fixtures/anthropic_error_429_rate_limit.json");
const OVERLOADED: &str = include_str!("../../../tests/fixtures/anthropic_error_529_overloaded.json");
const STREAM_ERROR: &str = include_str!("../../../tests/fixtures/anthropic_messages_stream_error.sse");

/// The context window a `status:400` fault claims when the mock has no `--context-window`.
pub(crate) const DEFAULT_CONTEXT_WINDOW: u64 = 200_000;

/// Anthropic's `error.type` for an HTTP status.
pub(crate) fn error_type(status: u16) -> &'static str {
    match status {
        401 => "authentication_error",
        402 => "billing_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        500..=599 => "api_error",
        _ => "invalid_request_error",
    }
}

/// An error body of the status's type with `message`.
pub(crate) fn error_body(status: u16, message: &str, request_id: u64) -> Vec<u8> {
    format!(
        "{{\"type\":\"error\",\"error\":{{\"type\":\"{}\",\"message\":{}}},\"request_id\":\"req_mock_{request_id}\"}}",
        error_type(status),
        json_string(message)
    )
    .into_bytes()
}

/// 400 `prompt is too long: {tokens} tokens > {maximum} maximum`.
pub(crate) fn prompt_too_long(tokens: u64, maximum: u64, request_id: u64) -> Vec<u8> {
    let text =
        replace_between(PROMPT_TOO_LONG, "prompt is too long: ", "\"", &format!("{tokens} tokens > {maximum} maximum"));
    finish(with_request_id(&text, request_id))
}

/// The body a `status:S` fault answers on Anthropic's routes: the fixtures for 400 (prompt too
/// long, beyond `window` — `prompt_tokens` when it is, else one token more than `window`), 404,
/// 429 and 529; `"mock NAME injected status S"` of the status's type otherwise.
pub(crate) fn fault_body(status: u16, name: &str, prompt_tokens: u64, window: u64, request_id: u64) -> Vec<u8> {
    match status {
        400 => prompt_too_long(prompt_tokens.max(window.saturating_add(1)), window, request_id),
        404 => finish(NOT_FOUND.to_owned()),
        429 => finish(with_request_id(RATE_LIMIT, request_id)),
        529 => finish(with_request_id(OVERLOADED, request_id)),
        _ => error_body(status, &format!("mock {name} injected status {status}"), request_id),
    }
}

/// The `event: error` (overloaded) that ends an interrupted stream: the fixture's last event,
/// `event: error\ndata: {…}\n\n`.
pub(crate) fn stream_error_event() -> &'static str {
    STREAM_ERROR.rfind("event: error").map_or(STREAM_ERROR, |at| &STREAM_ERROR[at..])
}

/// `text` with its `request_id` value replaced by `req_mock_N` (unchanged without one).
fn with_request_id(text: &str, request_id: u64) -> String {
    replace_between(text, "\"request_id\": \"", "\"", &format!("req_mock_{request_id}"))
}

fn finish(text: String) -> Vec<u8> {
    text.trim_end().as_bytes().to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn json(bytes: &[u8]) -> Value {
        serde_json::from_slice(bytes).expect("error body is JSON")
    }

    #[test]
    fn statuses_map_to_the_documented_types() {
        let types: Vec<&str> = [400, 401, 403, 404, 409, 413, 429, 500, 503, 529].map(error_type).to_vec();
        assert_eq!(
            types,
            [
                "invalid_request_error",
                "authentication_error",
                "permission_error",
                "not_found_error",
                "invalid_request_error",
                "request_too_large",
                "rate_limit_error",
                "api_error",
                "api_error",
                "overloaded_error"
            ]
        );
    }

    #[test]
    fn plain_errors_have_anthropic_shape() {
        let body = json(&error_body(400, "max_tokens: Field required", 7));
        assert_eq!(body["type"], "error");
        assert_eq!(body["error"]["type"], "invalid_request_error");
        assert_eq!(body["error"]["message"], "max_tokens: Field required");
        assert_eq!(body["request_id"], "req_mock_7");
        assert_eq!(body.as_object().map(|object| object.len()), Some(3));
    }

    #[test]
    fn prompt_too_long_keeps_the_fixture_but_the_counts_and_id() {
        let body = prompt_too_long(300_001, 1_000, 3);
        let expected = PROMPT_TOO_LONG
            .trim_end()
            .replace("254245 tokens > 200000 maximum", "300001 tokens > 1000 maximum")
            .replace("req_redacted", "req_mock_3");
        assert_eq!(String::from_utf8(body).expect("utf-8"), expected);
    }

    #[test]
    fn fault_bodies_follow_the_fixtures() {
        let too_long = json(&fault_body(400, "m", 10, DEFAULT_CONTEXT_WINDOW, 1));
        assert_eq!(too_long["error"]["type"], "invalid_request_error");
        assert_eq!(too_long["error"]["message"], "prompt is too long: 200001 tokens > 200000 maximum");
        let beyond = json(&fault_body(400, "m", 900, 500, 1));
        assert_eq!(beyond["error"]["message"], "prompt is too long: 900 tokens > 500 maximum");

        assert_eq!(fault_body(404, "m", 0, 1, 2), NOT_FOUND.trim_end().as_bytes());
        let limited = json(&fault_body(429, "m", 0, 1, 4));
        assert_eq!(limited["error"]["type"], "rate_limit_error");
        assert!(limited["error"]["message"].as_str().is_some_and(|m| m.starts_with("This request would exceed")));
        assert_eq!(limited["request_id"], "req_mock_4");
        let overloaded = json(&fault_body(529, "m", 0, 1, 5));
        assert_eq!(overloaded["error"], serde_json::json!({"type": "overloaded_error", "message": "Overloaded"}));
        assert_eq!(overloaded["request_id"], "req_mock_5");
        let internal = json(&fault_body(500, "m1", 0, 1, 6));
        assert_eq!(internal["error"]["type"], "api_error");
        assert_eq!(internal["error"]["message"], "mock m1 injected status 500");
    }

    #[test]
    fn the_stream_error_is_the_fixtures_last_event() {
        let event = stream_error_event();
        assert!(event.starts_with("event: error\ndata: "), "{event:?}");
        assert!(event.ends_with("}\n\n"));
        let data = event.trim_end().strip_prefix("event: error\ndata: ").expect("data line");
        let data: Value = serde_json::from_str(data).expect("JSON");
        assert_eq!(data["type"], "error");
        assert_eq!(data["error"]["type"], "overloaded_error");
    }
}
