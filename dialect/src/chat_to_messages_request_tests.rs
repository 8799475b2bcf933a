//! Unit tests of the OpenAI → Anthropic request translation.

use super::*;

fn messages(request: Value) -> Value {
    let bytes = chat_request_to_messages(request.to_string().as_bytes(), "claude-up").unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

fn refused(request: Value) -> String {
    chat_request_to_messages(request.to_string().as_bytes(), "m").unwrap_err().field
}

#[test]
fn max_tokens_defaults_and_prefers_max_completion_tokens() {
    let out = messages(json!({"model": "gpt", "messages": [{"role": "user", "content": "hi"}]}));
    assert_eq!(
        out,
        json!({"model": "claude-up", "max_tokens": DEFAULT_MAX_TOKENS, "messages": [{"role": "user", "content": "hi"}]})
    );
    let out = messages(json!({"messages": [], "max_tokens": 5, "max_completion_tokens": 9}));
    assert_eq!(out["max_tokens"], 9);
    let out = chat_request_to_messages_with_default(br#"{"messages":[]}"#, "m", 64_000).unwrap();
    assert_eq!(serde_json::from_slice::<Value>(&out).unwrap()["max_tokens"], 64_000);
}

#[test]
fn system_and_developer_messages_are_hoisted_in_order() {
    let out = messages(json!({"messages": [
        {"role": "developer", "content": "a"},
        {"role": "user", "content": "q"},
        {"role": "system", "content": [{"type": "text", "text": "b"}, {"type": "text", "text": "c"}]}]}));
    assert_eq!(
        out["system"],
        json!([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}, {"type": "text", "text": "c"}])
    );
    assert_eq!(out["messages"], json!([{"role": "user", "content": "q"}]));
}

#[test]
fn consecutive_tool_messages_make_one_user_turn() {
    let out = messages(json!({"messages": [
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "f", "arguments": ""}},
            {"id": "b", "type": "function", "function": {"name": "g", "arguments": " {\"x\": 1} "}}]},
        {"role": "tool", "tool_call_id": "a", "content": [{"type": "text", "text": "1"}]},
        {"role": "tool", "tool_call_id": "b", "content": "2"},
        {"role": "user", "content": "next"}]}));
    assert_eq!(
        out["messages"],
        json!([
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "a", "name": "f", "input": {}},
                {"type": "tool_use", "id": "b", "name": "g", "input": {"x": 1}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "a", "content": [{"type": "text", "text": "1"}]},
                {"type": "tool_result", "tool_use_id": "b", "content": "2"}]},
            {"role": "user", "content": "next"}
        ])
    );
}

#[test]
fn tool_choice_parallel_calls_and_structured_output() {
    let tools = json!([{"type": "function", "function": {"name": "f", "strict": true}}]);
    let out =
        messages(json!({"messages": [], "tools": tools, "tool_choice": "required", "parallel_tool_calls": false}));
    assert_eq!(out["tool_choice"], json!({"type": "any", "disable_parallel_tool_use": true}));
    assert_eq!(
        out["tools"],
        json!([{"name": "f", "strict": true, "input_schema": {"type": "object", "properties": {}}}])
    );
    let out = messages(json!({"messages": [], "tools": tools, "parallel_tool_calls": false}));
    assert_eq!(out["tool_choice"], json!({"type": "auto", "disable_parallel_tool_use": true}));
    let out = messages(json!({"messages": [], "tools": tools, "tool_choice": "none", "parallel_tool_calls": false}));
    assert_eq!(out["tool_choice"], json!({"type": "none"}));
    let out = messages(json!({"messages": [], "parallel_tool_calls": false}));
    assert!(out.get("tool_choice").is_none(), "no tools, no tool_choice");
    let out = messages(json!({"messages": [], "tool_choice": {"type": "function", "function": {"name": "f"}}}));
    assert_eq!(out["tool_choice"], json!({"type": "tool", "name": "f"}));
    let schema = json!({"type": "object"});
    let out = messages(
        json!({"messages": [], "response_format": {"type": "json_schema", "json_schema": {"name": "n", "schema": schema}}}),
    );
    assert_eq!(out["output_config"], json!({"format": {"type": "json_schema", "schema": schema}}));
}

#[test]
fn reasoning_effort_becomes_a_thinking_budget_below_max_tokens() {
    let out = messages(json!({"messages": [], "reasoning_effort": "high", "max_tokens": 10_000}));
    assert_eq!(out["thinking"], json!({"type": "enabled", "budget_tokens": 4096}));
    let out = messages(json!({"messages": [], "reasoning_effort": "high", "max_tokens": 3000}));
    assert_eq!(out["thinking"], json!({"type": "enabled", "budget_tokens": 2999}));
    let out = messages(json!({"messages": [], "reasoning_effort": "none"}));
    assert_eq!(out["thinking"], json!({"type": "disabled"}));
    assert_eq!(refused(json!({"messages": [], "reasoning_effort": "low", "max_tokens": 1000})), "reasoning_effort");
    assert_eq!(refused(json!({"messages": [], "reasoning_effort": "extreme"})), "reasoning_effort");
}

#[test]
fn images_files_and_user_metadata() {
    let out = messages(
        json!({"user": "u", "safety_identifier": "s", "metadata": {"k": "v"}, "messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "data:image/webp;base64,UklG", "detail": "high"}},
        {"type": "image_url", "image_url": "https://x/y.png"},
        {"type": "file", "file": {"filename": "a.pdf", "file_data": "data:application/pdf;base64,JVBE"}}]}]}),
    );
    assert_eq!(out["metadata"], json!({"user_id": "s"}));
    assert_eq!(
        out["messages"][0]["content"],
        json!([
            {"type": "image", "source": {"type": "base64", "media_type": "image/webp", "data": "UklG"}},
            {"type": "image", "source": {"type": "url", "url": "https://x/y.png"}},
            {"type": "document", "title": "a.pdf", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBE"}}
        ])
    );
}

#[test]
fn defaults_pass_and_everything_else_is_refused_by_name() {
    let defaults = json!({"messages": [], "n": 1, "store": false, "logprobs": false, "top_logprobs": 0,
        "frequency_penalty": 0, "presence_penalty": 0.0, "logit_bias": {}, "service_tier": "auto", "modalities": ["text"],
        "stream_options": {"include_usage": true}, "prompt_cache_key": "k", "seed": null});
    assert!(chat_request_to_messages(defaults.to_string().as_bytes(), "m").is_ok());
    let refusals = [
        (json!({"n": 2}), "n"),
        (json!({"logprobs": true}), "logprobs"),
        (json!({"top_logprobs": 3}), "top_logprobs"),
        (json!({"frequency_penalty": 0.5}), "frequency_penalty"),
        (json!({"presence_penalty": -1}), "presence_penalty"),
        (json!({"logit_bias": {"1": 5}}), "logit_bias"),
        (json!({"seed": 1}), "seed"),
        (json!({"store": true}), "store"),
        (json!({"temperature": 1.5}), "temperature"),
        (json!({"response_format": {"type": "json_object"}}), "response_format.type"),
        (json!({"service_tier": "flex"}), "service_tier"),
        (json!({"modalities": ["text", "audio"]}), "modalities"),
        (json!({"audio": {"voice": "x"}}), "audio"),
        (json!({"prediction": {}}), "prediction"),
        (json!({"web_search_options": {}}), "web_search_options"),
        (json!({"functions": []}), "functions"),
        (json!({"tool_choice": {"type": "allowed_tools"}}), "tool_choice.type"),
        (json!({"tool_choice": "sometimes"}), "tool_choice"),
        (json!({"tools": [{"type": "custom", "custom": {}}]}), "tools[0].type"),
        (json!({"tools": [{"type": "function", "function": {"name": "f", "x": 1}}]}), "tools[0].function.x"),
    ];
    for (extra, field) in refusals {
        let mut request = extra.clone();
        request["messages"] = json!([]);
        assert_eq!(refused(request), field, "{extra}");
    }
    let turn_refusals = [
        (json!({"role": "user", "name": "al", "content": "x"}), "messages[0].name"),
        (json!({"role": "function", "content": "x"}), "messages[0].role"),
        (json!({"role": "assistant", "refusal": "no"}), "messages[0].refusal"),
        (json!({"role": "user", "content": [{"type": "input_audio"}]}), "messages[0].content[0].type"),
        (
            json!({"role": "user", "content": [{"type": "file", "file": {"file_id": "f"}}]}),
            "messages[0].content[0].file",
        ),
        (
            json!({"role": "assistant", "tool_calls": [{"id": "a", "function": {"name": "f", "arguments": "[1]"}}]}),
            "messages[0].tool_calls[0].function.arguments",
        ),
        (json!({"role": "tool", "content": [{"type": "image_url"}]}), "messages[0].content[0].type"),
    ];
    for (turn, field) in turn_refusals {
        assert_eq!(refused(json!({"messages": [turn]})), field, "{turn}");
    }
}
