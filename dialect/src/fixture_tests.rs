//! Every wire-format fixture through its translator, checked field by field; every stream fed in
//! one piece, one byte at a time and split at every point, giving the same bytes.

use serde_json::{json, Value};

use super::sse::SseSplitter;
use super::*;

pub(super) fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/../tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn json_of(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(bytes)))
}

/// The translated stream's events as (event name, data), `[DONE]` as the string "DONE".
pub(super) fn sse_events(bytes: &[u8]) -> Vec<(String, Value)> {
    let mut events = Vec::new();
    let mut splitter = SseSplitter::new();
    let mut push = |e: sse::SseEvent<'_>| {
        let data = if e.data == b"[DONE]" { json!("DONE") } else { json_of(e.data) };
        events.push((String::from_utf8_lossy(e.event).into_owned(), data));
    };
    splitter.feed(bytes, &mut push).unwrap();
    splitter.finish(&mut push).unwrap();
    events
}

/// Runs a stream through a fresh translator in the given pieces; (output, usage).
pub(super) fn run<T: StreamTranslator>(mut translator: T, pieces: &[&[u8]]) -> (Vec<u8>, Option<(u64, u64)>) {
    let mut out = Vec::new();
    for piece in pieces {
        translator.feed(piece, &mut out);
    }
    translator.finish(&mut out, true);
    (out, translator.usage())
}

fn same_output_in_any_split<T: StreamTranslator>(make: impl Fn() -> T, input: &[u8]) -> (Vec<u8>, Option<(u64, u64)>) {
    let whole = run(make(), &[input]);
    let bytes: Vec<&[u8]> = input.chunks(1).collect();
    assert_eq!(run(make(), &bytes), whole, "one byte at a time");
    for cut in (0..input.len()).step_by(7) {
        assert_eq!(run(make(), &[&input[..cut], &input[cut..]]), whole, "cut at {cut}");
    }
    whole
}

#[test]
fn anthropic_request_to_chat_field_by_field() {
    let out = json_of(&messages_request_to_chat(&fixture("anthropic_messages_request.json"), "gpt-4o").unwrap().body);
    let keys: Vec<&str> = out.as_object().unwrap().keys().map(String::as_str).collect();
    let want = ["max_tokens", "messages", "model", "stop", "stream", "temperature", "tool_choice", "tools", "user"];
    assert_eq!(keys, want);
    assert_eq!(out["model"], "gpt-4o");
    assert_eq!(out["max_tokens"], 1024);
    assert_eq!(out["stop"], json!(["\n\nHuman:"]));
    assert_eq!(out["temperature"], 0.5);
    assert_eq!(out["stream"], false);
    assert_eq!(out["user"], "13803d75-b4b5-4c3e-b2a2-6f21399b021b");
    assert_eq!(out["tool_choice"], "auto");
    let tool = &out["tools"][0];
    assert_eq!(tool["type"], "function");
    assert_eq!(tool["function"]["name"], "get_weather");
    assert_eq!(tool["function"]["description"], "Get the current weather in a given location");
    assert_eq!(tool["function"]["parameters"]["required"], json!(["location"]));
    let messages = out["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 4);
    assert_eq!(messages[0], json!({"role": "system", "content": "You are a terse assistant for a weather app."}));
    assert_eq!(messages[1]["role"], "user");
    let image = messages[1]["content"][0]["image_url"]["url"].as_str().unwrap();
    assert!(image.starts_with("data:image/png;base64,iVBORw0KGgo") && image.ends_with("ErkJggg=="), "{image}");
    assert_eq!(
        messages[1]["content"][1],
        json!({"type": "text", "text": "Where might this photo be from, and what's the weather in Boston now?"})
    );
    assert_eq!(messages[2]["content"], "I'll check the current weather in Boston.");
    let call = &messages[2]["tool_calls"][0];
    assert_eq!((call["id"].as_str(), call["type"].as_str()), (Some("toolu_01A09q90qw90lq917835lq9"), Some("function")));
    assert_eq!(call["function"]["name"], "get_weather");
    assert_eq!(json_of(call["function"]["arguments"].as_str().unwrap().as_bytes()), json!({"location": "Boston, MA"}));
    assert_eq!(
        messages[3],
        json!({"role": "tool", "tool_call_id": "toolu_01A09q90qw90lq917835lq9", "content": "15 degrees, cloudy"})
    );
}

#[test]
fn openai_request_to_messages_field_by_field() {
    let body = fixture("openai_chat_request.json");
    // The fixture holds two fields Anthropic cannot express: each is named in turn.
    assert_eq!(chat_request_to_messages(&body, "claude").unwrap_err().field, "seed");
    let mut request = json_of(&body);
    request.as_object_mut().unwrap().remove("seed");
    let without_seed = request.to_string();
    assert_eq!(chat_request_to_messages(without_seed.as_bytes(), "claude").unwrap_err().field, "messages[4].name");
    request["messages"][4].as_object_mut().unwrap().remove("name");
    let out = json_of(&chat_request_to_messages(request.to_string().as_bytes(), "claude-sonnet").unwrap());
    let keys: Vec<&str> = out.as_object().unwrap().keys().map(String::as_str).collect();
    let want = [
        "max_tokens",
        "messages",
        "metadata",
        "model",
        "stop_sequences",
        "stream",
        "system",
        "temperature",
        "tool_choice",
        "tools",
        "top_p",
    ];
    assert_eq!(keys, want);
    assert_eq!(out["model"], "claude-sonnet");
    assert_eq!(out["system"], "You are a helpful assistant. Answer briefly.");
    assert_eq!(out["max_tokens"], 300);
    assert_eq!((out["temperature"].as_f64(), out["top_p"].as_f64()), (Some(0.7), Some(1.0)));
    assert_eq!(out["stop_sequences"], json!(["\n\n\n"]));
    assert_eq!(out["metadata"], json!({"user_id": "user-1234"}));
    assert_eq!(out["tool_choice"], json!({"type": "auto"}));
    assert_eq!(out["stream"], false);
    let tool = &out["tools"][0];
    assert_eq!(tool["name"], "get_current_weather");
    assert_eq!(tool["input_schema"]["properties"]["unit"]["enum"], json!(["celsius", "fahrenheit"]));
    assert!(tool.get("strict").is_none(), "strict: false is the default");
    let turns = out["messages"].as_array().unwrap();
    assert_eq!(turns.len(), 4);
    let user = &turns[0]["content"];
    assert_eq!(
        user[0],
        json!({"type": "text", "text": "What's in this image, and what's the weather there right now?"})
    );
    assert_eq!(user[1]["source"]["type"], "url");
    assert!(user[1]["source"]["url"]
        .as_str()
        .unwrap()
        .ends_with("2560px-Gfp-wisconsin-madison-the-nature-boardwalk.jpg"));
    assert_eq!(user[2]["source"]["type"], "base64");
    assert_eq!(user[2]["source"]["media_type"], "image/png");
    assert!(user[2]["source"]["data"].as_str().unwrap().starts_with("iVBORw0KGgo"));
    assert_eq!(
        turns[1],
        json!({"role": "assistant", "content": [{"type": "tool_use", "id": "call_abc123", "name": "get_current_weather",
            "input": {"location": "Madison, WI", "unit": "celsius"}}]})
    );
    assert_eq!(
        turns[2],
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_abc123",
            "content": "{\"temperature\": 21, \"condition\": \"sunny\"}"}]})
    );
    assert_eq!(turns[3], json!({"role": "user", "content": "Thanks. One sentence please."}));
}

#[test]
fn openai_stream_request_to_messages() {
    let out = json_of(&chat_request_to_messages(&fixture("openai_chat_request_stream.json"), "claude").unwrap());
    assert_eq!(
        out,
        json!({"model": "claude", "max_tokens": 256, "stream": true, "system": "You are a helpful assistant.",
            "messages": [{"role": "user", "content": "Hello!"}]})
    );
}

#[test]
fn anthropic_responses_to_chat() {
    let out =
        json_of(&messages_response_to_chat_at(&fixture("anthropic_messages_response.json"), "gpt-4o", 9).unwrap());
    assert_eq!(out["id"], "msg_01XFDUDYJgAACzvnptvVoYEL");
    assert_eq!(
        (out["object"].as_str(), out["created"].as_u64(), out["model"].as_str()),
        (Some("chat.completion"), Some(9), Some("gpt-4o"))
    );
    let choice = &out["choices"][0];
    assert_eq!(choice["finish_reason"], "stop");
    assert_eq!(
        choice["message"]["content"],
        "The photo looks like a boardwalk through a meadow. In Boston it is currently 15 degrees and cloudy."
    );
    assert!(choice["message"].get("tool_calls").is_none());
    assert_eq!(
        out["usage"],
        json!({"prompt_tokens": 484, "completion_tokens": 27, "total_tokens": 511, "prompt_tokens_details": {"cached_tokens": 12}})
    );

    let out =
        json_of(&messages_response_to_chat_at(&fixture("anthropic_messages_response_tool_use.json"), "m", 9).unwrap());
    let message = &out["choices"][0]["message"];
    assert_eq!(message["content"], "I'll check the current weather in Boston.");
    assert_eq!(message["tool_calls"][0]["id"], "toolu_01A09q90qw90lq917835lq9");
    assert_eq!(message["tool_calls"][0]["function"]["name"], "get_weather");
    let arguments = message["tool_calls"][0]["function"]["arguments"].as_str().unwrap();
    assert_eq!(json_of(arguments.as_bytes()), json!({"location": "Boston, MA"}));
    assert_eq!(out["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(
        (out["usage"]["prompt_tokens"].as_u64(), out["usage"]["completion_tokens"].as_u64()),
        (Some(403), Some(54))
    );
}

#[test]
fn openai_responses_to_messages() {
    let out = json_of(&chat_response_to_messages(&fixture("openai_chat_response.json"), "claude-x").unwrap());
    assert_eq!(
        out,
        json!({"id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT", "type": "message", "role": "assistant", "model": "claude-x",
            "content": [{"type": "text", "text": "Hello! How can I assist you today?"}],
            "stop_reason": "end_turn", "stop_sequence": null,
            "usage": {"input_tokens": 19, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 10}})
    );
    let out =
        json_of(&chat_response_to_messages(&fixture("openai_chat_response_tool_calls.json"), "claude-x").unwrap());
    assert_eq!(
        out["content"],
        json!([{"type": "tool_use", "id": "call_abc123", "name": "get_current_weather", "input": {"location": "Boston, MA"}}])
    );
    assert_eq!(out["stop_reason"], "tool_use");
    assert_eq!((out["usage"]["input_tokens"].as_u64(), out["usage"]["output_tokens"].as_u64()), (Some(82), Some(17)));
}

fn chat_deltas(events: &[(String, Value)]) -> Vec<&Value> {
    events.iter().filter_map(|(_, chunk)| chunk.pointer("/choices/0/delta")).collect()
}

#[test]
fn anthropic_text_stream_to_chat() {
    let input = fixture("anthropic_messages_stream.sse");
    let (out, usage) = same_output_in_any_split(|| MessagesToChatStream::with_created("gpt-4o", true, 3), &input);
    assert_eq!(usage, Some((25, 15)));
    let events = sse_events(&out);
    assert!(events.iter().all(|(name, _)| name.is_empty()), "OpenAI chunks have no event names");
    let deltas = chat_deltas(&events);
    assert_eq!(
        deltas,
        [
            &json!({"role": "assistant", "content": ""}),
            &json!({"content": "Hello"}),
            &json!({"content": "!"}),
            &json!({})
        ]
    );
    assert_eq!(events[3].1["choices"][0]["finish_reason"], "stop");
    for (_, chunk) in &events[..4] {
        assert_eq!(
            (chunk["id"].as_str(), chunk["model"].as_str()),
            (Some("msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY"), Some("gpt-4o"))
        );
        assert_eq!(chunk["object"], "chat.completion.chunk");
    }
    assert_eq!(
        events[4].1["usage"],
        json!({"prompt_tokens": 25, "completion_tokens": 15, "total_tokens": 40, "prompt_tokens_details": {"cached_tokens": 0}})
    );
    assert_eq!(events[5].1, "DONE");
    assert_eq!(events.len(), 6);
}

#[test]
fn anthropic_tool_stream_to_chat() {
    let input = fixture("anthropic_messages_stream_tool_use.sse");
    let (out, usage) = same_output_in_any_split(|| MessagesToChatStream::with_created("m", false, 3), &input);
    assert_eq!(usage, Some((472, 89)));
    let events = sse_events(&out);
    let text: String = chat_deltas(&events).iter().filter_map(|d| d["content"].as_str()).collect();
    assert_eq!(text, "Okay, let me check the weather for Boston.");
    let calls: Vec<&Value> = chat_deltas(&events).into_iter().filter_map(|d| d.pointer("/tool_calls/0")).collect();
    assert_eq!(
        calls[0],
        &json!({"index": 0, "id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "type": "function", "function": {"name": "get_weather", "arguments": ""}})
    );
    assert_eq!(calls.len(), 4, "the start and three non-empty fragments");
    let arguments: String = calls.iter().filter_map(|c| c["function"]["arguments"].as_str()).collect();
    assert_eq!(json_of(arguments.as_bytes()), json!({"location": "Boston, MA"}));
    assert_eq!(events[events.len() - 2].1["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(events.last().unwrap().1, "DONE");
}

#[test]
fn anthropic_error_stream_to_chat() {
    let input = fixture("anthropic_messages_stream_error.sse");
    let (out, _) = same_output_in_any_split(|| MessagesToChatStream::with_created("m", true, 3), &input);
    let events = sse_events(&out);
    assert_eq!(events.len(), 3);
    assert_eq!(events[1].1["choices"][0]["delta"]["content"], "Sure, here");
    assert_eq!(
        events[2].1,
        json!({"error": {"message": "Overloaded", "type": "overloaded_error", "param": null, "code": null}})
    );
}

#[test]
fn openai_text_stream_to_messages() {
    let input = fixture("openai_chat_stream.sse");
    let (out, usage) = same_output_in_any_split(|| ChatToMessagesStream::new("claude-x"), &input);
    assert_eq!(usage, Some((19, 10)));
    let events = sse_events(&out);
    let names: Vec<&str> = events.iter().map(|(name, _)| name.as_str()).collect();
    let mut want = vec!["message_start", "content_block_start"];
    want.extend(["content_block_delta"; 9]);
    want.extend(["content_block_stop", "message_delta", "message_stop"]);
    assert_eq!(names, want);
    for (name, data) in &events {
        assert_eq!(data["type"], name.as_str(), "the data's type is the event's name");
    }
    let message = &events[0].1["message"];
    assert_eq!(
        (message["id"].as_str(), message["model"].as_str()),
        (Some("chatcmpl-CFx3kZ9fixtureStream01"), Some("claude-x"))
    );
    assert_eq!(events[1].1["content_block"], json!({"type": "text", "text": ""}));
    let text: String = events.iter().filter_map(|(_, d)| d.pointer("/delta/text").and_then(Value::as_str)).collect();
    assert_eq!(text, "Hello! How can I help you today?");
    assert_eq!(
        events[12].1,
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null},
            "usage": {"input_tokens": 19, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 10}})
    );
}

#[test]
fn openai_tool_stream_to_messages() {
    let input = fixture("openai_chat_stream_tool_calls.sse");
    let (out, usage) = same_output_in_any_split(|| ChatToMessagesStream::new("claude-x"), &input);
    assert_eq!(usage, None, "the fixture carries no usage chunk");
    let events = sse_events(&out);
    assert_eq!(
        events[1].1["content_block"],
        json!({"type": "tool_use", "id": "call_Qx3fixture9Lk2", "name": "get_current_weather", "input": {}})
    );
    let fragments: String =
        events.iter().filter_map(|(_, d)| d.pointer("/delta/partial_json").and_then(Value::as_str)).collect();
    assert_eq!(json_of(fragments.as_bytes()), json!({"location": "Boston, MA", "unit": "celsius"}));
    let names: Vec<&str> = events.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(&names[names.len() - 3..], ["content_block_stop", "message_delta", "message_stop"]);
    assert_eq!(events[events.len() - 2].1["delta"]["stop_reason"], "tool_use");
}

#[test]
fn anthropic_error_bodies_to_openai() {
    for (name, status, kind) in [
        ("anthropic_error_400_prompt_too_long.json", 400, "invalid_request_error"),
        ("anthropic_error_404_not_found.json", 404, "not_found_error"),
        ("anthropic_error_429_rate_limit.json", 429, "rate_limit_error"),
        ("anthropic_error_529_overloaded.json", 529, "overloaded_error"),
    ] {
        let body = fixture(name);
        let out = json_of(&error_to_openai(status, &body));
        assert_eq!(out["error"]["message"], json_of(&body)["error"]["message"], "{name}");
        assert_eq!(out["error"]["type"], kind, "{name}");
        let code = if status == 400 { "context_length_exceeded".to_string() } else { status.to_string() };
        assert_eq!(out["error"]["code"], code.as_str(), "{name}");
    }
}

#[test]
fn openai_error_bodies_to_anthropic() {
    for (name, status, kind) in [
        ("openai_error_400_context_length.json", 400, "invalid_request_error"),
        ("openai_error_401_invalid_api_key.json", 401, "authentication_error"),
        ("openai_error_404_model_not_found.json", 404, "not_found_error"),
        ("openai_error_429_insufficient_quota.json", 429, "rate_limit_error"),
        ("openai_error_429_rate_limit.json", 429, "rate_limit_error"),
    ] {
        let body = fixture(name);
        let out = json_of(&error_to_anthropic(status, &body));
        let message = json_of(&body)["error"]["message"].as_str().unwrap().to_string();
        let message = if status == 400 { format!("prompt is too long: {message}") } else { message };
        assert_eq!(out, json!({"type": "error", "error": {"type": kind, "message": message}}), "{name}");
        assert_eq!(error_to_openai(status, &body), body, "{name}: OpenAI bodies pass through");
    }
}

#[test]
fn openrouter_streams_to_messages() {
    let input = fixture("openrouter_chat_stream.sse");
    let (out, usage) = same_output_in_any_split(|| ChatToMessagesStream::new("claude-x"), &input);
    assert_eq!(usage, Some((14, 8)), "the usage chunk, cost fields and all");
    let events = sse_events(&out);
    let text: String = events.iter().filter_map(|(_, d)| d.pointer("/delta/text").and_then(Value::as_str)).collect();
    assert_eq!(text, "Paris is the capital of France.");
    assert_eq!(events.last().unwrap().0, "message_stop");

    let input = fixture("openrouter_chat_stream_midstream_error.sse");
    let (out, _) = same_output_in_any_split(|| ChatToMessagesStream::new("claude-x"), &input);
    let events = sse_events(&out);
    let text: String = events.iter().filter_map(|(_, d)| d.pointer("/delta/text").and_then(Value::as_str)).collect();
    assert_eq!(text, "The three main points");
    let (name, error) = events.last().unwrap();
    assert_eq!(name, "error");
    assert_eq!(
        error,
        &json!({"type": "error", "error": {"type": "api_error", "message": "Provider disconnected unexpectedly"}})
    );
}
