//! `litellm_params` that are request parameters, through the real gateway: a deployment's
//! `temperature`, `max_tokens`, `stop`, … reach the provider when the request does not set them,
//! the request's own win, and the models that refuse `max_tokens` (gpt-5, the o-series) get
//! `max_completion_tokens` instead — on chat completions, and through the Messages API (passed
//! through to Anthropic, or translated to chat). What the provider received is read from the
//! mock's record.

mod common;

use common::{config, deployment, Gateway, Mock};
use pointwork_gateway::keys::digest_hex;
use serde_json::{json, Value};

/// The body of the last request `mock` received.
fn last_body(mock: &Mock) -> Value {
    let sent = mock.requests().pop().expect("the mock received a request");
    serde_json::from_str(sent["body"].as_str().expect("a recorded body")).expect("a JSON body")
}

fn chat(gateway: &Gateway, body: Value) -> common::Response {
    let r = gateway.post("/v1/chat/completions", &body.to_string());
    assert_eq!(r.status, 200, "{}", r.text());
    r
}

fn messages(gateway: &Gateway, body: Value) -> common::Response {
    let r = gateway.client().request(
        "POST",
        "/v1/messages",
        &[("content-type", "application/json")],
        body.to_string().as_bytes(),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    r
}

fn hello(model: &str) -> Value {
    json!({"model": model, "messages": [{"role": "user", "content": "Say hello."}]})
}

const TUNED: &str = "temperature: 0.2, max_tokens: 50, stop: [END], seed: 7, response_format: {type: json_object}";

#[test]
fn a_deployments_defaults_fill_what_the_request_leaves_out_and_its_own_win() {
    let mock = Mock::start("m", &[]);
    let yaml = config(
        &[
            deployment("tuned", "dep-tuned", "openai/gpt-4o", &mock, TUNED),
            deployment("plain", "dep-plain", "openai/gpt-4o", &mock, ""),
        ],
        "",
    );
    let gateway = Gateway::start(&yaml);

    chat(&gateway, hello("tuned"));
    let sent = last_body(&mock);
    assert_eq!(sent["model"], "gpt-4o");
    assert_eq!(sent["temperature"], 0.2);
    assert_eq!(sent["max_tokens"], 50);
    assert_eq!(sent["stop"], json!(["END"]));
    assert_eq!(sent["seed"], 7);
    assert_eq!(sent["response_format"], json!({"type": "json_object"}));
    assert_eq!(sent["messages"][0]["content"], "Say hello.");

    // The request's own values win, `null` included (as LiteLLM's `{**params, **request}`).
    let mut own = hello("tuned");
    own["temperature"] = json!(0.9);
    own["max_tokens"] = json!(5);
    own["stop"] = Value::Null;
    chat(&gateway, own);
    let sent = last_body(&mock);
    assert_eq!((sent["temperature"].clone(), sent["max_tokens"].clone()), (json!(0.9), json!(5)));
    assert!(sent["stop"].is_null() && sent.as_object().unwrap().contains_key("stop"), "{sent}");
    assert_eq!(sent["seed"], 7, "what the request left out still comes from the deployment");
    let names: Vec<&String> = sent.as_object().unwrap().keys().collect();
    assert_eq!(names.iter().filter(|n| n.as_str() == "temperature").count(), 1, "{names:?}");

    // A deployment without defaults sends the body as it came (model spliced).
    chat(&gateway, hello("plain"));
    let sent = last_body(&mock);
    assert_eq!(sent, json!({"model": "gpt-4o", "messages": [{"role": "user", "content": "Say hello."}]}));
}

#[test]
fn gpt_5_and_the_o_series_get_max_completion_tokens_and_gpt_4o_keeps_max_tokens() {
    let mock = Mock::start("m", &[]);
    let yaml = config(
        &[
            deployment("five", "dep-five", "openai/gpt-5-mini", &mock, "max_tokens: 40"),
            deployment("o3", "dep-o3", "openai/o3-mini", &mock, ""),
            deployment("four", "dep-four", "openai/gpt-4o", &mock, "max_tokens: 40"),
        ],
        "",
    );
    let gateway = Gateway::start(&yaml);
    let with_max_tokens = |model: &str, n: u64| {
        let mut body = hello(model);
        body["max_tokens"] = json!(n);
        body
    };

    // The deployment's default, then the request's own, as max_completion_tokens.
    chat(&gateway, hello("five"));
    let sent = last_body(&mock);
    assert_eq!((sent["max_completion_tokens"].clone(), sent.get("max_tokens")), (json!(40), None), "{sent}");
    chat(&gateway, with_max_tokens("five", 7));
    let sent = last_body(&mock);
    assert_eq!((sent["max_completion_tokens"].clone(), sent.get("max_tokens")), (json!(7), None), "{sent}");

    chat(&gateway, with_max_tokens("o3", 9));
    let sent = last_body(&mock);
    assert_eq!((sent["max_completion_tokens"].clone(), sent.get("max_tokens")), (json!(9), None), "{sent}");
    // Both named: max_completion_tokens is kept, max_tokens goes.
    let mut both = with_max_tokens("o3", 9);
    both["max_completion_tokens"] = json!(11);
    chat(&gateway, both);
    let sent = last_body(&mock);
    assert_eq!((sent["max_completion_tokens"].clone(), sent.get("max_tokens")), (json!(11), None), "{sent}");

    chat(&gateway, with_max_tokens("four", 9));
    let sent = last_body(&mock);
    assert_eq!((sent["max_tokens"].clone(), sent.get("max_completion_tokens")), (json!(9), None), "{sent}");
    chat(&gateway, hello("four"));
    assert_eq!(last_body(&mock)["max_tokens"], 40);
}

#[test]
fn defaults_reach_the_provider_through_the_messages_api() {
    let mock = Mock::start("m", &[]);
    let yaml = config(
        &[
            deployment(
                "claude",
                "dep-claude",
                "anthropic/claude-sonnet-4-5",
                &mock,
                "temperature: 0.3, top_p: 0.8, stop: [X]",
            ),
            deployment("tuned", "dep-tuned", "openai/gpt-4o", &mock, TUNED),
            deployment("five", "dep-five", "openai/gpt-5-mini", &mock, "temperature: 1"),
        ],
        "",
    );
    let gateway = Gateway::start(&yaml);
    let ask = |model: &str| json!({"model": model, "max_tokens": 64, "messages": [{"role": "user", "content": "Say hello."}]});

    // Passed through to Anthropic: the defaults its Messages API names alike (`stop` is
    // `stop_sequences` there, and is not added).
    messages(&gateway, ask("claude"));
    let sent = mock.requests().pop().unwrap();
    assert_eq!(sent["path"], "/v1/messages");
    let body: Value = serde_json::from_str(sent["body"].as_str().unwrap()).unwrap();
    assert_eq!((body["temperature"].clone(), body["top_p"].clone()), (json!(0.3), json!(0.8)), "{body}");
    assert_eq!((body["max_tokens"].clone(), body.get("stop")), (json!(64), None), "{body}");

    // Translated to chat completions: every default the request leaves out, the request's
    // max_tokens kept.
    messages(&gateway, ask("tuned"));
    let sent = mock.requests().pop().unwrap();
    assert_eq!(sent["path"], "/v1/chat/completions");
    let body: Value = serde_json::from_str(sent["body"].as_str().unwrap()).unwrap();
    assert_eq!((body["temperature"].clone(), body["stop"].clone()), (json!(0.2), json!(["END"])), "{body}");
    assert_eq!((body["max_tokens"].clone(), body["seed"].clone()), (json!(64), json!(7)), "{body}");

    // And to a gpt-5 deployment, max_tokens as max_completion_tokens.
    messages(&gateway, ask("five"));
    let body = last_body(&mock);
    assert_eq!((body["max_completion_tokens"].clone(), body.get("max_tokens")), (json!(64), None), "{body}");
    assert_eq!(body["temperature"], 1.0);
}

#[test]
fn a_stream_to_a_deployment_with_defaults_still_reports_its_usage_for_spend() {
    // A budgeted key reads a stream's usage: the gateway asks the provider for it, beside the
    // deployment's defaults.
    let mock = Mock::start("m", &["--chunks", "3"]);
    let yaml = config(
        &[deployment(
            "tuned",
            "dep-tuned",
            "openai/gpt-4o-mini",
            &mock,
            "temperature: 0.2, input_cost_per_token: 0.001, output_cost_per_token: 0.001",
        )],
        &format!(
            "general_settings: {{master_key: sk-master}}\npointwork:\n  auth:\n    virtual_keys:\n      \
             - {{name: budgeted, sha256: {}, max_budget: 100}}\n",
            digest_hex(b"sk-budgeted")
        ),
    );
    let gateway = Gateway::start(&yaml);
    let mut body = hello("tuned");
    body["stream"] = json!(true);
    let mut client = gateway.client();
    client.send(
        "POST",
        "/v1/chat/completions",
        &[("content-type", "application/json"), ("authorization", "Bearer sk-budgeted")],
        body.to_string().as_bytes(),
    );
    let head = client.read_head().expect("head");
    assert_eq!(head.status, 200);
    let events = client.events().collect_all().expect("events");
    assert!(events.iter().all(|e| !e.text.contains("\"usage\":{")), "the usage asked for is cut: {events:?}");
    let sent = last_body(&mock);
    assert_eq!(sent["temperature"], 0.2);
    assert_eq!(sent["stream_options"], json!({"include_usage": true}), "{sent}");
}

#[test]
fn translated_to_gemini_and_bedrock_the_defaults_are_in_the_providers_own_terms() {
    const AKID: &str = "AKIDPOINTWORKTEST";
    const SECRET: &str = "pointwork/test/secret+key";
    let gemini = Mock::start("gemini", &["--gemini-api-key", "g-key"]);
    let bedrock = Mock::start(
        "bedrock",
        &["--aws-access-key-id", AKID, "--aws-secret-access-key", SECRET, "--aws-region", "us-east-1"],
    );
    let yaml = format!(
        "model_list:\n  - model_name: flash\n    litellm_params: {{model: gemini/gemini-2.5-flash, api_base: \"http://{}/v1beta\", \
         api_key: g-key, temperature: 0.3, max_tokens: 77, stop: [END]}}\n  - model_name: nova\n    litellm_params: \
         {{model: bedrock/converse/us.amazon.nova-pro-v1:0, api_base: \"http://{}\", aws_access_key_id: {AKID}, \
         aws_secret_access_key: \"{SECRET}\", aws_region_name: us-east-1, temperature: 0.4, max_tokens: 55}}\n",
        gemini.addr, bedrock.addr
    );
    let gateway = Gateway::start(&yaml);

    chat(&gateway, hello("flash"));
    let config = &last_body(&gemini)["generationConfig"];
    assert_eq!(config["temperature"], 0.3, "{config}");
    assert_eq!((config["maxOutputTokens"].clone(), config["stopSequences"].clone()), (json!(77), json!(["END"])));
    // Through the Messages API: the request's max_tokens, the deployment's temperature.
    messages(&gateway, json!({"model": "flash", "max_tokens": 12, "messages": [{"role": "user", "content": "Hi."}]}));
    let config = &last_body(&gemini)["generationConfig"];
    assert_eq!((config["temperature"].clone(), config["maxOutputTokens"].clone()), (json!(0.3), json!(12)), "{config}");

    let mut own = hello("nova");
    own["temperature"] = json!(0.9);
    chat(&gateway, own);
    let inference = &last_body(&bedrock)["inferenceConfig"];
    assert_eq!(
        (inference["temperature"].clone(), inference["maxTokens"].clone()),
        (json!(0.9), json!(55)),
        "{inference}"
    );
}
