//! The round-trip property: an OpenAI request made of what both dialects can express (system
//! prompts, text turns, tools, tool calls and their results, stop, temperature, top_p,
//! max_tokens, tool_choice, parallel_tool_calls: false, user) translated to Anthropic and back is
//! the same request. Answers likewise: an Anthropic answer of text and tool uses, to OpenAI and
//! back, keeps its content, stop reason and usage.

use proptest::prelude::*;
use serde_json::{json, Map, Value};

use super::*;

fn text() -> impl Strategy<Value = String> {
    "\\PC{0,24}"
}

fn arguments() -> impl Strategy<Value = Value> {
    let scalar = prop_oneof![
        any::<i32>().prop_map(Value::from),
        text().prop_map(Value::from),
        any::<bool>().prop_map(Value::from)
    ];
    proptest::collection::btree_map("[a-z_]{1,8}", scalar, 0..4).prop_map(|m| Value::Object(m.into_iter().collect()))
}

fn tool_name() -> impl Strategy<Value = String> {
    "[a-zA-Z_][a-zA-Z0-9_-]{0,16}"
}

/// One exchange: a user turn, an assistant text turn, or an assistant turn with tool calls
/// followed by one tool message per call.
fn exchange() -> impl Strategy<Value = Vec<Value>> {
    let call = (tool_name(), "[a-zA-Z0-9]{1,12}", arguments(), text());
    prop_oneof![
        text().prop_map(|t| vec![json!({"role": "user", "content": t})]),
        text().prop_map(|t| vec![json!({"role": "assistant", "content": t})]),
        (proptest::option::of("\\PC{1,24}"), proptest::collection::vec(call, 1..4)).prop_map(|(content, calls)| {
            let tool_calls: Vec<Value> = calls
                .iter()
                .map(|(name, id, args, _)| {
                    json!({"id": format!("call_{id}"), "type": "function",
                    "function": {"name": name, "arguments": args.to_string()}})
                })
                .collect();
            let mut turn = vec![json!({"role": "assistant", "content": content, "tool_calls": tool_calls})];
            for (_, id, _, result) in calls {
                turn.push(json!({"role": "tool", "tool_call_id": format!("call_{id}"), "content": result}));
            }
            turn
        }),
    ]
}

fn tool() -> impl Strategy<Value = Value> {
    (tool_name(), text(), any::<bool>()).prop_map(|(name, description, strict)| {
        let parameters = json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]});
        let mut function = json!({"name": name, "description": description, "parameters": parameters});
        if strict {
            function["strict"] = true.into();
        }
        json!({"type": "function", "function": function})
    })
}

fn request() -> impl Strategy<Value = Value> {
    let knobs = (
        proptest::option::of(1u64..200_000),
        proptest::option::of((0u32..=100).prop_map(|t| f64::from(t) / 100.0)),
        proptest::option::of((1u32..=100).prop_map(|t| f64::from(t) / 100.0)),
        proptest::option::of(proptest::collection::vec("\\PC*[a-z]\\PC*", 1..4)),
        proptest::option::of("[a-z0-9-]{1,12}"),
    );
    let tooling = (
        proptest::collection::vec(tool(), 0..3),
        proptest::option::of(prop_oneof![Just(json!("auto")), Just(json!("required")), Just(json!("none"))]),
        any::<bool>(),
    );
    (proptest::collection::vec(text(), 0..3), proptest::collection::vec(exchange(), 1..6), knobs, tooling).prop_map(
        |(system, exchanges, (max_tokens, temperature, top_p, stop, user), (tools, choice, serial))| {
            let mut messages: Vec<Value> =
                system.into_iter().map(|s| json!({"role": "system", "content": s})).collect();
            messages.extend(exchanges.into_iter().flatten());
            let mut request = Map::new();
            request.insert("model".into(), "m2".into());
            request.insert("messages".into(), messages.into());
            request.insert("max_tokens".into(), max_tokens.unwrap_or(DEFAULT_MAX_TOKENS).into());
            let optional = [
                ("temperature", temperature.map(Value::from)),
                ("top_p", top_p.map(Value::from)),
                ("stop", stop.map(Value::from)),
                ("user", user.map(Value::from)),
            ];
            for (key, value) in optional {
                if let Some(value) = value {
                    request.insert(key.into(), value);
                }
            }
            if !tools.is_empty() {
                if let Some(Value::String(first)) = tools[0].pointer("/function/name").cloned() {
                    let named = json!({"type": "function", "function": {"name": first}});
                    request.insert("tool_choice".into(), if serial { named } else { choice.unwrap_or(json!("auto")) });
                }
                if serial {
                    request.insert("parallel_tool_calls".into(), false.into());
                }
                request.insert("tools".into(), tools.into());
            }
            Value::Object(request)
        },
    )
}

fn answer() -> impl Strategy<Value = Value> {
    let block = prop_oneof![
        "\\PC{1,24}".prop_map(|t| json!({"type": "text", "text": t})),
        (tool_name(), "[a-zA-Z0-9]{1,12}", arguments()).prop_map(
            |(name, id, input)| json!({"type": "tool_use", "id": format!("toolu_{id}"), "name": name, "input": input})
        ),
    ];
    let stop = prop_oneof![Just("end_turn"), Just("max_tokens"), Just("tool_use"), Just("refusal")];
    (proptest::collection::vec(block, 0..4), stop, 0u64..100_000, 0u64..1000, 0u64..100_000).prop_map(
        |(content, stop_reason, input, cached, output)| {
            json!({"id": "msg_x", "type": "message", "role": "assistant", "model": "m", "content": content,
                "stop_reason": stop_reason, "stop_sequence": null,
                "usage": {"input_tokens": input, "cache_creation_input_tokens": 0, "cache_read_input_tokens": cached, "output_tokens": output}})
        },
    )
}

/// Adjacent text blocks are one text in OpenAI's answer: the round trip joins them (and puts
/// text before tool uses, as OpenAI's message has content before tool_calls).
fn as_openai_can_say(answer: &Value) -> Value {
    let mut text = String::new();
    let mut tools = Vec::new();
    for block in answer["content"].as_array().into_iter().flatten() {
        match block["type"].as_str() {
            Some("text") => text.push_str(block["text"].as_str().unwrap_or("")),
            _ => tools.push(block.clone()),
        }
    }
    let mut content = if text.is_empty() { vec![] } else { vec![json!({"type": "text", "text": text})] };
    content.extend(tools);
    let mut expected = answer.clone();
    expected["content"] = content.into();
    expected
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn openai_to_anthropic_to_openai_keeps_the_request(request in request()) {
        let anthropic = chat_request_to_messages(request.to_string().as_bytes(), "claude").unwrap();
        let back = messages_request_to_chat(&anthropic, "m2").unwrap().body;
        let back: Value = serde_json::from_slice(&back).unwrap();
        prop_assert_eq!(back, request);
    }

    #[test]
    fn anthropic_answer_to_openai_and_back_keeps_the_answer(answer in answer()) {
        let openai = messages_response_to_chat_at(answer.to_string().as_bytes(), "gpt", 1).unwrap();
        let back = chat_response_to_messages(&openai, "m").unwrap();
        let back: Value = serde_json::from_slice(&back).unwrap();
        prop_assert_eq!(back, as_openai_can_say(&answer));
    }
}
