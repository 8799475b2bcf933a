//! Unit tests of the Anthropic → OpenAI request translation.

use super::*;

fn chat(request: Value) -> Value {
    let bytes = messages_request_to_chat(request.to_string().as_bytes(), "gpt-up").unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

fn refused(request: Value) -> String {
    messages_request_to_chat(request.to_string().as_bytes(), "m").unwrap_err().field
}

#[test]
fn minimal_request_with_stream_asks_for_usage() {
    let out = chat(json!({"model": "claude", "max_tokens": 10, "stream": true, "system": "be brief",
        "messages": [{"role": "user", "content": "hi"}]}));
    assert_eq!(
        out,
        json!({"model": "gpt-up", "max_tokens": 10, "stream": true, "stream_options": {"include_usage": true},
            "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]})
    );
}

#[test]
fn tool_results_become_tool_messages_before_the_user_text() {
    let out = chat(json!({"messages": [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "boom"}], "is_error": true},
        {"type": "tool_result", "tool_use_id": "t2"},
        {"type": "text", "text": "go on"}]}]}));
    assert_eq!(
        out["messages"],
        json!([
            {"role": "tool", "tool_call_id": "t1", "content": [{"type": "text", "text": "Error: boom"}]},
            {"role": "tool", "tool_call_id": "t2", "content": ""},
            {"role": "user", "content": [{"type": "text", "text": "go on"}]}
        ])
    );
}

#[test]
fn tool_choice_and_thinking() {
    let out =
        chat(json!({"messages": [], "tool_choice": {"type": "tool", "name": "f", "disable_parallel_tool_use": true},
        "thinking": {"type": "enabled", "budget_tokens": 3000}}));
    assert_eq!(out["tool_choice"], json!({"type": "function", "function": {"name": "f"}}));
    assert_eq!(out["parallel_tool_calls"], false);
    assert_eq!(out["reasoning_effort"], "medium");
    let out = chat(json!({"messages": [], "thinking": {"type": "adaptive"}, "output_config": {"effort": "high"}}));
    assert_eq!(out["reasoning_effort"], "high");
    assert!(chat(json!({"messages": [], "thinking": {"type": "disabled"}})).get("reasoning_effort").is_none());
}

#[test]
fn structured_output_becomes_a_json_schema_response_format() {
    let schema = json!({"type": "object", "properties": {"a": {"type": "string"}}});
    let out = chat(json!({"messages": [], "output_config": {"format": {"type": "json_schema", "schema": schema}}}));
    assert_eq!(out["response_format"]["json_schema"]["schema"], schema);
}

#[test]
fn what_openai_cannot_say_is_refused_by_name() {
    assert_eq!(refused(json!({"messages": [], "top_k": 5})), "top_k");
    assert_eq!(refused(json!({"messages": [], "container": "c"})), "container");
    assert_eq!(refused(json!({"messages": [], "metadata": {"user_id": "u", "x": 1}})), "metadata.x");
    // LiteLLM's session id is the gateway's to read, not the provider's.
    let out = chat(json!({"messages": [], "metadata": {"user_id": "u", "session_id": "p1"}}));
    assert_eq!((out["user"].as_str(), out.get("metadata")), (Some("u"), None));
    assert_eq!(
        refused(json!({"messages": [], "tools": [{"type": "web_search_20250305", "name": "w"}]})),
        "tools[0].type"
    );
    assert_eq!(refused(json!({"messages": [], "service_tier": "standard_only"})), "service_tier");
    assert_eq!(refused(json!({"messages": [], "thinking": {"type": "enabled"}})), "thinking.budget_tokens");
    assert_eq!(refused(json!({"messages": [], "output_config": {"effort": "max"}})), "output_config.effort");
    let document_in_result = json!({"messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t",
        "content": [{"type": "document", "source": {"type": "url", "url": "u"}}]}]}]});
    assert_eq!(refused(document_in_result), "messages[0].content[0].content[0].type");
    let file_in_result = json!({"messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t",
        "content": [{"type": "image", "source": {"type": "file", "file_id": "f"}}]}]}]});
    assert_eq!(refused(file_in_result), "messages[0].content[0].content[0].source.type");
    let file = json!({"messages": [{"role": "user", "content": [{"type": "image", "source": {"type": "file", "file_id": "f"}}]}]});
    assert_eq!(refused(file), "messages[0].content[0].source.type");
    let text_doc = json!({"messages": [{"role": "user", "content": [{"type": "document", "source": {"type": "text", "data": "x"}}]}]});
    assert_eq!(refused(text_doc), "messages[0].content[0].source");
    let server = json!({"messages": [{"role": "assistant", "content": [{"type": "server_tool_use"}]}]});
    assert_eq!(refused(server), "messages[0].content[0].type");
    assert_eq!(refused(json!({"messages": [{"role": "system", "content": "x"}]})), "messages[0].role");
    assert_eq!(refused(json!([1])), "body");
    assert_eq!(refused(json!({"messages": {}})), "messages");
}

#[test]
fn documents_and_assistant_thinking() {
    let out = chat(json!({"messages": [
        {"role": "user", "content": [{"type": "document", "title": "a.pdf", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBE"}}]},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "hm", "signature": "s"}, {"type": "text", "text": "ok"}]}]}));
    assert_eq!(
        out["messages"][0]["content"][0],
        json!({"type": "file", "file": {"filename": "a.pdf", "file_data": "data:application/pdf;base64,JVBE"}})
    );
    assert_eq!(out["messages"][1], json!({"role": "assistant", "content": "ok"}));
}

#[test]
fn tool_result_images_follow_the_tool_messages_in_a_user_message() {
    let out = chat(json!({"messages": [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": [
            {"type": "text", "text": "shot"}, {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA"}}]},
        {"type": "tool_result", "tool_use_id": "t2", "content": [{"type": "image", "source": {"type": "url", "url": "https://x/i.png"}}]},
        {"type": "text", "text": "what now?"}]}]}));
    assert_eq!(
        out["messages"],
        json!([
            {"role": "tool", "tool_call_id": "t1", "content": [{"type": "text", "text": "shot"}]},
            {"role": "tool", "tool_call_id": "t2", "content": ""},
            {"role": "user", "content": [
                {"type": "text", "text": "Image returned by tool call t1:"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}},
                {"type": "text", "text": "Image returned by tool call t2:"},
                {"type": "image_url", "image_url": {"url": "https://x/i.png"}},
                {"type": "text", "text": "what now?"}]}
        ])
    );
}
