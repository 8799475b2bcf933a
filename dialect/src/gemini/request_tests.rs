//! Unit tests of the OpenAI → Gemini request translation.

use super::*;

fn gemini(request: Value) -> Value {
    let bytes = chat_request_to_gemini(request.to_string().as_bytes()).unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

fn refused(request: Value) -> String {
    chat_request_to_gemini(request.to_string().as_bytes()).unwrap_err().field
}

fn hi() -> Value {
    json!([{"role": "user", "content": "hi"}])
}

#[test]
fn the_sample_request_field_by_field() {
    let body = include_bytes!("testdata/chat_request.json");
    let out: Value = serde_json::from_slice(&chat_request_to_gemini(body).unwrap()).unwrap();
    let keys: Vec<&str> = out.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["contents", "generationConfig", "systemInstruction", "toolConfig", "tools"]);
    assert_eq!(
        out["systemInstruction"],
        json!({"parts": [{"text": "You are a concise travel assistant."}, {"text": "Answer in English."}]})
    );
    assert_eq!(
        out["contents"],
        json!([
            {"role": "user", "parts": [
                {"text": "What is the weather where this photo was taken?"},
                {"inlineData": {"mimeType": "image/jpeg", "data": "/9j/4AAQSkZJRg=="}}]},
            {"role": "model", "parts": [{"functionCall": {"name": "get_weather", "args": {"location": "Paris, France", "unit": "celsius"}},
                "thoughtSignature": "CqQCAVSoXO5c8Y"}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "get_weather", "response": {"temperature": 18, "conditions": "cloudy"}}}]},
            {"role": "model", "parts": [{"text": "It is 18 °C and cloudy in Paris."}]},
            {"role": "user", "parts": [{"text": "And tomorrow?"}]}
        ])
    );
    assert_eq!(
        out["generationConfig"],
        json!({"temperature": 0.7, "topP": 0.95, "maxOutputTokens": 1024, "stopSequences": ["END"], "seed": 42,
            "thinkingConfig": {"thinkingBudget": 1024, "includeThoughts": true}})
    );
    assert_eq!(
        out["tools"],
        json!([{"functionDeclarations": [{"name": "get_weather", "description": "Current weather for a city",
            "parametersJsonSchema": {"type": "object", "properties": {"location": {"type": "string"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["location"], "additionalProperties": false}}]}])
    );
    assert_eq!(out["toolConfig"], json!({"functionCallingConfig": {"mode": "AUTO"}}));
}

#[test]
fn a_minimal_request_has_only_contents() {
    let out = gemini(json!({"model": "x", "messages": hi(), "stream": false, "n": 1, "presence_penalty": 0}));
    assert_eq!(out, json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}));
}

#[test]
fn generation_config_mappings() {
    let out = gemini(json!({"messages": hi(), "max_tokens": 5, "max_completion_tokens": 9, "stop": "##", "n": 2,
        "presence_penalty": 0.5, "frequency_penalty": -0.25, "logprobs": true, "top_logprobs": 3,
        "response_format": {"type": "json_object"}}));
    assert_eq!(
        out["generationConfig"],
        json!({"maxOutputTokens": 9, "stopSequences": ["##"], "candidateCount": 2, "presencePenalty": 0.5,
            "frequencyPenalty": -0.25, "responseLogprobs": true, "logprobs": 3, "responseMimeType": "application/json"})
    );
    let out = gemini(json!({"messages": hi(), "max_tokens": 5, "stop": [], "logprobs": false}));
    assert_eq!(out["generationConfig"], json!({"maxOutputTokens": 5}));
    let schema = json!({"type": "object", "properties": {"a": {"type": "integer"}}});
    let out = gemini(json!({"messages": hi(), "response_format": {"type": "json_schema",
        "json_schema": {"name": "x", "strict": true, "schema": schema}}}));
    assert_eq!(out["generationConfig"], json!({"responseMimeType": "application/json", "responseJsonSchema": schema}));
    let out = gemini(json!({"messages": hi(), "response_format": {"type": "text"}}));
    assert!(out.get("generationConfig").is_none());
}

#[test]
fn reasoning_efforts_become_thinking_budgets() {
    for (effort, budget) in [("minimal", 512), ("low", 1024), ("medium", 2048), ("high", 4096), ("xhigh", 8192)] {
        let out = gemini(json!({"messages": hi(), "reasoning_effort": effort}));
        assert_eq!(
            out["generationConfig"]["thinkingConfig"],
            json!({"thinkingBudget": budget, "includeThoughts": true}),
            "{effort}"
        );
    }
    let out = gemini(json!({"messages": hi(), "reasoning_effort": "none"}));
    assert_eq!(out["generationConfig"]["thinkingConfig"], json!({"thinkingBudget": 0}));
}

#[test]
fn tool_choices() {
    let tools =
        json!([{"type": "function", "function": {"name": "f"}}, {"type": "function", "function": {"name": "g"}}]);
    let mode =
        |choice: Value| gemini(json!({"messages": hi(), "tools": tools, "tool_choice": choice}))["toolConfig"].clone();
    assert_eq!(mode(json!("none")), json!({"functionCallingConfig": {"mode": "NONE"}}));
    assert_eq!(mode(json!("required")), json!({"functionCallingConfig": {"mode": "ANY"}}));
    assert_eq!(
        mode(json!({"type": "function", "function": {"name": "g"}})),
        json!({"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["g"]}})
    );
    let out = gemini(json!({"messages": hi(), "tools": tools}));
    assert_eq!(out["tools"], json!([{"functionDeclarations": [{"name": "f"}, {"name": "g"}]}]));
    assert!(out.get("toolConfig").is_none());
    let out = gemini(json!({"messages": hi(), "tools": [], "tool_choice": "none"}));
    assert!(out.get("tools").is_none() && out.get("toolConfig").is_none(), "{out}");
}

#[test]
fn turns_are_grouped_and_tool_results_named_after_their_calls() {
    let out = gemini(json!({"messages": [
        {"role": "user", "content": "a"},
        {"role": "user", "content": [{"type": "text", "text": "b"}, {"type": "text", "text": ""}]},
        {"role": "assistant", "content": "", "reasoning_content": "thought about it", "tool_calls": [
            {"id": "x1", "type": "function", "function": {"name": "f", "arguments": ""}},
            {"id": "x2", "type": "function", "function": {"name": "g", "arguments": " {\"k\": [1]} "}}]},
        {"role": "tool", "tool_call_id": "x2", "content": [{"type": "text", "text": "plain "}, {"type": "text", "text": "text"}]},
        {"role": "tool", "tool_call_id": "x1", "content": "[1, 2]"},
        {"role": "user", "content": "next"},
        {"role": "assistant", "content": null},
        {"role": "user", "content": "again"}
    ]}));
    assert_eq!(
        out["contents"],
        json!([
            {"role": "user", "parts": [{"text": "a"}, {"text": "b"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}, {"functionCall": {"name": "g", "args": {"k": [1]}}}]},
            {"role": "user", "parts": [
                {"functionResponse": {"name": "g", "response": {"content": "plain text"}}},
                {"functionResponse": {"name": "f", "response": {"content": "[1, 2]"}}}]},
            {"role": "user", "parts": [{"text": "next"}, {"text": "again"}]}
        ])
    );
}

#[test]
fn a_json_object_result_is_the_response_unless_it_holds_a_ref() {
    let call = json!({"role": "assistant", "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]});
    let result = |content: &str| {
        let out = gemini(json!({"messages": [call, {"role": "tool", "tool_call_id": "c", "content": content}]}));
        out["contents"][1]["parts"][0]["functionResponse"]["response"].clone()
    };
    assert_eq!(result("{\"ok\": true}"), json!({"ok": true}));
    assert_eq!(result("{\"a\": {\"$ref\": \"#/x\"}}"), json!({"content": "{\"a\": {\"$ref\": \"#/x\"}}"}));
    assert_eq!(result("not json"), json!({"content": "not json"}));
}

#[test]
fn media_parts() {
    let part = |part: Value| {
        gemini(json!({"messages": [{"role": "user", "content": [part]}]}))["contents"][0]["parts"][0].clone()
    };
    assert_eq!(
        part(json!({"type": "image_url", "image_url": {"url": "https://example.com/cat.PNG?x=1"}})),
        json!({"fileData": {"mimeType": "image/png", "fileUri": "https://example.com/cat.PNG?x=1"}})
    );
    assert_eq!(
        part(json!({"type": "image_url", "image_url": "gs://bucket/scan.pdf"})),
        json!({"fileData": {"mimeType": "application/pdf", "fileUri": "gs://bucket/scan.pdf"}})
    );
    let files_api = "https://generativelanguage.googleapis.com/v1beta/files/abc123";
    assert_eq!(
        part(json!({"type": "image_url", "image_url": {"url": files_api}})),
        json!({"fileData": {"fileUri": files_api}})
    );
    assert_eq!(
        part(json!({"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}})),
        json!({"inlineData": {"mimeType": "audio/wav", "data": "UklGRg=="}})
    );
    assert_eq!(
        part(
            json!({"type": "file", "file": {"filename": "a.pdf", "file_data": "data:application/pdf;base64,JVBERi0="}})
        ),
        json!({"inlineData": {"mimeType": "application/pdf", "data": "JVBERi0="}})
    );
}

#[test]
fn refusals_name_their_field() {
    let user = |part: Value| json!({"messages": [{"role": "user", "content": [{"type": "text", "text": "x"}, part]}]});
    let cases = [
        (json!({"messages": hi(), "logit_bias": {"50256": -100}}), "logit_bias"),
        (json!({"messages": hi(), "audio": {"voice": "alloy", "format": "wav"}}), "audio"),
        (json!({"messages": hi(), "modalities": ["text", "audio"]}), "modalities"),
        (json!({"messages": hi(), "service_tier": "flex"}), "service_tier"),
        (json!({"messages": hi(), "store": true}), "store"),
        (json!({"messages": hi(), "prediction": {"type": "content", "content": "x"}}), "prediction"),
        (json!({"messages": hi(), "web_search_options": {}}), "web_search_options"),
        (json!({"messages": hi(), "functions": [{"name": "f"}]}), "functions"),
        (json!({"messages": hi(), "top_k": 3}), "top_k"),
        (json!({"messages": hi(), "top_logprobs": 2}), "top_logprobs"),
        (json!({"messages": hi(), "reasoning_effort": "max"}), "reasoning_effort"),
        (json!({"messages": hi(), "temperature": "hot"}), "temperature"),
        (json!({"messages": hi(), "stop": [1]}), "stop"),
        (json!({"messages": hi(), "response_format": {"type": "grammar"}}), "response_format.type"),
        (
            json!({"messages": hi(), "response_format": {"type": "json_schema", "json_schema": {"name": "x", "format": 1}}}),
            "response_format.json_schema.format",
        ),
        (json!({"messages": hi(), "tools": [{"type": "custom", "custom": {"name": "x"}}]}), "tools[0].type"),
        (
            json!({"messages": hi(), "tools": [{"type": "function", "function": {"name": "f", "x": 1}}]}),
            "tools[0].function.x",
        ),
        (
            json!({"messages": hi(), "tools": [{"type": "function", "function": {"description": "d"}}]}),
            "tools[0].function.name",
        ),
        (
            json!({"messages": hi(), "tools": [{"type": "function", "function": {"name": "f"}}], "tool_choice": {"type": "allowed_tools"}}),
            "tool_choice.type",
        ),
        (
            json!({"messages": hi(), "tools": [{"type": "function", "function": {"name": "f"}}],
                "tool_choice": {"type": "function", "function": {"name": "g"}}}),
            "tool_choice.function.name",
        ),
        (json!({"messages": hi(), "tool_choice": "required"}), "tool_choice"),
        (json!({"messages": [{"role": "user", "content": "x", "name": "bob"}]}), "messages[0].name"),
        (json!({"messages": [{"role": "assistant", "content": "x", "refusal": "no"}]}), "messages[0].refusal"),
        (json!({"messages": [{"role": "user", "content": "x", "tool_calls": []}]}), "messages[0].tool_calls"),
        (json!({"messages": [{"role": "function", "name": "f", "content": "x"}]}), "messages[0].name"),
        (json!({"messages": [{"role": "function", "content": "x"}]}), "messages[0].role"),
        (json!({"messages": [{"role": "system", "content": "only a system prompt"}]}), "messages"),
        (
            json!({"messages": [{"role": "system", "content": [{"type": "image_url", "image_url": "data:image/png;base64,AA"}]}, {"role": "user", "content": "x"}]}),
            "messages[0].content[0].type",
        ),
        (
            user(json!({"type": "image_url", "image_url": {"url": "https://example.com/photo"}})),
            "messages[0].content[1].image_url.url",
        ),
        (
            user(json!({"type": "image_url", "image_url": {"url": "ftp://example.com/a.png"}})),
            "messages[0].content[1].image_url.url",
        ),
        (user(json!({"type": "image_url", "image_url": {}})), "messages[0].content[1].image_url.url"),
        (user(json!({"type": "file", "file": {"file_id": "file-abc"}})), "messages[0].content[1].file"),
        (user(json!({"type": "input_audio", "input_audio": {"data": "AA"}})), "messages[0].content[1].input_audio"),
        (user(json!({"type": "video_url", "video_url": "x"})), "messages[0].content[1].type"),
        (
            json!({"messages": [{"role": "assistant", "tool_calls": [{"id": "a", "type": "function", "function": {"name": "f", "arguments": "[1]"}}]}]}),
            "messages[0].tool_calls[0].function.arguments",
        ),
        (
            json!({"messages": [{"role": "assistant", "tool_calls": [{"id": "a", "type": "custom", "custom": {}}]}]}),
            "messages[0].tool_calls[0].type",
        ),
        (json!({"messages": [{"role": "tool", "tool_call_id": "nobody", "content": "x"}]}), "messages[0].tool_call_id"),
        (json!({"messages": "hi"}), "messages"),
        (json!({"messages": [7]}), "messages[0]"),
    ];
    for (request, field) in cases {
        assert_eq!(refused(request.clone()), field, "{request}");
    }
    assert_eq!(chat_request_to_gemini(b"[1]").unwrap_err().field, "body");
    assert_eq!(chat_request_to_gemini(b"{oops").unwrap_err().field, "body");
    let refusal = chat_request_to_gemini(br#"{"messages":[],"logit_bias":{"1":1}}"#).unwrap_err();
    assert!(refusal.message.contains("Gemini"), "{refusal}");
}
