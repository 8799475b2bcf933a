//! The provider families Pointwork forwards to, named by LiteLLM's model prefix.

/// A provider family. Every provider in this enum speaks the OpenAI chat-completions wire format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Provider {
    OpenAi,
    HostedVllm,
    OpenRouter,
    Groq,
    TogetherAi,
    DeepSeek,
    Mistral,
    FireworksAi,
}

impl Provider {
    pub const ALL: [Provider; 8] = [
        Provider::OpenAi,
        Provider::HostedVllm,
        Provider::OpenRouter,
        Provider::Groq,
        Provider::TogetherAi,
        Provider::DeepSeek,
        Provider::Mistral,
        Provider::FireworksAi,
    ];

    /// The prefix in `litellm_params.model` (`openai/gpt-4o-mini` → `openai`).
    pub fn prefix(self) -> &'static str {
        match self {
            Provider::OpenAi => "openai",
            Provider::HostedVllm => "hosted_vllm",
            Provider::OpenRouter => "openrouter",
            Provider::Groq => "groq",
            Provider::TogetherAi => "together_ai",
            Provider::DeepSeek => "deepseek",
            Provider::Mistral => "mistral",
            Provider::FireworksAi => "fireworks_ai",
        }
    }

    pub fn from_prefix(prefix: &str) -> Option<Provider> {
        Provider::ALL.into_iter().find(|p| p.prefix() == prefix)
    }

    /// The base URL used when a deployment gives no `api_base`. `hosted_vllm` has none:
    /// a self-hosted server must say where it is.
    pub fn default_api_base(self) -> Option<&'static str> {
        match self {
            Provider::OpenAi => Some("https://api.openai.com/v1"),
            Provider::HostedVllm => None,
            Provider::OpenRouter => Some("https://openrouter.ai/api/v1"),
            Provider::Groq => Some("https://api.groq.com/openai/v1"),
            Provider::TogetherAi => Some("https://api.together.xyz/v1"),
            Provider::DeepSeek => Some("https://api.deepseek.com/v1"),
            Provider::Mistral => Some("https://api.mistral.ai/v1"),
            Provider::FireworksAi => Some("https://api.fireworks.ai/inference/v1"),
        }
    }

    /// Whether the provider serves `/embeddings`: OpenAI, hosted vLLM, Together AI, Mistral and
    /// Fireworks AI do; Groq, DeepSeek and OpenRouter have no embeddings endpoint.
    pub fn serves_embeddings(self) -> bool {
        !matches!(self, Provider::Groq | Provider::DeepSeek | Provider::OpenRouter)
    }

    /// Whether the provider serves `route` (the route-capability filter reads this; the table
    /// is in `docs/routing.md`). Every provider here serves chat completions.
    pub fn serves(self, route: crate::RouteKind) -> bool {
        match route {
            crate::RouteKind::ChatCompletions => true,
            crate::RouteKind::Embeddings => self.serves_embeddings(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_round_trip() {
        for p in Provider::ALL {
            assert_eq!(Provider::from_prefix(p.prefix()), Some(p));
        }
        assert_eq!(Provider::from_prefix("anthropic"), None);
    }

    #[test]
    fn the_capability_table() {
        use crate::RouteKind;
        let embeddings: Vec<&str> =
            Provider::ALL.into_iter().filter(|p| p.serves(RouteKind::Embeddings)).map(Provider::prefix).collect();
        assert_eq!(embeddings, ["openai", "hosted_vllm", "together_ai", "mistral", "fireworks_ai"]);
        assert!(Provider::ALL.into_iter().all(|p| p.serves(RouteKind::ChatCompletions)));
    }
}
