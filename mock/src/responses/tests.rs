use std::time::Duration;

use serde_json::{json, Value};

use super::answer::{Answered, ResponsesCall};
use crate::state::Shared;
use crate::wire::head::Method;
use crate::wire::routes::Route;
use crate::MockOptions;

fn shared(options: MockOptions) -> Shared {
    Shared::new(&MockOptions { name: "m1".into(), ..options })
}

fn call<'a>(shared: &'a Shared, method: Method, path: &'a str, body: &'a [u8], number: u64) -> ResponsesCall<'a> {
    ResponsesCall {
        shared,
        route: Route::from_path(path),
        method,
        path,
        body,
        number,
        created: 1_700_000_000,
        chunks: 3,
        chunk_delay: Duration::ZERO,
        reply: None,
        close: false,
    }
}

/// Status and JSON body of a whole answer.
fn whole(call: &ResponsesCall<'_>) -> (u16, Value) {
    let mut out = Vec::new();
    let Answered::Written { head_len } = call.answer(&mut out, None) else { panic!("expected a whole answer") };
    let status = crate::wire::response::status_of(&out);
    (status, serde_json::from_slice(&out[head_len..]).expect("JSON body"))
}

/// The events of a streamed answer: (event line's type, data).
fn streamed(call: &ResponsesCall<'_>) -> Vec<(String, Value)> {
    let Answered::Stream(plan) = call.answer(&mut Vec::new(), None) else { panic!("expected a stream") };
    let text = String::from_utf8(plan.data()).expect("utf-8");
    text.split_terminator("\n\n")
        .map(|event| {
            let (name, data) = event.split_once('\n').expect("two lines");
            let name = name.strip_prefix("event: ").expect("event line").to_owned();
            (name, serde_json::from_str(data.strip_prefix("data: ").expect("data line")).expect("JSON"))
        })
        .collect()
}

fn post(body: Value) -> Vec<u8> {
    body.to_string().into_bytes()
}

#[test]
fn a_whole_answer_is_kept_retrieved_and_deleted() {
    let shared = shared(MockOptions::default());
    let body = post(json!({"model": "gpt-x", "input": "hi", "instructions": "be brief"}));
    let (status, answer) = whole(&call(&shared, Method::Post, "/v1/responses", &body, 4));
    assert_eq!(status, 200);
    assert_eq!((answer["id"].as_str(), answer["object"].as_str()), (Some("resp_mock_4"), Some("response")));
    assert_eq!((answer["status"].as_str(), answer["model"].as_str()), (Some("completed"), Some("gpt-x")));
    assert_eq!(answer["instructions"], "be brief");
    assert_eq!(answer["tool_choice"], "auto");
    let message = &answer["output"][0];
    assert_eq!((message["type"].as_str(), message["role"].as_str()), (Some("message"), Some("assistant")));
    assert_eq!(
        message["content"][0],
        json!({"type": "output_text", "annotations": [], "logprobs": [], "text": "Hello from mock m1"})
    );
    let usage = &answer["usage"];
    assert_eq!(usage["input_tokens"], body.len() / 4);
    assert_eq!(usage["input_tokens_details"], json!({"cached_tokens": 0}));
    assert_eq!(usage["output_tokens_details"], json!({"reasoning_tokens": 0}));
    assert_eq!(
        usage["total_tokens"],
        usage["input_tokens"].as_u64().unwrap() + usage["output_tokens"].as_u64().unwrap()
    );

    let (status, kept) = whole(&call(&shared, Method::Get, "/v1/responses/resp_mock_4", b"", 5));
    assert_eq!((status, &kept), (200, &answer));
    let (status, deleted) = whole(&call(&shared, Method::Delete, "/v1/responses/resp_mock_4", b"", 6));
    assert_eq!((status, deleted), (200, json!({"id": "resp_mock_4", "object": "response", "deleted": true})));
    let (status, missing) = whole(&call(&shared, Method::Get, "/v1/responses/resp_mock_4", b"", 7));
    assert_eq!(status, 404);
    assert_eq!(missing["error"]["message"], "Response with id 'resp_mock_4' not found.");
}

#[test]
fn an_unknown_previous_response_is_openais_error() {
    let shared = shared(MockOptions::default());
    let body = post(json!({"model": "gpt-x", "input": "hi", "previous_response_id": "resp_x"}));
    let (status, error) = whole(&call(&shared, Method::Post, "/v1/responses", &body, 1));
    assert_eq!(status, 400);
    assert_eq!(
        error,
        json!({"error": {"message": "Previous response with id 'resp_x' not found.", "type": "invalid_request_error",
            "param": "previous_response_id", "code": "previous_response_not_found"}})
    );
    // Not kept with `store: false`: continuing it fails the same way.
    let unstored = post(json!({"model": "gpt-x", "input": "hi", "store": false}));
    let (_, answer) = whole(&call(&shared, Method::Post, "/v1/responses", &unstored, 2));
    assert_eq!(answer["store"], false);
    let body = post(json!({"model": "gpt-x", "input": "hi", "previous_response_id": "resp_mock_2"}));
    assert_eq!(whole(&call(&shared, Method::Post, "/v1/responses", &body, 3)).0, 400);
    let (status, error) = whole(&call(&shared, Method::Post, "/v1/responses", br#"{"input":"x"}"#, 4));
    assert_eq!((status, error["error"]["param"].as_str()), (400, Some("model")));
}

fn exec_command() -> Value {
    json!({"type": "function", "name": "exec_command", "strict": false,
        "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]}})
}

#[test]
fn agent_mode_calls_the_shell_then_reports_through_previous_response_id() {
    let shared = shared(MockOptions { agent: true, ..MockOptions::default() });
    let body = post(json!({"model": "gpt-x", "input": "run it", "tools": [exec_command()]}));
    let (_, first) = whole(&call(&shared, Method::Post, "/v1/responses", &body, 1));
    let function_call = &first["output"][0];
    assert_eq!(function_call["type"], "function_call");
    assert_eq!(
        (function_call["name"].as_str(), function_call["call_id"].as_str()),
        (Some("exec_command"), Some("call_mock_1"))
    );
    assert_eq!(function_call["arguments"], r#"{"cmd":"echo POINTWORK-AGENT-$((6*7))-responses"}"#);

    let output = json!({"type": "function_call_output", "call_id": "call_mock_1", "output": "Output:\nPOINTWORK-AGENT-42-responses\n"});
    let body = post(
        json!({"model": "gpt-x", "previous_response_id": "resp_mock_1", "input": [output], "tools": [exec_command()]}),
    );
    let (_, second) = whole(&call(&shared, Method::Post, "/v1/responses", &body, 2));
    assert_eq!(second["previous_response_id"], "resp_mock_1");
    let text = second["output"][0]["content"][0]["text"].as_str().expect("text");
    assert!(text.contains("POINTWORK-AGENT-42-responses"), "{text}");

    // Without a shell tool (a title, a summary): the plain answer.
    let body = post(json!({"model": "gpt-x", "input": [{"role": "user", "content": "title?"}]}));
    let (_, plain) = whole(&call(&shared, Method::Post, "/v1/responses", &body, 3));
    assert_eq!(plain["output"][0]["content"][0]["text"], "Hello from mock m1");
}

#[test]
fn a_stream_has_openais_event_sequence() {
    let shared = shared(MockOptions::default());
    let body = post(json!({"model": "gpt-x", "input": "hi", "stream": true}));
    let events = streamed(&call(&shared, Method::Post, "/v1/responses", &body, 9));
    let names: Vec<&str> = events.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(
        names,
        [
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.content_part.added",
            "response.output_text.delta",
            "response.output_text.delta",
            "response.output_text.delta",
            "response.output_text.done",
            "response.content_part.done",
            "response.output_item.done",
            "response.completed",
        ]
    );
    for (number, (name, data)) in events.iter().enumerate() {
        assert_eq!(
            (data["type"].as_str(), data["sequence_number"].as_u64()),
            (Some(name.as_str()), Some(number as u64))
        );
    }
    assert_eq!(events[0].1["response"]["status"], "in_progress");
    assert_eq!(events[0].1["response"]["output"], json!([]));
    let text: String = events.iter().filter_map(|(_, data)| data["delta"].as_str()).collect();
    assert_eq!(text, "Hello from mock m1");
    assert_eq!(events[4].1["item_id"], "msg_mock_9");
    let completed = &events[10].1["response"];
    assert_eq!(completed["status"], "completed");
    assert_eq!(completed["output"][0]["content"][0]["text"], "Hello from mock m1");
    assert!(completed["usage"]["output_tokens"].as_u64().is_some());
}

#[test]
fn a_streamed_function_call_sends_its_arguments_in_pieces() {
    let shared = shared(MockOptions { agent: true, ..MockOptions::default() });
    let body = post(json!({"model": "gpt-x", "input": "run", "stream": true, "tools": [exec_command()]}));
    let events = streamed(&call(&shared, Method::Post, "/v1/responses", &body, 2));
    let names: Vec<&str> = events.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names[2], "response.output_item.added");
    assert_eq!(events[2].1["item"]["arguments"], "");
    assert_eq!(names.iter().filter(|name| **name == "response.function_call_arguments.delta").count(), 3);
    let arguments: String = events
        .iter()
        .filter(|(name, _)| name == "response.function_call_arguments.delta")
        .filter_map(|(_, data)| data["delta"].as_str())
        .collect();
    let done = events.iter().find(|(name, _)| name == "response.function_call_arguments.done").expect("done");
    assert_eq!(done.1["arguments"], arguments.as_str());
    assert_eq!(names[names.len() - 2], "response.output_item.done");
    assert_eq!(events[names.len() - 2].1["item"]["arguments"], arguments.as_str());
}

#[test]
fn without_responses_the_paths_answer_a_self_hosted_404() {
    let shared = shared(MockOptions { serve_responses: false, ..MockOptions::default() });
    let body = post(json!({"model": "gpt-x", "input": "hi"}));
    assert_eq!(whole(&call(&shared, Method::Post, "/v1/responses", &body, 1)), (404, json!({"detail": "Not Found"})));
    assert_eq!(whole(&call(&shared, Method::Get, "/v1/responses/resp_1", b"", 2)).0, 404);
}
