//! Amazon Bedrock's runtime over TCP: Converse, ConverseStream (event-stream frames decoded with
//! `aws-smithy-eventstream`), InvokeModel embeddings, SigV4 signatures made with `aws-sigv4` and
//! verified by the mock, and errors and faults in Bedrock's shape.

use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime};

use aws_credential_types::Credentials;
use aws_sigv4::http_request::{sign, SignableBody, SignableRequest, SigningSettings};
use aws_sigv4::sign::v4;
use aws_smithy_eventstream::frame::read_message_from;
use aws_smithy_runtime_api::client::identity::Identity;
use aws_smithy_types::event_stream::Message;
use pointwork_mock::{MockOptions, MockServer};
use serde_json::{json, Value};

use crate::binary::{first_line, KillOnDrop, BINARY};
use crate::client::{Client, Response};
use crate::start;

const CLAUDE: &str = "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0";
const KEY_ID: &str = "AKIDMOCKEXAMPLE";
const SECRET: &str = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
const SIGNATURE_MISMATCH: &str = "The request signature we calculated does not match the signature you provided. \
                                  Check your AWS Secret Access Key and signing method. Consult the service \
                                  documentation for details.";

/// How a test signs: the credentials, the service in the scope, the signing time.
struct Signer<'a> {
    key_id: &'a str,
    secret: &'a str,
    token: Option<&'a str>,
    service: &'a str,
    time: SystemTime,
}

impl Default for Signer<'_> {
    fn default() -> Self {
        Signer { key_id: KEY_ID, secret: SECRET, token: None, service: "bedrock", time: SystemTime::now() }
    }
}

impl Signer<'_> {
    /// The request's headers with the ones `aws-sigv4` adds (`authorization`, `x-amz-date`, …).
    fn headers(&self, path: &str, body: &[u8]) -> Vec<(String, String)> {
        let credentials = Credentials::new(self.key_id, self.secret, self.token.map(str::to_owned), None, "test");
        let identity = Identity::from(credentials);
        let params = v4::SigningParams::builder()
            .identity(&identity)
            .region("us-east-1")
            .name(self.service)
            .time(self.time)
            .settings(SigningSettings::default())
            .build()
            .expect("signing params")
            .into();
        let base = [("host", "mock"), ("content-type", "application/json")];
        let signable =
            SignableRequest::new("POST", format!("http://mock{path}"), base.iter().copied(), SignableBody::Bytes(body))
                .expect("signable");
        let (instructions, _signature) = sign(signable, &params).expect("signs").into_parts();
        let mut headers = vec![("content-type".to_owned(), "application/json".to_owned())];
        headers.extend(instructions.headers().map(|(name, value)| (name.to_owned(), value.to_owned())));
        headers
    }
}

fn post(client: &mut Client, path: &str, headers: &[(String, String)], body: &Value) -> Response {
    let headers: Vec<(&str, &str)> = headers.iter().map(|(name, value)| (name.as_str(), value.as_str())).collect();
    client.request("POST", path, &headers, body.to_string().as_bytes())
}

/// Signs with `signer` (plus `extra` unsigned headers) and posts.
fn signed(client: &mut Client, signer: &Signer<'_>, path: &str, body: &Value, extra: &[(&str, &str)]) -> Response {
    let mut headers = signer.headers(path, body.to_string().as_bytes());
    headers.extend(extra.iter().map(|(name, value)| ((*name).to_owned(), (*value).to_owned())));
    post(client, path, &headers, body)
}

fn hello() -> Value {
    json!({"messages": [{"role": "user", "content": [{"text": "Say hello."}]}], "inferenceConfig": {"maxTokens": 64}})
}

fn verifying(extra: MockOptions) -> MockServer {
    start(MockOptions {
        name: "bedrock".into(),
        aws_access_key_id: Some(KEY_ID.into()),
        aws_secret_access_key: Some(SECRET.into()),
        aws_region: Some("us-east-1".into()),
        ..extra
    })
}

fn header(message: &Message, name: &str) -> String {
    let found = message.headers().iter().find(|header| header.name().as_str() == name).expect(name);
    found.value().as_string().expect("string header").as_str().to_owned()
}

/// Every event-stream message of a body.
fn decode_messages(body: &[u8]) -> Vec<Message> {
    let mut rest = body;
    let mut messages = Vec::new();
    while !rest.is_empty() {
        messages.push(read_message_from(&mut rest).expect("a whole frame"));
    }
    messages
}

/// Asserts a Bedrock error: status, `x-amzn-ErrorType` and the exact body.
fn assert_error(response: &Response, status: u16, error_type: &str, message: &str) {
    assert_eq!(response.status, status, "{}", String::from_utf8_lossy(&response.body));
    assert_eq!(response.header("x-amzn-ErrorType"), Some(error_type));
    assert!(response.header("x-amzn-RequestId").is_some());
    assert_eq!(response.json(), json!({ "message": message }));
}

#[test]
fn a_verified_signature_gets_converse_answers_and_embeddings() {
    let server = verifying(MockOptions::default());
    let mut client = Client::connect(server.addr());
    let signer = Signer::default();
    let path = format!("{CLAUDE}/converse");
    let whole = signed(&mut client, &signer, &path, &hello(), &[]);
    assert_eq!(whole.status, 200, "{}", String::from_utf8_lossy(&whole.body));
    assert!(whole.header("x-amzn-RequestId").is_some());
    let answer = whole.json();
    assert_eq!(
        answer["output"]["message"],
        json!({"role": "assistant", "content": [{"text": "Hello from mock bedrock"}]})
    );
    assert_eq!(answer["stopReason"], "end_turn");
    let sent = hello().to_string().len() as u64;
    assert_eq!(answer["usage"]["inputTokens"], sent / 4);
    assert_eq!(answer["usage"]["totalTokens"], sent / 4 + 6);
    assert!(answer["metrics"]["latencyMs"].is_u64());

    let tools = json!({"tools": [{"toolSpec": {"name": "get_weather", "description": "Weather",
        "inputSchema": {"json": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}}]});
    let mut asking = hello();
    asking["toolConfig"] = tools;
    let called = signed(&mut client, &signer, &path, &asking, &[]).json();
    assert_eq!(called["stopReason"], "tool_use");
    let tool_use = &called["output"]["message"]["content"][1]["toolUse"];
    assert_eq!((tool_use["name"].as_str(), &tool_use["input"]), (Some("get_weather"), &json!({"city": "mock"})));

    let titan = "/model/amazon.titan-embed-text-v2%3A0/invoke";
    let embedded = signed(&mut client, &signer, titan, &json!({"inputText": "hello world", "dimensions": 512}), &[]);
    assert_eq!(embedded.json()["embedding"].as_array().map(Vec::len), Some(512));
    assert_eq!(embedded.json()["inputTextTokenCount"], 3);
    let cohere = "/model/cohere.embed-english-v3/invoke";
    let body = json!({"texts": ["a", "b"], "input_type": "search_document"});
    let embedded = signed(&mut client, &signer, cohere, &body, &[]).json();
    assert_eq!(
        (embedded["response_type"].as_str(), embedded["embeddings"].as_array().map(Vec::len)),
        (Some("embeddings_floats"), Some(2))
    );

    let recorded = client.get("/mock/requests").json();
    assert_eq!(recorded[0]["path"], path, "recorded as sent, the model id percent-encoded");
    let names: Vec<&str> =
        recorded[0]["headers"].as_array().expect("headers").iter().filter_map(|h| h[0].as_str()).collect();
    assert!(names.contains(&"authorization") && names.contains(&"x-amz-date"), "{names:?}");
}

#[test]
fn converse_stream_sends_event_stream_frames_in_bedrocks_order() {
    let server = verifying(MockOptions::default());
    let mut client = Client::connect(server.addr());
    let path = format!("{CLAUDE}/converse-stream");
    let response = signed(&mut client, &Signer::default(), &path, &hello(), &[("x-mock-chunks", "3")]);
    assert_eq!(response.status, 200);
    assert_eq!(response.header("content-type"), Some("application/vnd.amazon.eventstream"));
    assert_eq!(response.header("transfer-encoding"), Some("chunked"));
    let messages = decode_messages(&response.body);
    assert_eq!(response.chunks.len(), messages.len(), "each message is its own HTTP chunk");
    let kinds: Vec<String> = messages.iter().map(|message| header(message, ":event-type")).collect();
    assert_eq!(
        kinds,
        [
            "messageStart",
            "contentBlockDelta",
            "contentBlockDelta",
            "contentBlockDelta",
            "contentBlockStop",
            "messageStop",
            "metadata"
        ]
    );
    assert!(messages.iter().all(|message| header(message, ":message-type") == "event"));
    assert!(messages.iter().all(|message| header(message, ":content-type") == "application/json"));
    let payloads: Vec<Value> =
        messages.iter().map(|message| serde_json::from_slice(message.payload()).expect("JSON")).collect();
    assert_eq!(payloads[0]["role"], "assistant");
    let text: String = payloads.iter().filter_map(|payload| payload["delta"]["text"].as_str()).collect();
    assert_eq!(text, "Hello from mock bedrock");
    assert_eq!(payloads[5]["stopReason"], "end_turn");
    assert!(payloads[6]["usage"]["outputTokens"].is_u64() && payloads[6]["metrics"]["latencyMs"].is_u64());

    // abort-after: two deltas, then the exception message, and a properly ended body.
    let cut = signed(&mut client, &Signer::default(), &path, &hello(), &[("x-mock-fault", "abort-after:2")]);
    let messages = decode_messages(&cut.body);
    assert!(cut.last_chunk_at.is_some());
    let last = messages.last().expect("exception");
    assert_eq!(header(last, ":message-type"), "exception");
    assert_eq!(header(last, ":exception-type"), "throttlingException");
    let payload: Value = serde_json::from_slice(last.payload()).expect("JSON");
    assert_eq!(payload, json!({"message": "Too many requests, please wait before trying again."}));
    assert_eq!(messages.len(), 1 + 2 + 1);
    let picked = [("x-mock-fault", "abort-after:0"), ("x-mock-bedrock-exception", "internalServerException")];
    let cut = signed(&mut client, &Signer::default(), &path, &hello(), &picked);
    let messages = decode_messages(&cut.body);
    assert_eq!(messages.len(), 2);
    assert_eq!(header(&messages[1], ":exception-type"), "internalServerException");
}

#[test]
fn every_auth_refusal_has_awss_exception_and_sentence() {
    let server = verifying(MockOptions { aws_session_token: Some("session-1".into()), ..MockOptions::default() });
    let mut client = Client::connect(server.addr());
    let path = format!("{CLAUDE}/converse");
    let coral = |name: &str| format!("{name}:http://internal.amazon.com/coral/com.amazon.coral.service/");

    let missing = post(&mut client, &path, &[], &hello());
    assert_error(&missing, 403, &coral("MissingAuthenticationTokenException"), "Missing Authentication Token");

    let good = Signer { token: Some("session-1"), ..Signer::default() };
    assert_eq!(signed(&mut client, &good, &path, &hello(), &[]).status, 200);

    let wrong_secret = Signer { secret: "not-the-secret", ..good };
    let refused = signed(&mut client, &wrong_secret, &path, &hello(), &[]);
    assert_error(&refused, 403, &coral("InvalidSignatureException"), SIGNATURE_MISMATCH);
    let canonical = refused.header("x-mock-canonical-request").expect("the mock's canonical request");
    assert!(
        canonical.starts_with("POST\\n/model/anthropic.claude-3-5-sonnet-20240620-v1%253A0/converse\\n"),
        "{canonical}"
    );

    // The body changed after signing.
    let mut headers = good.headers(&path, hello().to_string().as_bytes());
    headers.push(("x-mock-reply".into(), "x".into()));
    let tampered = post(&mut client, &path, &headers, &json!({"messages": []}));
    assert_error(&tampered, 403, &coral("InvalidSignatureException"), SIGNATURE_MISMATCH);

    let unknown_key = Signer { key_id: "AKIDOTHER", ..good };
    let refused = signed(&mut client, &unknown_key, &path, &hello(), &[]);
    assert_error(
        &refused,
        403,
        &coral("UnrecognizedClientException"),
        "The security token included in the request is invalid.",
    );
    let no_token = Signer { token: None, ..good };
    let refused = signed(&mut client, &no_token, &path, &hello(), &[]);
    assert_error(
        &refused,
        403,
        &coral("UnrecognizedClientException"),
        "The security token included in the request is invalid.",
    );

    let other_service = Signer { service: "s3", ..good };
    let refused = signed(&mut client, &other_service, &path, &hello(), &[]);
    assert_error(
        &refused,
        403,
        &coral("InvalidSignatureException"),
        "Credential should be scoped to correct service: 'bedrock'. ",
    );

    let old = Signer { time: SystemTime::now() - Duration::from_secs(20 * 60), ..good };
    let refused = signed(&mut client, &old, &path, &hello(), &[]);
    assert_eq!(
        (refused.status, refused.header("x-amzn-ErrorType")),
        (403, Some(coral("InvalidSignatureException").as_str()))
    );
    let message = refused.json()["message"].as_str().expect("message").to_owned();
    assert!(message.starts_with("Signature expired: ") && message.ends_with(" - 15 min.)"), "{message}");

    let bearer = post(&mut client, &path, &[("Authorization".into(), "Bearer abc".into())], &hello());
    assert_eq!(bearer.status, 403);
    assert_eq!(bearer.header("x-amzn-ErrorType"), Some(coral("IncompleteSignatureException").as_str()));
    assert!(bearer.json()["message"]
        .as_str()
        .is_some_and(|m| m.starts_with("Authorization header requires 'Credential' parameter.")));
}

#[test]
fn bodies_models_and_limits_are_checked_as_bedrock_does() {
    let server = start(MockOptions {
        name: "bedrock".into(),
        bedrock_models: Some(vec!["anthropic.claude-3-5-sonnet-20240620-v1:0".into()]),
        context_window: Some(60),
        refuse: Some("forbidden".into()),
        ..MockOptions::default()
    });
    let mut client = Client::connect(server.addr());
    let signer = Signer::default();
    let path = format!("{CLAUDE}/converse");
    let bedrock = |name: &str| format!("{name}:http://internal.amazon.com/coral/com.amazon.bedrock/");
    let validation = bedrock("ValidationException");

    let unknown = signed(&mut client, &signer, "/model/meta.llama3-70b-instruct-v1%3A0/converse", &hello(), &[]);
    assert_error(&unknown, 400, &validation, "The provided model identifier is invalid.");
    let empty = signed(&mut client, &signer, &path, &json!({"messages": []}), &[]);
    assert_error(
        &empty,
        400,
        &validation,
        "A conversation must start with a user message. Try again with a conversation that starts with a user message.",
    );
    let long = json!({"messages": [{"role": "user", "content": [{"text": "x".repeat(400)}]}]});
    assert_error(
        &signed(&mut client, &signer, &path, &long, &[]),
        400,
        &validation,
        "Input is too long for requested model.",
    );
    let unknown_operation =
        signed(&mut client, &signer, &format!("{CLAUDE}/invoke-with-response-stream"), &hello(), &[]);
    assert_eq!(unknown_operation.status, 404);

    let forbidden = json!({"messages": [{"role": "user", "content": [{"text": "forbidden"}]}]});
    let filtered = signed(&mut client, &signer, &path, &forbidden, &[]).json();
    assert_eq!(
        (filtered["stopReason"].as_str(), &filtered["output"]["message"]["content"]),
        (Some("content_filtered"), &json!([]))
    );
    let mut guarded = forbidden.clone();
    guarded["guardrailConfig"] = json!({"guardrailIdentifier": "gr-1", "guardrailVersion": "1"});
    let intervened = signed(&mut client, &signer, &path, &guarded, &[]).json();
    assert_eq!(intervened["stopReason"], "guardrail_intervened");
    assert_eq!(intervened["output"]["message"]["content"][0]["text"], "Sorry, the model cannot answer this question.");

    let titan = "/model/amazon.titan-embed-text-v1/invoke";
    let refused = signed(&mut client, &signer, titan, &json!({"text": "x"}), &[]);
    assert_eq!(refused.status, 400, "titan is not in --bedrock-models");
}

#[test]
fn faults_answer_with_bedrocks_exceptions() {
    let server = start(MockOptions { name: "bedrock".into(), ..MockOptions::default() });
    let mut client = Client::connect(server.addr());
    let signer = Signer::default();
    let path = format!("{CLAUDE}/converse");
    let bedrock = |name: &str| format!("{name}:http://internal.amazon.com/coral/com.amazon.bedrock/");
    let cases = [
        ("status:429", 429, "ThrottlingException", "Too many requests, please wait before trying again."),
        ("status:400", 400, "ValidationException", "Input is too long for requested model."),
        (
            "status:500",
            500,
            "InternalServerException",
            "The system encountered an unexpected error during processing. Try your request again.",
        ),
        ("status:503", 503, "ServiceUnavailableException", "Bedrock is unable to process your request."),
        ("status:403", 403, "AccessDeniedException", "You don't have access to the model with the specified model ID."),
    ];
    for (fault, status, kind, message) in cases {
        let response = signed(&mut client, &signer, &path, &hello(), &[("x-mock-fault", fault)]);
        assert_error(&response, status, &bedrock(kind), message);
    }
    let limited = signed(&mut client, &signer, &path, &hello(), &[("x-mock-fault", "status:429:retry-after=2")]);
    assert_eq!(limited.header("retry-after"), Some("2"));
    // Refused before any fault: no signature.
    let unsigned = post(&mut client, &path, &[("x-mock-fault".into(), "status:500".into())], &hello());
    assert_eq!(unsigned.status, 403);
    let filtered = signed(&mut client, &signer, &path, &hello(), &[("x-mock-fault", "content_filter")]);
    assert_eq!(filtered.json()["stopReason"], "content_filtered");

    let mut reset = Client::connect(server.addr());
    let body = hello().to_string();
    let headers = signer.headers(&path, body.as_bytes());
    let mut headers: Vec<(&str, &str)> = headers.iter().map(|(name, value)| (name.as_str(), value.as_str())).collect();
    headers.push(("x-mock-fault", "reset"));
    reset.send("POST", &path, &headers, body.as_bytes());
    assert!(reset.try_read_response().is_err());
}

#[test]
fn the_binary_takes_the_aws_flags() {
    let child = Command::new(BINARY)
        .args(["--name", "bedbin", "--threads", "1", "--aws-access-key-id", KEY_ID, "--aws-secret-access-key", SECRET])
        .args(["--aws-region", "us-east-1", "--bedrock-models", "anthropic.claude-3-5-sonnet-20240620-v1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run pointwork-mock");
    let mut child = KillOnDrop(child);
    let line = first_line(&mut child);
    let addr: SocketAddr = line.trim_end().rsplit("http://").next().expect("address").parse().expect("address");
    let mut client = Client::connect(addr);
    let path = format!("{CLAUDE}/converse");
    assert_eq!(signed(&mut client, &Signer::default(), &path, &hello(), &[]).status, 200);
    let wrong = Signer { secret: "other", ..Signer::default() };
    assert_eq!(signed(&mut client, &wrong, &path, &hello(), &[]).status, 403);

    for args in [
        &["--aws-access-key-id", "A"][..],
        &["--aws-session-token", "t"],
        &["--bedrock-models", ","],
        &["--aws-region", ""],
    ] {
        let output = Command::new(BINARY).args(args).output().expect("run");
        assert_eq!(output.status.code(), Some(2), "{args:?}");
    }
}
