//! The provider families Pointwork forwards to, named by LiteLLM's model prefix.

/// A wire format: the API surface a client calls, and the one a provider speaks. Where the two
/// differ the gateway translates (request, response, stream events).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// OpenAI's chat completions (and embeddings).
    OpenAiChat,
    /// Anthropic's Messages API.
    AnthropicMessages,
}

/// A provider family. Anthropic speaks its Messages API; every other one the OpenAI
/// chat-completions wire format.
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
    Anthropic,
    /// Azure OpenAI: OpenAI's wire format under a resource endpoint, the deployment in the path
    /// and an `api-version` query ([`Provider::upstream_path`] is the part after the deployment).
    Azure,
}

impl Provider {
    pub const ALL: [Provider; 10] = [
        Provider::OpenAi,
        Provider::HostedVllm,
        Provider::OpenRouter,
        Provider::Groq,
        Provider::TogetherAi,
        Provider::DeepSeek,
        Provider::Mistral,
        Provider::FireworksAi,
        Provider::Anthropic,
        Provider::Azure,
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
            Provider::Anthropic => "anthropic",
            Provider::Azure => "azure",
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
            // The server root: the Messages API is `/v1/messages` under it.
            Provider::Anthropic => Some("https://api.anthropic.com"),
            // Each resource has its own endpoint (`https://NAME.openai.azure.com`).
            Provider::Azure => None,
        }
    }

    /// The wire format the provider speaks.
    pub fn dialect(self) -> Dialect {
        match self {
            Provider::Anthropic => Dialect::AnthropicMessages,
            _ => Dialect::OpenAiChat,
        }
    }

    /// The path, under the deployment's `api_base`, that serves `route`: a chat request to
    /// Anthropic goes to its Messages API, a Messages request to an OpenAI-compatible provider
    /// to its chat completions (both translated).
    pub fn upstream_path(self, route: crate::RouteKind) -> &'static str {
        match (self.dialect(), route) {
            (Dialect::AnthropicMessages, _) => "/v1/messages",
            (Dialect::OpenAiChat, crate::RouteKind::Embeddings) => "/embeddings",
            (Dialect::OpenAiChat, _) => "/chat/completions",
        }
    }

    /// Whether the provider serves `/embeddings`: OpenAI, hosted vLLM, Together AI, Mistral,
    /// Fireworks AI and Azure do; Groq, DeepSeek, OpenRouter and Anthropic have no embeddings endpoint.
    pub fn serves_embeddings(self) -> bool {
        !matches!(self, Provider::Groq | Provider::DeepSeek | Provider::OpenRouter | Provider::Anthropic)
    }

    /// Whether the provider serves `route` (the route-capability filter reads this; the table
    /// is in `docs/routing.md`). Every provider here serves chat completions and Messages, in
    /// its own dialect or translated ([`Provider::translates`]).
    pub fn serves(self, route: crate::RouteKind) -> bool {
        match route {
            crate::RouteKind::ChatCompletions | crate::RouteKind::Messages => true,
            crate::RouteKind::Embeddings => self.serves_embeddings(),
        }
    }

    /// Whether serving `route` takes a translation (the provider speaks another dialect).
    pub fn translates(self, route: crate::RouteKind) -> bool {
        route.dialect() != self.dialect()
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
        assert_eq!(Provider::from_prefix("bedrock"), None);
    }

    #[test]
    fn dialects_decide_the_path_and_whether_to_translate() {
        use crate::RouteKind;
        assert_eq!(Provider::Anthropic.upstream_path(RouteKind::Messages), "/v1/messages");
        assert_eq!(Provider::Anthropic.upstream_path(RouteKind::ChatCompletions), "/v1/messages");
        assert_eq!(Provider::OpenAi.upstream_path(RouteKind::Messages), "/chat/completions");
        assert_eq!(Provider::OpenAi.upstream_path(RouteKind::Embeddings), "/embeddings");
        assert!(!Provider::Anthropic.translates(RouteKind::Messages));
        assert!(Provider::Anthropic.translates(RouteKind::ChatCompletions));
        assert!(Provider::Groq.translates(RouteKind::Messages));
        assert!(!Provider::Groq.translates(RouteKind::ChatCompletions));
    }

    #[test]
    fn the_capability_table() {
        use crate::RouteKind;
        let embeddings: Vec<&str> =
            Provider::ALL.into_iter().filter(|p| p.serves(RouteKind::Embeddings)).map(Provider::prefix).collect();
        assert_eq!(embeddings, ["openai", "hosted_vllm", "together_ai", "mistral", "fireworks_ai", "azure"]);
        assert!(Provider::ALL.into_iter().all(|p| p.serves(RouteKind::ChatCompletions)));
    }
}
