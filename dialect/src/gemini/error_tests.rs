//! Google's error bodies through the shared error translators: the message kept, the type the
//! status's, Gemini's context-window error known as such.

use serde_json::{json, Value};

use super::super::{error_to_anthropic, error_to_openai};

fn parse(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap()
}

const RESOURCE_EXHAUSTED: &[u8] = br#"{
  "error": {
    "code": 429,
    "message": "You exceeded your current quota, please check your plan and billing details.",
    "status": "RESOURCE_EXHAUSTED",
    "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "33s"}]
  }
}"#;

const TOO_MANY_TOKENS: &[u8] = br#"{
  "error": {
    "code": 400,
    "message": "The input token count (1200345) exceeds the maximum number of tokens allowed (1048576).",
    "status": "INVALID_ARGUMENT"
  }
}"#;

#[test]
fn a_quota_error_becomes_an_openai_rate_limit_error() {
    assert_eq!(
        parse(&error_to_openai(429, RESOURCE_EXHAUSTED)),
        json!({"error": {"message": "You exceeded your current quota, please check your plan and billing details.",
            "type": "rate_limit_error", "param": null, "code": "429"}})
    );
    assert_eq!(parse(&error_to_anthropic(429, RESOURCE_EXHAUSTED))["error"]["type"], "rate_limit_error");
}

#[test]
fn the_context_window_error_keeps_its_meaning() {
    assert_eq!(
        parse(&error_to_openai(400, TOO_MANY_TOKENS)),
        json!({"error": {"message": "The input token count (1200345) exceeds the maximum number of tokens allowed (1048576).",
            "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}})
    );
    let anthropic = parse(&error_to_anthropic(400, TOO_MANY_TOKENS));
    assert!(anthropic["error"]["message"].as_str().unwrap().starts_with("prompt is too long: The input token count"));
}

#[test]
fn other_google_errors_keep_their_message() {
    let body = br#"{"error":{"code":400,"message":"* GenerateContentRequest.contents: contents is not specified\n","status":"INVALID_ARGUMENT"}}"#;
    let v = parse(&error_to_openai(400, body));
    assert_eq!(v["error"]["message"], "* GenerateContentRequest.contents: contents is not specified\n");
    assert_eq!(
        (v["error"]["type"].as_str(), v["error"]["code"].as_str()),
        (Some("invalid_request_error"), Some("400"))
    );
    let openai = br#"{"error":{"message":"x","type":"y","param":null,"code":null}}"#;
    assert_eq!(error_to_openai(400, openai), openai.to_vec(), "OpenAI's own shape still passes through");
}
