//! `model: "*"` (LiteLLM's pass-through) and the environment variables LiteLLM reads for each
//! provider's key and base URL when an entry writes none.

mod common;

use pointwork_config::{load_str, LeftOutBecause, Loaded};
use pointwork_core::Provider;

fn load_in(yaml: &str, vars: &[(&str, &str)]) -> Result<Loaded, Vec<String>> {
    let env = |name: &str| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string());
    load_str(yaml, &common::fixtures(), &env).map_err(|e| e.0.iter().map(|e| e.to_string()).collect())
}

const STAR: &str =
    "model_list:\n  - model_name: \"*\"\n    litellm_params: {model: \"*\"}\n    model_info: {id: any}\n";

#[test]
fn a_pass_through_entry_serves_each_provider_whose_key_is_set() {
    let env = [
        ("OPENAI_API_KEY", "sk-oa"),
        ("ANTHROPIC_API_KEY", "sk-ant"),
        ("ANTHROPIC_BASE_URL", "https://anthropic.internal/v1/"),
        ("GROQ_API_KEY", "gsk"),
    ];
    let loaded = load_in(STAR, &env).unwrap();
    let config = &loaded.config;
    let got: Vec<_> = config
        .deployments
        .iter()
        .map(|d| (d.id.as_str(), d.provider, d.upstream_model.as_str(), d.api_base.as_str(), d.api_key.as_deref()))
        .collect();
    assert_eq!(
        got,
        [
            ("any-openai", Provider::OpenAi, "*", "https://api.openai.com/v1", Some("sk-oa")),
            ("any-anthropic", Provider::Anthropic, "*", "https://anthropic.internal", Some("sk-ant")),
            ("any-groq", Provider::Groq, "*", "https://api.groq.com/openai/v1", Some("gsk")),
        ]
    );
    assert!(config.deployments.iter().all(|d| d.pass_through && d.model_name == "*"));
    let providers = &config.router.model_providers;
    assert_eq!(providers.provider_of("gpt-4o-mini-2024-07-18"), Some(Provider::OpenAi));
    assert_eq!(providers.provider_of("claude-3-5-haiku-20241022"), Some(Provider::Anthropic));
    assert_eq!(providers.provider_of("deepseek-chat"), Some(Provider::DeepSeek), "the cost map says so");
    assert_eq!(providers.provider_of("command-r-08-2024"), Some(Provider::Cohere));
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    config.snapshot().unwrap();
}

#[test]
fn written_credentials_apply_to_every_provider_and_make_openai_one() {
    let yaml = STAR.replace("{model: \"*\"}", "{model: \"*\", api_base: \"http://10.0.0.9:8000/v1\", api_key: sk-w}");
    let loaded = load_in(&yaml, &[("ANTHROPIC_API_KEY", "sk-ant")]).unwrap();
    let got: Vec<_> =
        loaded.config.deployments.iter().map(|d| (d.provider, d.api_base.as_str(), d.api_key.as_deref())).collect();
    assert_eq!(
        got,
        [
            (Provider::OpenAi, "http://10.0.0.9:8000/v1", Some("sk-w")),
            (Provider::Anthropic, "http://10.0.0.9:8000", Some("sk-w")),
        ]
    );
}

#[test]
fn without_any_providers_key_the_entry_is_left_out_and_the_rest_serves() {
    let yaml = format!(
        "{STAR}  - model_name: local\n    litellm_params: {{model: hosted_vllm/llama, api_base: \"http://10.0.0.7:8000/v1\"}}\n"
    );
    let loaded = load_in(&yaml, &[]).unwrap();
    assert_eq!(loaded.config.deployments.len(), 1);
    assert_eq!(loaded.config.left_out[0].because, LeftOutBecause::NoPassThroughKey);
    let warning = loaded.warnings[0].to_string();
    assert!(
        warning.starts_with("model_list[0].litellm_params.model: left out: model \"*\" passes names through to their providers and no provider's key is set (OPENAI_API_KEY, ANTHROPIC_API_KEY,"),
        "{warning}"
    );
    // Alone, it leaves nothing to serve: the config loads and says so (`check --strict` refuses it).
    let alone = load_in(STAR, &[]).unwrap();
    assert!(alone.config.deployments.is_empty());
    let warnings: Vec<String> = alone.warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(warnings[1], "model_list: every entry is left out (see the warnings): no model is served");
}

#[test]
fn an_entry_without_a_key_or_base_takes_its_providers_environment_variables() {
    let yaml = "model_list:\n\
                - model_name: gpt\n  litellm_params: {model: openai/gpt-4o}\n\
                - model_name: claude\n  litellm_params: {model: anthropic/claude-sonnet-4-5}\n\
                - model_name: vllm\n  litellm_params: {model: hosted_vllm/llama}\n\
                - model_name: written\n  litellm_params: {model: openai/gpt-4o, api_key: sk-own, api_base: \"https://own.example/v1\"}\n";
    let env = [
        ("OPENAI_API_KEY", "sk-oa"),
        ("OPENAI_BASE_URL", "https://openai-proxy.internal/v1"),
        ("ANTHROPIC_API_KEY", "sk-ant"),
        ("HOSTED_VLLM_API_BASE", "http://10.0.0.7:8000/v1"),
    ];
    let loaded = load_in(yaml, &env).unwrap();
    let got: Vec<_> = loaded.config.deployments.iter().map(|d| (d.api_base.as_str(), d.api_key.as_deref())).collect();
    assert_eq!(
        got,
        [
            ("https://openai-proxy.internal/v1", Some("sk-oa")),
            ("https://api.anthropic.com", Some("sk-ant")),
            ("http://10.0.0.7:8000/v1", None),
            ("https://own.example/v1", Some("sk-own")),
        ]
    );
    // A variable that is no URL is named in the error (once, for both entries that read it).
    let errors =
        load_in(yaml, &[("OPENAI_BASE_URL", "not a url"), ("HOSTED_VLLM_API_BASE", "http://h:1/v1")]).unwrap_err();
    assert_eq!(
        errors,
        ["OPENAI_BASE_URL (environment): expected an http:// or https:// URL with a host, got \"not a url\""]
    );
}
