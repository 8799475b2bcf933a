//! Azure OpenAI deployments (`azure/<deployment>`) as LiteLLM reads them: the resource endpoint,
//! `api_version`, the key or Entra ID token, and LiteLLM's environment variables for each.

mod common;

use common::{errors, load};
use pointwork_core::{Deployment, Provider};

fn deployment(yaml: &str) -> Deployment {
    let loaded = load(yaml).unwrap_or_else(|e| panic!("{e}"));
    assert!(loaded.config.left_out.is_empty(), "{:?}", loaded.config.left_out);
    loaded.config.deployments.into_iter().next().unwrap()
}

fn warnings(yaml: &str) -> Vec<String> {
    load(yaml).unwrap_or_else(|e| panic!("{e}")).warnings.iter().map(|w| w.to_string()).collect()
}

#[test]
fn an_azure_deployment_as_litellms_docs_write_it() {
    let d = deployment(
        "model_list:
  - model_name: gpt-4o
    litellm_params:
      model: azure/my-gpt-4o-deployment
      api_base: https://my-resource.openai.azure.com/
      api_version: \"2024-10-21\"
      api_key: sk-azure-1234
",
    );
    assert_eq!(d.provider, Provider::Azure);
    assert_eq!(d.upstream_model, "my-gpt-4o-deployment");
    assert_eq!(d.api_base, "https://my-resource.openai.azure.com");
    assert_eq!(d.api_version.as_deref(), Some("2024-10-21"));
    assert_eq!(d.api_key.as_deref(), Some("sk-azure-1234"));
    assert_eq!(d.azure_ad_token, None);
}

#[test]
fn litellms_environment_variables_fill_what_the_entry_leaves_out() {
    let d = deployment(
        "environment_variables:
  AZURE_API_BASE: https://from-env.openai.azure.com/openai
  AZURE_API_VERSION: 2025-01-01-preview
  AZURE_API_KEY: az-env-key
model_list:
  - {model_name: gpt, litellm_params: {model: azure/gpt-4o}}
",
    );
    assert_eq!(d.api_base, "https://from-env.openai.azure.com");
    assert_eq!(d.api_version.as_deref(), Some("2025-01-01-preview"));
    assert_eq!(d.api_key.as_deref(), Some("az-env-key"));
    // AZURE_OPENAI_API_KEY first, as in LiteLLM; without any version, LiteLLM's default.
    let d = deployment(
        "environment_variables: {AZURE_OPENAI_API_KEY: first, AZURE_API_KEY: second}
model_list:
  - {model_name: gpt, litellm_params: {model: azure/gpt-4o, api_base: \"https://r.openai.azure.com\"}}
",
    );
    assert_eq!(d.api_key.as_deref(), Some("first"));
    assert_eq!(d.api_version.as_deref(), Some(pointwork_config::AZURE_DEFAULT_API_VERSION));
}

#[test]
fn an_entra_id_token_serves_without_a_key() {
    let d = deployment(
        "model_list:
  - {model_name: gpt, litellm_params: {model: azure/gpt-4o, api_base: \"https://r.openai.azure.com\", azure_ad_token: eyJ0eXAi.token.sig}}
",
    );
    assert_eq!((d.api_key, d.azure_ad_token.as_deref()), (None, Some("eyJ0eXAi.token.sig")));
    let d = deployment(
        "environment_variables: {AZURE_AD_TOKEN: from-env}
model_list:
  - {model_name: gpt, litellm_params: {model: azure/gpt-4o, api_base: \"https://r.openai.azure.com\"}}
",
    );
    assert_eq!(d.azure_ad_token.as_deref(), Some("from-env"));
}

#[test]
fn what_is_missing_or_wrong_is_named_by_its_key_path() {
    assert_eq!(
        errors("model_list:\n  - {model_name: gpt, litellm_params: {model: azure/gpt-4o, api_key: k}}\n"),
        ["model_list[0].litellm_params.api_base: required for azure: the resource endpoint (https://NAME.openai.azure.com), or set AZURE_API_BASE"]
    );
    assert_eq!(
        errors("model_list:\n  - {model_name: gpt, litellm_params: {model: azure/gpt-4o, api_base: \"https://r.openai.azure.com\"}}\n"),
        ["model_list[0].litellm_params.api_key: required for azure: api_key (or AZURE_OPENAI_API_KEY / AZURE_API_KEY), or azure_ad_token (or AZURE_AD_TOKEN)"]
    );
    assert_eq!(
        errors("model_list:\n  - {model_name: gpt, litellm_params: {model: azure/gpt-4o, api_base: \"https://r.openai.azure.com\", api_key: k, api_version: \"2024-10-21&x=1\"}}\n"),
        [r#"model_list[0].litellm_params.api_version: "2024-10-21&x=1" is not an api-version (e.g. 2024-10-21 or 2025-02-01-preview)"#]
    );
    assert_eq!(
        errors("model_list:\n  - {model_name: gpt, litellm_params: {model: azure/gpt-4o, api_base: \"https://r.openai.azure.com\", tenant_id: t, client_id: c, client_secret: s}}\n"),
        ["model_list[0].litellm_params.tenant_id: Microsoft Entra ID client credentials (tenant_id, client_id, client_secret) are not supported yet; use api_key or azure_ad_token"]
    );
}

#[test]
fn azure_keys_on_another_provider_are_ignored_with_a_warning() {
    assert_eq!(
        warnings("model_list:\n  - {model_name: gpt, litellm_params: {model: openai/gpt-4o, api_key: k, api_version: \"2024-10-21\"}}\n"),
        ["model_list[0].litellm_params.api_version: ignored: only azure deployments read it (this one is openai)"]
    );
}
