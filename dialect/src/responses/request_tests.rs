//! Responses requests → chat requests: every item kind, tools, tool_choice, text formats, the
//! dropped list and refusals with their paths.

use serde_json::{json, Value};

use super::responses_request_to_chat;
use crate::{chat_request_to_messages, Untranslatable};

fn translate(request: Value) -> (Value, Vec<String>, Vec<Value>) {
    translate_with_history(request, &[])
}

fn translate_with_history(request: Value, history: &[Value]) -> (Value, Vec<String>, Vec<Value>) {
    let out = responses_request_to_chat(&serde_json::to_vec(&request).unwrap(), "up-model", history).unwrap();
    (serde_json::from_slice(&out.body).unwrap(), out.dropped, out.input_items)
}

fn refusal(request: Value) -> Untranslatable {
    responses_request_to_chat(&serde_json::to_vec(&request).unwrap(), "up-model", &[]).unwrap_err()
}

#[test]
fn a_string_input_with_instructions_and_sampling_fields() {
    let (chat, dropped, items) = translate(json!({
        "model": "gpt-5", "instructions": "Be brief.", "input": "Hi", "max_output_tokens": 300,
        "temperature": 0.2, "top_p": 0.9, "user": "u1", "safety_identifier": "s1", "stream": true,
        "metadata": {"k": "v"}, "store": true, "previous_response_id": "resp_0", "prompt_cache_key": "c",
        "reasoning": {"effort": "low", "summary": "auto"}, "service_tier": "auto", "truncation": "disabled",
    }));
    assert_eq!(
        chat,
        json!({"model": "up-model", "max_tokens": 300, "temperature": 0.2, "top_p": 0.9, "user": "u1",
            "safety_identifier": "s1", "stream": true, "stream_options": {"include_usage": true},
            "reasoning_effort": "low",
            "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]})
    );
    assert!(dropped.is_empty(), "{dropped:?}");
    assert_eq!(items, [json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Hi"}]})]);
}

#[test]
fn message_items_and_their_parts() {
    let (chat, _, items) = translate(json!({"input": [
        {"role": "developer", "content": "Rules."},
        {"role": "user", "content": [
            {"type": "input_text", "text": "Look:"},
            {"type": "input_image", "image_url": "https://x/a.png", "detail": "high"},
            {"type": "input_image", "image_url": "data:image/png;base64,AAAA"},
            {"type": "input_file", "filename": "a.pdf", "file_data": "data:application/pdf;base64,JVBE"},
        ]},
        {"type": "message", "role": "assistant", "content": [
            {"type": "output_text", "text": "I see ", "annotations": []}, {"type": "refusal", "refusal": "nothing"}]},
        {"role": "system", "content": [{"type": "input_text", "text": "a"}, {"type": "input_text", "text": "b"}]},
        {"role": "user", "content": [{"type": "input_text", "text": "one part"}]},
    ]}));
    assert_eq!(
        chat["messages"],
        json!([
            {"role": "system", "content": "Rules."},
            {"role": "user", "content": [
                {"type": "text", "text": "Look:"},
                {"type": "image_url", "image_url": {"url": "https://x/a.png"}},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                {"type": "file", "file": {"filename": "a.pdf", "file_data": "data:application/pdf;base64,JVBE"}},
            ]},
            {"role": "assistant", "content": "I see nothing"},
            {"role": "system", "content": "ab"},
            {"role": "user", "content": "one part"},
        ])
    );
    assert_eq!(items[0], json!({"type": "message", "role": "developer", "content": "Rules."}), "typed when bare");
}

#[test]
fn calls_join_the_assistant_message_and_outputs_become_tool_messages() {
    let (chat, dropped, _) = translate(json!({
    "tools": [{"type": "custom", "name": "apply_patch"}, {"type": "local_shell"}],
    "input": [
        {"role": "user", "content": "fix it"},
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "hmm"}], "encrypted_content": "x"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "On it."}]},
        {"type": "function_call", "call_id": "c1", "name": "read", "arguments": "{\"p\":1}"},
        {"type": "custom_tool_call", "call_id": "c2", "name": "apply_patch", "input": "*** Begin Patch"},
        {"type": "local_shell_call", "id": "lsh", "call_id": "c3", "status": "completed",
         "action": {"type": "exec", "command": ["ls", "-a"], "env": {}, "working_directory": "/w"}},
        {"type": "function_call_output", "call_id": "c1", "output": "text"},
        {"type": "custom_tool_call_output", "call_id": "c2", "output": [{"type": "input_text", "text": "ok"}]},
        {"type": "local_shell_call_output", "id": "c3", "output": "a b"},
        {"type": "item_reference", "id": "msg_9"},
        {"type": "function_call", "call_id": "c4", "name": "read", "arguments": "{}"},
    ]}));
    let call = |id: &str, name: &str, arguments: &str| json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}});
    assert_eq!(
        chat["messages"],
        json!([
            {"role": "user", "content": "fix it"},
            {"role": "assistant", "content": "On it.", "tool_calls": [
                call("c1", "read", "{\"p\":1}"),
                call("c2", "apply_patch", "{\"input\":\"*** Begin Patch\"}"),
                call("c3", "local_shell", "{\"command\":[\"ls\",\"-a\"],\"working_directory\":\"/w\"}"),
            ]},
            {"role": "tool", "tool_call_id": "c1", "content": "text"},
            {"role": "tool", "tool_call_id": "c2", "content": "ok"},
            {"role": "tool", "tool_call_id": "c3", "content": "a b"},
            {"role": "assistant", "content": null, "tool_calls": [call("c4", "read", "{}")]},
        ])
    );
    assert_eq!(dropped, ["input[1] reasoning", "input[9] item_reference"]);
}

#[test]
fn a_tool_output_s_image_follows_the_tool_messages_in_a_user_message() {
    let (chat, _, _) = translate(json!({"input": [
        {"type": "function_call", "call_id": "a", "name": "shot", "arguments": "{}"},
        {"type": "function_call", "call_id": "b", "name": "shot", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "a", "output": [{"type": "input_image", "image_url": "https://i/1.png"}]},
        {"type": "function_call_output", "call_id": "b", "output": "done"},
        {"role": "user", "content": "next"},
    ]}));
    let messages = chat["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 5);
    assert_eq!(messages[0]["tool_calls"].as_array().unwrap().len(), 2, "consecutive calls share one message");
    assert_eq!(
        messages[1],
        json!({"role": "tool", "tool_call_id": "a", "content": "The tool's output is in the next user message."})
    );
    assert_eq!(messages[2]["role"], "tool");
    assert_eq!(
        messages[3],
        json!({"role": "user", "content": [{"type": "text", "text": "Content returned by tool call a:"},
            {"type": "image_url", "image_url": {"url": "https://i/1.png"}}]})
    );
    assert_eq!(messages[4], json!({"role": "user", "content": "next"}));
}

#[test]
fn tools_and_tool_choices() {
    let tools = json!([
        {"type": "function", "name": "get", "description": "Gets.", "parameters": {"type": "object"}, "strict": true},
        {"type": "custom", "name": "apply_patch", "description": "Patches.",
         "format": {"type": "grammar", "syntax": "lark", "definition": "start: \"x\""}},
        {"type": "local_shell"},
        {"type": "web_search", "search_context_size": "low"},
    ]);
    let (chat, dropped, _) =
        translate(json!({"input": "x", "tools": tools, "tool_choice": "required", "parallel_tool_calls": false}));
    let chat_tools = chat["tools"].as_array().unwrap();
    assert_eq!(chat_tools.len(), 3);
    assert_eq!(
        chat_tools[0],
        json!({"type": "function", "function": {"name": "get", "description": "Gets.", "parameters": {"type": "object"}, "strict": true}})
    );
    let custom = &chat_tools[1]["function"];
    assert_eq!(custom["name"], "apply_patch");
    assert_eq!(custom["parameters"]["required"], json!(["input"]));
    let description = custom["description"].as_str().unwrap();
    assert!(
        description.starts_with("Patches.\n\n") && description.contains("lark grammar:\nstart: \"x\""),
        "{description}"
    );
    assert_eq!(chat_tools[2]["function"]["name"], "local_shell");
    assert_eq!(chat_tools[2]["function"]["parameters"]["properties"]["command"]["type"], "array");
    assert_eq!(dropped, ["tools[3] web_search"]);
    assert_eq!((&chat["tool_choice"], &chat["parallel_tool_calls"]), (&json!("required"), &json!(false)));

    let choice = |choice: Value| translate(json!({"input": "x", "tools": tools, "tool_choice": choice}));
    assert_eq!(
        choice(json!({"type": "function", "name": "get"})).0["tool_choice"],
        json!({"type": "function", "function": {"name": "get"}})
    );
    let forced_custom = json!({"type": "function", "function": {"name": "apply_patch"}});
    assert_eq!(choice(json!({"type": "custom", "name": "apply_patch"})).0["tool_choice"], forced_custom);
    assert_eq!(choice(json!("none")).0["tool_choice"], "none");
    let (hosted, dropped, _) = choice(json!({"type": "web_search_preview"}));
    assert_eq!((hosted.get("tool_choice"), dropped.last().unwrap().as_str()), (None, "tool_choice web_search_preview"));
    let (allowed, _, _) =
        choice(json!({"type": "allowed_tools", "mode": "required", "tools": [{"type": "function", "name": "get"}]}));
    assert_eq!(allowed["tool_choice"], "required");
    assert_eq!(allowed["tools"].as_array().unwrap().len(), 1);
    assert_eq!(refusal(json!({"input": "x", "tool_choice": 3})).field, "tool_choice");
}

#[test]
fn text_formats() {
    let format = |text: Value| translate(json!({"input": "x", "text": text}));
    let schema = json!({"type": "object", "properties": {"a": {"type": "string"}}});
    let (chat, dropped, _) = format(
        json!({"format": {"type": "json_schema", "name": "out", "schema": schema, "strict": true}, "verbosity": "low"}),
    );
    assert_eq!(
        chat["response_format"],
        json!({"type": "json_schema", "json_schema": {"name": "out", "schema": schema, "strict": true}})
    );
    assert_eq!(dropped, ["text.verbosity"]);
    assert_eq!(format(json!({"format": {"type": "json_object"}})).0["response_format"], json!({"type": "json_object"}));
    assert_eq!(format(json!({"format": {"type": "text"}})).0.get("response_format"), None);
    assert_eq!(refusal(json!({"input": "x", "text": {"format": {"type": "yaml"}}})).field, "text.format.type");
}

#[test]
fn fields_that_change_the_answer_are_named_once_in_order() {
    let (chat, dropped, _) = translate(json!({
        "input": [{"type": "reasoning", "summary": []}, {"type": "reasoning", "summary": []}],
        "include": ["reasoning.encrypted_content"], "truncation": "auto", "background": true,
        "top_logprobs": 2, "max_tool_calls": 3, "prompt": {"id": "pmpt_1"}, "some_future_field": 1,
        "tools": [{"type": "file_search"}, {"type": "file_search"}],
    }));
    let want = [
        "include",
        "truncation",
        "background",
        "top_logprobs",
        "max_tool_calls",
        "prompt",
        "some_future_field",
        "tools[0] file_search",
        "tools[1] file_search",
        "input[0] reasoning",
        "input[1] reasoning",
    ];
    let mut sorted_want = want.to_vec();
    sorted_want.sort_unstable();
    let mut sorted = dropped.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, sorted_want, "every field named once");
    assert!(
        dropped.iter().position(|d| d == "tools[0] file_search")
            < dropped.iter().position(|d| d == "input[0] reasoning")
    );
    assert_eq!(chat.get("tools"), None, "no chat tools left");
    let (_, dup, _) =
        translate(json!({"input": "x", "tools": [{"type": "mcp"}], "tool_choice": {"type": "mcp"}, "include": ["a"]}));
    assert_eq!(dup, ["include", "tools[0] mcp", "tool_choice mcp"]);
}

#[test]
fn history_comes_before_this_input_and_is_named_by_its_own_path() {
    let history = [
        json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "first"}]}),
        json!({"type": "reasoning", "id": "rs_x", "summary": []}),
        json!({"type": "message", "id": "msg_x", "role": "assistant", "status": "completed",
               "content": [{"type": "output_text", "text": "answer", "annotations": []}]}),
    ];
    let (chat, dropped, items) = translate_with_history(json!({"instructions": "sys", "input": "second"}), &history);
    assert_eq!(
        chat["messages"],
        json!([{"role": "system", "content": "sys"}, {"role": "user", "content": "first"},
            {"role": "assistant", "content": "answer"}, {"role": "user", "content": "second"}])
    );
    assert_eq!(dropped, ["history[1] reasoning"]);
    assert_eq!(items.len(), 1, "only this request's input");
}

#[test]
fn refusals_name_their_path() {
    let path = |request: Value| refusal(request).field;
    assert_eq!(responses_request_to_chat(b"{nope", "m", &[]).unwrap_err().field, "body");
    assert_eq!(path(json!({"input": 7})), "input");
    assert_eq!(path(json!({"input": ["x", 1]})), "input[0]");
    assert_eq!(path(json!({"input": [{"role": "user", "content": "a"}, {"content": "b"}]})), "input[1].type");
    assert_eq!(path(json!({"input": [{"role": "tool", "content": "a"}]})), "input[0].role");
    let part = |part: Value| {
        path(json!({"input": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"},
        {"role": "user", "content": [part]}]}))
    };
    assert_eq!(part(json!({"type": "input_video"})), "input[2].content[0].type");
    assert_eq!(part(json!({"type": "input_image", "file_id": "file-1"})), "input[2].content[0].file_id");
    assert_eq!(part(json!({"type": "input_file", "file_id": "file-1"})), "input[2].content[0].file_id");
    assert_eq!(part(json!({"type": "input_text", "text": 5})), "input[2].content[0].text");
    let image_from_assistant =
        json!({"input": [{"role": "assistant", "content": [{"type": "input_image", "image_url": "u"}]}]});
    assert_eq!(path(image_from_assistant), "input[0].content[0].type");
    assert_eq!(path(json!({"input": [{"type": "function_call", "name": "f", "arguments": "{}"}]})), "input[0].call_id");
    assert_eq!(path(json!({"input": [{"type": "function_call_output", "output": "x"}]})), "input[0].call_id");
    assert_eq!(path(json!({"input": "x", "tools": {}})), "tools");
    assert_eq!(path(json!({"input": "x", "tools": [{"type": "function"}]})), "tools[0].name");
    assert_eq!(path(json!({"input": "x", "reasoning": {"effort": "max"}})), "reasoning.effort");
    assert_eq!(path(json!({"input": "x", "conversation": "conv_1"})), "conversation");
    assert_eq!(path(json!({"input": "x", "instructions": 1})), "instructions");
    let bad_history = responses_request_to_chat(br#"{"input":"x"}"#, "m", &[json!({"role": "user", "content": 3})]);
    assert_eq!(bad_history.unwrap_err().field, "history[0].content");
}

#[test]
fn a_rich_request_goes_on_to_anthropic() {
    let request = json!({
        "model": "claude", "instructions": "sys", "stream": true, "store": true, "metadata": {"a": "b"},
        "include": ["reasoning.encrypted_content"], "prompt_cache_key": "k", "parallel_tool_calls": false,
        "max_output_tokens": 8000, "temperature": 0.5, "user": "u", "reasoning": {"effort": "medium", "summary": "auto"},
        "text": {"format": {"type": "json_schema", "name": "o", "schema": {"type": "object"}}, "verbosity": "low"},
        "tools": [{"type": "function", "name": "f", "parameters": {"type": "object"}, "strict": false},
                  {"type": "custom", "name": "apply_patch"}, {"type": "local_shell"}, {"type": "web_search"}],
        "tool_choice": "auto",
        "input": [
            {"role": "developer", "content": [{"type": "input_text", "text": "dev"}]},
            {"role": "user", "content": [{"type": "input_text", "text": "hi"},
                {"type": "input_image", "image_url": "data:image/png;base64,AAAA"},
                {"type": "input_file", "filename": "d.pdf", "file_data": "data:application/pdf;base64,JVBE"}]},
            {"type": "reasoning", "summary": []},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]},
            {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{\"x\":1}"},
            {"type": "custom_tool_call", "call_id": "c2", "name": "apply_patch", "input": "p"},
            {"type": "local_shell_call", "call_id": "c3", "action": {"type": "exec", "command": ["ls"], "env": {}}},
            {"type": "function_call_output", "call_id": "c1", "output": "r1"},
            {"type": "custom_tool_call_output", "call_id": "c2", "output": "r2"},
            {"type": "function_call_output", "call_id": "c3", "output": "r3"},
        ],
    });
    let chat = responses_request_to_chat(&serde_json::to_vec(&request).unwrap(), "gpt-up", &[]).unwrap();
    let anthropic = chat_request_to_messages(&chat.body, "claude-x").unwrap_or_else(|e| panic!("{e}"));
    let anthropic: Value = serde_json::from_slice(&anthropic).unwrap();
    assert_eq!(anthropic["messages"].as_array().unwrap().len(), 3);
    assert_eq!(anthropic["tools"].as_array().unwrap().len(), 3);
    assert_eq!(anthropic["system"], json!([{"type": "text", "text": "sys"}, {"type": "text", "text": "dev"}]));
}
