//! The Gemini API over TCP: generateContent, both stream forms, embeddings and token counts,
//! the API-key checks with Google's exact bodies, request checks, and faults in Google's shape.

use std::net::SocketAddr;
use std::process::{Command, Stdio};

use pointwork_mock::MockOptions;
use serde_json::{json, Value};

use crate::binary::{first_line, KillOnDrop, BINARY};
use crate::client::{Broken, Client, Response};
use crate::{start, start_named};

const GENERATE: &str = "/v1beta/models/gemini-2.0-flash:generateContent";
const STREAM: &str = "/v1beta/models/gemini-2.0-flash:streamGenerateContent";
const NO_KEY: &str = r#"{"error":{"code":403,"message":"Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.","status":"PERMISSION_DENIED"}}"#;

fn hello() -> Value {
    json!({"contents": [{"role": "user", "parts": [{"text": "Say hello."}]}], "generationConfig": {"maxOutputTokens": 64}})
}

fn post(client: &mut Client, path: &str, headers: &[(&str, &str)], body: &Value) -> Response {
    client.request("POST", path, headers, body.to_string().as_bytes())
}

const KEY: (&str, &str) = ("x-goog-api-key", "AIza-mock");

/// The `data:` payloads of a Gemini SSE body (events end in CRLF CRLF).
pub fn sse_events(body: &[u8]) -> Vec<Value> {
    let text = String::from_utf8_lossy(body);
    assert!(!text.contains("[DONE]"), "Gemini sends no [DONE]");
    text.split("\r\n\r\n")
        .filter(|event| !event.is_empty())
        .map(|event| serde_json::from_str(event.strip_prefix("data: ").expect("data line")).expect("event JSON"))
        .collect()
}

fn text_of(elements: &[Value]) -> String {
    elements.iter().filter_map(|e| e["candidates"][0]["content"]["parts"][0]["text"].as_str()).collect()
}

#[test]
fn generate_content_answers_with_a_candidate_and_usage() {
    let server = start_named("gem");
    let mut client = Client::connect(server.addr());
    let response = post(&mut client, GENERATE, &[KEY], &hello());
    assert_eq!(response.status, 200, "{}", String::from_utf8_lossy(&response.body));
    let answer = response.json();
    assert_eq!(
        answer["candidates"][0],
        json!({"content": {"parts": [{"text": "Hello from mock gem"}], "role": "model"}, "finishReason": "STOP", "index": 0})
    );
    let sent = hello().to_string().len() as u64;
    assert_eq!(answer["usageMetadata"]["promptTokenCount"], sent / 4);
    assert_eq!(answer["usageMetadata"]["candidatesTokenCount"], 5);
    assert_eq!(answer["usageMetadata"]["totalTokenCount"], sent / 4 + 5);
    assert_eq!(answer["modelVersion"], "gemini-2.0-flash");
    assert!(answer["responseId"].is_string());

    let by_query = post(&mut client, &format!("{GENERATE}?key=AIza-q"), &[], &hello());
    assert_eq!(by_query.status, 200);
    let v1 = post(&mut client, "/v1/models/gemini-1.5-pro:generateContent", &[KEY], &hello());
    assert_eq!(v1.json()["modelVersion"], "gemini-1.5-pro");

    let tools = json!([{"functionDeclarations": [{"name": "get_weather", "description": "Weather",
        "parameters": {"type": "OBJECT", "properties": {"city": {"type": "STRING"}}, "required": ["city"]}}]}]);
    let mut asking = hello();
    asking["tools"] = tools;
    let called = post(&mut client, GENERATE, &[KEY], &asking).json();
    assert_eq!(
        called["candidates"][0]["content"]["parts"][1],
        json!({"functionCall": {"name": "get_weather", "args": {"city": "mock"}}})
    );

    let recorded = client.get("/mock/requests").json();
    assert_eq!(recorded[1]["path"], format!("{GENERATE}?key=AIza-q"));
    assert!(recorded[0]["headers"].as_array().expect("headers").contains(&json!(["x-goog-api-key", "AIza-mock"])));
}

#[test]
fn streams_are_server_sent_events_with_alt_sse_and_a_json_array_without() {
    let server = start_named("gem");
    let mut client = Client::connect(server.addr());
    let sse = post(&mut client, &format!("{STREAM}?alt=sse"), &[KEY, ("x-mock-chunks", "3")], &hello());
    assert_eq!(sse.status, 200);
    assert_eq!(sse.header("content-type"), Some("text/event-stream"));
    let events = sse_events(&sse.body);
    assert_eq!(events.len(), 3);
    assert_eq!(sse.chunks.len(), 3, "each event its own chunk");
    assert_eq!(text_of(&events), "Hello from mock gem");
    assert!(events[..2].iter().all(|event| event["candidates"][0].get("finishReason").is_none()));
    assert_eq!(events[2]["candidates"][0]["finishReason"], "STOP");
    assert_eq!(events[2]["usageMetadata"]["candidatesTokenCount"], 5);

    let array = post(&mut client, STREAM, &[KEY, ("x-mock-chunks", "2")], &hello());
    assert_eq!(array.header("content-type"), Some("application/json"));
    assert!(array.body.starts_with(b"[{") && array.body.ends_with(b"\n]"));
    let elements: Vec<Value> = serde_json::from_slice(&array.body).expect("a JSON array");
    assert_eq!(elements.len(), 2);
    assert_eq!(text_of(&elements), "Hello from mock gem");

    // abort-after: K events, then a close without the last chunk.
    let mut cut = Client::connect(server.addr());
    cut.send(
        "POST",
        &format!("{STREAM}?alt=sse"),
        &[KEY, ("x-mock-fault", "abort-after:1")],
        hello().to_string().as_bytes(),
    );
    match cut.try_read_response() {
        Err(Broken::Closed(partial)) => assert_eq!(sse_events(&partial.body).len(), 1),
        other => panic!("expected a cut stream, got {other:?}"),
    }
}

#[test]
fn embeddings_and_token_counts() {
    let server = start_named("gem");
    let mut client = Client::connect(server.addr());
    let content = json!({"parts": [{"text": "hello"}]});
    let one = post(&mut client, "/v1beta/models/text-embedding-004:embedContent", &[KEY], &json!({"content": content}));
    assert_eq!(one.json()["embedding"]["values"].as_array().map(Vec::len), Some(768));
    let batch = json!({"requests": [
        {"model": "models/text-embedding-004", "content": content, "outputDimensionality": 16},
        {"model": "models/text-embedding-004", "content": content, "outputDimensionality": 16},
    ]});
    let many = post(&mut client, "/v1beta/models/text-embedding-004:batchEmbedContents", &[KEY], &batch).json();
    let embeddings = many["embeddings"].as_array().expect("embeddings");
    assert_eq!((embeddings.len(), embeddings[1]["values"].as_array().map(Vec::len)), (2, Some(16)));
    let counted = post(
        &mut client,
        "/v1beta/models/gemini-2.0-flash:countTokens",
        &[KEY],
        &json!({"contents": hello()["contents"]}),
    );
    assert!(counted.json()["totalTokens"].is_u64());
    let other = post(&mut client, "/v1beta/models/gemini-2.0-flash:predict", &[KEY], &hello());
    assert_eq!((other.status, other.json()["error"]["status"].as_str()), (404, Some("NOT_FOUND")));
}

#[test]
fn keys_and_bodies_are_checked_with_googles_exact_bodies() {
    let server = start(MockOptions {
        gemini_api_key: Some("AIza-right".into()),
        context_window: Some(40),
        refuse: Some("forbidden".into()),
        ..MockOptions::default()
    });
    let mut client = Client::connect(server.addr());
    let missing = post(&mut client, GENERATE, &[], &hello());
    assert_eq!((missing.status, String::from_utf8_lossy(&missing.body).as_ref()), (403, NO_KEY));
    let wrong = post(&mut client, GENERATE, &[("x-goog-api-key", "AIza-wrong")], &hello());
    assert_eq!(wrong.status, 400);
    assert_eq!(
        wrong.json(),
        json!({"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.", "status": "INVALID_ARGUMENT",
            "details": [
                {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID", "domain": "googleapis.com",
                 "metadata": {"service": "generativelanguage.googleapis.com"}},
                {"@type": "type.googleapis.com/google.rpc.LocalizedMessage", "locale": "en-US",
                 "message": "API key not valid. Please pass a valid API key."}]}})
    );
    let key = ("x-goog-api-key", "AIza-right");
    let error = |response: Response| (response.status, response.json());
    let invalid = |message: &str| json!({"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}});
    assert_eq!(
        error(post(&mut client, GENERATE, &[key], &json!({}))),
        (400, invalid("* GenerateContentRequest.contents: contents is not specified\n"))
    );
    let system_role = json!({"contents": [{"role": "system", "parts": [{"text": "x"}]}]});
    assert_eq!(
        error(post(&mut client, GENERATE, &[key], &system_role)),
        (400, invalid("Please use a valid role: user, model."))
    );
    let openai_shaped = json!({"contents": [{"parts": [{"text": "x"}]}], "messages": []});
    assert_eq!(
        error(post(&mut client, GENERATE, &[key], &openai_shaped)),
        (400, invalid("Invalid JSON payload received. Unknown name \"messages\": Cannot find field."))
    );
    let long = json!({"contents": [{"parts": [{"text": "x".repeat(300)}]}]});
    let tokens = long.to_string().len().div_ceil(4);
    assert_eq!(
        error(post(&mut client, GENERATE, &[key], &long)),
        (400, invalid(&format!("The input token count ({tokens}) exceeds the maximum number of tokens allowed (40).")))
    );
    let blocked = post(&mut client, GENERATE, &[key], &json!({"contents": [{"parts": [{"text": "forbidden"}]}]}));
    assert_eq!(blocked.status, 200);
    let blocked = blocked.json();
    assert!(blocked.get("candidates").is_none());
    assert_eq!(blocked["promptFeedback"]["blockReason"], "SAFETY");
}

#[test]
fn faults_answer_in_googles_shape() {
    let server = start_named("gemfault");
    let mut client = Client::connect(server.addr());
    let limited = post(&mut client, GENERATE, &[KEY, ("x-mock-fault", "status:429:retry-after=7")], &hello());
    assert_eq!(limited.status, 429);
    assert_eq!(limited.header("retry-after"), Some("7"));
    let error = limited.json();
    assert_eq!(error["error"]["status"], "RESOURCE_EXHAUSTED");
    assert!(error["error"]["message"].as_str().is_some_and(|m| m.starts_with("You exceeded your current quota")));
    assert_eq!(
        error["error"]["details"][0],
        json!({"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "7s"})
    );
    let overloaded = post(&mut client, GENERATE, &[KEY, ("x-mock-fault", "status:503")], &hello());
    assert_eq!(
        overloaded.json(),
        json!({"error": {"code": 503, "message": "The model is overloaded. Please try again later.", "status": "UNAVAILABLE"}})
    );
    let internal = post(&mut client, GENERATE, &[KEY, ("x-mock-fault", "status:500")], &hello());
    assert_eq!(internal.json()["error"]["status"], "INTERNAL");
    let window = post(&mut client, GENERATE, &[KEY, ("x-mock-fault", "status:400")], &hello());
    assert_eq!(
        window.json()["error"]["message"],
        "The input token count (1048577) exceeds the maximum number of tokens allowed (1048576)."
    );
    let filtered =
        post(&mut client, &format!("{STREAM}?alt=sse"), &[KEY, ("x-mock-fault", "content_filter")], &hello());
    assert_eq!(sse_events(&filtered.body)[0]["promptFeedback"]["blockReason"], "SAFETY");
    // The key is checked before any fault.
    let unkeyed = post(&mut client, GENERATE, &[("x-mock-fault", "status:500")], &hello());
    assert_eq!(unkeyed.status, 403);
}

#[test]
fn the_binary_takes_the_gemini_key() {
    let child = Command::new(BINARY)
        .args(["--name", "gembin", "--threads", "1", "--gemini-api-key", "AIza-bin"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run pointwork-mock");
    let mut child = KillOnDrop(child);
    let line = first_line(&mut child);
    let addr: SocketAddr = line.trim_end().rsplit("http://").next().expect("address").parse().expect("address");
    let mut client = Client::connect(addr);
    assert_eq!(post(&mut client, &format!("{GENERATE}?key=AIza-bin"), &[], &hello()).status, 200);
    assert_eq!(post(&mut client, &format!("{GENERATE}?key=AIza-other"), &[], &hello()).status, 400);
    let output = Command::new(BINARY).args(["--gemini-api-key", ""]).output().expect("run");
    assert_eq!(output.status.code(), Some(2));
}
