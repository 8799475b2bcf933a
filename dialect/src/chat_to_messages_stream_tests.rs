//! Unit tests of the OpenAI → Anthropic stream translation.

use super::*;
use crate::sse::SseSplitter;

fn events(sse: &str, complete: bool) -> Vec<Value> {
    let mut translator = ChatToMessagesStream::new("claude-x");
    let mut out = Vec::new();
    translator.feed(sse.as_bytes(), &mut out);
    translator.finish(&mut out, complete);
    let mut events = Vec::new();
    let mut splitter = SseSplitter::new();
    splitter.feed(&out, |e| events.push(serde_json::from_slice::<Value>(e.data).unwrap())).unwrap();
    events
}

fn types(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["type"].as_str().unwrap()).collect()
}

#[test]
fn reasoning_then_text_then_two_tools() {
    let sse = concat!(
        "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"reasoning_content\":\"hm\"}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"a\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"x\\\"\"}},{\"index\":1,\"id\":\"b\",\"function\":{\"name\":\"g\",\"arguments\":\"{}\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\":1}\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
        "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":4}}\n\n",
        "data: [DONE]\n\n",
    );
    let events = events(sse, true);
    assert_eq!(
        types(&events),
        [
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop"
        ]
    );
    assert_eq!(events[0]["message"]["id"], "c1");
    assert_eq!(events[1]["content_block"]["type"], "thinking");
    assert_eq!(events[2]["delta"], json!({"type": "thinking_delta", "thinking": "hm"}));
    assert_eq!(events[7]["content_block"], json!({"type": "tool_use", "id": "a", "name": "f", "input": {}}));
    assert_eq!(
        events[12],
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": ":1}"}})
    );
    assert_eq!(events[14]["delta"]["stop_reason"], "tool_use");
    assert_eq!(events[14]["usage"]["input_tokens"], 9);
}

#[test]
fn cut_short_and_upstream_errors_end_with_an_error_event() {
    let cut = events("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"he\"}}]}\n\n", false);
    assert_eq!(types(&cut), ["message_start", "content_block_start", "content_block_delta", "error"]);
    let unfinished = events("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"he\"}}]}\n\n", true);
    assert_eq!(types(&unfinished).last(), Some(&"error"));
    let finished_without_done =
        events("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n", true);
    assert_eq!(types(&finished_without_done).last(), Some(&"message_stop"));
    let midstream =
        events("data: {\"error\":{\"code\":429,\"message\":\"slow\"},\"choices\":[]}\n\ndata: [DONE]\n\n", true);
    assert_eq!(midstream, [json!({"type": "error", "error": {"type": "rate_limit_error", "message": "slow"}})]);
    let garbage = events("data: {nope\n\n", true);
    assert_eq!(garbage[0]["error"]["type"], "api_error");
}

#[test]
fn refusals_and_usage_reported() {
    let sse = "data: {\"choices\":[{\"index\":0,\"delta\":{\"refusal\":\"no\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1}}\n\n";
    let mut translator = ChatToMessagesStream::new("m");
    let mut out = Vec::new();
    translator.feed(sse.as_bytes(), &mut out);
    assert_eq!(translator.usage(), Some((3, 1)));
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("\"stop_reason\":\"refusal\""), "{text}");
    assert!(text.ends_with("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"));
}
