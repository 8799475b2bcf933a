//! `pointwork.auth`: virtual keys and admin keys as digests, their limits, and the errors a
//! mistyped section gets.

mod common;

use common::{errors, load};
use std::time::Duration;

const MODEL: &str = "model_list:\n  - model_name: gpt\n    litellm_params: {model: openai/x}\n";
const DIGEST_A: &str = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
const DIGEST_B: &str = "60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752";

#[test]
fn keys_limits_and_tags_are_read() {
    let yaml = format!(
        "{MODEL}pointwork:\n  auth:\n    metrics: key\n    admin_keys:\n      - {{name: ops, sha256: \"sha256:{DIGEST_B}\"}}\n    virtual_keys:\n      - name: team-a\n        sha256: {DIGEST_A}\n        models: [gpt, \"openai/*\"]\n        rpm: 10\n        tpm: \"2000\"\n        max_budget: 2.5\n        budget_duration: 30d\n        tags: [team-a]\n    spend_file: spend.json\n"
    );
    let auth = load(&yaml).unwrap().config.auth;
    assert!(auth.metrics_need_key);
    assert_eq!(auth.admin_keys[0].name, "ops");
    assert_eq!(auth.admin_keys[0].sha256[0], 0x60);
    let k = &auth.virtual_keys[0];
    assert_eq!((k.name.as_str(), k.sha256[0], k.sha256[31]), ("team-a", 0x9f, 0x08));
    assert_eq!(k.models.as_deref(), Some(&["gpt".to_string(), "openai/*".to_string()][..]));
    assert_eq!((k.limits.rpm, k.limits.tpm, k.limits.max_budget), (Some(10), Some(2000), Some(2.5)));
    assert_eq!(k.limits.budget_duration, Some(Duration::from_secs(30 * 86_400)));
    assert_eq!(k.tags, ["team-a"]);
    assert!(auth.spend_file.unwrap().ends_with("tests/fixtures/spend.json"), "relative to the config's folder");
}

#[test]
fn no_auth_section_means_no_keys() {
    let auth = load(MODEL).unwrap().config.auth;
    assert!(!auth.metrics_need_key && auth.admin_keys.is_empty() && auth.virtual_keys.is_empty());
}

#[test]
fn every_mistake_is_named_by_its_key_path_and_a_key_in_clear_is_not_repeated() {
    let yaml = format!(
        "{MODEL}pointwork:\n  auth:\n    metrics: closed\n    admin_keys: {{name: ops}}\n    virtual_keys:\n      - {{name: a, sha256: sk-live-secret-1234, rpm: 0}}\n      - {{name: b, sha256: {DIGEST_A}, budget_duration: 1d, modles: [gpt]}}\n      - {{name: b, sha256: {DIGEST_A}}}\n      - just-a-string\n"
    );
    let errs = errors(&yaml);
    assert_eq!(
        errs,
        [
            r#"pointwork.auth.metrics: expected open or key, got "closed""#,
            "pointwork.auth.admin_keys: expected a list, got a map",
            "pointwork.auth.virtual_keys[3]: expected a map, got \"just-a-string\"",
            "pointwork.auth.virtual_keys[0].sha256: expected 64 hex digits (the SHA-256 of the key, as `pointwork hash-key` prints it; never the key itself), got a string",
            "pointwork.auth.virtual_keys[0].rpm: expected a positive integer, got 0",
            "pointwork.auth.virtual_keys[1].budget_duration: a budget period needs max_budget",
            r#"pointwork.auth.virtual_keys[1].modles: unknown key; did you mean "models"? valid keys: name, sha256, models, rpm, tpm, max_budget, budget_duration, tags, policy, mcp_servers, mcp_tool_permissions, allowed_cache_controls"#,
            "pointwork.auth.virtual_keys[2].sha256: the same key digest as pointwork.auth.virtual_keys[1]",
            r#"pointwork.auth.virtual_keys[2].name: "b" already names pointwork.auth.virtual_keys[1]"#,
        ]
    );
    assert!(!errs.join("\n").contains("sk-live"), "a key pasted in clear is never repeated");
}

#[test]
fn metrics_behind_a_key_needs_a_key_that_opens_them() {
    let yaml = format!("{MODEL}pointwork:\n  auth:\n    metrics: key\n");
    assert_eq!(
        errors(&yaml),
        ["pointwork.auth.metrics: `key` needs general_settings.master_key or an admin key: nothing could open /metrics"]
    );
    let with_master = format!("{yaml}general_settings: {{master_key: sk-m}}\n");
    assert!(load(&with_master).unwrap().config.auth.metrics_need_key);
}

#[test]
fn a_budget_over_deployments_without_prices_is_warned_about() {
    let yaml = format!(
        "{MODEL}  - model_name: priced\n    litellm_params: {{model: openai/y, input_cost_per_token: 0.1, output_cost_per_token: 0.2}}\n    model_info: {{id: p1}}\npointwork:\n  auth:\n    virtual_keys:\n      - {{name: a, sha256: {DIGEST_A}, max_budget: 1}}\n      - {{name: b, sha256: {DIGEST_B}, max_budget: 1, models: [priced]}}\n"
    );
    let loaded = load(&yaml).unwrap();
    let warnings: Vec<String> = loaded.warnings.iter().map(|w| w.to_string()).collect();
    let id = &loaded.config.deployments[0].id;
    assert_eq!(
        warnings,
        [format!("pointwork.auth.virtual_keys[0].max_budget: these deployments have no input_cost_per_token/output_cost_per_token (nor a model_cost_map entry) and add no spend: {id}")]
    );
}

#[test]
fn a_keys_allowed_cache_controls_are_read_and_checked() {
    let yaml = format!(
        "{MODEL}pointwork:\n  auth:\n    virtual_keys:\n      - name: a\n        sha256: {DIGEST_A}\n        allowed_cache_controls: [no-cache, ttl, s-max-age, namespace, use-cache]\n      - {{name: b, sha256: {DIGEST_B}}}\n"
    );
    let keys = load(&yaml).unwrap().config.auth.virtual_keys;
    assert_eq!(keys[0].allowed_cache_controls, ["no-cache", "ttl", "s-max-age", "namespace", "use-cache"]);
    assert!(keys[1].allowed_cache_controls.is_empty(), "not set: any control");

    let yaml = format!(
        "{MODEL}pointwork:\n  auth:\n    virtual_keys:\n      - {{name: a, sha256: {DIGEST_A}, allowed_cache_controls: [no-store, max-age, 3]}}\n      - {{name: b, sha256: {DIGEST_B}, allowed_cache_controls: ttl}}\n"
    );
    let expected = "one of no-cache, no-store, ttl, s-maxage, s-max-age, namespace, use-cache";
    assert_eq!(
        errors(&yaml),
        [
            format!(r#"pointwork.auth.virtual_keys[0].allowed_cache_controls[1]: expected {expected}, got "max-age""#),
            format!("pointwork.auth.virtual_keys[0].allowed_cache_controls[2]: expected {expected}, got 3"),
            r#"pointwork.auth.virtual_keys[1].allowed_cache_controls: expected a list, got "ttl""#.to_string(),
        ]
    );
}
