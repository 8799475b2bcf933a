//! Bedrock's error bodies through the shared error translation: the message kept in OpenAI's shape.

use serde_json::{json, Value};

use super::super::error_to_openai;

fn openai(status: u16, body: &[u8]) -> Value {
    serde_json::from_slice(&error_to_openai(status, body)).unwrap()
}

#[test]
fn throttling_reads_as_a_rate_limit() {
    let v = openai(429, b"{\"message\":\"Too many requests, please wait before trying again.\"}");
    assert_eq!(
        v,
        json!({"error": {"message": "Too many requests, please wait before trying again.", "type": "rate_limit_error",
            "param": null, "code": "429"}})
    );
}

#[test]
fn validation_keeps_its_message() {
    let v = openai(400, br#"{"message":"Input is too long for requested model."}"#);
    assert_eq!(v["error"]["message"], "Input is too long for requested model.");
    assert_eq!(
        (v["error"]["type"].as_str(), v["error"]["code"].as_str()),
        (Some("invalid_request_error"), Some("400"))
    );
}

#[test]
fn iam_denials_keep_their_capitalised_message() {
    let body = br#"{"Message":"User: arn:aws:iam::123456789012:user/gw is not authorized to perform: bedrock:InvokeModel on resource: arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-haiku-20240307-v1:0"}"#;
    let v = openai(403, body);
    assert!(v["error"]["message"].as_str().unwrap().starts_with("User: arn:aws:iam::123456789012:user/gw is not"));
    assert_eq!(v["error"]["type"], "permission_error");
}
