//! Unit tests of the Gemini → OpenAI answer translation.

use super::*;

fn chat(body: &[u8]) -> Value {
    let bytes = gemini_response_to_chat_at(body, "gemini-flash", 7).unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

#[test]
fn thinking_text_and_usage() {
    let out = chat(include_bytes!("testdata/response_thinking.json"));
    assert_eq!(
        out,
        json!({"id": "tTCwacuEBMvnitYP06qsgQY", "object": "chat.completion", "created": 7, "model": "gemini-flash",
            "choices": [{"index": 0, "logprobs": null, "finish_reason": "stop", "message": {
                "role": "assistant", "refusal": null,
                "content": "The sky looks blue because air molecules scatter short (blue) wavelengths of sunlight more than long ones.",
                "reasoning_content": "**Weighing the options**\n\nThe user wants a short answer about the sky."}}],
            "usage": {"prompt_tokens": 9, "completion_tokens": 139, "total_tokens": 148,
                "prompt_tokens_details": {"cached_tokens": 4}, "completion_tokens_details": {"reasoning_tokens": 118}}})
    );
}

#[test]
fn function_calls_get_unique_ids_carrying_signatures() {
    let out = chat(include_bytes!("testdata/response_function_calls.json"));
    let choice = &out["choices"][0];
    assert_eq!(choice["finish_reason"], "tool_calls");
    assert_eq!(choice["message"]["content"], Value::Null);
    assert_eq!(
        choice["message"]["tool_calls"],
        json!([
            {"id": "call_Zx9UaOCnIqmr1MkP7Nf7sQ8_0__thought__CiQBVKhc7oVZ3mKz3P0s8YLN", "type": "function",
                "function": {"name": "get_weather", "arguments": "{\"location\":\"Paris\"}"}},
            {"id": "call_Zx9UaOCnIqmr1MkP7Nf7sQ8_1", "type": "function",
                "function": {"name": "get_weather", "arguments": "{\"location\":\"London\"}"}}
        ])
    );
    assert_eq!(out["usage"]["completion_tokens"], 86);
}

#[test]
fn the_signature_in_the_id_goes_back_on_the_call() {
    let out = chat(include_bytes!("testdata/response_function_calls.json"));
    let message = out["choices"][0]["message"].clone();
    let id = message["tool_calls"][0]["id"].clone();
    let request = json!({"messages": [{"role": "user", "content": "weather?"}, message,
        {"role": "tool", "tool_call_id": id, "content": "{\"c\": 18}"},
        {"role": "tool", "tool_call_id": "call_Zx9UaOCnIqmr1MkP7Nf7sQ8_1", "content": "{\"c\": 12}"}]});
    let bytes = crate::gemini::chat_request_to_gemini(request.to_string().as_bytes()).unwrap();
    let gemini: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(
        gemini["contents"][1]["parts"],
        json!([
            {"functionCall": {"name": "get_weather", "args": {"location": "Paris"}}, "thoughtSignature": "CiQBVKhc7oVZ3mKz3P0s8YLN"},
            {"functionCall": {"name": "get_weather", "args": {"location": "London"}}}
        ])
    );
    assert_eq!(
        gemini["contents"][2]["parts"][1]["functionResponse"],
        json!({"name": "get_weather", "response": {"c": 12}})
    );
}

#[test]
fn several_candidates_and_finish_reasons() {
    let body = json!({"candidates": [
        {"index": 0, "content": {"role": "model", "parts": [{"text": "cut"}]}, "finishReason": "MAX_TOKENS"},
        {"index": 1, "content": {"role": "model", "parts": [{"functionCall": {"name": "f"}}]}, "finishReason": "STOP"},
        {"index": 2, "finishReason": "SAFETY", "safetyRatings": [{"category": "HARM_CATEGORY_HARASSMENT", "probability": "HIGH"}]},
        {"index": 3, "content": {"role": "model", "parts": [{"executableCode": {"code": "1"}}]}, "finishReason": "OTHER"}]});
    let out = chat(body.to_string().as_bytes());
    let choices = out["choices"].as_array().unwrap();
    let reasons: Vec<&str> = choices.iter().map(|c| c["finish_reason"].as_str().unwrap()).collect();
    assert_eq!(reasons, ["length", "tool_calls", "content_filter", "stop"]);
    assert_eq!(choices[1]["message"]["tool_calls"][0]["function"]["arguments"], "{}");
    assert!(choices[1]["message"]["tool_calls"][0]["id"].as_str().unwrap().starts_with("call_"));
    assert_eq!(choices[2]["message"]["content"], Value::Null);
    assert_eq!(choices[3]["message"]["content"], "");
    assert_eq!(choices[3]["index"], 3);
    assert!(out["id"].as_str().unwrap().starts_with("chatcmpl-"), "a generated id without responseId");
    assert_eq!(out["usage"]["total_tokens"], 0);
}

#[test]
fn ids_are_unique_across_responses_without_a_response_id() {
    let body =
        br#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{}}}]},"finishReason":"STOP"}]}"#;
    let first = chat(body)["choices"][0]["message"]["tool_calls"][0]["id"].clone();
    let second = chat(body)["choices"][0]["message"]["tool_calls"][0]["id"].clone();
    assert_ne!(first, second);
}

#[test]
fn a_blocked_prompt_is_one_filtered_choice() {
    let body = br#"{"promptFeedback":{"blockReason":"PROHIBITED_CONTENT"},"usageMetadata":{"promptTokenCount":8,"totalTokenCount":8},"modelVersion":"gemini-2.5-pro","responseId":"abc"}"#;
    let out = chat(body);
    assert_eq!(
        out["choices"],
        json!([{"index": 0, "logprobs": null, "finish_reason": "content_filter",
            "message": {"role": "assistant", "content": null, "refusal": null}}])
    );
    assert_eq!(out["usage"]["prompt_tokens"], 8);
}

#[test]
fn logprobs_become_openai_token_logprobs() {
    let body = json!({"candidates": [{"content": {"parts": [{"text": "Hi"}]}, "finishReason": "STOP",
        "logprobsResult": {
            "topCandidates": [{"candidates": [{"token": "Hi", "tokenId": 1, "logProbability": -0.1},
                {"token": "Hello", "tokenId": 2, "logProbability": -2.5}]}],
            "chosenCandidates": [{"token": "Hi", "tokenId": 1, "logProbability": -0.1}]}}]});
    let out = chat(body.to_string().as_bytes());
    assert_eq!(
        out["choices"][0]["logprobs"],
        json!({"content": [{"token": "Hi", "logprob": -0.1, "bytes": [72, 105], "top_logprobs": [
            {"token": "Hi", "logprob": -0.1, "bytes": [72, 105]},
            {"token": "Hello", "logprob": -2.5, "bytes": [72, 101, 108, 108, 111]}]}]})
    );
}

#[test]
fn unreadable_answers_are_errors() {
    assert!(gemini_response_to_chat(b"nope", "m").is_err());
    assert!(gemini_response_to_chat(b"[]", "m").is_err());
    assert!(gemini_response_to_chat(b"{}", "m").unwrap_err().contains("no candidates"));
    let error = br#"{"error":{"code":500,"message":"Internal error","status":"INTERNAL"}}"#;
    assert!(gemini_response_to_chat(error, "m").unwrap_err().contains("Internal error"));
}
