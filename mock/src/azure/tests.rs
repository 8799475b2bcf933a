//! Azure's checks, answers and fault bodies, without a socket.

use serde_json::Value;

use super::*;
use crate::MockOptions;

fn shared(options: MockOptions) -> Shared {
    Shared::new(&MockOptions { name: "az".into(), ..options })
}

fn call<'a>(shared: &'a Shared, head: &'a [u8], body: &'a [u8]) -> AzureCall<'a> {
    let target = request_target(head);
    AzureCall {
        shared,
        route: Route::from_path(target),
        method: if head.starts_with(b"POST ") { Method::Post } else { Method::Get },
        head_bytes: head,
        body,
        number: 5,
        created: 1_700_000_000,
        chunks: 4,
        chunk_delay: Duration::ZERO,
        reply: None,
        close: false,
    }
}

fn split(out: &[u8]) -> (u16, String, Value) {
    let text = String::from_utf8(out.to_vec()).expect("utf-8");
    let (head, body) = text.split_once("\r\n\r\n").expect("head");
    let status = head[9..12].parse().expect("status");
    (status, head.to_owned(), serde_json::from_str(body).expect("JSON body"))
}

const CHAT: &str = "/openai/deployments/gpt-4o-prod/chat/completions";

fn head(path: &str, headers: &str) -> Vec<u8> {
    format!("POST {path} HTTP/1.1\r\nHost: x\r\n{headers}\r\n").into_bytes()
}

fn refusal(shared: &Shared, path: &str, headers: &str) -> (u16, Value) {
    let head = head(path, headers);
    let mut out = Vec::new();
    assert_eq!(call(shared, &head, b"{}").admit(&mut out), Err(()), "{path} {headers}");
    let (status, _, body) = split(&out);
    (status, body)
}

#[test]
fn api_versions() {
    for good in ["2024-10-21", "2024-08-01-preview", "2023-05-15", "2025-04-01-preview"] {
        assert!(is_api_version(good), "{good}");
    }
    for bad in ["", "2024-13-01", "2024-00-10", "2024-1-01", "v1", "2024-10-21-beta", "2024/10/21", "latest"] {
        assert!(!is_api_version(bad), "{bad}");
    }
}

#[test]
fn checks_path_version_key_and_deployment_in_azures_order() {
    let shared = shared(MockOptions {
        azure_api_key: Some("k1".into()),
        azure_deployments: Some(vec!["gpt-4o-prod".into()]),
        ..MockOptions::default()
    });
    let versioned = format!("{CHAT}?api-version=2024-10-21");
    assert_eq!(refusal(&shared, "/openai/models?api-version=2024-10-21", "api-key: k1\r\n").0, 404);
    let (status, body) = refusal(&shared, CHAT, "api-key: k1\r\n");
    assert_eq!((status, body), (404, serde_json::json!({"error": {"code": "404", "message": "Resource not found"}})));
    let (status, body) = refusal(&shared, &format!("{CHAT}?api-version=2024-10"), "api-key: k1\r\n");
    assert_eq!((status, body["error"]["code"].as_str()), (400, Some("BadRequest")));
    assert_eq!(body["error"]["message"], "API version not supported");

    let (status, body) = refusal(&shared, &versioned, "");
    assert_eq!((status, body["error"]["code"].as_str()), (401, Some("401")));
    assert!(body["error"]["message"].as_str().is_some_and(|m| m.contains("missing subscription key")));
    let (_, body) = refusal(&shared, &versioned, "api-key: wrong\r\n");
    assert!(body["error"]["message"]
        .as_str()
        .is_some_and(|m| m.starts_with("Access denied due to invalid subscription key")));
    let (status, body) = refusal(&shared, &versioned, "Authorization: Bearer not-issued\r\n");
    assert_eq!(status, 401);
    assert!(body["error"]["message"].as_str().is_some_and(|m| m.starts_with("Unauthorized. Access token")));

    let other = "/openai/deployments/other/embeddings?api-version=2024-10-21";
    let (status, body) = refusal(&shared, other, "api-key: k1\r\n");
    assert_eq!((status, body["error"]["code"].as_str()), (404, Some("DeploymentNotFound")));

    let head = head(&versioned, "API-Key: k1\r\n");
    let target = call(&shared, &head, b"{}").admit(&mut Vec::new()).expect("admitted");
    assert_eq!(target, AzureTarget { deployment: "gpt-4o-prod".into(), api_version: "2024-10-21".into() });
}

#[test]
fn issued_bearer_tokens_are_admitted() {
    let shared = shared(MockOptions::default());
    let form = "grant_type=client_credentials&client_id=a&client_secret=b\
                &scope=https%3A%2F%2Fcognitiveservices.azure.com%2F.default";
    let (status, body) = shared.entra.token_request(Method::Post, "t", form.as_bytes());
    assert_eq!(status, 200);
    let token: Value = serde_json::from_slice(&body).expect("JSON");
    let bearer = format!("Authorization: Bearer {}\r\n", token["access_token"].as_str().expect("token"));
    let head = head(&format!("{CHAT}?api-version=2024-10-21"), &bearer);
    assert!(call(&shared, &head, b"{}").admit(&mut Vec::new()).is_ok());
}

fn target() -> AzureTarget {
    AzureTarget { deployment: "gpt-4o-prod".into(), api_version: "2024-10-21".into() }
}

#[test]
fn a_chat_is_openais_answer_with_azures_filter_results_for_the_deployment() {
    let shared = shared(MockOptions::default());
    let head = head(CHAT, "");
    let body = br#"{"messages":[{"role":"user","content":"hi"}]}"#;
    let mut out = Vec::new();
    assert_eq!(call(&shared, &head, body).answer(&target(), None, &mut out), Action::Send { close: false });
    let (status, head_text, answer) = split(&out);
    assert_eq!(status, 200);
    assert!(head_text.contains("\r\napim-request-id: 00000000-0000-4000-8000-000000000005\r\n"), "{head_text}");
    assert_eq!(answer["model"], "gpt-4o-prod");
    assert_eq!(answer["object"], "chat.completion");
    assert_eq!(answer["choices"][0]["message"]["content"], "Hello from mock az");
    assert_eq!(answer["choices"][0]["finish_reason"], "stop");
    assert_eq!(
        answer["choices"][0]["content_filter_results"]["hate"],
        serde_json::json!({"filtered": false, "severity": "safe"})
    );
    assert_eq!(answer["prompt_filter_results"][0]["content_filter_results"]["jailbreak"]["filtered"], false);

    let named = br#"{"model":"gpt-4o","messages":[]}"#;
    let mut out = Vec::new();
    call(&shared, &head, named).answer(&target(), None, &mut out);
    assert_eq!(split(&out).2["model"], "gpt-4o");

    let mut out = Vec::new();
    call(&shared, &head, body).answer(&target(), Some(Fault::ContentFilter { completion: true }), &mut out);
    let (status, _, answer) = split(&out);
    assert_eq!(status, 200);
    assert_eq!(answer["choices"][0]["finish_reason"], "content_filter");
    assert!(answer["choices"][0]["message"]["content"].is_null());
    assert_eq!(answer["choices"][0]["content_filter_results"]["violence"]["filtered"], true);

    let streamed = br#"{"stream":true,"messages":[]}"#;
    let Action::AzureStream(plan) = call(&shared, &head, streamed).answer(&target(), None, &mut Vec::new()) else {
        panic!("expected a stream");
    };
    assert_eq!(plan.events.len(), 4);
}

#[test]
fn content_filter_faults_and_refuse_answer_the_prompt_filters_400() {
    let shared = shared(MockOptions { refuse: Some("forbidden".into()), ..MockOptions::default() });
    let head = head(CHAT, "");
    for (body, fault) in [
        (&br#"{"messages":[]}"#[..], Some(Fault::ContentFilter { completion: false })),
        (br#"{"stream":true,"messages":[]}"#, Some(Fault::ContentFilter { completion: false })),
        (br#"{"messages":[{"role":"user","content":"a forbidden thing"}]}"#, None),
    ] {
        let mut out = Vec::new();
        call(&shared, &head, body).answer(&target(), fault, &mut out);
        let (status, _, error) = split(&out);
        assert_eq!(status, 400);
        let error = &error["error"];
        assert_eq!(error["code"], "content_filter");
        assert_eq!(error["param"], "prompt");
        assert_eq!(error["status"], 400);
        assert!(error["message"].as_str().is_some_and(|m| m.contains("Azure OpenAI's content management policy")));
        assert_eq!(error["innererror"]["code"], "ResponsibleAIPolicyViolation");
        assert_eq!(error["innererror"]["content_filter_result"]["violence"]["filtered"], true);
    }
}

#[test]
fn status_faults_in_azures_shape() {
    let shared = shared(MockOptions::default());
    let head = head(CHAT, "");
    let fault = |status, retry_after| {
        let mut out = Vec::new();
        call(&shared, &head, b"{}").answer(&target(), Some(Fault::Status { status, retry_after }), &mut out);
        split(&out)
    };
    let (status, head_text, body) = fault(429, Some(7));
    assert_eq!(status, 429);
    assert!(head_text.contains("\r\nretry-after: 7\r\n") && head_text.contains("\r\nretry-after-ms: 7000\r\n"));
    assert_eq!(body["error"]["code"], "429");
    let message = body["error"]["message"].as_str().expect("message");
    assert!(
        message.contains("ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21"),
        "{message}"
    );
    assert!(message.contains("Please retry after 7 seconds."), "{message}");
    assert!(fault(429, None).1.contains("\r\nretry-after: 1\r\n"));
    assert_eq!(fault(404, None).2["error"]["code"], "DeploymentNotFound");
    assert_eq!(fault(401, None).2["error"]["code"], "401");
    assert_eq!(fault(400, None).2["error"]["type"], "invalid_request_error");
    let (status, _, body) = fault(503, None);
    assert_eq!((status, body["error"]["code"].as_str()), (503, Some("503")));
    assert_eq!(body["error"]["message"], "mock az injected status 503");
}

#[test]
fn embeddings_name_the_deployment() {
    let shared = shared(MockOptions::default());
    let head = head("/openai/deployments/emb-1/embeddings", "");
    let mut out = Vec::new();
    let target = AzureTarget { deployment: "emb-1".into(), api_version: "2024-02-01".into() };
    call(&shared, &head, br#"{"input":["a","b"]}"#).answer(&target, None, &mut out);
    let (status, _, answer) = split(&out);
    assert_eq!(status, 200);
    assert_eq!(answer["model"], "emb-1");
    assert_eq!(answer["data"].as_array().map(Vec::len), Some(2));
    let mut out = Vec::new();
    call(&shared, &head, br#"{"input":[]}"#).answer(&target, None, &mut out);
    assert_eq!(split(&out).0, 400);
}
