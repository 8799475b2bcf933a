//! Dialect translation (issue 14): what the gateway pays when the client's API and the provider's
//! differ. A whole answer translated each way (text, and a tool call), a request each way, and
//! one stream event through a translator already mid-stream (a text delta, a tool-argument
//! fragment), each way. Inputs are the repository's fixtures.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use pointwork_benches::fixture;
use pointwork_dialect::{
    chat_request_to_messages, chat_response_to_messages, messages_request_to_chat, messages_response_to_chat_at,
    ChatToMessagesStream, MessagesToChatStream, StreamTranslator,
};

/// The `n`th event (0-based) of an SSE fixture, with its blank line.
fn event(name: &str, n: usize) -> Vec<u8> {
    let text = String::from_utf8(fixture(name)).expect("the fixture is UTF-8");
    text.split_inclusive("\n\n").nth(n).expect("the fixture has that event").as_bytes().to_vec()
}

/// The fixture's events before the `n`th, to bring a translator mid-stream.
fn events_before(name: &str, n: usize) -> Vec<u8> {
    let text = String::from_utf8(fixture(name)).expect("the fixture is UTF-8");
    text.split_inclusive("\n\n").take(n).collect::<String>().into_bytes()
}

fn responses(c: &mut Criterion) {
    let mut group = c.benchmark_group("dialect/response");
    for (label, name) in [("text", "openai_chat_response.json"), ("tool", "openai_chat_response_tool_calls.json")] {
        let body = fixture(name);
        assert!(chat_response_to_messages(&body, "claude").is_ok());
        group.throughput(Throughput::Bytes(body.len() as u64));
        group.bench_function(format!("chat_to_messages/{label}"), |b| {
            b.iter(|| chat_response_to_messages(black_box(&body), "claude"))
        });
    }
    for (label, name) in
        [("text", "anthropic_messages_response.json"), ("tool", "anthropic_messages_response_tool_use.json")]
    {
        let body = fixture(name);
        assert!(messages_response_to_chat_at(&body, "gpt", 1).is_ok());
        group.throughput(Throughput::Bytes(body.len() as u64));
        group.bench_function(format!("messages_to_chat/{label}"), |b| {
            b.iter(|| messages_response_to_chat_at(black_box(&body), "gpt", 1))
        });
    }
    group.finish();
}

fn requests(c: &mut Criterion) {
    let mut group = c.benchmark_group("dialect/request");
    let anthropic = fixture("anthropic_messages_request.json");
    assert!(messages_request_to_chat(&anthropic, "gpt").is_ok());
    group.throughput(Throughput::Bytes(anthropic.len() as u64));
    group.bench_function("messages_to_chat", |b| b.iter(|| messages_request_to_chat(black_box(&anthropic), "gpt")));
    // The OpenAI fixture less the two fields Anthropic cannot express (`seed`, a message `name`).
    let mut openai: serde_json::Value = serde_json::from_slice(&fixture("openai_chat_request.json")).expect("JSON");
    openai.as_object_mut().expect("an object").remove("seed");
    openai["messages"][4].as_object_mut().expect("a message").remove("name");
    let openai = openai.to_string().into_bytes();
    assert!(chat_request_to_messages(&openai, "claude").is_ok());
    group.throughput(Throughput::Bytes(openai.len() as u64));
    group.bench_function("chat_to_messages", |b| b.iter(|| chat_request_to_messages(black_box(&openai), "claude")));
    group.finish();
}

/// One event through a translator that has seen `warm_up` first; the output must be `expect`-ish.
fn bench_event<T: StreamTranslator>(
    c: &mut Criterion,
    label: &str,
    mut translator: T,
    warm_up: &[u8],
    event: &[u8],
    expect: &str,
) {
    let mut out = Vec::with_capacity(4096);
    translator.feed(warm_up, &mut out);
    out.clear();
    translator.feed(event, &mut out);
    let text = String::from_utf8_lossy(&out).into_owned();
    assert!(text.contains(expect), "{label}: {text}");
    let mut group = c.benchmark_group("dialect/stream_event");
    group.throughput(Throughput::Bytes(event.len() as u64));
    group.bench_function(label, |b| {
        b.iter(|| {
            out.clear();
            translator.feed(black_box(event), &mut out);
            out.len()
        })
    });
    group.finish();
}

fn stream_events(c: &mut Criterion) {
    // OpenAI chunks in: the second chunk is a content delta, the third of the tool stream an
    // arguments fragment.
    let (name, n) = ("openai_chat_stream.sse", 1);
    bench_event(
        c,
        "chat_to_messages/text",
        ChatToMessagesStream::new("claude"),
        &events_before(name, n),
        &event(name, n),
        "text_delta",
    );
    let (name, n) = ("openai_chat_stream_tool_calls.sse", 2);
    let translator = ChatToMessagesStream::new("claude");
    bench_event(
        c,
        "chat_to_messages/tool_args",
        translator,
        &events_before(name, n),
        &event(name, n),
        "input_json_delta",
    );
    // Anthropic events in: the fourth is a text delta (after a ping); the tool stream's ninth an
    // input_json_delta fragment.
    let (name, n) = ("anthropic_messages_stream.sse", 3);
    let translator = MessagesToChatStream::with_created("gpt", true, 1);
    bench_event(
        c,
        "messages_to_chat/text",
        translator,
        &events_before(name, n),
        &event(name, n),
        "\"content\":\"Hello\"",
    );
    let (name, n) = ("anthropic_messages_stream_tool_use.sse", 8);
    let translator = MessagesToChatStream::with_created("gpt", true, 1);
    bench_event(c, "messages_to_chat/tool_args", translator, &events_before(name, n), &event(name, n), "arguments");
}

criterion_group!(benches, responses, requests, stream_events);
criterion_main!(benches);
