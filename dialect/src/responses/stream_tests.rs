//! Chat streams → Responses event streams: the exact event sequence for each kind of answer,
//! failures, and the same bytes in any split (every run is also fed byte by byte).

use serde_json::{json, Value};

use super::test_support::{chunk, run_stream, usage_and_done};
use super::ChatToResponsesStream;
use crate::StreamTranslator;

const HEAD: [&str; 2] = ["response.created", "response.in_progress"];

fn text_events() -> Vec<&'static str> {
    vec!["response.output_item.added", "response.content_part.added"]
}

#[test]
fn a_text_answer_from_the_openai_fixture() {
    let input = include_bytes!("../../../tests/fixtures/openai_chat_stream.sse");
    let run = run_stream(&json!({"model": "gpt-client", "input": "hi"}), input, true);
    let deltas = run.of_type("response.output_text.delta");
    let mut want = HEAD.to_vec();
    want.extend(text_events());
    want.extend(std::iter::repeat_n("response.output_text.delta", deltas.len()));
    want.extend([
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]);
    assert_eq!(run.types(), want);
    let text: String = deltas.iter().map(|d| d["delta"].as_str().unwrap()).collect();
    assert_eq!(run.of_type("response.output_text.done")[0]["text"], text.as_str());
    assert_eq!(deltas[0]["item_id"], "msg_t1_0");
    assert_eq!(
        (&deltas[0]["output_index"], &deltas[0]["content_index"], &deltas[0]["logprobs"]),
        (&json!(0), &json!(0), &json!([]))
    );
    let created = &run.events[0]["response"];
    assert_eq!(
        (&created["status"], &created["output"], created.get("usage")),
        (&json!("in_progress"), &json!([]), None)
    );
    let response = run.last_response();
    assert_eq!(response["status"], "completed");
    assert_eq!(response["output"][0]["content"][0]["text"], text.as_str());
    assert_eq!(response["usage"]["input_tokens"], 19);
    assert_eq!(response["usage"]["output_tokens_details"], json!({"reasoning_tokens": 0}));
    assert_eq!(run.completed.as_ref(), Some(response));
    assert_eq!(run.usage, Some((19, 10)));
}

#[test]
fn reasoning_then_text_then_two_interleaved_tool_calls() {
    let call = |index: u64, id: Option<&str>, name: Option<&str>, arguments: &str| {
        let mut call = json!({"index": index, "function": {"arguments": arguments}});
        if let (Some(id), Some(name)) = (id, name) {
            call["id"] = id.into();
            call["type"] = "function".into();
            call["function"]["name"] = name.into();
        }
        json!({"tool_calls": [call]})
    };
    let input = [
        chunk(json!({"role": "assistant", "content": ""}), None),
        chunk(json!({"reasoning_content": "Need "}), None),
        chunk(json!({"reasoning": "weather."}), None),
        chunk(json!({"content": "Checking."}), None),
        chunk(call(0, Some("call_a"), Some("weather"), ""), None),
        chunk(call(0, None, None, "{\"city\":"), None),
        chunk(call(1, Some("call_b"), Some("time"), "{}"), None),
        chunk(call(0, None, None, "\"Oslo\"}"), None),
        chunk(json!({}), Some("tool_calls")),
        usage_and_done(30, 20),
    ]
    .concat();
    let run = run_stream(
        &json!({"tools": [{"type": "function", "name": "weather"}, {"type": "function", "name": "time"}]}),
        input.as_bytes(),
        true,
    );
    let mut want = HEAD.to_vec();
    want.extend([
        "response.output_item.added",
        "response.reasoning_summary_part.added",
        "response.reasoning_summary_text.delta",
        "response.reasoning_summary_text.delta",
        "response.reasoning_summary_text.done",
        "response.reasoning_summary_part.done",
        "response.output_item.done",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ]);
    assert_eq!(run.types(), want);
    let added: Vec<&Value> = run.of_type("response.output_item.added").into_iter().map(|e| &e["item"]).collect();
    assert_eq!(
        added[2],
        &json!({"type": "function_call", "id": "fc_t1_2", "call_id": "call_a", "name": "weather",
        "arguments": "", "status": "in_progress"})
    );
    let late = &run.of_type("response.function_call_arguments.delta")[2];
    assert_eq!(
        (&late["item_id"], &late["output_index"], &late["delta"]),
        (&json!("fc_t1_2"), &json!(2), &json!("\"Oslo\"}"))
    );
    let response = run.last_response();
    let output = response["output"].as_array().unwrap();
    assert_eq!(
        output[0],
        json!({"type": "reasoning", "id": "rs_t1_0", "summary": [{"type": "summary_text", "text": "Need weather."}]})
    );
    assert_eq!(output[1]["content"][0]["text"], "Checking.");
    assert_eq!(output[2]["arguments"], "{\"city\":\"Oslo\"}");
    assert_eq!(
        (&output[3]["call_id"], &output[3]["arguments"], &output[3]["status"]),
        (&json!("call_b"), &json!("{}"), &json!("completed"))
    );
    assert_eq!(response["usage"]["total_tokens"], 50);
    assert_eq!(run.usage, Some((30, 20)));
}

#[test]
fn a_custom_tool_call_s_input_is_written_whole_without_its_wrapper() {
    let input = [
        chunk(json!({"tool_calls": [{"index": 0, "id": "call_p", "type": "function", "function": {"name": "apply_patch", "arguments": "{\"inp"}}]}), None),
        chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "ut\":\"*** Begin Patch\\n\"}"}}]}), None),
        chunk(json!({}), Some("tool_calls")),
        "data: [DONE]\n\n".to_string(),
    ]
    .concat();
    let run = run_stream(&json!({"tools": [{"type": "custom", "name": "apply_patch"}]}), input.as_bytes(), true);
    let mut want = HEAD.to_vec();
    want.extend([
        "response.output_item.added",
        "response.custom_tool_call_input.delta",
        "response.custom_tool_call_input.done",
        "response.output_item.done",
        "response.completed",
    ]);
    assert_eq!(run.types(), want);
    assert_eq!(
        run.events[2]["item"],
        json!({"type": "custom_tool_call", "id": "ctc_t1_0", "call_id": "call_p", "name": "apply_patch", "input": ""})
    );
    assert_eq!(run.events[3]["delta"], "*** Begin Patch\n");
    assert_eq!(run.events[4]["input"], "*** Begin Patch\n");
    assert!(!String::from_utf8_lossy(&run.bytes).contains("\\\"input\\\""), "the wrapper never reaches the client");
    assert_eq!(
        run.last_response()["usage"]["input_tokens_details"],
        json!({"cached_tokens": 0, "cache_write_tokens": 0})
    );
}

#[test]
fn a_local_shell_call_is_announced_then_done_with_its_action() {
    let call = json!({"tool_calls": [{"index": 0, "id": "call_s", "function": {"name": "local_shell", "arguments": "{\"command\":[\"ls\"]}"}}]});
    let input = [chunk(call, None), chunk(json!({}), Some("tool_calls")), usage_and_done(1, 1)].concat();
    let run = run_stream(&json!({"tools": [{"type": "local_shell"}]}), input.as_bytes(), true);
    assert_eq!(run.types()[2..], ["response.output_item.added", "response.output_item.done", "response.completed"]);
    assert_eq!(run.events[3]["item"]["action"], json!({"type": "exec", "command": ["ls"], "env": {}}));
    assert_eq!(run.events[3]["item"]["id"], run.events[2]["item"]["id"]);
}

#[test]
fn length_ends_with_response_incomplete() {
    let input =
        [chunk(json!({"content": "Half"}), None), chunk(json!({}), Some("length")), "data: [DONE]\n\n".into()].concat();
    let run = run_stream(&json!({}), input.as_bytes(), true);
    assert_eq!(run.types().last(), Some(&"response.incomplete"));
    let response = run.last_response();
    assert_eq!(
        (&response["status"], &response["incomplete_details"]),
        (&json!("incomplete"), &json!({"reason": "max_output_tokens"}))
    );
    assert_eq!(response["output"][0]["status"], "incomplete");
    assert_eq!(response["usage"]["output_tokens_details"]["reasoning_tokens"], 0);
    assert_eq!(run.usage, None, "no usage was seen");
}

#[test]
fn a_refusal_after_text_is_its_own_content_part() {
    let input = [
        chunk(json!({"content": "Well"}), None),
        chunk(json!({"refusal": "no"}), None),
        chunk(json!({}), Some("stop")),
        usage_and_done(1, 1),
    ]
    .concat();
    let run = run_stream(&json!({}), input.as_bytes(), true);
    let mut want = HEAD.to_vec();
    want.extend(text_events());
    want.extend([
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.content_part.added",
        "response.refusal.delta",
        "response.refusal.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]);
    assert_eq!(run.types(), want);
    assert_eq!(run.last_response()["output"][0]["content"][1], json!({"type": "refusal", "refusal": "no"}));
}

#[test]
fn an_upstream_error_event_fails_the_response() {
    let input = [
        chunk(json!({"content": "Hi"}), None),
        "data: {\"error\":{\"message\":\"Rate limited\",\"code\":429}}\n\n".into(),
    ]
    .concat();
    let run = run_stream(&json!({}), input.as_bytes(), true);
    let mut want = HEAD.to_vec();
    want.extend(text_events());
    want.extend(["response.output_text.delta", "response.failed"]);
    assert_eq!(run.types(), want);
    let response = run.last_response();
    assert_eq!(
        (&response["status"], &response["error"]),
        (&json!("failed"), &json!({"code": "rate_limit_exceeded", "message": "Rate limited"}))
    );
    assert_eq!(response["output"], json!([]), "the open message is not closed");
    assert_eq!(run.completed, None);
}

#[test]
fn the_openrouter_midstream_error_fixture_fails() {
    let input = include_bytes!("../../../tests/fixtures/openrouter_chat_stream_midstream_error.sse");
    let run = run_stream(&json!({}), input, true);
    assert_eq!(run.types().last(), Some(&"response.failed"));
    assert_eq!(run.of_type("response.failed").len(), 1);
}

#[test]
fn a_stream_cut_short_or_garbled_fails() {
    let cut = [chunk(json!({"content": "Hi"}), None), chunk(json!({}), Some("stop"))].concat();
    let run = run_stream(&json!({}), cut.as_bytes(), false);
    let mut want = HEAD.to_vec();
    want.extend(text_events());
    want.extend([
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.failed",
    ]);
    assert_eq!(run.types(), want);
    assert_eq!(run.last_response()["output"][0]["content"][0]["text"], "Hi", "items finished before the cut are kept");
    assert_eq!(run.last_response()["error"]["code"], "server_error");

    let no_finish = chunk(json!({"content": "Hi"}), None);
    assert_eq!(run_stream(&json!({}), no_finish.as_bytes(), true).types().last(), Some(&"response.failed"));
    let garbled = run_stream(&json!({}), b"data: {not json\n\n", true);
    assert_eq!(garbled.types(), ["response.created", "response.in_progress", "response.failed"]);
}

#[test]
fn the_tool_calls_fixture_and_nothing_after_the_end() {
    let input = include_bytes!("../../../tests/fixtures/openai_chat_stream_tool_calls.sse");
    let request = json!({"tools": [{"type": "function", "name": "get_current_weather"}]});
    let run = run_stream(&request, input, true);
    assert_eq!(run.types().last(), Some(&"response.completed"));
    let done = run.of_type("response.function_call_arguments.done");
    let arguments: Value = serde_json::from_str(done[0]["arguments"].as_str().unwrap()).unwrap();
    assert!(arguments.get("location").is_some(), "{arguments}");
    assert_eq!(done[0]["name"], "get_current_weather");

    let mut stream = ChatToResponsesStream::new(super::test_support::echo_for(&request));
    let mut out = Vec::new();
    stream.feed(input, &mut out);
    stream.finish(&mut out, true);
    let length = out.len();
    stream.fail_with(&mut out, 502, "late");
    stream.feed(b"data: {}\n\n", &mut out);
    assert_eq!(out.len(), length, "nothing after response.completed");
}

#[test]
fn fail_with_keeps_the_sequence_numbers() {
    let mut stream = ChatToResponsesStream::new(super::test_support::echo_for(&json!({})));
    let mut out = Vec::new();
    stream.feed(chunk(json!({"content": "Hi"}), None).as_bytes(), &mut out);
    stream.fail_with(&mut out, 503, "the upstream went away");
    let events = super::test_support::events_of(&out);
    let last = events.last().unwrap();
    assert_eq!((&last["type"], &last["sequence_number"]), (&json!("response.failed"), &json!(events.len() - 1)));
    assert_eq!(last["response"]["error"]["code"], "server_error");
}
