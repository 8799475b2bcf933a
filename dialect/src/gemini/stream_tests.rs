//! Unit tests of the Gemini → OpenAI stream translation.

use super::*;

const TEXT: &[u8] = include_bytes!("testdata/stream_text.sse");
const TOOLS: &[u8] = include_bytes!("testdata/stream_tools.sse");

fn run(pieces: &[&[u8]], include_usage: bool, complete: bool) -> (Vec<u8>, Option<(u64, u64)>) {
    let mut translator = GeminiToChatStream::with_created("gemini-x", include_usage, 5);
    let mut out = Vec::new();
    for piece in pieces {
        translator.feed(piece, &mut out);
    }
    translator.finish(&mut out, complete);
    (out, translator.usage())
}

fn events(bytes: &[u8]) -> Vec<Value> {
    let mut events = Vec::new();
    let mut splitter = SseSplitter::new();
    let mut push = |e: SseEvent<'_>| {
        events.push(if e.data == b"[DONE]" { json!("DONE") } else { serde_json::from_slice(e.data).unwrap() })
    };
    splitter.feed(bytes, &mut push).unwrap();
    splitter.finish(&mut push).unwrap();
    events
}

fn chunks(sse: &[u8], include_usage: bool) -> Vec<Value> {
    events(&run(&[sse], include_usage, true).0)
}

fn deltas(chunks: &[Value]) -> Vec<Value> {
    chunks.iter().filter_map(|c| c["choices"].get(0).map(|choice| choice["delta"].clone())).collect()
}

#[test]
fn text_stream_with_usage() {
    let chunks = chunks(TEXT, true);
    assert_eq!(
        deltas(&chunks),
        [
            json!({"role": "assistant", "content": ""}),
            json!({"content": "Hello!"}),
            json!({"content": " How can I help you today"}),
            json!({"content": "?"}),
            json!({}),
        ]
    );
    assert_eq!(chunks.len(), 7, "{chunks:#?}");
    for chunk in &chunks[..6] {
        assert_eq!(chunk["id"], "tTCwacuEBMvnitYP06qsgQY");
        assert_eq!((chunk["object"].as_str(), chunk["created"].as_u64()), (Some("chat.completion.chunk"), Some(5)));
        assert_eq!(chunk["model"], "gemini-x");
    }
    assert_eq!(chunks[4]["choices"][0]["finish_reason"], "stop");
    assert_eq!(chunks[1]["choices"][0]["logprobs"], Value::Null);
    assert_eq!(chunks[5]["choices"], json!([]));
    assert_eq!(
        chunks[5]["usage"],
        json!({"prompt_tokens": 1, "completion_tokens": 9, "total_tokens": 10,
            "prompt_tokens_details": {"cached_tokens": 0}, "completion_tokens_details": {"reasoning_tokens": 0}})
    );
    assert_eq!(chunks[6], "DONE");
}

#[test]
fn reasoning_text_and_a_whole_tool_call() {
    let (out, usage) = run(&[TOOLS], false, true);
    assert_eq!(usage, Some((74, 112)));
    let text = String::from_utf8(out.clone()).unwrap();
    assert!(!text.contains("\"usage\""), "{text}");
    let chunks = events(&out);
    assert_eq!(
        deltas(&chunks),
        [
            json!({"role": "assistant", "content": ""}),
            json!({"reasoning_content": "**Planning the lookup**\n\nI need the weather in Paris."}),
            json!({"content": "Let me check.  "}),
            json!({"tool_calls": [{"index": 0, "id": "call_m3JUaKX4Ds6pz7IPq9CtgQ4_0__thought__CqQCAVSoXO5c8Y",
                "type": "function", "function": {"name": "get_weather", "arguments": "{\"location\":\"Paris, France\",\"unit\":\"celsius\"}"}}]}),
            json!({}),
        ]
    );
    assert_eq!(chunks[4]["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(chunks.last().unwrap(), "DONE");
}

#[test]
fn any_split_gives_the_same_bytes() {
    for input in [TEXT, TOOLS] {
        let whole = run(&[input], true, true);
        let bytes: Vec<&[u8]> = input.chunks(1).collect();
        assert_eq!(run(&bytes, true, true), whole, "one byte at a time");
        for cut in 0..=input.len() {
            assert_eq!(run(&[&input[..cut], &input[cut..]], true, true), whole, "cut at {cut}");
        }
    }
}

#[test]
fn several_candidates_are_several_choices() {
    let sse = concat!(
        "data: {\"candidates\":[{\"index\":0,\"content\":{\"parts\":[{\"text\":\"a\"}]}},{\"index\":1,\"content\":{\"parts\":[{\"functionCall\":{\"name\":\"f\",\"args\":{}}}]}}],\"responseId\":\"r\"}\n\n",
        "data: {\"candidates\":[{\"index\":1,\"content\":{\"parts\":[{\"functionCall\":{\"name\":\"g\",\"args\":{\"x\":1}}}]},\"finishReason\":\"STOP\"}]}\n\n",
        "data: {\"candidates\":[{\"index\":0,\"content\":{\"parts\":[{\"text\":\"b\"}]},\"finishReason\":\"MAX_TOKENS\"}],\"usageMetadata\":{\"promptTokenCount\":3,\"candidatesTokenCount\":4}}\n\n",
    );
    let chunks = chunks(sse.as_bytes(), false);
    let calls: Vec<(u64, Value)> = chunks
        .iter()
        .filter_map(|c| {
            let choice = c["choices"].get(0)?;
            let call = choice["delta"]["tool_calls"].get(0)?;
            Some((choice["index"].as_u64()?, json!([call["index"], call["id"]])))
        })
        .collect();
    assert_eq!(calls, [(1, json!([0, "call_r_0"])), (1, json!([1, "call_r_1"]))]);
    let finishes: Vec<Value> = chunks
        .iter()
        .filter_map(|c| {
            c["choices"]
                .get(0)
                .filter(|ch| !ch["finish_reason"].is_null())
                .map(|ch| json!([ch["index"], ch["finish_reason"]]))
        })
        .collect();
    assert_eq!(finishes, [json!([1, "tool_calls"]), json!([0, "length"])]);
    assert_eq!(chunks.last().unwrap(), "DONE");
}

#[test]
fn logprobs_ride_on_the_content_chunk() {
    let sse = br#"data: {"candidates":[{"content":{"parts":[{"text":"Hi"}]},"finishReason":"STOP","logprobsResult":{"chosenCandidates":[{"token":"Hi","logProbability":-0.5}]}}]}

"#;
    let chunks = chunks(sse, false);
    assert_eq!(
        chunks[1]["choices"][0]["logprobs"],
        json!({"content": [{"token": "Hi", "logprob": -0.5, "bytes": [72, 105], "top_logprobs": []}]})
    );
}

#[test]
fn a_blocked_prompt_ends_filtered() {
    let sse = b"data: {\"promptFeedback\":{\"blockReason\":\"SAFETY\"},\"usageMetadata\":{\"promptTokenCount\":6,\"totalTokenCount\":6},\"responseId\":\"b\"}\n\n";
    let chunks = chunks(sse, true);
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    assert_eq!(chunks[1]["choices"][0]["finish_reason"], "content_filter");
    assert_eq!(chunks[2]["usage"]["prompt_tokens"], 6);
    assert_eq!(chunks[3], "DONE");
}

fn ends_with_error(out: &[u8]) -> Value {
    let events = events(out);
    assert!(!events.contains(&json!("DONE")), "{events:?}");
    events.last().unwrap()["error"].clone()
}

#[test]
fn a_cut_stream_ends_with_an_error_and_no_done() {
    // Cut between events: the events so far are translated, then the error.
    let between = TEXT.windows(2).position(|w| w == b"\n\n").unwrap() + 2;
    let (out, _) = run(&[&TEXT[..between]], true, true);
    assert_eq!(events(&out).len(), 3, "role, text, error");
    let error = ends_with_error(&out);
    assert_eq!(error["type"], "api_error");
    assert_eq!(error["message"], "the upstream stream ended without a finish reason");
    // Cut inside an event: the half event is no response.
    let (out, _) = run(&[&TEXT[..TEXT.len() / 2]], true, true);
    assert_eq!(
        ends_with_error(&out)["message"],
        "the upstream sent a stream event that is not a GenerateContentResponse"
    );
    let (out, usage) = run(&[TEXT], true, false);
    assert_eq!(ends_with_error(&out)["message"], "the upstream stream ended before the answer was complete");
    assert_eq!(usage, Some((1, 9)));
    let (out, usage) = run(&[b""], true, true);
    assert_eq!(ends_with_error(&out)["type"], "api_error");
    assert_eq!(usage, None);
}

#[test]
fn an_error_object_ends_the_stream() {
    let sse = [
        &TEXT[..TEXT.iter().position(|&b| b == b'\n').unwrap() + 2],
        &br#"data: {"error": {"code": 503, "message": "The model is overloaded. Please try again later.", "status": "UNAVAILABLE"}}

"#[..],
    ]
    .concat();
    let (out, _) = run(&[&sse], true, true);
    assert_eq!(
        ends_with_error(&out),
        json!({"message": "The model is overloaded. Please try again later.", "type": "api_error", "param": null, "code": "UNAVAILABLE"})
    );
    let limited = br#"data: {"error": {"code": 429, "message": "Resource exhausted.", "status": "RESOURCE_EXHAUSTED"}}

"#;
    assert_eq!(ends_with_error(&run(&[limited], true, true).0)["type"], "rate_limit_error");
}

#[test]
fn garbage_ends_the_stream() {
    for garbage in [&b"data: {not json\n\n"[..], b"data: [1,2]\n\n", b"data: \"text\"\n\n", b"data: [DONE]\n\n"] {
        let input = [&TEXT[..TEXT.iter().position(|&b| b == b'\n').unwrap() + 2], garbage, TEXT].concat();
        let (out, _) = run(&[&input], true, true);
        let error = ends_with_error(&out);
        assert_eq!(error["message"], "the upstream sent a stream event that is not a GenerateContentResponse");
        let events = events(&out);
        assert_eq!(events.len(), 3, "role, first text, error: nothing after garbage; {events:?}");
    }
}

#[test]
fn nothing_is_written_after_the_end() {
    let mut translator = GeminiToChatStream::with_created("m", false, 1);
    let mut out = Vec::new();
    translator.feed(TEXT, &mut out);
    translator.finish(&mut out, true);
    let len = out.len();
    translator.feed(TEXT, &mut out);
    translator.finish(&mut out, false);
    assert_eq!(out.len(), len);
}
