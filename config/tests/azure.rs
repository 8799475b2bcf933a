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
        ["model_list[0].litellm_params.api_key: required for azure: api_key (or AZURE_OPENAI_API_KEY / AZURE_API_KEY), azure_ad_token (or AZURE_AD_TOKEN), or Entra ID client credentials (tenant_id, client_id, client_secret, or AZURE_TENANT_ID, AZURE_CLIENT_ID, AZURE_CLIENT_SECRET)"]
    );
    assert_eq!(
        errors("model_list:\n  - {model_name: gpt, litellm_params: {model: azure/gpt-4o, api_base: \"https://r.openai.azure.com\", api_key: k, api_version: \"2024-10-21&x=1\"}}\n"),
        [r#"model_list[0].litellm_params.api_version: "2024-10-21&x=1" is not an api-version (e.g. 2024-10-21 or 2025-02-01-preview)"#]
    );
    assert_eq!(
        errors("model_list:\n  - {model_name: gpt, litellm_params: {model: azure/gpt-4o, api_base: \"https://r.openai.azure.com\", tenant_id: t, client_secret: s}}\n"),
        ["model_list[0].litellm_params.tenant_id: Entra ID client credentials need client_id too"]
    );
    assert_eq!(
        errors("environment_variables: {AZURE_TENANT_ID: t, AZURE_CLIENT_ID: c}\nmodel_list:\n  - {model_name: gpt, litellm_params: {model: azure/gpt-4o, api_base: \"https://r.openai.azure.com\"}}\n"),
        ["AZURE_TENANT_ID (environment): Entra ID client credentials need AZURE_CLIENT_SECRET too"]
    );
}

#[test]
fn azure_keys_on_another_provider_are_ignored_with_a_warning() {
    assert_eq!(
        warnings("model_list:\n  - {model_name: gpt, litellm_params: {model: openai/gpt-4o, api_key: k, api_version: \"2024-10-21\"}}\n"),
        ["model_list[0].litellm_params.api_version: ignored: only azure deployments read it (this one is openai)"]
    );
}

#[test]
fn entra_id_client_credentials_make_a_token_the_gateway_fetches() {
    use pointwork_core::upstream_auth::EntraClient;
    use pointwork_core::UpstreamAuth;
    let d = deployment(
        "model_list:
  - model_name: gpt
    litellm_params:
      model: azure/gpt-4o
      api_base: https://r.openai.azure.com
      tenant_id: 72f988bf-86f1-41af-91ab-2d7cd011db47
      client_id: 0a1b2c3d-app
      client_secret: os.environ/AZURE_CLIENT_SECRET
environment_variables: {AZURE_CLIENT_SECRET: s3cret-value}
",
    );
    let expected = EntraClient {
        authority_host: "https://login.microsoftonline.com".into(),
        tenant_id: "72f988bf-86f1-41af-91ab-2d7cd011db47".into(),
        client_id: "0a1b2c3d-app".into(),
        client_secret: "s3cret-value".into(),
        scope: "https://cognitiveservices.azure.com/.default".into(),
    };
    assert_eq!(d.auth.as_deref(), Some(&UpstreamAuth::EntraClientCredentials(expected.clone())));
    assert_eq!((d.api_key, d.azure_ad_token), (None, None));
    // All three from LiteLLM's environment variables, the authority host and scope overridden.
    let d = deployment(
        "environment_variables: {AZURE_TENANT_ID: t, AZURE_CLIENT_ID: c, AZURE_CLIENT_SECRET: s, AZURE_AUTHORITY_HOST: \"http://127.0.0.1:9/\"}
model_list:
  - {model_name: gpt, litellm_params: {model: azure/gpt-4o, api_base: \"https://r.openai.azure.com\", azure_scope: \"api://x/.default\"}}
",
    );
    let Some(UpstreamAuth::EntraClientCredentials(client)) = d.auth.as_deref() else { panic!("{:?}", d.auth) };
    assert_eq!(
        (client.authority_host.as_str(), client.tenant_id.as_str(), client.scope.as_str()),
        ("http://127.0.0.1:9", "t", "api://x/.default")
    );
    // A key wins over the client credentials, as in LiteLLM.
    let d = deployment(
        "model_list:\n  - {model_name: gpt, litellm_params: {model: azure/gpt-4o, api_base: \"https://r.openai.azure.com\", api_key: k, tenant_id: t, client_id: c, client_secret: s}}\n",
    );
    assert_eq!((d.api_key.as_deref(), d.auth), (Some("k"), None));
}

#[test]
fn an_azure_ai_deployment_as_litellms_docs_write_it() {
    let d = deployment(
        "model_list:
  - model_name: mistral-large
    litellm_params:
      model: azure_ai/mistral-large-2407
      api_base: https://my-project.services.ai.azure.com
      api_key: os.environ/AZURE_AI_API_KEY
environment_variables: {AZURE_AI_API_KEY: ai-key}
",
    );
    assert_eq!(d.provider, Provider::AzureAi);
    assert_eq!(d.api_base, "https://my-project.services.ai.azure.com/models");
    assert_eq!((d.api_key.as_deref(), d.api_version), (Some("ai-key"), None));
    // A serverless endpoint takes the base as written; the environment fills base and key.
    let d = deployment(
        "environment_variables: {AZURE_AI_API_BASE: \"https://Mistral-serverless.eastus2.inference.ai.azure.com/v1\", AZURE_AI_API_KEY: k}
model_list:
  - {model_name: m, litellm_params: {model: azure_ai/Mistral-large, api_version: \"2024-05-01-preview\"}}
",
    );
    assert_eq!(d.api_base, "https://Mistral-serverless.eastus2.inference.ai.azure.com/v1");
    assert_eq!(d.api_version.as_deref(), Some("2024-05-01-preview"));
    assert_eq!(
        errors("model_list:\n  - {model_name: m, litellm_params: {model: azure_ai/x, api_key: k}}\n"),
        ["model_list[0].litellm_params.api_base: required for azure_ai: the endpoint (https://NAME.services.ai.azure.com), or set AZURE_AI_API_BASE"]
    );
}
