//! Error bodies between the two shapes: OpenAI `{"error":{"message","type","param","code"}}` and
//! Anthropic `{"type":"error","error":{"type","message"}}`.
//!
//! The message is always kept. Context-window errors keep their meaning across: OpenAI's
//! `context_length_exceeded` becomes an Anthropic message starting `prompt is too long: ` (what
//! Anthropic says, and what Claude Code watches for), Anthropic's `prompt is too long` becomes
//! OpenAI's `code: context_length_exceeded`, `param: messages`.

use serde_json::{json, Value};

/// The OpenAI `type` for a status Pointwork itself answers with.
pub fn openai_error_type(status: u16) -> &'static str {
    match status {
        400 | 411 | 413 | 414 | 431 => "invalid_request_error",
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        405 => "invalid_request_error",
        408 | 504 => "timeout",
        429 => "rate_limit_error",
        502 => "upstream_error",
        _ => "api_error",
    }
}

/// Anthropic's error `type` for an HTTP status.
pub fn anthropic_error_type(status: u16) -> &'static str {
    match status {
        401 => "authentication_error",
        402 => "billing_error",
        403 => "permission_error",
        404 => "not_found_error",
        409 => "conflict_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        504 => "timeout_error",
        529 => "overloaded_error",
        500..=599 => "api_error",
        // Anthropic uses invalid_request_error for every other 4xx (and we for anything odd).
        _ => "invalid_request_error",
    }
}

/// An Anthropic-shaped error body.
pub fn anthropic_error(status: u16, message: &str) -> Vec<u8> {
    typed_anthropic_error(anthropic_error_type(status), message)
}

fn typed_anthropic_error(kind: &str, message: &str) -> Vec<u8> {
    json!({"type": "error", "error": {"type": kind, "message": message}}).to_string().into_bytes()
}

/// An Anthropic stream `error` event: `event: error\ndata: {…}\n\n`.
pub fn anthropic_stream_error(status: u16, message: &str) -> Vec<u8> {
    let mut out = Vec::new();
    push_anthropic_stream_error(&mut out, anthropic_error_type(status), message);
    out
}

pub(crate) fn push_anthropic_stream_error(out: &mut Vec<u8>, kind: &str, message: &str) {
    out.extend_from_slice(b"event: error\ndata: ");
    out.extend_from_slice(&typed_anthropic_error(kind, message));
    out.extend_from_slice(b"\n\n");
}

/// An OpenAI stream error chunk: `data: {"error":{…}}\n\n` (what OpenAI sends mid-stream).
pub(crate) fn push_openai_stream_error(out: &mut Vec<u8>, kind: &str, message: &str, code: Option<&str>) {
    out.extend_from_slice(b"data: ");
    out.extend_from_slice(&openai_body(kind, message, None, code));
    out.extend_from_slice(b"\n\n");
}

fn openai_body(kind: &str, message: &str, param: Option<&str>, code: Option<&str>) -> Vec<u8> {
    json!({"error": {"message": message, "type": kind, "param": param, "code": code}}).to_string().into_bytes()
}

/// What an error body says, whichever shape it has.
pub(crate) struct ErrorFacts {
    /// Anthropic's `error.type`, when the body is Anthropic-shaped.
    pub anthropic_type: Option<String>,
    /// OpenAI's `error.code` (a string or a number), when present.
    pub code: Option<String>,
    pub message: String,
}

const CONTEXT_CODE: &str = "context_length_exceeded";
const PROMPT_TOO_LONG: &str = "prompt is too long";
/// Gemini's context-window error: "The input token count (…) exceeds the maximum number of tokens
/// allowed (…)."
const GEMINI_TOO_LONG: &str = "The input token count";
const GEMINI_TOO_LONG_END: &str = "exceeds the maximum number of tokens allowed";

impl ErrorFacts {
    pub(crate) fn read(status: u16, body: &[u8]) -> ErrorFacts {
        let v = serde_json::from_slice::<Value>(body).unwrap_or(Value::Null);
        ErrorFacts::from_value(status, &v, body)
    }

    pub(crate) fn from_value(status: u16, v: &Value, raw: &[u8]) -> ErrorFacts {
        let error = v.get("error");
        let anthropic_type = (v.get("type").and_then(Value::as_str) == Some("error"))
            .then(|| error.and_then(|e| e.get("type")).and_then(Value::as_str).map(str::to_string))
            .flatten();
        let code = error.and_then(|e| e.get("code")).and_then(|c| match c {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        });
        // `Message`: AWS's IAM and gateway errors (Bedrock's own use `message`).
        let message = [
            error.and_then(|e| e.get("message")),
            error.filter(|e| e.is_string()),
            v.get("message"),
            v.get("Message"),
            v.get("detail"),
        ]
        .into_iter()
        .flatten()
        .find_map(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| raw_text(status, raw));
        ErrorFacts { anthropic_type, code, message }
    }

    fn is_context_window(&self) -> bool {
        self.code.as_deref() == Some(CONTEXT_CODE)
            || self.message.starts_with(PROMPT_TOO_LONG)
            || (self.message.starts_with(GEMINI_TOO_LONG) && self.message.contains(GEMINI_TOO_LONG_END))
    }
}

/// The body as text when it is not a JSON error (an HTML page, a proxy's plain text).
fn raw_text(status: u16, raw: &[u8]) -> String {
    let text = String::from_utf8_lossy(&raw[..raw.len().min(2048)]);
    let text = text.trim();
    if text.is_empty() || text == "null" {
        format!("upstream returned HTTP {status}")
    } else {
        format!("upstream returned HTTP {status}: {text}")
    }
}

/// An upstream error body (OpenAI-shaped or anything) in Anthropic's shape, message kept. An
/// Anthropic-shaped body keeps its own type.
pub fn error_to_anthropic(status: u16, body: &[u8]) -> Vec<u8> {
    let facts = ErrorFacts::read(status, body);
    if let Some(kind) = &facts.anthropic_type {
        return typed_anthropic_error(kind, &facts.message);
    }
    if facts.is_context_window() && !facts.message.starts_with(PROMPT_TOO_LONG) {
        return typed_anthropic_error("invalid_request_error", &format!("{PROMPT_TOO_LONG}: {}", facts.message));
    }
    anthropic_error(status, &facts.message)
}

/// An upstream error body (Anthropic-shaped or anything) in OpenAI's shape: `type` is Anthropic's
/// (`rate_limit_error`, `overloaded_error`, …) or the gateway's for the status, `code` the status
/// (as the gateway's own errors have it) or `context_length_exceeded`. An OpenAI-shaped body
/// passes through unchanged.
pub fn error_to_openai(status: u16, body: &[u8]) -> Vec<u8> {
    let v = serde_json::from_slice::<Value>(body).unwrap_or(Value::Null);
    // Google's `{"error":{"code","message","status"}}` is not OpenAI's though it looks alike.
    let is_google = v.pointer("/error/status").is_some_and(Value::is_string);
    let is_openai = v.get("error").is_some_and(Value::is_object)
        && v.get("type").and_then(Value::as_str) != Some("error")
        && !is_google;
    if is_openai {
        return body.to_vec();
    }
    let facts = ErrorFacts::from_value(status, &v, body);
    let kind = facts.anthropic_type.as_deref().unwrap_or_else(|| openai_error_type(status));
    if facts.is_context_window() {
        return openai_body(kind, &facts.message, Some("messages"), Some(CONTEXT_CODE));
    }
    openai_body(kind, &facts.message, None, Some(&status.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(bytes: &[u8]) -> Value {
        serde_json::from_slice(bytes).unwrap()
    }

    #[test]
    fn statuses_to_types() {
        let want = [
            (400, "invalid_request_error"),
            (401, "authentication_error"),
            (402, "billing_error"),
            (403, "permission_error"),
            (404, "not_found_error"),
            (413, "request_too_large"),
            (422, "invalid_request_error"),
            (429, "rate_limit_error"),
            (500, "api_error"),
            (502, "api_error"),
            (503, "api_error"),
            (504, "timeout_error"),
            (529, "overloaded_error"),
        ];
        for (status, kind) in want {
            assert_eq!(anthropic_error_type(status), kind, "{status}");
        }
    }

    #[test]
    fn own_errors_in_both_stream_shapes() {
        let body = parse(&anthropic_error(429, "slow \"down\""));
        assert_eq!(body, json!({"type": "error", "error": {"type": "rate_limit_error", "message": "slow \"down\""}}));
        let event = anthropic_stream_error(529, "Overloaded");
        let text = std::str::from_utf8(&event).unwrap();
        let data = text.strip_prefix("event: error\ndata: ").unwrap().strip_suffix("\n\n").unwrap();
        assert_eq!(parse(data.as_bytes())["error"]["type"], "overloaded_error");
        let mut out = Vec::new();
        push_openai_stream_error(&mut out, "api_error", "cut", None);
        assert_eq!(parse(out.strip_prefix(b"data: ").unwrap())["error"]["message"], "cut");
    }

    #[test]
    fn anything_becomes_anthropic() {
        let openai =
            br#"{"error":{"message":"nope","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}"#;
        assert_eq!(
            parse(&error_to_anthropic(429, openai))["error"],
            json!({"type": "rate_limit_error", "message": "nope"})
        );
        let plain = error_to_anthropic(502, b"<html>bad gateway</html>");
        assert_eq!(parse(&plain)["error"]["message"], "upstream returned HTTP 502: <html>bad gateway</html>");
        assert_eq!(parse(&error_to_anthropic(500, b""))["error"]["message"], "upstream returned HTTP 500");
        let string_error = error_to_anthropic(400, br#"{"error":"bad model"}"#);
        assert_eq!(parse(&string_error)["error"]["message"], "bad model");
        let native = br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        assert_eq!(parse(&error_to_anthropic(503, native))["error"]["type"], "overloaded_error");
    }

    #[test]
    fn anthropic_becomes_openai_and_openai_passes() {
        let native = br#"{"type":"error","error":{"type":"rate_limit_error","message":"later"},"request_id":"r"}"#;
        let v = parse(&error_to_openai(429, native));
        assert_eq!(v, json!({"error": {"message": "later", "type": "rate_limit_error", "param": null, "code": "429"}}));
        let openai = br#"{"error":{"message":"x","type":"y","param":null,"code":null}}"#;
        assert_eq!(error_to_openai(400, openai), openai.to_vec());
        let v = parse(&error_to_openai(502, b"oops"));
        assert_eq!(v["error"]["type"], "upstream_error");
        assert_eq!(v["error"]["message"], "upstream returned HTTP 502: oops");
    }

    #[test]
    fn context_window_errors_keep_their_meaning() {
        let anthropic = br#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 9 tokens > 5 maximum"}}"#;
        let v = parse(&error_to_openai(400, anthropic));
        assert_eq!((v["error"]["code"].as_str(), v["error"]["param"].as_str()), (Some(CONTEXT_CODE), Some("messages")));
        let openai = br#"{"error":{"message":"This model's maximum context length is 8 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;
        let v = parse(&error_to_anthropic(400, openai));
        assert_eq!(v["error"]["message"], "prompt is too long: This model's maximum context length is 8 tokens.");
    }
}
