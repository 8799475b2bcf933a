//! Azure OpenAI over TCP: deployments' chats and embeddings, the `api-version` and key checks,
//! Entra ID tokens, and faults in Azure's shape.

use std::net::SocketAddr;
use std::process::{Command, Stdio};

use pointwork_mock::MockOptions;
use serde_json::{json, Value};

use crate::binary::{first_line, KillOnDrop, BINARY};
use crate::client::{Client, Response};
use crate::{start, start_named};

const CHAT: &str = "/openai/deployments/gpt-4o-prod/chat/completions?api-version=2024-10-21";
const SCOPE: &str = "https%3A%2F%2Fcognitiveservices.azure.com%2F.default";

fn chat(client: &mut Client, path: &str, headers: &[(&str, &str)], body: &Value) -> Response {
    client.request("POST", path, headers, body.to_string().as_bytes())
}

fn hello(stream: bool) -> Value {
    json!({"stream": stream, "messages": [{"role": "user", "content": "Say hello."}]})
}

/// Asks the token endpoint with a form body.
fn token(client: &mut Client, form: &str) -> Response {
    let headers = [("Content-Type", "application/x-www-form-urlencoded")];
    client.request("POST", "/tenant-1/oauth2/v2.0/token", &headers, form.as_bytes())
}

fn secret_form() -> String {
    format!("grant_type=client_credentials&client_id=app-1&client_secret=s3cret&scope={SCOPE}")
}

#[test]
fn a_deployment_answers_whole_and_streamed_chats_and_embeddings() {
    let server = start_named("azure");
    let mut client = Client::connect(server.addr());
    let whole = chat(&mut client, CHAT, &[("api-key", "any-key")], &hello(false));
    assert_eq!(whole.status, 200);
    assert!(whole.header("apim-request-id").is_some());
    let answer = whole.json();
    assert_eq!(answer["model"], "gpt-4o-prod", "the deployment names the model");
    assert_eq!(answer["choices"][0]["message"]["content"], "Hello from mock azure");
    assert_eq!(answer["choices"][0]["content_filter_results"]["violence"]["filtered"], false);
    assert_eq!(answer["prompt_filter_results"][0]["prompt_index"], 0);

    let mut body = hello(true);
    body["model"] = json!("gpt-4o");
    body["stream_options"] = json!({"include_usage": true});
    let streamed = chat(&mut client, CHAT, &[("api-key", "any-key"), ("x-mock-chunks", "3")], &body);
    assert_eq!(streamed.header("content-type"), Some("text/event-stream"));
    let events = streamed.events();
    assert_eq!(events.len(), 1 + 3 + 1 + 1, "filter results, content, usage, [DONE]: {events:?}");
    let opening: Value = serde_json::from_str(&events[0]).expect("JSON");
    assert_eq!(opening["choices"], json!([]));
    assert!(opening["prompt_filter_results"].is_array());
    let chunks: Vec<Value> = events[1..4].iter().map(|event| serde_json::from_str(event).expect("JSON")).collect();
    assert!(chunks
        .iter()
        .all(|chunk| chunk["model"] == "gpt-4o" && chunk["choices"][0]["content_filter_results"].is_object()));
    let text: String = chunks.iter().filter_map(|chunk| chunk["choices"][0]["delta"]["content"].as_str()).collect();
    assert_eq!(text, "Hello from mock azure");
    assert_eq!(chunks[2]["choices"][0]["finish_reason"], "stop");
    assert_eq!(events[5], "[DONE]");

    let embeddings = "/openai/deployments/emb-small/embeddings?api-version=2024-02-01";
    let answer = chat(&mut client, embeddings, &[("api-key", "k")], &json!({"input": ["a", "b"]})).json();
    assert_eq!(answer["model"], "emb-small");
    assert_eq!(answer["data"].as_array().map(Vec::len), Some(2));

    let recorded = client.get("/mock/requests").json();
    assert_eq!(recorded[0]["path"], CHAT, "the path is recorded with its query");
    assert!(recorded[0]["headers"].as_array().expect("headers").contains(&json!(["api-key", "any-key"])));
    assert_eq!(recorded[2]["path"], embeddings);
}

/// A path, its headers, and the status and `error.code` expected.
type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], u16, &'a str);

#[test]
fn api_version_and_key_are_checked_as_azure_does() {
    let server = start(MockOptions {
        azure_api_key: Some("right-key".into()),
        azure_deployments: Some(vec!["gpt-4o-prod".into()]),
        ..MockOptions::default()
    });
    let mut client = Client::connect(server.addr());
    let key = [("api-key", "right-key")];
    let cases: [Case<'_>; 7] = [
        ("/openai/deployments/gpt-4o-prod/chat/completions", &key, 404, "404"),
        ("/openai/deployments/gpt-4o-prod/chat/completions?api-version=2024-1", &key, 400, "BadRequest"),
        (CHAT, &[], 401, "401"),
        (CHAT, &[("api-key", "wrong")], 401, "401"),
        (CHAT, &[("Authorization", "Bearer made-up")], 401, "401"),
        ("/openai/deployments/nope/chat/completions?api-version=2024-10-21", &key, 404, "DeploymentNotFound"),
        ("/openai/assistants?api-version=2024-10-21", &key, 404, "404"),
    ];
    for (path, headers, status, code) in cases {
        let response = chat(&mut client, path, headers, &hello(false));
        assert_eq!(response.status, status, "{path} {headers:?}");
        assert_eq!(response.json()["error"]["code"], code, "{path} {headers:?}");
    }
    assert_eq!(chat(&mut client, CHAT, &key, &hello(false)).status, 200, "the connection is kept");
    let preview = "/openai/deployments/gpt-4o-prod/chat/completions?api-version=2025-04-01-preview";
    assert_eq!(chat(&mut client, preview, &key, &hello(false)).status, 200);
}

#[test]
fn entra_tokens_are_issued_accepted_and_expire() {
    let server = start_named("entra");
    let mut client = Client::connect(server.addr());
    let issued = token(&mut client, &secret_form());
    assert_eq!(issued.status, 200);
    let issued = issued.json();
    assert_eq!(issued["token_type"], "Bearer");
    assert_eq!(issued["expires_in"], 3599);
    assert_eq!(issued["ext_expires_in"], 3599);
    let bearer = format!("Bearer {}", issued["access_token"].as_str().expect("token"));
    assert_eq!(chat(&mut client, CHAT, &[("Authorization", &bearer)], &hello(false)).status, 200);

    let assertion = format!(
        "grant_type=client_credentials&client_id=app-1&scope={SCOPE}&client_assertion_type=\
         urn%3Aietf%3Aparams%3Aoauth%3Aclient-assertion-type%3Ajwt-bearer&client_assertion=eyJh.eyJi.c2ln"
    );
    assert_eq!(token(&mut client, &assertion).status, 200);

    let missing = token(&mut client, "grant_type=client_credentials&client_id=app-1");
    assert_eq!(missing.status, 400);
    assert_eq!(missing.json()["error"], "invalid_request");
    assert_eq!(missing.json()["error_codes"], json!([900144]));
    let no_secret = token(&mut client, &format!("grant_type=client_credentials&client_id=a&scope={SCOPE}"));
    assert_eq!((no_secret.status, no_secret.json()["error"].as_str()), (401, Some("invalid_client")));
    let recorded = client.get("/mock/requests").json();
    assert_eq!(recorded[0]["path"], "/tenant-1/oauth2/v2.0/token");

    let short = start(MockOptions { azure_token_ttl_secs: 0, ..MockOptions::default() });
    let mut client = Client::connect(short.addr());
    let issued = token(&mut client, &secret_form()).json();
    assert_eq!(issued["expires_in"], 0);
    let bearer = format!("Bearer {}", issued["access_token"].as_str().expect("token"));
    let expired = chat(&mut client, CHAT, &[("Authorization", &bearer)], &hello(false));
    assert_eq!(expired.status, 401);
    assert!(expired.json()["error"]["message"].as_str().is_some_and(|m| m.contains("or have expired")));
}

#[test]
fn faults_answer_in_azures_shape() {
    let server = start_named("azfault");
    let mut client = Client::connect(server.addr());
    let key = ("api-key", "k");
    let filtered = chat(&mut client, CHAT, &[key, ("x-mock-fault", "content_filter")], &hello(true));
    assert_eq!(filtered.status, 400);
    let error = filtered.json();
    assert_eq!(error["error"]["code"], "content_filter");
    assert_eq!(error["error"]["innererror"]["code"], "ResponsibleAIPolicyViolation");
    assert!(error["error"]["innererror"]["content_filter_result"].is_object());

    let cut = chat(&mut client, CHAT, &[key, ("x-mock-fault", "content_filter:completion")], &hello(true));
    let events = cut.events();
    let last: Value = serde_json::from_str(&events[events.len() - 2]).expect("JSON");
    assert_eq!(last["choices"][0]["finish_reason"], "content_filter");
    assert_eq!(events.last().map(String::as_str), Some("[DONE]"));

    let limited = chat(&mut client, CHAT, &[key, ("x-mock-fault", "status:429:retry-after=2")], &hello(false));
    assert_eq!(limited.status, 429);
    assert_eq!(limited.header("retry-after"), Some("2"));
    assert_eq!(limited.header("retry-after-ms"), Some("2000"));
    assert_eq!(limited.json()["error"]["code"], "429");

    // A refused request is answered before any fault.
    let unversioned = "/openai/deployments/gpt-4o-prod/chat/completions";
    assert_eq!(chat(&mut client, unversioned, &[key, ("x-mock-fault", "status:500")], &hello(false)).status, 404);

    let mut reset = Client::connect(server.addr());
    reset.send("POST", CHAT, &[key, ("x-mock-fault", "reset")], hello(false).to_string().as_bytes());
    assert!(reset.try_read_response().is_err());

    // On OpenAI's route the content filter answers the same 400.
    let openai =
        client.request("POST", "/v1/chat/completions", &[("x-mock-fault", "content_filter")], br#"{"model":"m"}"#);
    assert_eq!((openai.status, openai.json()["error"]["code"].as_str()), (400, Some("content_filter")));
}

#[test]
fn the_binary_takes_the_azure_flags() {
    let child = Command::new(BINARY)
        .args(["--name", "azbin", "--threads", "1", "--azure-api-key", "k9", "--azure-token-ttl", "0"])
        .args(["--azure-deployments", "gpt-4o-prod,emb"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run pointwork-mock");
    let mut child = KillOnDrop(child);
    let line = first_line(&mut child);
    let addr: SocketAddr = line.trim_end().rsplit("http://").next().expect("address").parse().expect("address");
    let mut client = Client::connect(addr);
    assert_eq!(chat(&mut client, CHAT, &[("api-key", "k9")], &hello(false)).status, 200);
    assert_eq!(chat(&mut client, CHAT, &[("api-key", "k8")], &hello(false)).status, 401);
    let other = "/openai/deployments/other/chat/completions?api-version=2024-10-21";
    assert_eq!(chat(&mut client, other, &[("api-key", "k9")], &hello(false)).status, 404);
    assert_eq!(token(&mut client, &secret_form()).json()["expires_in"], 0);

    for args in [&["--azure-token-ttl", "soon"][..], &["--azure-api-key", ""], &["--fault", "content_filter:x"]] {
        let output = Command::new(BINARY).args(args).output().expect("run");
        assert_eq!(output.status.code(), Some(2), "{args:?}");
    }
}
