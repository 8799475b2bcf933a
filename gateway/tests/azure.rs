//! Azure OpenAI deployments (`azure/<deployment>`) through the real gateway, against
//! pointwork-mock playing an Azure resource (it checks the deployment path, the `api-version`
//! query and the `api-key`, or a bearer token its own Entra ID endpoint issued): chat whole and
//! streamed, embeddings, a Messages request translated, an Entra ID token, and Azure's content
//! filter taking `content_policy_fallbacks`.

mod common;

use common::{recorded_headers, Gateway, Mock};
use serde_json::{json, Value};

const VERSION: &str = "2024-10-21";

fn azure(group: &str, deployment: &str, mock: &Mock, credential: &str) -> String {
    format!(
        "  - model_name: {group}\n    litellm_params: {{model: azure/{deployment}, api_base: \"http://{}/\", api_version: \"{VERSION}\", {credential}}}\n",
        mock.addr
    )
}

fn post(gateway: &Gateway, path: &str, body: Value) -> common::Response {
    gateway.client().request("POST", path, &[("content-type", "application/json")], body.to_string().as_bytes())
}

fn chat(model: &str, stream: bool) -> Value {
    json!({"model": model, "stream": stream, "messages": [{"role": "user", "content": "Say hello."}]})
}

#[test]
fn chat_streams_and_embeddings_go_to_the_deployment_path_with_the_key() {
    let mock = Mock::start("azure", &["--azure-api-key", "az-key-1"]);
    let yaml = format!(
        "model_list:\n{}{}",
        azure("gpt", "gpt-4o-prod", &mock, "api_key: az-key-1"),
        azure("embed", "text-embedding-3-small", &mock, "api_key: az-key-1"),
    );
    let gateway = Gateway::start(&yaml);
    let r = post(&gateway, "/v1/chat/completions", chat("gpt", false));
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.json()["choices"][0]["message"]["content"].as_str().is_some_and(|c| !c.is_empty()));
    let sent = &mock.requests()[0];
    assert_eq!(sent["path"], format!("/openai/deployments/gpt-4o-prod/chat/completions?api-version={VERSION}"));
    assert_eq!(recorded_headers(sent, "api-key"), ["az-key-1"]);
    assert!(recorded_headers(sent, "authorization").is_empty());

    let mut client = gateway.client();
    client.send(
        "POST",
        "/v1/chat/completions",
        &[("content-type", "application/json")],
        chat("gpt", true).to_string().as_bytes(),
    );
    assert_eq!(client.read_head().expect("head").status, 200);
    let events = client.events().collect_all().expect("events");
    assert_eq!(events.last().map(|e| e.text.trim()), Some("data: [DONE]"));
    let text: String = events
        .iter()
        .filter_map(|e| e.text.strip_prefix("data: ").and_then(|d| serde_json::from_str::<Value>(d).ok()))
        .filter_map(|chunk| chunk["choices"][0]["delta"]["content"].as_str().map(str::to_string))
        .collect();
    assert!(!text.is_empty(), "{events:?}");

    let r = post(&gateway, "/v1/embeddings", json!({"model": "embed", "input": "hello"}));
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.json()["data"][0]["embedding"].is_array());
    let last = mock.requests().pop().unwrap();
    assert_eq!(last["path"], format!("/openai/deployments/text-embedding-3-small/embeddings?api-version={VERSION}"));
}

#[test]
fn a_wrong_key_is_azures_401_passed_back() {
    let mock = Mock::start("azure", &["--azure-api-key", "right"]);
    let gateway = Gateway::start(&format!("model_list:\n{}", azure("gpt", "d", &mock, "api_key: wrong")));
    let r = post(&gateway, "/v1/chat/completions", chat("gpt", false));
    assert_eq!(r.status, 401, "{}", r.text());
}

#[test]
fn a_messages_request_is_translated_to_the_azure_deployment() {
    let mock = Mock::start("azure", &[]);
    let gateway = Gateway::start(&format!("model_list:\n{}", azure("gpt", "gpt-4o", &mock, "api_key: k")));
    let body = json!({"model": "gpt", "max_tokens": 32, "messages": [{"role": "user", "content": "Say hello."}]});
    let r = post(&gateway, "/v1/messages", body);
    assert_eq!(r.status, 200, "{}", r.text());
    let answer = r.json();
    assert_eq!((answer["type"].as_str(), answer["model"].as_str()), (Some("message"), Some("gpt")));
    assert!(answer["content"][0]["text"].as_str().is_some_and(|t| !t.is_empty()));
    assert_eq!(
        mock.requests()[0]["path"],
        format!("/openai/deployments/gpt-4o/chat/completions?api-version={VERSION}")
    );
}

#[test]
fn an_entra_id_token_is_sent_as_a_bearer_token() {
    let mock = Mock::start("azure", &[]);
    // A token from the mock's own Entra ID endpoint, as an operator's pipeline would fetch one.
    let form = "grant_type=client_credentials&client_id=app&client_secret=s&scope=https%3A%2F%2Fcognitiveservices.azure.com%2F.default";
    let token = common::http::Client::connect(mock.addr)
        .request(
            "POST",
            "/tenant-1/oauth2/v2.0/token",
            &[("content-type", "application/x-www-form-urlencoded")],
            form.as_bytes(),
        )
        .json()["access_token"]
        .as_str()
        .unwrap()
        .to_string();
    let gateway =
        Gateway::start(&format!("model_list:\n{}", azure("gpt", "d", &mock, &format!("azure_ad_token: \"{token}\""))));
    let r = post(&gateway, "/v1/chat/completions", chat("gpt", false));
    assert_eq!(r.status, 200, "{}", r.text());
    let sent =
        mock.requests().into_iter().find(|r| r["path"].as_str().is_some_and(|p| p.starts_with("/openai/"))).unwrap();
    assert_eq!(recorded_headers(&sent, "authorization"), [format!("Bearer {token}")]);
    assert!(recorded_headers(&sent, "api-key").is_empty());
}

#[test]
fn azures_content_filter_takes_the_content_policy_fallback() {
    let strict = Mock::start("azure-strict", &["--fault", "content_filter"]);
    let lenient = Mock::start("openai-lenient", &[]);
    let yaml = format!(
        "model_list:\n{}  - model_name: lenient\n    litellm_params: {{model: openai/gpt-4o, api_base: \"{}\"}}\nrouter_settings: {{num_retries: 0, content_policy_fallbacks: [{{strict: [lenient]}}]}}\n",
        azure("strict", "gpt-4o", &strict, "api_key: k"),
        lenient.api_base()
    );
    let gateway = Gateway::start(&yaml);
    let r = post(&gateway, "/v1/chat/completions", chat("strict", false));
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("x-pointwork-model-group"), Some("lenient"));
    assert_eq!((strict.request_count(), lenient.request_count()), (1, 1));
}
