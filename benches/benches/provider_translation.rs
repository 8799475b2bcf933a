//! Provider translation (issue 16): what the gateway pays per request, per whole answer and per
//! stream event when an OpenAI chat request goes to Bedrock's Converse API or to Gemini's
//! `generateContent`. (OpenAI ⇄ Anthropic is `dialect.rs`.)
//!
//! - `provider/request/*`: the seven-turn chat request with an image, a tool call, its result
//!   and one tool (`benches/fixtures/gemini_chat_request.json`, 1.7 KB; Bedrock's as
//!   `pointwork_benches::bedrock_chat_request` adapts it, for a Claude model with thinking).
//! - `provider/response/*`: a whole answer, text and tool calls (with reasoning), back to OpenAI.
//! - `provider/stream/*`: a whole streamed answer of `N` events, fed one event at a time to a
//!   fresh translator as the relay feeds decoded pieces, then finished; reported per event
//!   (`Throughput::Elements(N)`). Bedrock's events are binary `application/vnd.amazon.eventstream`
//!   frames built with `encode_event` (each one's CRCs checked on the way in), with the `p`
//!   padding field Bedrock adds; Gemini's are the fixture's SSE events, its text delta repeated.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use pointwork_benches::{bedrock_chat_request, bench_fixture, BEDROCK_CLAUDE};
use pointwork_dialect::bedrock::{
    chat_request_to_converse_for, converse_response_to_chat_at, encode_event, ConverseStreamToChat,
};
use pointwork_dialect::gemini::{chat_request_to_gemini, gemini_response_to_chat_at, GeminiToChatStream};
use pointwork_dialect::StreamTranslator;
use serde_json::json;

/// Events per streamed answer.
const EVENTS: usize = 100;

fn requests(c: &mut Criterion) {
    let mut group = c.benchmark_group("provider/request");
    let gemini = bench_fixture("gemini_chat_request.json");
    assert!(chat_request_to_gemini(&gemini).is_ok());
    group.throughput(Throughput::Bytes(gemini.len() as u64));
    group.bench_function("chat_to_gemini", |b| b.iter(|| chat_request_to_gemini(black_box(&gemini))));
    let bedrock = bedrock_chat_request();
    let converse = chat_request_to_converse_for(&bedrock, BEDROCK_CLAUDE).expect("translatable");
    assert!(String::from_utf8_lossy(&converse).contains("toolUse"));
    group.throughput(Throughput::Bytes(bedrock.len() as u64));
    group.bench_function("chat_to_converse", |b| {
        b.iter(|| chat_request_to_converse_for(black_box(&bedrock), BEDROCK_CLAUDE))
    });
    group.finish();
}

fn responses(c: &mut Criterion) {
    let mut group = c.benchmark_group("provider/response");
    for (label, name) in
        [("text", "bedrock_converse_response.json"), ("tool", "bedrock_converse_response_tool_use.json")]
    {
        let body = bench_fixture(name);
        assert!(converse_response_to_chat_at(&body, "claude", 1).is_ok());
        group.throughput(Throughput::Bytes(body.len() as u64));
        group.bench_function(format!("converse_to_chat/{label}"), |b| {
            b.iter(|| converse_response_to_chat_at(black_box(&body), "claude", 1))
        });
    }
    for (label, name) in
        [("thinking", "gemini_response_thinking.json"), ("tool", "gemini_response_function_calls.json")]
    {
        let body = bench_fixture(name);
        assert!(gemini_response_to_chat_at(&body, "gemini", 1).is_ok());
        group.throughput(Throughput::Bytes(body.len() as u64));
        group.bench_function(format!("gemini_to_chat/{label}"), |b| {
            b.iter(|| gemini_response_to_chat_at(black_box(&body), "gemini", 1))
        });
    }
    group.finish();
}

/// Words of a Claude answer, one or two tokens each, as Bedrock's text deltas carry them.
const WORDS: [&str; 8] = ["Tomorrow", " in Paris", ":", " mostly", " cloudy", ",", " high of", " 21 °C"];

/// Bedrock's padding field (`p`), a random-length run of letters on every event.
fn padding(i: usize) -> &'static str {
    &"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123"[..8 + (i * 7) % 40]
}

fn frame(kind: &str, payload: serde_json::Value) -> Vec<u8> {
    encode_event(kind, payload.to_string().as_bytes())
}

/// A ConverseStream answer of `EVENTS` frames: `messageStart`, text deltas, then (with `tool`) a
/// toolUse block whose input arrives in fragments, `messageStop`, `metadata`.
fn converse_stream(tool: bool) -> Vec<Vec<u8>> {
    let mut frames = vec![frame("messageStart", json!({"role": "assistant", "p": padding(0)}))];
    let texts = if tool { 40 } else { EVENTS - 4 };
    for i in 0..texts {
        let delta = json!({"contentBlockIndex": 0, "delta": {"text": WORDS[i % WORDS.len()]}, "p": padding(i)});
        frames.push(frame("contentBlockDelta", delta));
    }
    frames.push(frame("contentBlockStop", json!({"contentBlockIndex": 0, "p": padding(1)})));
    if tool {
        let start = json!({"contentBlockIndex": 1, "p": padding(2),
            "start": {"toolUse": {"toolUseId": "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "name": "get_weather"}}});
        frames.push(frame("contentBlockStart", start));
        // The arguments in fragments of ~10 bytes, as Claude streams them.
        let fragments = EVENTS - frames.len() - 3;
        let days: Vec<String> = (1..=40).map(|d| format!("2026-12-{d:02}")).collect();
        let args = json!({"location": "Paris, France", "unit": "celsius", "days": days}).to_string();
        for i in 0..fragments {
            let input = &args[i * args.len() / fragments..(i + 1) * args.len() / fragments];
            let delta = json!({"contentBlockIndex": 1, "delta": {"toolUse": {"input": input}}, "p": padding(i)});
            frames.push(frame("contentBlockDelta", delta));
        }
        frames.push(frame("contentBlockStop", json!({"contentBlockIndex": 1})));
    }
    let stop = if tool { "tool_use" } else { "end_turn" };
    frames.push(frame("messageStop", json!({"stopReason": stop, "p": padding(3)})));
    frames.push(frame(
        "metadata",
        json!({"usage": {"inputTokens": 412, "outputTokens": 87, "totalTokens": 499},
            "metrics": {"latencyMs": 1874}, "p": padding(4)}),
    ));
    assert_eq!(frames.len(), EVENTS);
    frames
}

/// A Gemini SSE answer of `EVENTS` events: the fixture's first event, its second (a text delta)
/// repeated, its last (the finish reason and usage).
fn gemini_stream() -> Vec<Vec<u8>> {
    let text = String::from_utf8(bench_fixture("gemini_stream_text.sse")).expect("UTF-8");
    let events: Vec<&str> = text.split_inclusive("\n\n").collect();
    assert_eq!(events.len(), 4);
    let mut out = vec![events[0].as_bytes().to_vec()];
    out.extend((0..EVENTS - 2).map(|_| events[1].as_bytes().to_vec()));
    out.push(events[3].as_bytes().to_vec());
    out
}

/// The fixture's events, one piece each (Gemini ends its events with CRLF CRLF or LF LF).
fn fixture_events(name: &str) -> Vec<Vec<u8>> {
    let text = String::from_utf8(bench_fixture(name)).expect("UTF-8");
    let end = if text.contains("\r\n\r\n") { "\r\n\r\n" } else { "\n\n" };
    text.split_inclusive(end).map(|e| e.as_bytes().to_vec()).collect()
}

/// One whole stream through a fresh translator, event by event; the output's length.
fn translate<T: StreamTranslator>(mut translator: T, events: &[Vec<u8>], out: &mut Vec<u8>) -> usize {
    out.clear();
    for event in events {
        translator.feed(event, out);
    }
    translator.finish(out, true);
    out.len()
}

fn bench_stream<T: StreamTranslator>(
    c: &mut Criterion,
    label: &str,
    make: impl Fn() -> T,
    events: &[Vec<u8>],
    expect: &str,
) {
    let mut out = Vec::with_capacity(64 << 10);
    translate(make(), events, &mut out);
    let text = String::from_utf8_lossy(&out).into_owned();
    assert!(text.ends_with("data: [DONE]\n\n") && text.contains(expect), "{label}: {text}");
    let bytes: usize = events.iter().map(Vec::len).sum();
    let mut group = c.benchmark_group("provider/stream");
    group.throughput(Throughput::Elements(events.len() as u64));
    group.bench_function(format!("{label}/{}x{}B", events.len(), bytes / events.len()), |b| {
        b.iter(|| translate(make(), black_box(events), &mut out))
    });
    group.finish();
}

fn streams(c: &mut Criterion) {
    let converse = || ConverseStreamToChat::with_created("claude", true, 1);
    bench_stream(c, "converse_to_chat/text", converse, &converse_stream(false), "\"content\":\" in Paris\"");
    bench_stream(c, "converse_to_chat/tool", converse, &converse_stream(true), "\"arguments\":\"");
    let gemini = || GeminiToChatStream::with_created("gemini", true, 1);
    bench_stream(c, "gemini_to_chat/text", gemini, &gemini_stream(), "How can I help you today");
    bench_stream(c, "gemini_to_chat/tool", gemini, &fixture_events("gemini_stream_tools.sse"), "get_weather");
}

criterion_group!(benches, requests, responses, streams);
criterion_main!(benches);
