//! Unit tests of the ConverseStream → OpenAI stream translation.

use super::super::super::sse::SseSplitter;
use super::*;

fn event(kind: &str, payload: Value) -> Vec<u8> {
    encode_event(kind, payload.to_string().as_bytes())
}

/// A realistic answer: reasoning, text, a tool call in fragments, stop, metadata (with Bedrock's
/// `p` padding field).
fn answer() -> Vec<u8> {
    [
        event("messageStart", json!({"p": "abcdefgh", "role": "assistant"})),
        event(
            "contentBlockDelta",
            json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "The user wants"}}, "p": "ab"}),
        ),
        event(
            "contentBlockDelta",
            json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"signature": "EqoBCkgIAR"}}}),
        ),
        event("contentBlockStop", json!({"contentBlockIndex": 0})),
        event("contentBlockDelta", json!({"contentBlockIndex": 1, "delta": {"text": "Let me check \"Paris\"."}})),
        event("contentBlockStop", json!({"contentBlockIndex": 1})),
        event(
            "contentBlockStart",
            json!({"contentBlockIndex": 2, "start": {"toolUse": {"toolUseId": "tooluse_abc", "name": "get_weather"}}}),
        ),
        event("contentBlockDelta", json!({"contentBlockIndex": 2, "delta": {"toolUse": {"input": "{\"city\":"}}})),
        event("contentBlockDelta", json!({"contentBlockIndex": 2, "delta": {"toolUse": {"input": "\"Paris\"}"}}})),
        event("contentBlockStop", json!({"contentBlockIndex": 2})),
        event(
            "contentBlockStart",
            json!({"contentBlockIndex": 3, "start": {"toolUse": {"toolUseId": "tooluse_def", "name": "now"}}}),
        ),
        event("contentBlockStop", json!({"contentBlockIndex": 3})),
        event("messageStop", json!({"stopReason": "tool_use"})),
        event(
            "metadata",
            json!({"usage": {"inputTokens": 120, "outputTokens": 45, "totalTokens": 175,
            "cacheReadInputTokens": 8, "cacheWriteInputTokens": 2}, "metrics": {"latencyMs": 1500}, "p": "abc"}),
        ),
    ]
    .concat()
}

/// Feeds the pieces, finishes, returns the raw output with the made-up id fixed.
fn run(pieces: &[&[u8]], include_usage: bool, complete: bool) -> (String, Option<(u64, u64)>) {
    let mut translator = ConverseStreamToChat::with_created("gpt-x", include_usage, 5);
    translator.state.id = "chatcmpl-test".into();
    let mut out = Vec::new();
    for piece in pieces {
        translator.feed(piece, &mut out);
    }
    translator.finish(&mut out, complete);
    (String::from_utf8(out).unwrap(), translator.usage())
}

fn chunks(sse: &str) -> Vec<Value> {
    let mut chunks = Vec::new();
    SseSplitter::new()
        .feed(sse.as_bytes(), |e| {
            chunks.push(if e.data == b"[DONE]" { json!("DONE") } else { serde_json::from_slice(e.data).unwrap() })
        })
        .unwrap();
    chunks
}

fn delta(chunk: &Value) -> &Value {
    &chunk["choices"][0]["delta"]
}

#[test]
fn a_whole_answer_with_usage() {
    let (text, usage) = run(&[&answer()], true, true);
    let chunks = chunks(&text);
    assert_eq!(chunks.len(), 11, "{chunks:#?}");
    assert_eq!(
        chunks[0],
        json!({"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 5, "model": "gpt-x",
            "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "logprobs": null, "finish_reason": null}]})
    );
    assert_eq!(delta(&chunks[1]), &json!({"reasoning_content": "The user wants"}));
    assert_eq!(delta(&chunks[2]), &json!({"content": "Let me check \"Paris\"."}));
    assert_eq!(
        delta(&chunks[3]),
        &json!({"tool_calls": [{"index": 0, "id": "tooluse_abc", "type": "function", "function": {"name": "get_weather", "arguments": ""}}]})
    );
    assert_eq!(delta(&chunks[4]), &json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"city\":"}}]}));
    assert_eq!(delta(&chunks[5]), &json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"Paris\"}"}}]}));
    assert_eq!(delta(&chunks[6])["tool_calls"][0]["id"], "tooluse_def");
    assert_eq!(delta(&chunks[7]), &json!({"tool_calls": [{"index": 1, "function": {"arguments": "{}"}}]}));
    assert_eq!((delta(&chunks[8]), &chunks[8]["choices"][0]["finish_reason"]), (&json!({}), &json!("tool_calls")));
    assert_eq!(chunks[9]["choices"], json!([]));
    assert_eq!(
        chunks[9]["usage"],
        json!({"prompt_tokens": 130, "completion_tokens": 45, "total_tokens": 175, "prompt_tokens_details": {"cached_tokens": 8}})
    );
    assert_eq!(chunks[10], "DONE");
    assert_eq!(usage, Some((130, 45)));
}

#[test]
fn split_at_every_offset_gives_the_same_output() {
    let bytes = answer();
    for include_usage in [false, true] {
        let (whole, _) = run(&[&bytes], include_usage, true);
        assert!(whole.ends_with("data: [DONE]\n\n"));
        for at in 0..=bytes.len() {
            let (split, usage) = run(&[&bytes[..at], &bytes[at..]], include_usage, true);
            assert_eq!(split, whole, "split at {at}");
            assert_eq!(usage, Some((130, 45)));
        }
    }
    let singles: Vec<&[u8]> = bytes.chunks(1).collect();
    assert_eq!(run(&singles, true, true).0, run(&[&bytes], true, true).0);
}

#[test]
fn no_usage_chunk_unless_asked() {
    let (text, usage) = run(&[&answer()], false, true);
    assert!(!text.contains("\"usage\""), "{text}");
    assert!(text.ends_with("\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n"), "{text}");
    assert_eq!(usage, Some((130, 45)));
}

#[test]
fn metadata_ends_the_stream_and_a_missing_one_is_tolerated() {
    let stop = [
        event("messageStart", json!({"role": "assistant"})),
        event("messageStop", json!({"stopReason": "max_tokens"})),
    ]
    .concat();
    // A whole body that ends after messageStop still ends well, usage unknown.
    let (text, usage) = run(&[&stop], true, true);
    let chunks = chunks(&text);
    assert_eq!(chunks[1]["choices"][0]["finish_reason"], "length");
    assert_eq!(chunks[2]["usage"]["prompt_tokens"], 0);
    assert_eq!((chunks.last().unwrap(), usage), (&json!("DONE"), None));
    // Frames after metadata are not read.
    let after =
        [stop, event("metadata", json!({"usage": {"inputTokens": 1, "outputTokens": 2}})), b"junk".to_vec()].concat();
    let (text, usage) = run(&[&after], false, true);
    assert!(text.ends_with("data: [DONE]\n\n") && !text.contains("error"), "{text}");
    assert_eq!(usage, Some((1, 2)));
}

#[test]
fn unknown_events_and_other_blocks_write_nothing() {
    let body = [
        event("messageStart", json!({"role": "assistant"})),
        event("somethingNew", json!({"x": 1})),
        event("contentBlockDelta", json!({"contentBlockIndex": 0, "delta": {"citation": {"title": "t"}}})),
        event(
            "contentBlockDelta",
            json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"redactedContent": "AAA"}}}),
        ),
        event("contentBlockDelta", json!({"contentBlockIndex": 0, "delta": {"text": ""}})),
        event("messageStop", json!({"stopReason": "guardrail_intervened"})),
        event("metadata", json!({"usage": {"inputTokens": 3, "outputTokens": 0, "totalTokens": 3}})),
    ]
    .concat();
    let chunks = chunks(&run(&[&body], false, true).0);
    assert_eq!(chunks.len(), 3, "{chunks:#?}");
    assert_eq!(chunks[1]["choices"][0]["finish_reason"], "content_filter");
}

fn ends_in_error(text: &str) -> Value {
    assert!(!text.contains("[DONE]"), "{text}");
    let last = text.trim_end().rsplit("\n\n").next().unwrap();
    let error: Value = serde_json::from_str(last.strip_prefix("data: ").unwrap()).unwrap();
    error["error"].clone()
}

#[test]
fn a_stream_cut_short_ends_in_an_error() {
    let bytes = answer();
    let before_metadata = bytes.len() - event("metadata", json!({})).len() - 40;
    for cut in [0, 5, 100, before_metadata] {
        let (text, _) = run(&[&bytes[..cut]], true, true);
        let error = ends_in_error(&text);
        assert_eq!(error["type"], "api_error");
        assert!(error["message"].as_str().unwrap().contains("ended before"), "{error}");
    }
    // The transport says the body was cut, even after messageStop.
    let stop = [event("messageStart", json!({})), event("messageStop", json!({"stopReason": "end_turn"}))].concat();
    ends_in_error(&run(&[&stop], true, false).0);
}

#[test]
fn exceptions_end_in_their_openai_error() {
    let start = event("messageStart", json!({"role": "assistant"}));
    let throttled =
        encode_exception("throttlingException", br#"{"message":"Too many tokens, please wait before trying again."}"#);
    let (text, _) = run(&[&start, &throttled, &event("messageStop", json!({}))], true, true);
    let error = ends_in_error(&text);
    assert_eq!(
        error,
        json!({"message": "Too many tokens, please wait before trying again.", "type": "rate_limit_error", "param": null, "code": "429"})
    );
    for (kind, status, error_type) in [
        ("validationException", "400", "invalid_request_error"),
        ("modelStreamErrorException", "424", "api_error"),
        ("internalServerException", "500", "api_error"),
        ("serviceUnavailableException", "503", "api_error"),
        ("somethingElseException", "500", "api_error"),
    ] {
        let error = ends_in_error(&run(&[&encode_exception(kind, b"{}")], false, true).0);
        assert_eq!((error["code"].as_str(), error["type"].as_str()), (Some(status), Some(error_type)), "{kind}");
        assert_eq!(error["message"], kind);
    }
}

#[test]
fn corrupted_frames_and_garbage_end_in_an_error() {
    let bytes = answer();
    // Every single flipped byte of the first frames is caught (a length, a CRC, or a payload the CRC covers).
    let first = event("messageStart", json!({"p": "abcdefgh", "role": "assistant"})).len();
    for at in 0..first {
        let mut corrupt = bytes.clone();
        corrupt[at] ^= 0x41;
        let (text, _) = run(&[&corrupt], true, true);
        ends_in_error(&text);
    }
    let mut crc = bytes.clone();
    let last = first - 1;
    crc[last] ^= 1;
    let error = ends_in_error(&run(&[&crc], true, true).0);
    assert!(error["message"].as_str().unwrap().contains("corrupt"), "{error}");
    for garbage in [&b"<html><body>502 Bad Gateway</body></html>"[..], b"data: {\"choices\":[]}\n\n", &[0u8; 40]] {
        let error = ends_in_error(&run(&[garbage], true, true).0);
        assert_eq!(error["type"], "api_error");
    }
    // A frame that claims 4 GiB is refused at once, not waited for.
    let mut out = Vec::new();
    let mut translator = ConverseStreamToChat::with_created("m", false, 0);
    translator.feed(&[0xff, 0xff, 0xff, 0xff, 0, 0], &mut out);
    assert!(String::from_utf8(out).unwrap().contains("not an event stream frame"));
}

#[test]
fn a_non_converse_payload_ends_in_an_error() {
    let body = [event("messageStart", json!({})), encode_event("contentBlockDelta", b"not json")].concat();
    let error = ends_in_error(&run(&[&body], false, true).0);
    assert!(error["message"].as_str().unwrap().contains("not a Converse event"));
}
