//! Unit tests of the Anthropic → OpenAI request translation.

use super::*;

fn chat(request: Value) -> Value {
    let translated = messages_request_to_chat(request.to_string().as_bytes(), "gpt-up").unwrap();
    serde_json::from_slice(&translated.body).unwrap()
}

fn refused(request: Value) -> String {
    messages_request_to_chat(request.to_string().as_bytes(), "m").unwrap_err().field
}

/// What the translation dropped, and the chat body without it.
fn dropped(request: Value) -> (Vec<String>, Value) {
    let translated = messages_request_to_chat(request.to_string().as_bytes(), "m").unwrap();
    (translated.dropped, serde_json::from_slice(&translated.body).unwrap())
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
fn what_openai_cannot_say_is_dropped_by_name() {
    let names = |request| dropped(request).0;
    let mut both = names(json!({"messages": [], "top_k": 5, "context_management": {"edits": []}}));
    both.sort(); // the body's order, or the keys' with serde_json's default map
    assert_eq!(both, ["context_management", "top_k"]);
    let (names_of, out) = dropped(json!({"messages": [], "container": "c", "max_tokens": 9}));
    assert_eq!(
        (names_of, out["max_tokens"].as_u64(), out.get("container")),
        (vec!["container".to_string()], Some(9), None)
    );
    let (names_of, out) = dropped(json!({"messages": [], "metadata": {"user_id": "u", "x": 1}}));
    assert_eq!((names_of, out["user"].as_str()), (vec!["metadata.x".to_string()], Some("u")));
    // LiteLLM's session id is the gateway's to read, not the provider's.
    let out = chat(json!({"messages": [], "metadata": {"user_id": "u", "session_id": "p1"}}));
    assert_eq!((out["user"].as_str(), out.get("metadata")), (Some("u"), None));
    let tools = json!({"messages": [], "tools": [{"type": "web_search_20250305", "name": "w"},
        {"name": "Bash", "input_schema": {"type": "object"}, "defer_loading": false, "cache_control": {"type": "ephemeral"}}]});
    let (names_of, out) = dropped(tools);
    assert_eq!(names_of, ["tools[0]", "tools[1].defer_loading"]);
    assert_eq!(
        out["tools"],
        json!([{"type": "function", "function": {"name": "Bash", "parameters": {"type": "object"}}}])
    );
    assert_eq!(names(json!({"messages": [], "service_tier": "standard_only"})), ["service_tier"]);
    assert_eq!(names(json!({"messages": [], "thinking": {"type": "enabled"}})), ["thinking"]);
    assert_eq!(names(json!({"messages": [], "output_config": {"effort": "max"}})), ["output_config.effort"]);
    let document_in_result = json!({"messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t",
        "content": [{"type": "document", "source": {"type": "url", "url": "u"}}]}]}]});
    assert_eq!(names(document_in_result), ["messages[0].content[0].content[0]"]);
    let file_in_result = json!({"messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t",
        "content": [{"type": "image", "source": {"type": "file", "file_id": "f"}}]}]}]});
    assert_eq!(names(file_in_result), ["messages[0].content[0].content[0]"]);
    let file = json!({"messages": [{"role": "user", "content": [{"type": "image", "source": {"type": "file", "file_id": "f"}},
        {"type": "text", "text": "and"}]}]});
    let (names_of, out) = dropped(file);
    assert_eq!(names_of, ["messages[0].content[0]"]);
    assert_eq!(out["messages"], json!([{"role": "user", "content": [{"type": "text", "text": "and"}]}]));
    let text_doc = json!({"messages": [{"role": "user", "content": [{"type": "document", "source": {"type": "text", "data": "x"}}]}]});
    assert_eq!(names(text_doc), ["messages[0].content[0]"]);
    let server = json!({"messages": [{"role": "assistant", "content": [{"type": "server_tool_use"}, {"type": "text", "text": "k"}]}]});
    let (names_of, out) = dropped(server);
    assert_eq!((names_of, &out["messages"][0]["content"]), (vec!["messages[0].content[0]".to_string()], &json!("k")));
    assert!(dropped(json!({"messages": [], "max_tokens": 5, "thinking": {"type": "enabled", "budget_tokens": 2000}}))
        .0
        .is_empty());
}

#[test]
fn a_system_message_in_the_conversation_stays_where_it_is() {
    // Claude Code sends them mid-conversation (its `mid-conversation-system` beta).
    let out = chat(json!({"messages": [{"role": "user", "content": "a"},
        {"role": "system", "content": [{"type": "text", "text": "now b"}]}, {"role": "user", "content": "b"}]}));
    assert_eq!(
        out["messages"],
        json!([{"role": "user", "content": "a"}, {"role": "system", "content": "now b"}, {"role": "user", "content": "b"}])
    );
}

#[test]
fn a_body_of_the_wrong_shape_is_refused_by_name() {
    assert_eq!(refused(json!({"messages": [{"role": "tool", "content": "x"}]})), "messages[0].role");
    assert_eq!(refused(json!([1])), "body");
    assert_eq!(refused(json!({"messages": {}})), "messages");
    assert_eq!(refused(json!({"messages": [], "tools": [3]})), "tools[0]");
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
