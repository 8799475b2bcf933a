//! Resolution through the real gateway: aliases (hidden ones unlisted), wildcard groups passing
//! the requested name through, deployment ids.

mod common;

use common::{config, Gateway, Mock};
use serde_json::Value;

fn entry(group: &str, id: &str, model: &str, mock: &Mock) -> String {
    format!(
        "  - model_name: \"{group}\"\n    litellm_params: {{model: \"{model}\", api_base: \"{}\", api_key: sk-{id}}}\n    model_info: {{id: {id}}}\n",
        mock.api_base()
    )
}

/// The `model` the mock received in its last request.
fn last_model(mock: &Mock) -> String {
    let requests = mock.requests();
    let body: Value = serde_json::from_str(requests.last().expect("a request")["body"].as_str().unwrap()).unwrap();
    body["model"].as_str().unwrap().to_string()
}

#[test]
fn aliases_route_to_their_group_and_hidden_ones_are_not_listed() {
    let a = Mock::start("a", &[]);
    let yaml = config(
        &[entry("gpt", "dep-a", "openai/gpt-4o-mini", &a)],
        "router_settings:\n  model_group_alias: {fast: gpt, internal: {model: gpt, hidden: true}}\n",
    );
    let gateway = Gateway::start(&yaml);
    for name in ["fast", "internal"] {
        let r = gateway.chat(name);
        assert_eq!((r.status, r.deployment()), (200, "dep-a"), "{name}: {}", r.text());
        assert_eq!(r.header("x-pointwork-model-group"), Some("gpt"));
        assert_eq!(last_model(&a), "gpt-4o-mini");
    }
    let ids: Vec<String> = gateway.get("/v1/models").json()["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids, ["gpt", "fast"]);
}

#[test]
fn wildcard_groups_pass_the_requested_name_through() {
    let openai = Mock::start("openai", &[]);
    let anything = Mock::start("anything", &[]);
    let exact = Mock::start("exact", &[]);
    let yaml = config(
        &[
            entry("openai/*", "dep-openai", "openai/*", &openai),
            entry("*", "dep-any", "openai/*", &anything),
            entry("gpt", "dep-exact", "openai/gpt-4o", &exact),
        ],
        "",
    );
    let gateway = Gateway::start(&yaml);
    let r = gateway.chat("openai/gpt-4o-mini");
    assert_eq!((r.status, r.deployment()), (200, "dep-openai"), "{}", r.text());
    assert_eq!(r.header("x-pointwork-model-group"), Some("openai/*"));
    assert_eq!(last_model(&openai), "gpt-4o-mini");
    let r = gateway.chat("my-finetune:v2");
    assert_eq!((r.status, r.deployment()), (200, "dep-any"), "{}", r.text());
    assert_eq!(last_model(&anything), "my-finetune:v2");
    // An exact group name wins over the patterns, and a deployment id still names its deployment.
    assert_eq!(gateway.chat("gpt").deployment(), "dep-exact");
    assert_eq!(last_model(&exact), "gpt-4o");
    assert_eq!(gateway.chat("dep-openai").deployment(), "dep-openai");
}

#[test]
fn without_a_catch_all_an_unknown_name_gets_litellms_error() {
    let a = Mock::start("a", &[]);
    let gateway = Gateway::start(&config(&[entry("openai/*", "dep-a", "openai/*", &a)], ""));
    let r = gateway.chat("claude-3");
    assert_eq!(r.status, 400);
    assert_eq!(
        r.json()["error"]["message"],
        "Invalid model name passed in model=claude-3. Call `/v1/models` to view available models for your key."
    );
    assert_eq!(a.request_count(), 0);
}
