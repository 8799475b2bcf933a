//! The keys the filter chain reads: tag filtering, `allowed_fails_policy`, and the deployment
//! facts in `model_info` (blocked, vision, context window, `supports_*`, region).

mod common;

use common::{errors, load};
use pointwork_core::{AllowedFailsPolicy, ContextWindow, Param};

#[test]
fn tag_filtering_and_the_allowed_fails_policy() {
    let loaded = load(
        "model_list: [{model_name: g, litellm_params: {model: openai/gpt-4o}}]
router_settings:
  enable_tag_filtering: true
  tag_filtering_match_any: false
  allowed_fails_policy: {RateLimitErrorAllowedFails: 100, TimeoutErrorAllowedFails: 2}
",
    )
    .unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let router = &loaded.config.router;
    assert!(router.enable_tag_filtering && !router.tag_filtering_match_any);
    let policy = router.allowed_fails_policy.unwrap();
    assert_eq!((policy.rate_limit, policy.timeout, policy.bad_request), (Some(100), Some(2), None));
    assert_eq!(policy.get("RateLimitErrorAllowedFails"), Some(100));
    let default = load("model_list: [{model_name: g, litellm_params: {model: openai/gpt-4o}}]\n").unwrap();
    assert!(!default.config.router.enable_tag_filtering && default.config.router.tag_filtering_match_any);
    assert_eq!(default.config.router.allowed_fails_policy, None);
    assert_eq!(AllowedFailsPolicy::KEYS.len(), 6);
}

#[test]
fn a_misspelt_error_class_is_refused() {
    let errs = errors(
        "model_list: [{model_name: g, litellm_params: {model: openai/gpt-4o}}]
router_settings: {allowed_fails_policy: {RateLimitErrorAllowedFail: 3, TimeoutErrorAllowedFails: -1}}
",
    );
    assert!(errs.iter().any(|e| e.starts_with("router_settings.allowed_fails_policy.RateLimitErrorAllowedFail: unknown key; did you mean \"RateLimitErrorAllowedFails\"?")), "{errs:?}");
    assert!(
        errs.iter().any(|e| e.starts_with("router_settings.allowed_fails_policy.TimeoutErrorAllowedFails: expected")),
        "{errs:?}"
    );
}

#[test]
fn model_info_facts_reach_the_deployment() {
    let loaded = load(
        "model_list:
  - model_name: g
    litellm_params: {model: openai/gpt-4o, region_name: eu-west-1, tags: [paid, default]}
    model_info: {blocked: true, supports_vision: true, max_input_tokens: 1000, supports_function_calling: false}
  - model_name: g
    litellm_params: {model: openai/gpt-4o-mini}
    model_info: {max_tokens: 4096}
pointwork: {model_cost_map: false}   # only what the entries say
",
    )
    .unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let [a, b] = &loaded.config.deployments[..] else { panic!() };
    assert!(a.blocked && !b.blocked);
    assert_eq!((a.supports_vision, b.supports_vision), (Some(true), None));
    assert_eq!(a.context_window(), Some(ContextWindow { limit: 1000, total: false }));
    assert_eq!(b.context_window(), Some(ContextWindow { limit: 4096, total: true }));
    assert!(a.unsupported_params.contains(Param::Tools) && b.unsupported_params.is_empty());
    assert_eq!(
        (a.region_name.as_deref(), &a.tags[..]),
        (Some("eu-west-1"), &["paid".to_string(), "default".to_string()][..])
    );
    // Kept in the model info the gateway shows, as read.
    let info = &loaded.config.deployment_info[0].model_info;
    assert_eq!(info["blocked"], serde_json::json!(true));
    assert_eq!(info["max_input_tokens"], serde_json::json!(1000));
    let bad =
        errors("model_list: [{model_name: g, litellm_params: {model: openai/x}, model_info: {blocked: maybe}}]\n");
    assert!(bad.iter().any(|e| e.starts_with("model_list[0].model_info.blocked: expected")), "{bad:?}");
}
