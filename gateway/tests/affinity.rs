//! Session and deployment affinity through the real gateway, over two shards: a conversation
//! stays on the deployment that first served it, on either shard, until that deployment fails.

mod common;

use common::{config, deployment, Gateway, GatewayOptions, Mock};
use serde_json::json;

const MODEL: &str = "openai/gpt-4o-mini";

fn session_chat(session: &str) -> String {
    json!({"model": "gpt", "metadata": {"session_id": session}, "messages": [{"role": "user", "content": "hi"}]})
        .to_string()
}

fn gateway(a: &Mock, b: &Mock, checks: &str) -> Gateway {
    let yaml = config(
        &[deployment("gpt", "dep-a", MODEL, a, ""), deployment("gpt", "dep-b", MODEL, b, "")],
        &format!("router_settings: {{optional_pre_call_checks: [{checks}], allowed_fails: 0, cooldown_time: 60}}\n"),
    );
    Gateway::start_with(&yaml, GatewayOptions { shards: 2, ..GatewayOptions::default() })
}

#[test]
fn a_session_stays_on_its_deployment_on_every_shard_until_it_fails() {
    let (a, b) = (Mock::start("a", &[]), Mock::start("b", &[]));
    let gateway = gateway(&a, &b, "session_affinity");
    let first = gateway.post("/v1/chat/completions", &session_chat("conv-1"));
    assert_eq!(first.status, 200);
    let pinned = first.deployment().to_string();
    // Fresh connections spread over both shards: the pin travelled as an event.
    for i in 0..30 {
        let r = gateway.post("/v1/chat/completions", &session_chat("conv-1"));
        assert_eq!(r.deployment(), pinned, "request {i}");
        if i > 0 {
            let route = r.header("x-pointwork-route").unwrap_or_default().to_string();
            assert!(route.contains("not the conversation's pinned deployment"), "{route}");
        }
    }
    // Other sessions are spread as usual.
    let spread: std::collections::HashSet<String> = (0..40)
        .map(|i| gateway.post("/v1/chat/completions", &session_chat(&format!("other-{i}"))).deployment().to_string())
        .collect();
    assert_eq!(spread.len(), 2, "{spread:?}");
    // The pinned deployment fails and cools down: the conversation moves, and stays moved.
    let (pinned_mock, other_id) = if pinned == "dep-a" { (&a, "dep-b") } else { (&b, "dep-a") };
    pinned_mock.control(json!({"fault": "status:500"}));
    let moved = gateway.post("/v1/chat/completions", &session_chat("conv-1"));
    assert_eq!((moved.status, moved.deployment()), (200, other_id), "{}", moved.text());
    pinned_mock.control(json!({"fault": null}));
    for _ in 0..10 {
        assert_eq!(gateway.post("/v1/chat/completions", &session_chat("conv-1")).deployment(), other_id);
    }
}

#[test]
fn deployment_affinity_keeps_a_callers_key_on_one_deployment() {
    let (a, b) = (Mock::start("a", &[]), Mock::start("b", &[]));
    let gateway = gateway(&a, &b, "deployment_affinity");
    let body = json!({"model": "gpt", "messages": [{"role": "user", "content": "hi"}]}).to_string();
    let call = |key: &str| {
        let auth = format!("Bearer {key}");
        gateway.client().request("POST", "/v1/chat/completions", &[("authorization", auth.as_str())], body.as_bytes())
    };
    let pinned = call("sk-user-1").deployment().to_string();
    for _ in 0..20 {
        assert_eq!(call("sk-user-1").deployment(), pinned);
    }
    let spread: std::collections::HashSet<String> =
        (0..40).map(|i| call(&format!("sk-user-x{i}")).deployment().to_string()).collect();
    assert_eq!(spread.len(), 2, "{spread:?}");
}
