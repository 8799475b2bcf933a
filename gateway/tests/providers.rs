//! The providers of LiteLLM users beyond OpenAI's wire format, through the real gateway against
//! pointwork-mock playing each (it checks what the provider checks): Bedrock (Converse and
//! ConverseStream translated, every request SigV4-signed and verified, a throttle cooling the
//! deployment down, Titan embeddings), Gemini (generateContent translated, the key header),
//! Vertex AI (a service account's token obtained from the token endpoint and sent), Azure with
//! Entra ID client credentials.

mod common;

use common::{recorded_headers, Gateway, Mock, TempDir};
use serde_json::{json, Value};

const AKID: &str = "AKIDPOINTWORKTEST";
const SECRET: &str = "pointwork/test/secret+key";

fn post(gateway: &Gateway, path: &str, body: Value) -> common::Response {
    gateway.client().request("POST", path, &[("content-type", "application/json")], body.to_string().as_bytes())
}

fn chat(model: &str, stream: bool) -> Value {
    json!({"model": model, "stream": stream, "messages": [{"role": "user", "content": "Say hello."}]})
}

/// The text of an OpenAI stream, and its last event.
fn streamed(gateway: &Gateway, body: Value) -> (String, String) {
    let mut client = gateway.client();
    client.send("POST", "/v1/chat/completions", &[("content-type", "application/json")], body.to_string().as_bytes());
    assert_eq!(client.read_head().expect("head").status, 200);
    let events = client.events().collect_all().expect("events");
    let text = events
        .iter()
        .filter_map(|e| e.text.strip_prefix("data: ").and_then(|d| serde_json::from_str::<Value>(d).ok()))
        .filter_map(|chunk| chunk["choices"][0]["delta"]["content"].as_str().map(str::to_string))
        .collect();
    (text, events.last().map(|e| e.text.trim().to_string()).unwrap_or_default())
}

fn bedrock_mock() -> Mock {
    Mock::start(
        "bedrock",
        &["--aws-access-key-id", AKID, "--aws-secret-access-key", SECRET, "--aws-region", "us-east-1"],
    )
}

fn bedrock(group: &str, model: &str, mock: &Mock, secret: &str) -> String {
    format!(
        "  - model_name: {group}\n    litellm_params: {{model: {model}, api_base: \"http://{}\", aws_access_key_id: {AKID}, aws_secret_access_key: \"{secret}\", aws_region_name: us-east-1}}\n",
        mock.addr
    )
}

#[test]
fn bedrock_chat_streams_messages_and_embeddings_are_signed_and_translated() {
    let mock = bedrock_mock();
    let yaml = format!(
        "model_list:\n{}{}",
        bedrock("claude", "bedrock/converse/anthropic.claude-3-5-sonnet-20240620-v1:0", &mock, SECRET),
        bedrock("titan", "bedrock/amazon.titan-embed-text-v2:0", &mock, SECRET),
    );
    let gateway = Gateway::start(&yaml);
    let r = post(&gateway, "/v1/chat/completions", chat("claude", false));
    assert_eq!(r.status, 200, "{}", r.text());
    let answer = r.json();
    assert_eq!(answer["object"], "chat.completion");
    assert_eq!(answer["model"], "claude");
    assert!(answer["choices"][0]["message"]["content"].as_str().is_some_and(|c| !c.is_empty()), "{answer}");
    assert!(answer["usage"]["prompt_tokens"].as_u64().is_some_and(|n| n > 0), "{answer}");
    let sent = &mock.requests()[0];
    assert_eq!(sent["path"], "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse");
    let authorization = recorded_headers(sent, "authorization");
    assert!(authorization[0].starts_with(&format!("AWS4-HMAC-SHA256 Credential={AKID}/")), "{authorization:?}");
    assert!(authorization[0].contains("/us-east-1/bedrock/aws4_request"), "{authorization:?}");

    let (text, last) = streamed(&gateway, chat("claude", true));
    assert!(!text.is_empty());
    assert_eq!(last, "data: [DONE]");
    assert_eq!(
        mock.requests().pop().unwrap()["path"],
        "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse-stream"
    );

    let body = json!({"model": "claude", "max_tokens": 64, "messages": [{"role": "user", "content": "Say hello."}]});
    let r = gateway.client().request(
        "POST",
        "/v1/messages",
        &[("content-type", "application/json"), ("anthropic-version", "2023-06-01")],
        body.to_string().as_bytes(),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["type"], "message");
    assert_eq!(r.json()["content"][0]["type"], "text");

    let r = post(&gateway, "/v1/embeddings", json!({"model": "titan", "input": "hello"}));
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.json()["data"][0]["embedding"].as_array().is_some_and(|e| !e.is_empty()), "{}", r.text());
    assert_eq!(mock.requests().pop().unwrap()["path"], "/model/amazon.titan-embed-text-v2%3A0/invoke");
}

#[test]
fn a_wrong_aws_secret_is_refused_by_the_signature_check() {
    let mock = bedrock_mock();
    let yaml =
        format!("model_list:\n{}", bedrock("claude", "bedrock/anthropic.claude-3-haiku-20240307-v1:0", &mock, "wrong"));
    let gateway = Gateway::start(&yaml);
    let r = post(&gateway, "/v1/chat/completions", chat("claude", false));
    assert_eq!(r.status, 403, "{}", r.text());
    assert!(r.json()["error"]["message"].as_str().is_some_and(|m| m.contains("signature")), "{}", r.text());
}

#[test]
fn a_bedrock_throttle_cools_the_deployment_down_and_the_other_serves() {
    let throttled = bedrock_mock();
    let openai = Mock::start("openai", &[]);
    let yaml = format!(
        "model_list:\n{}  - model_name: claude\n    litellm_params: {{model: openai/gpt-4o, api_base: \"http://{}/v1\", api_key: k}}\n    model_info: {{id: fallback}}\nrouter_settings: {{num_retries: 1, routing_strategy: simple-shuffle}}\n",
        bedrock("claude", "bedrock/anthropic.claude-3-haiku-20240307-v1:0", &throttled, SECRET),
        openai.addr
    );
    let gateway = Gateway::start(&yaml);
    throttled.control(json!({"fault": "status:429"}));
    // Until the throttled deployment has been tried once, the shuffle may pick either.
    let mut tried = false;
    for _ in 0..20 {
        let r = post(&gateway, "/v1/chat/completions", chat("claude", false));
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(r.header("x-pointwork-deployment"), Some("fallback"));
        if throttled.request_count() > 0 {
            tried = true;
            break;
        }
    }
    assert!(tried, "the Bedrock deployment was never picked");
    // Cooling down now: every request goes to the other without trying it again.
    let before = throttled.request_count();
    for _ in 0..5 {
        let r = post(&gateway, "/v1/chat/completions", chat("claude", false));
        assert_eq!((r.status, r.header("x-pointwork-attempts")), (200, Some("1")));
    }
    assert_eq!(throttled.request_count(), before);
}

#[test]
fn gemini_answers_and_streams_are_translated_and_the_key_goes_in_its_header() {
    let mock = Mock::start("gemini", &["--gemini-api-key", "g-key"]);
    let yaml = format!(
        "model_list:\n  - model_name: flash\n    litellm_params: {{model: gemini/gemini-2.5-flash, api_base: \"http://{}/v1beta\", api_key: g-key}}\n",
        mock.addr
    );
    let gateway = Gateway::start(&yaml);
    let r = post(&gateway, "/v1/chat/completions", chat("flash", false));
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.json()["choices"][0]["message"]["content"].as_str().is_some_and(|c| !c.is_empty()), "{}", r.text());
    let sent = &mock.requests()[0];
    assert_eq!(sent["path"], "/v1beta/models/gemini-2.5-flash:generateContent");
    assert_eq!(recorded_headers(sent, "x-goog-api-key"), ["g-key"]);
    assert!(recorded_headers(sent, "authorization").is_empty());
    let (text, last) = streamed(&gateway, chat("flash", true));
    assert!(!text.is_empty());
    assert_eq!(last, "data: [DONE]");
    assert_eq!(mock.requests().pop().unwrap()["path"], "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
}

#[test]
fn vertex_ai_gets_a_token_for_its_service_account_and_sends_it() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut account: Value =
        serde_json::from_str(include_str!("../src/credentials/testdata/test-only-service-account.json")).unwrap();
    account["token_uri"] = format!("http://127.0.0.1:{port}/token").into();
    let dir = TempDir::new("vertex");
    let file = dir.write("sa.json", &account.to_string());
    let file = file.to_str().unwrap();
    let listen = format!("127.0.0.1:{port}");
    let mock = Mock::start(
        "vertex",
        &["--listen", &listen, "--vertex-service-account", file, "--vertex-project", "pointwork-test"],
    );
    let entry = |group: &str, model: &str| {
        format!(
            "  - model_name: {group}\n    litellm_params: {{model: vertex_ai/{model}, vertex_location: europe-west4, vertex_credentials: \"{file}\", api_base: \"http://{}\"}}\n",
            mock.addr
        )
    };
    let yaml =
        format!("model_list:\n{}{}", entry("pro", "gemini-2.5-pro"), entry("sonnet", "claude-sonnet-4@20250514"));
    let gateway = Gateway::start(&yaml);
    let r = post(&gateway, "/v1/chat/completions", chat("pro", false));
    assert_eq!(r.status, 200, "{}", r.text());
    let requests = mock.requests();
    assert_eq!(requests[0]["path"], "/token", "the token is fetched before any request: {requests:?}");
    let sent = requests.last().unwrap();
    assert_eq!(
        sent["path"],
        "/v1/projects/pointwork-test/locations/europe-west4/publishers/google/models/gemini-2.5-pro:generateContent"
    );
    let bearer = recorded_headers(sent, "authorization");
    assert!(bearer[0].starts_with("Bearer ya29."), "{bearer:?}");

    // Anthropic's models on Vertex: the Messages API through rawPredict, the model in the path
    // and Vertex's `anthropic_version` in the body, from a chat client and a Messages client.
    let claude =
        "/v1/projects/pointwork-test/locations/europe-west4/publishers/anthropic/models/claude-sonnet-4%4020250514";
    let r = post(&gateway, "/v1/chat/completions", chat("sonnet", false));
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.json()["choices"][0]["message"]["content"].as_str().is_some_and(|c| !c.is_empty()), "{}", r.text());
    let sent = mock.requests().pop().unwrap();
    assert_eq!(sent["path"], format!("{claude}:rawPredict"));
    let body: Value = serde_json::from_str(sent["body"].as_str().unwrap()).unwrap();
    assert_eq!((body.get("model"), &body["anthropic_version"]), (None, &json!("vertex-2023-10-16")));
    let messages = json!({"model": "sonnet", "max_tokens": 64, "stream": true, "messages": [{"role": "user", "content": "Say hello."}]});
    let mut client = gateway.client();
    client.send("POST", "/v1/messages", &[("content-type", "application/json")], messages.to_string().as_bytes());
    assert_eq!(client.read_head().expect("head").status, 200);
    let events = client.events().collect_all().expect("events");
    assert!(events.iter().any(|e| e.text.contains("event: message_stop")), "{events:?}");
    assert_eq!(mock.requests().pop().unwrap()["path"], format!("{claude}:streamRawPredict"));
}

#[test]
fn azure_entra_id_client_credentials_fetch_the_token_the_deployment_sends() {
    let mock = Mock::start("azure", &["--azure-client-secret", "app-secret"]);
    let yaml = format!(
        "environment_variables: {{AZURE_AUTHORITY_HOST: \"http://{addr}\"}}\nmodel_list:\n  - model_name: gpt\n    litellm_params: {{model: azure/gpt-4o, api_base: \"http://{addr}\", tenant_id: tenant-1, client_id: app, client_secret: app-secret}}\n",
        addr = mock.addr
    );
    let gateway = Gateway::start(&yaml);
    let r = post(&gateway, "/v1/chat/completions", chat("gpt", false));
    assert_eq!(r.status, 200, "{}", r.text());
    let requests = mock.requests();
    assert_eq!(requests[0]["path"], "/tenant-1/oauth2/v2.0/token");
    let bearer = recorded_headers(requests.last().unwrap(), "authorization");
    assert!(bearer.len() == 1 && bearer[0].starts_with("Bearer "), "{bearer:?}");
    assert!(recorded_headers(requests.last().unwrap(), "api-key").is_empty());
}

#[test]
fn openai_compatible_newcomers_go_to_their_paths_with_their_keys() {
    let mock = Mock::start("compatible", &[]);
    let base = format!("http://{}", mock.addr);
    let entry = |group: &str, model: &str, rest: &str| {
        format!("  - model_name: {group}\n    litellm_params: {{model: {model}, {rest}}}\n")
    };
    let yaml = format!(
        "environment_variables: {{COHERE_API_KEY: co-key, HF_TOKEN: hf-key, OLLAMA_API_BASE: \"{base}\", XAI_API_KEY: xai-key}}\nmodel_list:\n{}{}{}{}{}{}",
        entry("llama", "ollama_chat/llama3.1", "keep_alive: 5m"),
        entry("hf", "huggingface/together/deepseek-ai/DeepSeek-R1", &format!("api_base: \"{base}/together/v1\"")),
        entry("command", "cohere_chat/v1/command-a-03-2025", &format!("api_base: \"{base}/compatibility/v1\"")),
        entry("codestral", "codestral/codestral-latest", &format!("api_base: \"{base}/v1\", api_key: cs-key")),
        entry("ai", "azure_ai/mistral-large", &format!("api_base: \"{base}/v1\", api_key: ai-key, api_version: \"2024-05-01-preview\"")),
        entry("grok", "xai/grok-3-mini", &format!("api_base: \"{base}/v1\"")),
    );
    let gateway = Gateway::start(&yaml);
    let cases = [
        ("llama", "/v1/chat/completions", "llama3.1", None),
        ("hf", "/together/v1/chat/completions", "together/deepseek-ai/DeepSeek-R1", Some("Bearer hf-key")),
        ("command", "/compatibility/v1/chat/completions", "command-a-03-2025", Some("Bearer co-key")),
        ("codestral", "/v1/chat/completions", "codestral-latest", Some("Bearer cs-key")),
        ("ai", "/v1/chat/completions?api-version=2024-05-01-preview", "mistral-large", Some("Bearer ai-key")),
        ("grok", "/v1/chat/completions", "grok-3-mini", Some("Bearer xai-key")),
    ];
    for (group, path, model, authorization) in cases {
        let r = post(&gateway, "/v1/chat/completions", chat(group, false));
        assert_eq!(r.status, 200, "{group}: {}", r.text());
        let sent = mock.requests().pop().unwrap();
        assert_eq!(sent["path"], path, "{group}");
        let body: Value = serde_json::from_str(sent["body"].as_str().unwrap()).unwrap();
        assert_eq!(body["model"], model, "{group}");
        assert_eq!(recorded_headers(&sent, "authorization"), authorization.into_iter().collect::<Vec<_>>(), "{group}");
    }
}

#[test]
fn an_entra_id_token_is_refreshed_before_it_expires_off_the_request_path() {
    let mock = Mock::start("azure", &["--azure-client-secret", "app-secret", "--azure-token-ttl", "2"]);
    let yaml = format!(
        "environment_variables: {{AZURE_AUTHORITY_HOST: \"http://{addr}\"}}\nmodel_list:\n  - model_name: gpt\n    litellm_params: {{model: azure/gpt-4o, api_base: \"http://{addr}\", tenant_id: tenant-1, client_id: app, client_secret: app-secret}}\n",
        addr = mock.addr
    );
    let gateway = Gateway::start(&yaml);
    let token_fetches = || mock.requests().iter().filter(|r| r["path"] == "/tenant-1/oauth2/v2.0/token").count();
    let sent_token = || {
        let requests = mock.requests();
        let chat = requests.iter().rev().find(|r| r["path"] != "/tenant-1/oauth2/v2.0/token").unwrap();
        recorded_headers(chat, "authorization")[0].to_string()
    };
    assert_eq!(post(&gateway, "/v1/chat/completions", chat("gpt", false)).status, 200);
    let first = sent_token();
    // A two-second token is refreshed after about 1.4 s by the refresher thread, with no request
    // asking for it: wait for the second fetch to reach the mock.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while token_fetches() < 2 {
        assert!(std::time::Instant::now() < deadline, "no refresh within 10 s");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // The mock records the fetch before its answer reaches the refresher: the next requests
    // carry the new token as soon as it is stored.
    loop {
        assert_eq!(post(&gateway, "/v1/chat/completions", chat("gpt", false)).status, 200);
        if sent_token() != first {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the refreshed token is never sent");
    }
}

#[test]
fn check_validates_a_service_account_without_calling_its_token_endpoint() {
    let mock = Mock::start("token-endpoint", &[]);
    let mut account: Value =
        serde_json::from_str(include_str!("../src/credentials/testdata/test-only-service-account.json")).unwrap();
    account["token_uri"] = format!("http://{}/token", mock.addr).into();
    let dir = TempDir::new("vertex-check");
    let file = dir.write("sa.json", &account.to_string());
    let config = |file: &std::path::Path| {
        format!(
            "model_list:\n  - model_name: pro\n    litellm_params: {{model: vertex_ai/gemini-2.5-pro, vertex_project: p, vertex_credentials: \"{}\"}}\n",
            file.display()
        )
    };
    let path = dir.write("config.yaml", &config(&file));
    let out =
        std::process::Command::new(common::pointwork_bin()).args(["check", "--config"]).arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("auth google-service-account"));
    assert_eq!(mock.request_count(), 0, "check called the token endpoint");
    // A key that cannot sign is an error `check` reports.
    account["private_key"] = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n".into();
    let broken = dir.write("broken.json", &account.to_string());
    let path = dir.write("broken.yaml", &config(&broken));
    let out =
        std::process::Command::new(common::pointwork_bin()).args(["check", "--config"]).arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not an RSA key"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
