//! The provider budget limiter through the real gateway, over two shards: once a provider's
//! responses cost its budget, its deployments get no more traffic until the period ends.

mod common;

use common::{config, deployment, Gateway, GatewayOptions, Mock, SHUFFLE_TRIES};

#[test]
fn a_provider_that_spent_its_budget_gets_no_more_requests_on_any_shard() {
    let openai = Mock::start("openai", &[]);
    let groq = Mock::start("groq", &[]);
    let yaml = config(
        &[
            // A response costs well over the budget: one is enough to spend it.
            deployment(
                "gpt",
                "dep-openai",
                "openai/gpt-4o-mini",
                &openai,
                "input_cost_per_token: 0.001, output_cost_per_token: 0.002",
            ),
            deployment("gpt", "dep-groq", "groq/llama-3.1-8b", &groq, ""),
        ],
        "router_settings:\n  provider_budget_config: {openai: {budget_limit: 0.01, time_period: 1d}}\n",
    );
    let gateway = Gateway::start_with(&yaml, GatewayOptions { shards: 2, ..GatewayOptions::default() });
    for _ in 0..SHUFFLE_TRIES {
        assert_eq!(gateway.chat("gpt").status, 200);
        if openai.request_count() > 0 {
            break;
        }
    }
    assert_eq!(openai.request_count(), 1);
    for i in 0..30 {
        let r = gateway.chat("gpt");
        assert_eq!((r.status, r.deployment()), (200, "dep-groq"), "request {i}: {}", r.text());
    }
    assert_eq!(openai.request_count(), 1, "openai is over its budget on every shard");
    let route = gateway.chat("gpt").header("x-pointwork-route").unwrap_or_default().to_string();
    assert!(route.contains("over their provider's budget"), "{route}");
}
