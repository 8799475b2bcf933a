//! The filter chain through the real gateway: what the request says (tags in the body or the
//! `x-litellm-tags` header, an image, a long prompt) reaches the pick.

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
