//! Unit tests of the Anthropic → OpenAI stream translation.

use super::*;

fn chunks(sse: &str, include_usage: bool) -> Vec<Value> {
    let mut translator = MessagesToChatStream::with_created("gpt-x", include_usage, 5);
    let mut out = Vec::new();
    translator.feed(sse.as_bytes(), &mut out);
    translator.finish(&mut out, true);
    let mut chunks = Vec::new();
    SseSplitter::new()
        .feed(&out, |e| {
            chunks.push(if e.data == b"[DONE]" { json!("DONE") } else { serde_json::from_slice(e.data).unwrap() })
        })
        .unwrap();
    chunks
}

const START: &str = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"usage\":{\"input_tokens\":5,\"cache_read_input_tokens\":2,\"output_tokens\":1}}}\n\n";

#[test]
fn thinking_tool_and_usage_chunk() {
    let sse = [
        START,
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"hm\"}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"s\"}}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"f\",\"input\":{}}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{}\"}}\n\n",
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":9}}\n\n",
        "event: something_new\ndata: {\"type\":\"something_new\"}\n\n",
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
    ]
    .concat();
    let chunks = chunks(&sse, true);
    assert_eq!(chunks.len(), 7, "{chunks:#?}");
    assert_eq!(chunks[0]["choices"][0]["delta"], json!({"role": "assistant", "content": ""}));
    assert_eq!((chunks[0]["id"].as_str(), chunks[0]["created"].as_u64()), (Some("msg_1"), Some(5)));
    assert_eq!(chunks[1]["choices"][0]["delta"], json!({"reasoning_content": "hm"}));
    assert_eq!(chunks[2]["choices"][0]["delta"]["tool_calls"][0]["function"], json!({"name": "f", "arguments": ""}));
    assert_eq!(chunks[3]["choices"][0]["delta"]["tool_calls"][0], json!({"index": 0, "function": {"arguments": "{}"}}));
    assert_eq!(chunks[4]["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(chunks[5]["choices"], json!([]));
    assert_eq!(chunks[5]["usage"]["prompt_tokens"], 7);
    assert_eq!(chunks[5]["usage"]["completion_tokens"], 9);
    assert_eq!(chunks[6], "DONE");
}

#[test]
fn no_usage_chunk_unless_asked_and_usage_still_reported() {
    let sse = [START, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"].concat();
    let mut translator = MessagesToChatStream::with_created("gpt-x", false, 5);
    let mut out = Vec::new();
    translator.feed(sse.as_bytes(), &mut out);
    assert_eq!(translator.usage(), Some((7, 1)));
    let text = String::from_utf8(out).unwrap();
    assert!(!text.contains("usage"), "{text}");
    assert!(text.ends_with("\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"), "{text}");
}

#[test]
fn errors_and_cuts_end_without_done() {
    let error = "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
    let errored = chunks(&[START, error].concat(), true);
    assert_eq!(
        errored.last().unwrap()["error"],
        json!({"message": "Overloaded", "type": "overloaded_error", "param": null, "code": null})
    );
    let cut = chunks(START, true);
    assert_eq!(cut.last().unwrap()["error"]["type"], "api_error");
    assert!(!cut.contains(&json!("DONE")));
    assert_eq!(chunks("data: [1,2]\n\n", true)[0]["error"]["type"], "api_error");
}
