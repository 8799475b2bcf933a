//! `litellm_params.model`: `provider/upstream-model`, e.g. `openrouter/anthropic/claude-3.5-sonnet`
//! → provider `openrouter`, upstream `anthropic/claude-3.5-sonnet` (everything after the FIRST
//! slash). A bare name (`gpt-4o`, `claude-sonnet-4-5`, `anthropic.claude-3-sonnet-…`) gets its
//! provider as LiteLLM gives it one: from the model cost map's `litellm_provider`, then from the
//! shape of the name.

use pointwork_core::Provider;

use crate::cost_map::CostMap;
use crate::litellm_providers::{is_litellm_provider, provider_of_map_entry};

/// The deployment a `litellm_params.model` describes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ModelRef {
    /// A provider Pointwork forwards to.
    Served { provider: Provider, upstream_model: String },
    /// A provider LiteLLM knows that Pointwork does not serve yet (by LiteLLM's name).
    NotServed { provider: String },
    /// No provider Pointwork can place: an unknown prefix, or a bare name neither the cost map
    /// nor its shape names one. Why, in a sentence.
    Unplaced(String),
}

/// Reads `model`; `map` names the providers of bare names.
pub(crate) fn parse_model_ref(model: &str, map: &CostMap) -> Result<ModelRef, String> {
    let model = model.trim();
    if let Some((prefix, upstream)) = model.split_once('/') {
        if let Some(provider) = Provider::from_prefix(prefix) {
            if upstream.trim().is_empty() {
                return Err(format!("missing the model name after \"{prefix}/\""));
            }
            return Ok(served(provider, upstream.to_string()));
        }
        if is_litellm_provider(prefix) {
            return Ok(ModelRef::NotServed { provider: prefix.to_string() });
        }
    }
    match provider_of_bare_name(model, map) {
        Some(provider) => Ok(match Provider::from_prefix(provider) {
            Some(provider) => served(provider, model.to_string()),
            None => ModelRef::NotServed { provider: provider.to_string() },
        }),
        None => Ok(ModelRef::Unplaced(match model.split_once('/') {
            Some((prefix, _)) => format!("unknown provider {prefix:?} (providers Pointwork serves: {})", served_list()),
            None => format!(
                "{model:?} names no provider and LiteLLM's model cost map does not know it; write it as provider/model (providers Pointwork serves: {})",
                served_list()
            ),
        })),
    }
}

/// A served provider's model; Vertex AI serves its Gemini and Anthropic models here, not yet
/// the rest of its Model Garden.
fn served(provider: Provider, upstream_model: String) -> ModelRef {
    if provider == Provider::VertexAi && !["gemini", "claude"].iter().any(|p| upstream_model.starts_with(p)) {
        return ModelRef::NotServed { provider: "vertex_ai (models other than gemini-* and claude-*)".to_string() };
    }
    ModelRef::Served { provider, upstream_model }
}

/// The provider of a model written without one: the cost map's, else the shape of the name.
fn provider_of_bare_name<'m>(model: &str, map: &'m CostMap) -> Option<&'m str> {
    if let Some(listed) = map.provider_of(model) {
        return Some(provider_of_map_entry(listed));
    }
    pointwork_core::pass_through::provider_by_shape(model)
}

fn served_list() -> String {
    let named: Vec<&str> = Provider::named().iter().map(|p| p.prefix()).collect();
    format!("{} and LiteLLM's OpenAI-compatible providers listed in docs/configuration.md", named.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost_map::bundled;

    fn served(model: &str) -> (Provider, String) {
        match parse_model_ref(model, bundled()) {
            Ok(ModelRef::Served { provider, upstream_model }) => (provider, upstream_model),
            other => panic!("{model}: {other:?}"),
        }
    }

    fn not_served(model: &str) -> String {
        match parse_model_ref(model, bundled()) {
            Ok(ModelRef::NotServed { provider }) => provider,
            other => panic!("{model}: {other:?}"),
        }
    }

    #[test]
    fn the_upstream_model_is_everything_after_the_first_slash() {
        assert_eq!(
            served("openrouter/anthropic/claude-3.5-sonnet"),
            (Provider::OpenRouter, "anthropic/claude-3.5-sonnet".into())
        );
        assert_eq!(
            served("hosted_vllm/meta-llama/Llama-3.1-8B"),
            (Provider::HostedVllm, "meta-llama/Llama-3.1-8B".into())
        );
        assert_eq!(served("groq/llama3-8b-8192"), (Provider::Groq, "llama3-8b-8192".into()));
    }

    #[test]
    fn bare_names_take_the_provider_the_cost_map_gives_them() {
        assert_eq!(served("gpt-4o"), (Provider::OpenAi, "gpt-4o".into()));
        assert_eq!(served("text-embedding-3-small"), (Provider::OpenAi, "text-embedding-3-small".into()));
        assert_eq!(served("claude-sonnet-4-5"), (Provider::Anthropic, "claude-sonnet-4-5".into()));
        assert_eq!(served("anthropic.claude-3-5-sonnet-20240620-v1:0").0, Provider::Bedrock);
        assert_eq!(served("anthropic.claude-3-7-sonnet-20250219-v1:0").0, Provider::Bedrock, "bedrock_converse");
        assert_eq!(served("gemini-2.5-pro"), (Provider::VertexAi, "gemini-2.5-pro".into()));
    }

    #[test]
    fn bare_names_the_map_does_not_know_go_by_their_shape() {
        // Older names LiteLLM's current map dropped.
        assert_eq!(served("anthropic.claude-3-sonnet-20240229-v1:0").0, Provider::Bedrock);
        assert_eq!(served("us.anthropic.claude-3-haiku-20240307-v1:0").0, Provider::Bedrock);
        assert_eq!(served("claude-3-opus-20240229"), (Provider::Anthropic, "claude-3-opus-20240229".into()));
        assert_eq!(served("o3-mini-2099"), (Provider::OpenAi, "o3-mini-2099".into()));
    }

    #[test]
    fn openai_compatible_providers_come_from_the_table() {
        let (provider, model) = served("cerebras/llama3.1-8b");
        assert_eq!((provider.prefix(), model.as_str()), ("cerebras", "llama3.1-8b"));
        assert_eq!(provider.default_api_base(), Some("https://api.cerebras.ai/v1"));
        assert_eq!(served("zai/glm-4.6").0.default_api_base(), Some("https://api.z.ai/api/paas/v4"));
        assert_eq!(served("xinference/qwen2").0.default_api_base(), Some("http://127.0.0.1:9997/v1"));
        assert_eq!(served("nano-gpt/gpt-5").0.prefix(), "nano-gpt");
    }

    #[test]
    fn known_providers_not_served_yet_are_named() {
        assert_eq!(served("anthropic/claude-3-opus"), (Provider::Anthropic, "claude-3-opus".into()));
        assert_eq!(not_served("sagemaker/my-endpoint"), "sagemaker");
        assert_eq!(
            served("bedrock/converse/us.amazon.nova-pro-v1:0"),
            (Provider::Bedrock, "converse/us.amazon.nova-pro-v1:0".into())
        );
    }

    #[test]
    fn unknown_names_and_providers_are_unplaced() {
        let served =
            "openai, hosted_vllm, openrouter, groq, together_ai, deepseek, mistral, codestral, fireworks_ai, xai, anthropic, azure, azure_ai, ollama, ollama_chat, huggingface, cohere, cohere_chat, gemini, vertex_ai, bedrock and LiteLLM's OpenAI-compatible providers listed in docs/configuration.md";
        assert_eq!(
            parse_model_ref("my-finetune", bundled()),
            Ok(ModelRef::Unplaced(format!("\"my-finetune\" names no provider and LiteLLM's model cost map does not know it; write it as provider/model (providers Pointwork serves: {served})")))
        );
        assert_eq!(
            parse_model_ref("opneai/gpt-4o", bundled()),
            Ok(ModelRef::Unplaced(format!("unknown provider \"opneai\" (providers Pointwork serves: {served})")))
        );
        assert_eq!(parse_model_ref("openai/", bundled()).unwrap_err(), "missing the model name after \"openai/\"");
    }
}
