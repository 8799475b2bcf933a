//! Whole chat answers → Responses `response` objects.

use serde_json::{json, Value};

use super::test_support::{dump, echo_for};
use super::{chat_response_to_responses, output_items};

fn answer(request: &Value, chat: Value) -> Value {
    let (bytes, response) =
        chat_response_to_responses(&serde_json::to_vec(&chat).unwrap(), &echo_for(request)).unwrap();
    assert_eq!(serde_json::from_slice::<Value>(&bytes).unwrap(), response, "the bytes are the value");
    dump(&bytes);
    response
}

fn completion(message: Value, finish_reason: &str, usage: Option<Value>) -> Value {
    let mut chat = json!({"id": "chatcmpl-9", "object": "chat.completion", "created": 5, "model": "up",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}]});
    if let Some(usage) = usage {
        chat["usage"] = usage;
    }
    chat
}

#[test]
fn a_text_answer_with_the_request_echoed() {
    let request = json!({"model": "gpt-client", "instructions": "sys", "input": "hi", "temperature": 0.3,
        "max_output_tokens": 50, "metadata": {"a": "b"}, "store": false, "previous_response_id": "resp_0"});
    let usage = json!({"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15,
        "prompt_tokens_details": {"cached_tokens": 8}, "completion_tokens_details": {"reasoning_tokens": 1}});
    let response = answer(&request, completion(json!({"role": "assistant", "content": "Hello!"}), "stop", Some(usage)));
    assert_eq!(
        response,
        json!({
            "id": "resp_t1", "object": "response", "created_at": 1_700_000_000, "status": "completed",
            "background": false, "error": null, "incomplete_details": null, "model": "gpt-client",
            "instructions": "sys", "tools": [], "tool_choice": "auto", "parallel_tool_calls": true,
            "temperature": 0.3, "top_p": null, "max_output_tokens": 50, "previous_response_id": "resp_0",
            "metadata": {"a": "b"}, "store": false, "text": {"format": {"type": "text"}},
            "reasoning": {"effort": null, "summary": null}, "truncation": "disabled",
            "output": [{"type": "message", "id": "msg_t1_0", "status": "completed", "role": "assistant",
                "content": [{"type": "output_text", "text": "Hello!", "annotations": [], "logprobs": []}]}],
            "usage": {"input_tokens": 12, "input_tokens_details": {"cached_tokens": 8, "cache_write_tokens": 0},
                "output_tokens": 3, "output_tokens_details": {"reasoning_tokens": 1}, "total_tokens": 15},
        })
    );
    assert_eq!(output_items(&response), response["output"].as_array().unwrap().clone());
}

#[test]
fn reasoning_text_and_tool_calls_in_order() {
    let request = json!({"tools": [{"type": "function", "name": "get"}, {"type": "custom", "name": "apply_patch"},
        {"type": "local_shell"}]});
    let message = json!({"role": "assistant", "reasoning_content": "Think.", "content": "Let me check.", "tool_calls": [
        {"id": "call_a", "type": "function", "function": {"name": "get", "arguments": "{\"q\":1}"}},
        {"id": "call_b", "type": "function", "function": {"name": "apply_patch", "arguments": "{\"input\":\"*** Begin\"}"}},
        {"type": "function", "function": {"name": "apply_patch", "arguments": "raw text"}},
        {"id": "call_d", "type": "function", "function": {"name": "local_shell", "arguments": "{\"command\":[\"ls\"],\"timeout_ms\":5}"}},
    ]});
    let response = answer(&request, completion(message, "tool_calls", None));
    assert_eq!(
        response["output"],
        json!([
            {"type": "reasoning", "id": "rs_t1_0", "summary": [{"type": "summary_text", "text": "Think."}]},
            {"type": "message", "id": "msg_t1_1", "status": "completed", "role": "assistant",
             "content": [{"type": "output_text", "text": "Let me check.", "annotations": [], "logprobs": []}]},
            {"type": "function_call", "id": "fc_t1_2", "call_id": "call_a", "name": "get", "arguments": "{\"q\":1}", "status": "completed"},
            {"type": "custom_tool_call", "id": "ctc_t1_3", "call_id": "call_b", "name": "apply_patch", "input": "*** Begin"},
            {"type": "custom_tool_call", "id": "ctc_t1_4", "call_id": "call_t1_4", "name": "apply_patch", "input": "raw text"},
            {"type": "local_shell_call", "id": "lsh_t1_5", "call_id": "call_d", "status": "completed",
             "action": {"type": "exec", "command": ["ls"], "env": {}, "timeout_ms": 5}},
        ])
    );
    assert_eq!(response["status"], "completed");
    let zero = json!({"input_tokens": 0, "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": 0, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 0});
    assert_eq!(response["usage"], zero, "every usage field even without upstream usage");
}

#[test]
fn a_local_shell_name_without_the_local_shell_tool_is_a_function_call() {
    let message = json!({"role": "assistant", "content": null, "reasoning": "r",
        "tool_calls": [{"id": "c", "type": "function", "function": {"name": "local_shell", "arguments": "{}"}}]});
    let response = answer(&json!({}), completion(message, "tool_calls", None));
    assert_eq!(response["output"][0]["type"], "reasoning", "`reasoning` is read too");
    assert_eq!(response["output"][1]["type"], "function_call");
    assert_eq!(response["output"].as_array().unwrap().len(), 2, "no empty message item");
}

#[test]
fn length_and_content_filter_are_incomplete() {
    let message = json!({"role": "assistant", "content": "Half"});
    let response = answer(&json!({}), completion(message.clone(), "length", None));
    assert_eq!(
        (&response["status"], &response["incomplete_details"]),
        (&json!("incomplete"), &json!({"reason": "max_output_tokens"}))
    );
    assert_eq!(response["output"][0]["status"], "incomplete");
    let filtered = answer(&json!({}), completion(message, "content_filter", None));
    assert_eq!(filtered["incomplete_details"], json!({"reason": "content_filter"}));
}

#[test]
fn a_refusal_is_a_refusal_part() {
    let message = json!({"role": "assistant", "content": null, "refusal": "I can't."});
    let response = answer(&json!({}), completion(message, "stop", None));
    assert_eq!(response["output"][0]["content"], json!([{"type": "refusal", "refusal": "I can't."}]));
}

#[test]
fn a_body_that_is_not_a_chat_completion_is_an_error() {
    let echo = echo_for(&json!({}));
    for body in [&b"<html>"[..], br#"{"object":"list"}"#, br#"{"choices":[{"index":0}]}"#, b"[]"] {
        let why = chat_response_to_responses(body, &echo).unwrap_err();
        assert!(why.contains("upstream"), "{why}");
    }
}

#[test]
fn a_body_that_is_not_json_echoes_the_defaults() {
    let echo = super::ResponseEcho::new(b"not json", "resp_x", 1, "m");
    assert_eq!(echo.id(), "resp_x");
    let chat = completion(json!({"role": "assistant", "content": "a"}), "stop", None);
    let (_, response) = chat_response_to_responses(&serde_json::to_vec(&chat).unwrap(), &echo).unwrap();
    assert_eq!(
        (&response["tools"], &response["tool_choice"], &response["output"][0]["id"]),
        (&json!([]), &json!("auto"), &json!("msg_x_0"))
    );
}

#[test]
fn an_answer_s_output_items_are_history_for_the_next_request() {
    let request = json!({"tools": [{"type": "custom", "name": "apply_patch"}, {"type": "local_shell"}], "input": "go"});
    let message = json!({"role": "assistant", "reasoning_content": "r", "content": "Doing it.", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "apply_patch", "arguments": "{\"input\":\"p\"}"}},
        {"id": "c2", "type": "function", "function": {"name": "local_shell", "arguments": "{\"command\":[\"ls\"]}"}},
    ]});
    let response = answer(&request, completion(message, "tool_calls", None));
    let first = super::responses_request_to_chat(&serde_json::to_vec(&request).unwrap(), "up", &[]).unwrap();
    let mut history = first.input_items;
    history.extend(output_items(&response));
    let next = json!({"tools": request["tools"], "input": [
        {"type": "custom_tool_call_output", "call_id": "c1", "output": "patched"},
        {"type": "function_call_output", "call_id": "c2", "output": "a.txt"}]});
    let chat = super::responses_request_to_chat(&serde_json::to_vec(&next).unwrap(), "up", &history).unwrap();
    let body: Value = serde_json::from_slice(&chat.body).unwrap();
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": "Doing it.", "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "apply_patch", "arguments": "{\"input\":\"p\"}"}},
                {"id": "c2", "type": "function", "function": {"name": "local_shell", "arguments": "{\"command\":[\"ls\"]}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "patched"},
            {"role": "tool", "tool_call_id": "c2", "content": "a.txt"},
        ])
    );
    assert_eq!(chat.dropped, ["history[1] reasoning"]);
}
