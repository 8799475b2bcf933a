//! Unit tests of the OpenAI → Converse request translation.

use super::*;

const CLAUDE: &str = "us.anthropic.claude-sonnet-4-20250514-v1:0";

fn converse(request: Value) -> Value {
    converse_for(request, "")
}

fn converse_for(request: Value, model_id: &str) -> Value {
    let bytes = chat_request_to_converse_for(request.to_string().as_bytes(), model_id).unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

fn refused(request: Value) -> Untranslatable {
    chat_request_to_converse(request.to_string().as_bytes()).unwrap_err()
}

#[test]
fn a_whole_conversation() {
    let out = converse(json!({
        "model": "gpt-4o", "stream": true, "stream_options": {"include_usage": true}, "user": "u-1",
        "max_tokens": 100, "max_completion_tokens": 300, "temperature": 0.2, "top_p": 0.9, "stop": ["\n\nHuman:"],
        "messages": [
            {"role": "system", "content": "You are terse."},
            {"role": "developer", "content": [{"type": "text", "text": "Use metric units."}]},
            {"role": "user", "content": "Weather in Paris and Lyon?"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "tooluse_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}},
                {"id": "tooluse_2", "type": "function", "function": {"name": "get_weather", "arguments": ""}}]},
            {"role": "tool", "tool_call_id": "tooluse_1", "content": "18°C"},
            {"role": "tool", "tool_call_id": "tooluse_2", "content": [{"type": "text", "text": "21°C"}]},
            {"role": "user", "content": [{"type": "text", "text": "And this?"},
                {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,/9j/4AAQ", "detail": "high"}}]}],
        "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Current weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}],
        "tool_choice": "auto"}));
    assert_eq!(
        out,
        json!({
            "system": [{"text": "You are terse."}, {"text": "Use metric units."}],
            "messages": [
                {"role": "user", "content": [{"text": "Weather in Paris and Lyon?"}]},
                {"role": "assistant", "content": [
                    {"toolUse": {"toolUseId": "tooluse_1", "name": "get_weather", "input": {"city": "Paris"}}},
                    {"toolUse": {"toolUseId": "tooluse_2", "name": "get_weather", "input": {}}}]},
                {"role": "user", "content": [
                    {"toolResult": {"toolUseId": "tooluse_1", "content": [{"text": "18°C"}]}},
                    {"toolResult": {"toolUseId": "tooluse_2", "content": [{"text": "21°C"}]}},
                    {"text": "And this?"},
                    {"image": {"format": "jpeg", "source": {"bytes": "/9j/4AAQ"}}}]}],
            "inferenceConfig": {"maxTokens": 300, "temperature": 0.2, "topP": 0.9, "stopSequences": ["\n\nHuman:"]},
            "toolConfig": {
                "tools": [{"toolSpec": {"name": "get_weather", "description": "Current weather", "inputSchema": {"json":
                    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}}],
                "toolChoice": {"auto": {}}}
        })
    );
}

#[test]
fn minimal_request_has_no_inference_config() {
    let out = converse(json!({"messages": [{"role": "user", "content": "hi"}], "stop": "", "n": 1, "store": false}));
    assert_eq!(out, json!({"messages": [{"role": "user", "content": [{"text": "hi"}]}]}));
    let out = converse(json!({"messages": [], "stop": "END", "max_tokens": 5}));
    assert_eq!(out["inferenceConfig"], json!({"maxTokens": 5, "stopSequences": ["END"]}));
}

#[test]
fn same_role_turns_merge_and_empty_assistant_turns_vanish() {
    let out = converse(json!({"messages": [
        {"role": "user", "content": "a"}, {"role": "user", "content": "b"},
        {"role": "assistant", "content": ""},
        {"role": "user", "content": "c"},
        {"role": "assistant", "content": [{"type": "text", "text": "d"}, {"type": "text", "text": ""}]},
        {"role": "assistant", "content": "e"}]}));
    assert_eq!(
        out["messages"],
        json!([
            {"role": "user", "content": [{"text": "a"}, {"text": "b"}, {"text": "c"}]},
            {"role": "assistant", "content": [{"text": "d"}, {"text": "e"}]}])
    );
}

#[test]
fn tool_choices_and_tool_specs() {
    let tools = json!([{"type": "function", "function": {"name": "f", "description": "", "strict": true}},
        {"type": "function", "function": {"name": "g", "strict": false, "parameters": null}}]);
    let msgs = json!([{"role": "user", "content": "x"}]);
    let out = converse(json!({"messages": msgs, "tools": tools, "tool_choice": "required"}));
    let empty = json!({"json": {"type": "object", "properties": {}}});
    assert_eq!(
        out["toolConfig"],
        json!({"tools": [{"toolSpec": {"name": "f", "strict": true, "inputSchema": empty}},
            {"toolSpec": {"name": "g", "inputSchema": empty}}], "toolChoice": {"any": {}}})
    );
    let named = json!({"type": "function", "function": {"name": "g"}});
    let out = converse(json!({"messages": msgs, "tools": tools, "tool_choice": named, "parallel_tool_calls": true}));
    assert_eq!(out["toolConfig"]["toolChoice"], json!({"tool": {"name": "g"}}));
    let out = converse(json!({"messages": msgs, "tools": tools}));
    assert!(out["toolConfig"].get("toolChoice").is_none());
    let out = converse(json!({"messages": msgs, "tools": tools, "tool_choice": "none"}));
    assert!(out.get("toolConfig").is_none(), "{out}");
    let out = converse(json!({"messages": msgs, "tools": [], "tool_choice": "auto"}));
    assert!(out.get("toolConfig").is_none(), "{out}");
}

#[test]
fn json_schema_becomes_native_structured_output() {
    let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]});
    let out = converse(json!({"messages": [], "response_format": {"type": "json_schema",
        "json_schema": {"name": "count", "description": "A count", "schema": schema, "strict": true}}}));
    let text_format = &out["outputConfig"]["textFormat"];
    assert_eq!(text_format["type"], "json_schema");
    let definition = &text_format["structure"]["jsonSchema"];
    assert_eq!((definition["name"].as_str(), definition["description"].as_str()), (Some("count"), Some("A count")));
    let carried: Value = serde_json::from_str(definition["schema"].as_str().unwrap()).unwrap();
    assert_eq!(carried, schema);
    let out = converse(json!({"messages": [], "response_format": {"type": "text"}}));
    assert!(out.get("outputConfig").is_none());
}

#[test]
fn reasoning_effort_for_claude_only() {
    let out = converse_for(json!({"messages": [], "reasoning_effort": "medium"}), CLAUDE);
    assert_eq!(out["additionalModelRequestFields"], json!({"thinking": {"type": "enabled", "budget_tokens": 2048}}));
    assert_eq!(out["inferenceConfig"]["maxTokens"], DEFAULT_MAX_TOKENS);
    let arn = "arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-7-sonnet-20250219-v1:0";
    let out = converse_for(json!({"messages": [], "reasoning_effort": "high", "max_tokens": 3000}), arn);
    assert_eq!(out["additionalModelRequestFields"]["thinking"]["budget_tokens"], 2999);
    let out = converse_for(json!({"messages": [], "reasoning_effort": "none"}), CLAUDE);
    assert!(out.get("additionalModelRequestFields").is_none() && out.get("inferenceConfig").is_none(), "{out}");
    let tight = chat_request_to_converse_for(br#"{"messages":[],"reasoning_effort":"low","max_tokens":500}"#, CLAUDE);
    assert_eq!(tight.unwrap_err().field, "reasoning_effort");
    let odd = chat_request_to_converse_for(br#"{"messages":[],"reasoning_effort":"max"}"#, CLAUDE);
    assert_eq!(odd.unwrap_err().field, "reasoning_effort");
    let nova = chat_request_to_converse_for(br#"{"messages":[],"reasoning_effort":"low"}"#, "amazon.nova-pro-v1:0");
    assert!(nova.unwrap_err().message.contains("Anthropic Claude"));
    assert_eq!(refused(json!({"messages": [], "reasoning_effort": "low"})).field, "reasoning_effort");
}

#[test]
fn files_service_tiers_and_accepted_fields() {
    let out = converse(json!({"service_tier": "priority", "metadata": {"k": "v"}, "prompt_cache_key": "p",
        "safety_identifier": "s", "logprobs": false, "frequency_penalty": 0, "logit_bias": {}, "modalities": ["text"],
        "messages": [{"role": "user", "cache_control": {"type": "ephemeral"}, "content": [
            {"type": "text", "text": "Summarise", "cache_control": {"type": "ephemeral"}},
            {"type": "file", "file": {"filename": "Q3 report.final.pdf", "file_data": "data:application/pdf;base64,JVBERi0x"}},
            {"type": "file", "file": {"file_data": "data:text/csv;base64,YSxi"}},
            {"type": "image_url", "image_url": "data:image/webp;base64,UklG"}]}]}));
    assert_eq!(out["serviceTier"], json!({"type": "priority"}));
    assert_eq!(
        out["messages"][0]["content"],
        json!([{"text": "Summarise"},
            {"document": {"format": "pdf", "name": "Q3 report-final-pdf", "source": {"bytes": "JVBERi0x"}}},
            {"document": {"format": "csv", "name": "document", "source": {"bytes": "YSxi"}}},
            {"image": {"format": "webp", "source": {"bytes": "UklG"}}}])
    );
    assert!(converse(json!({"messages": [], "service_tier": "auto"})).get("serviceTier").is_none());
}

#[test]
fn refusals_name_their_field() {
    let user = |content: Value| json!({"messages": [{"role": "user", "content": content}]});
    let cases = [
        (json!({"messages": [], "n": 2}), "n"),
        (json!({"messages": [], "logprobs": true}), "logprobs"),
        (json!({"messages": [], "top_logprobs": 3}), "top_logprobs"),
        (json!({"messages": [], "logit_bias": {"1": 5}}), "logit_bias"),
        (json!({"messages": [], "seed": 7}), "seed"),
        (json!({"messages": [], "presence_penalty": 0.5}), "presence_penalty"),
        (json!({"messages": [], "frequency_penalty": 0.1}), "frequency_penalty"),
        (json!({"messages": [], "store": true}), "store"),
        (json!({"messages": [], "audio": {"voice": "x"}}), "audio"),
        (json!({"messages": [], "modalities": ["text", "audio"]}), "modalities"),
        (json!({"messages": [], "parallel_tool_calls": false}), "parallel_tool_calls"),
        (json!({"messages": [], "service_tier": "scale"}), "service_tier"),
        (json!({"messages": [], "response_format": {"type": "json_object"}}), "response_format.type"),
        (json!({"messages": [], "functions": []}), "functions"),
        (json!({"messages": [], "stop": 5}), "stop"),
        (json!({"messages": [], "tool_choice": "required"}), "tool_choice"),
        (json!({"messages": [], "tool_choice": {"type": "allowed_tools"}}), "tool_choice.type"),
        (json!({"messages": [], "tools": [{"type": "custom", "custom": {}}]}), "tools[0].type"),
        (
            json!({"messages": [], "tools": [{"type": "function", "function": {"name": "f", "x": 1}}]}),
            "tools[0].function.x",
        ),
        (json!({"messages": "hi"}), "messages"),
        (json!({"messages": [{"role": "function", "content": "x"}]}), "messages[0].role"),
        (json!({"messages": [{"role": "user", "content": "x", "name": "bob"}]}), "messages[0].name"),
        (json!({"messages": [{"role": "system", "content": [{"type": "image_url"}]}]}), "messages[0].content[0].type"),
        (user(json!([{"type": "input_audio", "input_audio": {}}])), "messages[0].content[0].type"),
        (
            user(json!([{"type": "image_url", "image_url": {"url": "https://x.test/a.png"}}])),
            "messages[0].content[0].image_url.url",
        ),
        (
            user(json!([{"type": "image_url", "image_url": {"url": "data:image/bmp;base64,Qk0="}}])),
            "messages[0].content[0].image_url.url",
        ),
        (user(json!([{"type": "image_url", "image_url": {}}])), "messages[0].content[0].image_url.url"),
        (user(json!([{"type": "file", "file": {"file_id": "file-1"}}])), "messages[0].content[0].file"),
        (
            user(json!([{"type": "file", "file": {"file_data": "data:video/mp4;base64,AA"}}])),
            "messages[0].content[0].file.file_data",
        ),
        (user(json!(5)), "messages[0].content"),
    ];
    for (request, field) in cases {
        let error = refused(request.clone());
        assert_eq!(error.field, field, "{request}");
        assert!(!error.message.is_empty());
    }
    let url = refused(user(json!([{"type": "image_url", "image_url": {"url": "https://x.test/a.png"}}])));
    assert!(url.message.contains("URL"), "{}", url.message);
    assert_eq!(chat_request_to_converse(b"[]").unwrap_err().field, "body");
    assert_eq!(chat_request_to_converse(b"{").unwrap_err().field, "body");
}

#[test]
fn assistant_and_tool_refusals() {
    let call = |arguments: &str| {
        json!({"messages": [{"role": "assistant", "tool_calls": [{"id": "a", "type": "function",
            "function": {"name": "f", "arguments": arguments}}]}]})
    };
    assert_eq!(refused(call("[1]")).field, "messages[0].tool_calls[0].function.arguments");
    assert_eq!(refused(call("{bad")).field, "messages[0].tool_calls[0].function.arguments");
    let custom = json!({"messages": [{"role": "assistant", "tool_calls": [{"id": "a", "type": "custom"}]}]});
    assert_eq!(refused(custom).field, "messages[0].tool_calls[0].type");
    let not_array = json!({"messages": [{"role": "assistant", "tool_calls": {}}]});
    assert_eq!(refused(not_array).field, "messages[0].tool_calls");
    let refusal = json!({"messages": [{"role": "assistant", "content": "x", "refusal": "no"}]});
    assert_eq!(refused(refusal).field, "messages[0].refusal");
    let image_result = json!({"messages": [{"role": "tool", "tool_call_id": "a", "content": [{"type": "image_url", "image_url": {}}]}]});
    assert_eq!(refused(image_result).field, "messages[0].content[0].type");
    // tool_choice none with tool history: Converse needs the tools declared and cannot forbid them.
    let history = json!({"tool_choice": "none",
        "tools": [{"type": "function", "function": {"name": "f"}}],
        "messages": [{"role": "user", "content": "q"},
            {"role": "assistant", "tool_calls": [{"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "a", "content": "r"}]});
    assert_eq!(refused(history).field, "tool_choice");
}
