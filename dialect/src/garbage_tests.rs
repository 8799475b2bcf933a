//! No input makes a translator panic: random bytes, truncations and byte flips (every 7th byte)
//! of every fixture, and every JSON node of the request and answer fixtures replaced by a value of each
//! other type. Whatever comes in, a request translator answers `Ok` or a refusal, an answer
//! translator `Ok` or an error, and a stream ends in an error or a proper end.

use proptest::prelude::*;
use serde_json::{json, Value};

use super::fixture_tests::fixture;
use super::*;

const BODIES: [&str; 7] = [
    "anthropic_messages_request.json",
    "anthropic_messages_response.json",
    "anthropic_messages_response_tool_use.json",
    "openai_chat_request.json",
    "openai_chat_request_stream.json",
    "openai_chat_response.json",
    "openai_chat_response_tool_calls.json",
];

const STREAMS: [&str; 5] = [
    "anthropic_messages_stream.sse",
    "anthropic_messages_stream_tool_use.sse",
    "anthropic_messages_stream_error.sse",
    "openai_chat_stream.sse",
    "openai_chat_stream_tool_calls.sse",
];

/// Every translator over `bytes`; the outputs that claim to be JSON must parse.
fn everything(bytes: &[u8]) {
    let requests =
        [messages_request_to_chat(bytes, "m").ok().map(|t| t.body), chat_request_to_messages(bytes, "m").ok()];
    let answers = [chat_response_to_messages(bytes, "m").ok(), messages_response_to_chat_at(bytes, "m", 1).ok()];
    for body in requests.into_iter().chain(answers).flatten() {
        assert!(serde_json::from_slice::<Value>(&body).is_ok());
    }
    for status in [0, 200, 400, 529, 999] {
        assert!(serde_json::from_slice::<Value>(&error_to_anthropic(status, bytes)).is_ok());
        let _ = error_to_openai(status, bytes);
    }
    let message_stop = "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
    stream_ends_properly(ChatToMessagesStream::new("m"), bytes, message_stop, "event: error\n");
    stream_ends_properly(
        MessagesToChatStream::with_created("m", true, 1),
        bytes,
        "data: [DONE]\n\n",
        "data: {\"error\":",
    );
}

/// The stream's output ends with its proper end or with an error event, every event's data parses.
fn stream_ends_properly<T: StreamTranslator>(mut translator: T, bytes: &[u8], end: &str, error: &str) {
    let mut out = Vec::new();
    let (first, second) = bytes.split_at(bytes.len() / 2);
    translator.feed(first, &mut out);
    translator.feed(second, &mut out);
    translator.finish(&mut out, bytes.len().is_multiple_of(2));
    let text = String::from_utf8(out).expect("translated streams are UTF-8");
    let last = text.strip_suffix("\n\n").and_then(|t| t.rsplit("\n\n").next()).unwrap_or("");
    assert!(text.ends_with(end) || last.starts_with(error), "neither a proper end nor an error: {text}");
    for line in text.lines().filter_map(|l| l.strip_prefix("data: ")) {
        assert!(line == "[DONE]" || serde_json::from_str::<Value>(line).is_ok(), "{line}");
    }
}

#[test]
fn truncations_and_flips_of_every_fixture() {
    for name in BODIES.iter().chain(&STREAMS) {
        let bytes = fixture(name);
        for cut in (0..bytes.len()).step_by(7) {
            everything(&bytes[..cut]);
            let mut flipped = bytes.clone();
            flipped[cut] ^= 0x55;
            everything(&flipped);
        }
    }
}

/// Every path to a node of `value`, as JSON pointers.
fn pointers(value: &Value, at: String, into: &mut Vec<String>) {
    match value {
        Value::Object(map) => map.iter().for_each(|(k, v)| pointers(v, format!("{at}/{k}"), into)),
        Value::Array(list) => list.iter().enumerate().for_each(|(i, v)| pointers(v, format!("{at}/{i}"), into)),
        _ => {}
    }
    into.push(at);
}

#[test]
fn every_node_of_every_body_as_every_type() {
    let odd = [
        json!(null),
        json!(true),
        json!(0),
        json!(-1),
        json!(1.5),
        json!(1e300),
        json!(""),
        json!("x"),
        json!([]),
        json!([1]),
        json!({}),
        json!({"type": "text"}),
    ];
    for name in BODIES {
        let body: Value = serde_json::from_slice(&fixture(name)).unwrap();
        let mut paths = Vec::new();
        pointers(&body, String::new(), &mut paths);
        for path in &paths {
            for replacement in &odd {
                let mut changed = body.clone();
                match changed.pointer_mut(path) {
                    Some(node) => *node = replacement.clone(),
                    None => unreachable!("{path} was just listed"),
                }
                everything(changed.to_string().as_bytes());
            }
        }
    }
}

#[test]
fn every_stream_event_with_each_field_replaced() {
    let odd = [json!(null), json!(7), json!(-1), json!("x"), json!([]), json!({}), json!({"type": "tool_use"})];
    for name in STREAMS {
        let text = String::from_utf8(fixture(name)).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let Some(Ok(event)) = line.strip_prefix("data: ").map(serde_json::from_str::<Value>) else { continue };
            let mut paths = Vec::new();
            pointers(&event, String::new(), &mut paths);
            for path in &paths {
                for replacement in &odd {
                    let mut changed = event.clone();
                    if let Some(node) = changed.pointer_mut(path) {
                        *node = replacement.clone();
                    }
                    let mut mutated = lines.clone();
                    let line = format!("data: {changed}");
                    mutated[i] = &line;
                    everything((mutated.join("\n") + "\n").as_bytes());
                }
            }
        }
    }
}

#[test]
fn huge_numbers_and_deep_nesting() {
    everything(br#"{"messages":[{"role":"user","content":"x"}],"max_tokens":1e400}"#);
    everything(format!("{}{}", "[".repeat(200), "]".repeat(200)).as_bytes());
    let deep = format!("{{\"messages\":[{{\"role\":\"user\",\"content\":{}1{}}}]}}", "[".repeat(100), "]".repeat(100));
    everything(deep.as_bytes());
    everything(br#"{"reasoning_effort":"high","max_tokens":18446744073709551615,"messages":[]}"#);
    everything(br#"{"thinking":{"type":"enabled","budget_tokens":-5},"messages":[]}"#);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        everything(&bytes);
    }

    #[test]
    fn random_sse_like_text(text in "(data: |event: |:|\\{|\\}|\"|\\[DONE\\]|type|message_start|content_block_delta|choices|delta|\\n|\\r| |[a-z0-9])*") {
        everything(text.as_bytes());
    }
}
