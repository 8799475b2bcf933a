//! The filter chain through the real gateway: what the request says (tags in the body, at its
//! top level or in `metadata`, or in the `x-litellm-tags` header, an image, a long prompt)
//! reaches the pick.

mod common;

use common::{config, deployment, Gateway, Mock};
use serde_json::json;

const MODEL: &str = "openai/gpt-4o-mini";

#[test]
fn request_tags_from_the_body_or_the_header_select_deployments() {
    let (paid, free) = (Mock::start("paid", &[]), Mock::start("free", &[]));
    let yaml = config(
        &[
            deployment("gpt", "dep-paid", MODEL, &paid, "tags: [paid]"),
            deployment("gpt", "dep-free", MODEL, &free, "tags: [free, default]"),
        ],
        "router_settings: {enable_tag_filtering: true}\n",
    );
    let gateway = Gateway::start(&yaml);
    let body = |tags: serde_json::Value| {
        json!({"model": "gpt", "metadata": {"tags": tags}, "messages": [{"role": "user", "content": "hi"}]}).to_string()
    };
    for _ in 0..10 {
        assert_eq!(gateway.post("/v1/chat/completions", &body(json!(["paid"]))).deployment(), "dep-paid");
        let plain = json!({"model": "gpt", "messages": [{"role": "user", "content": "hi"}]}).to_string();
        let r =
            gateway.client().request("POST", "/v1/chat/completions", &[("x-litellm-tags", " paid ")], plain.as_bytes());
        assert_eq!(r.deployment(), "dep-paid", "{}", r.text());
        // Untagged: the default deployment.
        assert_eq!(gateway.chat("gpt").deployment(), "dep-free");
    }
    // Tags no deployment carries: the `default` deployment serves in their place.
    assert_eq!(gateway.post("/v1/chat/completions", &body(json!(["gold"]))).deployment(), "dep-free");
}

#[test]
fn top_level_tags_select_like_metadata_tags_and_both_lists_add_up() {
    let (paid, eu, free) = (Mock::start("paid", &[]), Mock::start("eu", &[]), Mock::start("free", &[]));
    let yaml = config(
        &[
            deployment("gpt", "dep-paid", MODEL, &paid, "tags: [paid]"),
            deployment("gpt", "dep-eu", MODEL, &eu, "tags: [eu]"),
            deployment("gpt", "dep-free", MODEL, &free, "tags: [free, default]"),
        ],
        // Every tag must match: only the union of both lists can leave nobody but the default.
        "router_settings: {enable_tag_filtering: true, tag_filtering_match_any: false}\n",
    );
    let gateway = Gateway::start(&yaml);
    let chat = |extra: serde_json::Value| {
        let mut body = json!({"model": "gpt", "messages": [{"role": "user", "content": "hi"}]});
        body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        let r = gateway.post("/v1/chat/completions", &body.to_string());
        assert_eq!(r.status, 200, "{extra}: {}", r.text());
        r.deployment().to_string()
    };
    for _ in 0..5 {
        assert_eq!(chat(json!({"tags": ["paid"]})), "dep-paid");
        assert_eq!(chat(json!({"tags": ["eu"]})), "dep-eu");
        // paid (metadata) and eu (top level): no deployment has both, so the default serves;
        // either list alone would have chosen its own deployment.
        assert_eq!(chat(json!({"metadata": {"tags": ["paid"]}, "tags": ["eu"]})), "dep-free");
        assert_eq!(chat(json!({"metadata": {"tags": ["paid"]}, "tags": ["paid"]})), "dep-paid");
        assert_eq!(chat(json!({})), "dep-free");
    }
    assert_eq!((paid.request_count(), eu.request_count()), (10, 5));
    // The top-level `tags` is LiteLLM's routing field: a provider never sees it (it would refuse
    // an unknown parameter); `metadata` goes as sent.
    for request in paid.requests().iter().chain(&eu.requests()).chain(&free.requests()) {
        let sent: serde_json::Value = serde_json::from_str(request["body"].as_str().unwrap()).unwrap();
        assert!(sent.get("tags").is_none(), "{sent}");
        assert_eq!(sent["model"], "gpt-4o-mini");
    }
    let sent = free.requests().iter().map(|r| r["body"].as_str().unwrap().to_string()).find(|b| b.contains("metadata"));
    assert!(sent.is_some_and(|b| b.contains(r#""metadata":{"tags":["paid"]}"#)));
}

#[test]
fn a_long_prompt_skips_the_small_window_and_an_image_the_text_only_deployment() {
    let (small, big) = (Mock::start("small", &[]), Mock::start("big", &[]));
    let yaml = config(
        &[deployment("gpt", "dep-small", MODEL, &small, ""), deployment("gpt", "dep-big", MODEL, &big, "")],
        "router_settings: {enable_pre_call_checks: true}\n",
    )
    .replace("model_info: {id: dep-small}", "model_info: {id: dep-small, max_input_tokens: 200}")
    .replace("model_info: {id: dep-big}", "model_info: {id: dep-big, max_input_tokens: 100000, supports_vision: true}");
    let gateway = Gateway::start(&yaml);
    let long = json!({"model": "gpt", "messages": [{"role": "user", "content": "word ".repeat(400)}]}).to_string();
    let image = json!({"model": "gpt", "messages": [{"role": "user", "content": [
        {"type": "text", "text": "what is this"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    ]}]})
    .to_string();
    for _ in 0..10 {
        let r = gateway.post("/v1/chat/completions", &long);
        assert_eq!(r.deployment(), "dep-big", "{}", r.text());
        assert!(r.header("x-pointwork-route").unwrap_or_default().contains("too small for the prompt"));
        let r = gateway.post("/v1/chat/completions", &image);
        assert_eq!(r.deployment(), "dep-big", "{}", r.text());
    }
    assert_eq!(small.request_count(), 0);
}
