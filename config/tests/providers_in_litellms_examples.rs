//! LiteLLM's own example configs (as shipped in the litellm 1.110.2 package, copied to
//! `tests/fixtures/litellm_1_110_2/`) for the providers Pointwork serves besides OpenAI-compatible
//! ones and Anthropic: every entry of a provider Pointwork serves is served, with the
//! provider, upstream model, base URL and credential LiteLLM would give it.

mod common;
#[path = "common/providers.rs"]
mod providers;

use pointwork_config::load_str;
use pointwork_core::Provider;
use providers::*;

/// LiteLLM 1.110.2's own example configs (site-packages/litellm/proxy/proxy_config.yaml,
/// proxy/example_config_yaml/websearch_interception_config.yaml): Bedrock beside OpenAI, with
/// sections Pointwork does not run, each named in a warning.
#[test]
fn litellms_shipped_bedrock_examples() {
    let env = [("OPENAI_API_KEY", "sk-oa"), ("LITELLM_MASTER_KEY", "sk-1234"), AWS_ENV[0], AWS_ENV[1]];
    let loaded = load_with(include_str!("fixtures/litellm_1_110_2/proxy_config.yaml"), &env);
    assert_eq!(loaded.config.deployments.len(), 7);
    let d = named(&loaded, "bedrock-claude-opus-4.5");
    assert_eq!(
        target(d),
        (
            Provider::Bedrock,
            "us.anthropic.claude-opus-4-5-20251101-v1:0",
            "https://bedrock-runtime.us-east-1.amazonaws.com"
        )
    );
    assert_sigv4(d, "us-east-1");
    assert_eq!(named(&loaded, "bedrock-nova-premier").upstream_model, "us.amazon.nova-premier-v1:0");
    assert_eq!(named(&loaded, "gpt-4o").api_key.as_deref(), Some("sk-oa"));
    assert_eq!(
        warnings(&loaded),
        ["litellm_settings.mcp_semantic_tool_filter: ignored: not implemented by Pointwork yet"]
    );
    // Its MCP servers (a stdio one and an http one) are read.
    let servers: Vec<&str> = loaded.config.mcp.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(servers, ["wikipedia", "deepwiki"]);

    let loaded = load_with(include_str!("fixtures/litellm_1_110_2/websearch_interception_config.yaml"), &AWS_ENV);
    let d = only(&loaded);
    assert_eq!(d.upstream_model, "us.anthropic.claude-haiku-4-5-20251001-v1:0");
    assert_sigv4(d, "eu-west-3");
}

/// LiteLLM 1.110.2's site-packages/litellm/proxy/dev_config.yaml: Anthropic, Bedrock (invoke
/// and converse), Claude and Gemini on Vertex AI (location `global`, the project from
/// VERTEXAI_PROJECT, the credentials from an environment variable), Claude on Azure AI
/// Foundry, OpenAI; one Voyage embedding entry, a provider Pointwork does not serve.
#[test]
fn litellms_dev_config_serves_every_provider_it_uses() {
    let env = [
        ("ANTHROPIC_API_KEY", "sk-ant"),
        ("VOYAGE_API_KEY", "pa-voyage"),
        ("VERTEXAI_PROJECT", "my-vertex-project"),
        ("GEMINI_CLAUDE_CODE_VERTEX_CREDENTIALS", SERVICE_ACCOUNT),
        ("GOOGLE_APPLICATION_CREDENTIALS", SERVICE_ACCOUNT),
        ("AZURE_AI_API_BASE", "https://my-resource.services.ai.azure.com"),
        ("AZURE_AI_API_KEY", "az-ai-key"),
        ("OPENAI_API_KEY", "sk-oa"),
        ("LITELLM_MASTER_KEY", "sk-1234"),
        ("E2B_API_KEY", "e2b"),
        AWS_ENV[0],
        AWS_ENV[1],
    ];
    let yaml = include_str!("fixtures/litellm_1_110_2/dev_config.yaml");
    let loaded =
        load_str(yaml, &common::fixtures(), &|n: &str| env.iter().find(|(k, _)| *k == n).map(|(_, v)| v.to_string()))
            .unwrap_or_else(|e| panic!("{e}"));
    let left: Vec<_> = loaded.config.left_out.iter().map(|l| l.model.as_str()).collect();
    assert_eq!(left, ["voyage/voyage-4-large"], "only the provider Pointwork does not serve");
    assert_eq!(loaded.config.deployments.len(), 39);

    let d = named(&loaded, "bedrock-converse-opus-4-8");
    assert_eq!(
        target(d),
        (Provider::Bedrock, "global.anthropic.claude-opus-4-8", "https://bedrock-runtime.us-east-1.amazonaws.com")
    );
    assert_sigv4(d, "us-east-1");
    let d = named(&loaded, "vertex-sonnet-4-5");
    assert_eq!(
        target(d),
        (
            Provider::VertexAi,
            "claude-sonnet-4-5@20250929",
            "https://aiplatform.googleapis.com/v1/projects/my-vertex-project/locations/global/publishers/anthropic"
        )
    );
    assert_service_account(d);
    let d = named(&loaded, "gemini-claude-code");
    assert_eq!(
        target(d),
        (
            Provider::VertexAi,
            "gemini-2.5-pro",
            "https://aiplatform.googleapis.com/v1/projects/my-vertex-project/locations/global/publishers/google"
        )
    );
    assert_service_account(d);
    assert_eq!(d.extra_body.len(), 1, "extra_body.labels");
    let d = named(&loaded, "anthropic-opus-4-8");
    assert_eq!((d.provider, d.api_key.as_deref()), (Provider::Anthropic, Some("sk-ant")));
    let d = named(&loaded, "azure-opus-4-8");
    assert_eq!((d.provider, d.upstream_model.as_str()), (Provider::AzureAi, "claude-opus-4-8"));
    assert_eq!(d.api_key.as_deref(), Some("az-ai-key"));
}

/// LiteLLM 1.110.2's site-packages/litellm/proxy/wildcard_config.yaml: one wildcard per
/// provider.
#[test]
fn litellms_wildcard_config_serves_the_providers_wildcards() {
    let env = [
        ("ANTHROPIC_API_KEY", "sk-ant"),
        ("VERTEXAI_PROJECT", "my-vertex-project"),
        ("GOOGLE_APPLICATION_CREDENTIALS", SERVICE_ACCOUNT),
        ("AZURE_AI_API_BASE", "https://my-resource.services.ai.azure.com"),
        ("AZURE_AI_API_KEY", "az-ai-key"),
        ("AZURE_API_BASE", "https://my-endpoint.openai.azure.com/"),
        ("AZURE_API_KEY", "az-key"),
        ("GEMINI_API_KEY", "AIza-test"),
        ("OPENAI_API_KEY", "sk-oa"),
        ("LITELLM_MASTER_KEY", "sk-1234"),
        AWS_ENV[0],
        AWS_ENV[1],
    ];
    let loaded = load_str(include_str!("fixtures/litellm_1_110_2/wildcard_config.yaml"), &common::fixtures(), &|n| {
        env.iter().find(|(k, _)| *k == n).map(|(_, v)| v.to_string())
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let d = named(&loaded, "bedrock/*");
    assert_eq!(d.api_base, "https://bedrock-runtime.us-east-1.amazonaws.com");
    assert_sigv4(d, "us-east-1");
    let d = named(&loaded, "azure/*");
    assert_eq!((d.api_base.as_str(), d.api_key.as_deref()), ("https://my-endpoint.openai.azure.com", Some("az-key")));
    assert_eq!(named(&loaded, "gemini/*").api_key.as_deref(), Some("AIza-test"));
    assert_eq!(named(&loaded, "azure_ai/*").api_base, "https://my-resource.services.ai.azure.com/models");
    // `vertex_ai/*`: see the ignored test below.
    assert_eq!(loaded.config.deployments.len() + loaded.config.left_out.len(), 7);
}

#[test]
#[ignore = "gap: the vertex_ai/* wildcard is left out (\"models other than gemini-* and claude-*\") though it serves vertex_ai/gemini-… requests in LiteLLM"]
fn the_vertex_ai_wildcard_is_served() {
    let loaded = load_with(
        "model_list:
  - model_name: \"vertex_ai/*\"
    litellm_params:
      model: \"vertex_ai/*\"
      vertex_project: os.environ/VERTEXAI_PROJECT
      vertex_location: global
",
        &[("VERTEXAI_PROJECT", "my-vertex-project"), ("GOOGLE_APPLICATION_CREDENTIALS", SERVICE_ACCOUNT)],
    );
    assert_service_account(only(&loaded));
}
