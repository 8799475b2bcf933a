//! The environment variables LiteLLM reads for a provider's key and base URL when a deployment
//! does not write them (litellm 1.110.2: `get_llm_provider`, each provider's config), first set
//! wins (the OpenAI-compatible providers of `pointwork_core::compatible`: their table's). Gemini's,
//! Azure's, Bedrock's and Vertex AI's credentials are read by their own modules.

use pointwork_core::Provider;

use crate::azure::lookup;
use crate::check::Checker;

/// A provider's environment variables: its key, then its base URL.
pub(crate) struct ProviderEnv {
    pub(crate) keys: &'static [&'static str],
    pub(crate) bases: &'static [&'static str],
}

pub(crate) fn provider_env(provider: Provider) -> ProviderEnv {
    let (keys, bases): (&[&str], &[&str]) = match provider {
        Provider::OpenAi => (&["OPENAI_API_KEY"], &["OPENAI_BASE_URL", "OPENAI_API_BASE"]),
        Provider::Anthropic => (&["ANTHROPIC_API_KEY"], &["ANTHROPIC_API_BASE", "ANTHROPIC_BASE_URL"]),
        Provider::OpenRouter => (&["OPENROUTER_API_KEY", "OR_API_KEY"], &["OPENROUTER_API_BASE"]),
        Provider::Groq => (&["GROQ_API_KEY"], &["GROQ_API_BASE"]),
        Provider::TogetherAi => (
            &["TOGETHER_API_KEY", "TOGETHER_AI_API_KEY", "TOGETHERAI_API_KEY", "TOGETHER_AI_TOKEN"],
            &["TOGETHER_AI_API_BASE"],
        ),
        Provider::DeepSeek => (&["DEEPSEEK_API_KEY"], &["DEEPSEEK_API_BASE"]),
        Provider::Mistral => (&["MISTRAL_API_KEY"], &["MISTRAL_API_BASE"]),
        Provider::Codestral => (&["CODESTRAL_API_KEY"], &["CODESTRAL_API_BASE"]),
        Provider::FireworksAi => {
            (&["FIREWORKS_API_KEY", "FIREWORKS_AI_API_KEY", "FIREWORKSAI_API_KEY"], &["FIREWORKS_API_BASE"])
        }
        Provider::Xai => (&["XAI_API_KEY"], &["XAI_API_BASE"]),
        Provider::HostedVllm => (&["HOSTED_VLLM_API_KEY"], &["HOSTED_VLLM_API_BASE"]),
        Provider::Ollama | Provider::OllamaChat => (&["OLLAMA_API_KEY"], &["OLLAMA_API_BASE"]),
        Provider::HuggingFace => (&["HF_TOKEN", "HUGGINGFACE_API_KEY"], &["HF_API_BASE", "HUGGINGFACE_API_BASE"]),
        Provider::Cohere | Provider::CohereChat => (&["COHERE_API_KEY", "CO_API_KEY"], &[]),
        Provider::Compatible(_) => provider.compatible().map_or((&[], &[]), |row| (row.key_env, row.base_env)),
        Provider::Gemini | Provider::Azure | Provider::AzureAi | Provider::VertexAi | Provider::Bedrock => (&[], &[]),
    };
    ProviderEnv { keys, bases }
}

impl ProviderEnv {
    /// The key from the environment, if one is set.
    pub(crate) fn key(&self, c: &Checker) -> Option<String> {
        self.keys.iter().find_map(|name| lookup(c, name))
    }

    /// The base URL from the environment, if one is set.
    pub(crate) fn base(&self, c: &Checker) -> Option<String> {
        self.bases.iter().find_map(|name| lookup(c, name))
    }
}
