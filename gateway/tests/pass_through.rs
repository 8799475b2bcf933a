//! LiteLLM's pass-through (`model_name: "*"`, `model: "*"`) through the real gateway: each
//! requested name goes to the provider it names, at the endpoint and with the key the
//! environment gives that provider (`OPENAI_BASE_URL` and `OPENAI_API_KEY`, `ANTHROPIC_API_BASE`
//! and `ANTHROPIC_API_KEY`), the model sent as asked; a name of a provider without a key, or of
//! none, is refused in OpenAI's error shape, saying why.

mod common;

use common::{recorded_headers, Gateway, GatewayOptions, Mock};
use serde_json::Value;

const CONFIG: &str = "model_list:\n  - model_name: \"*\"\n    litellm_params:\n      model: \"*\"\n";

fn sent_body(mock: &Mock) -> Value {
    serde_json::from_str(mock.requests().last().expect("a request")["body"].as_str().unwrap()).unwrap()
}

#[test]
fn every_name_goes_to_its_providers_endpoint_with_the_environments_key() {
    let (openai, anthropic) = (Mock::start("openai", &[]), Mock::start("anthropic", &[]));
    let (openai_base, anthropic_base) = (openai.api_base(), format!("http://{}", anthropic.addr));
    let env = vec![
        ("OPENAI_API_KEY", "sk-env-openai"),
        ("OPENAI_BASE_URL", openai_base.as_str()),
        ("ANTHROPIC_API_KEY", "sk-env-anthropic"),
        ("ANTHROPIC_API_BASE", anthropic_base.as_str()),
    ];
    let gateway = Gateway::start_with(CONFIG, GatewayOptions { env, ..GatewayOptions::default() });

    // A bare OpenAI name (the cost map knows it), then a bare Anthropic one.
    let r = gateway.chat("gpt-4o-mini-2024-07-18");
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.deployment().ends_with("-openai"), "{}", r.deployment());
    assert_eq!(sent_body(&openai)["model"], "gpt-4o-mini-2024-07-18");
    assert_eq!(recorded_headers(&openai.requests()[0], "authorization"), ["Bearer sk-env-openai"]);

    let r = gateway.chat("claude-3-5-haiku-20241022");
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.deployment().ends_with("-anthropic"), "{}", r.deployment());
    let sent = &anthropic.requests()[0];
    assert_eq!(sent["path"], "/v1/messages");
    assert_eq!(recorded_headers(sent, "x-api-key"), ["sk-env-anthropic"]);
    assert_eq!(sent_body(&anthropic)["model"], "claude-3-5-haiku-20241022");
    assert_eq!(r.json()["model"], "claude-3-5-haiku-20241022", "the answer names the model asked for");

    // `provider/model` names its provider; the prefix does not go upstream.
    let r = gateway.chat("anthropic/claude-sonnet-4-5");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(sent_body(&anthropic)["model"], "claude-sonnet-4-5");
    let r = gateway.chat("openai/gpt-4.1-nano");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(sent_body(&openai)["model"], "gpt-4.1-nano");
    assert_eq!((openai.request_count(), anthropic.request_count()), (2, 2), "no request went to the other provider");

    // A provider without a key in the environment, and a name that says no provider.
    let r = gateway.chat("groq/llama-3.1-8b-instant");
    assert_eq!(r.status, 400, "{}", r.text());
    let message = r.json()["error"]["message"].as_str().unwrap().to_string();
    assert!(message.contains("none of its deployments is groq's"), "{message}");
    let r = gateway.chat("my-own-finetune");
    assert_eq!(r.status, 400, "{}", r.text());
    let message = r.json()["error"]["message"].as_str().unwrap().to_string();
    assert!(message.contains("says no provider Pointwork serves"), "{message}");
    assert_eq!((openai.request_count(), anthropic.request_count()), (2, 2));

    // The dry run explains the pick: the other provider's deployment was dropped, and why.
    let walk = gateway.post("/v1/route", &common::chat_body("claude-3-5-haiku-20241022", false)).json();
    let dropped = walk.to_string();
    assert!(dropped.contains("other_provider"), "{walk}");
}

#[test]
fn a_provider_prefix_pattern_passes_its_names_through_too() {
    // `anthropic/*` → `*`: the name keeps its prefix for the pattern and loses it upstream.
    let anthropic = Mock::start("anthropic", &[]);
    let base = format!("http://{}", anthropic.addr);
    let env = vec![("ANTHROPIC_API_KEY", "sk-env-anthropic"), ("ANTHROPIC_BASE_URL", base.as_str())];
    let config = CONFIG.replace("model_name: \"*\"", "model_name: \"anthropic/*\"");
    let gateway = Gateway::start_with(&config, GatewayOptions { env, ..GatewayOptions::default() });
    let r = gateway.chat("anthropic/claude-3-5-haiku-20241022");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(sent_body(&anthropic)["model"], "claude-3-5-haiku-20241022");
    assert_eq!(recorded_headers(&anthropic.requests()[0], "x-api-key"), ["sk-env-anthropic"]);
}

#[test]
fn a_wildcard_fills_the_model_into_the_path_of_a_provider_that_names_it_there() {
    // LiteLLM's own wildcard_config.yaml: `gemini/*` → `gemini/*`; Gemini names the model in the
    // path, so the request's model makes this request's path, streamed or not.
    let mock = Mock::start("gemini", &["--gemini-api-key", "g-key"]);
    let gateway = Gateway::start(&format!(
        "model_list:\n  - model_name: \"gemini/*\"\n    litellm_params: {{model: \"gemini/*\", api_base: \"http://{}/v1beta\", api_key: g-key}}\n",
        mock.addr
    ));
    let r = gateway.chat("gemini/gemini-2.5-flash");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(mock.requests()[0]["path"], "/v1beta/models/gemini-2.5-flash:generateContent");
    let r = gateway.post("/v1/chat/completions", &common::chat_body("gemini/gemini-2.0-flash-lite", true));
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(mock.requests()[1]["path"], "/v1beta/models/gemini-2.0-flash-lite:streamGenerateContent?alt=sse");
}
