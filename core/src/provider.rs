//! The provider families Pointwork forwards to, named by LiteLLM's model prefix.

use crate::compatible::{CompatibleProvider, COMPATIBLE};
use crate::facts::RouteKind;

/// A wire format: the API surface a client calls, and the one a provider speaks. Where the two
/// differ the gateway translates (request, response, stream events). Clients call the first two.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// OpenAI's chat completions (and embeddings).
    OpenAiChat,
    /// Anthropic's Messages API.
    AnthropicMessages,
    /// Google's `generateContent` (the Gemini API and Vertex AI's Gemini models).
    Gemini,
    /// AWS Bedrock's Converse API (and InvokeModel for embeddings).
    BedrockConverse,
    /// OpenAI's Responses API: a surface clients call. No deployment speaks it as its dialect;
    /// the gateway passes it through to a provider that serves `/responses` (OpenAI, Azure
    /// OpenAI) and translates it to chat completions for every other.
    OpenAiResponses,
}

impl Dialect {
    /// The wire format's name, as `pointwork check` lists it.
    pub fn name(self) -> &'static str {
        match self {
            Dialect::OpenAiChat => "openai-chat",
            Dialect::AnthropicMessages => "anthropic-messages",
            Dialect::Gemini => "gemini-generate-content",
            Dialect::BedrockConverse => "bedrock-converse",
            Dialect::OpenAiResponses => "openai-responses",
        }
    }
}

/// A provider family, named by LiteLLM's model prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Provider {
    OpenAi,
    HostedVllm,
    OpenRouter,
    Groq,
    TogetherAi,
    DeepSeek,
    Mistral,
    /// Mistral's Codestral endpoint (`codestral/…`, LiteLLM's second spelling of Mistral).
    Codestral,
    FireworksAi,
    /// xAI's API (`xai/grok-…`), OpenAI-compatible.
    Xai,
    Anthropic,
    /// Azure OpenAI: OpenAI's wire format under a resource endpoint, the deployment in the path
    /// and an `api-version` query.
    Azure,
    /// Azure AI Foundry's OpenAI-compatible model inference API.
    AzureAi,
    /// Ollama's OpenAI-compatible API (`ollama/…`).
    Ollama,
    /// Ollama again, as LiteLLM's `ollama_chat/…` names it: the same API here.
    OllamaChat,
    /// Hugging Face's inference router (OpenAI-compatible).
    HuggingFace,
    /// Cohere's OpenAI compatibility API (`cohere/…`).
    Cohere,
    /// Cohere as LiteLLM's `cohere_chat/…` names it: the same API here.
    CohereChat,
    /// Google AI Studio's Gemini API.
    Gemini,
    /// Google Cloud Vertex AI: Gemini models (`generateContent`) and Anthropic's models
    /// (the Messages API through `rawPredict`).
    VertexAi,
    /// AWS Bedrock: the Converse API, signed with SigV4.
    Bedrock,
    /// One of LiteLLM's other OpenAI-compatible providers (Cerebras, Perplexity, Z.AI, …): the
    /// index of its row in [`COMPATIBLE`].
    Compatible(u8),
}

/// The providers with a variant of their own, in [`Provider::ALL`]'s order.
const NAMED: [Provider; 21] = [
    Provider::OpenAi,
    Provider::HostedVllm,
    Provider::OpenRouter,
    Provider::Groq,
    Provider::TogetherAi,
    Provider::DeepSeek,
    Provider::Mistral,
    Provider::Codestral,
    Provider::FireworksAi,
    Provider::Xai,
    Provider::Anthropic,
    Provider::Azure,
    Provider::AzureAi,
    Provider::Ollama,
    Provider::OllamaChat,
    Provider::HuggingFace,
    Provider::Cohere,
    Provider::CohereChat,
    Provider::Gemini,
    Provider::VertexAi,
    Provider::Bedrock,
];

/// [`NAMED`], then one [`Provider::Compatible`] per row.
const fn all() -> [Provider; NAMED.len() + COMPATIBLE.len()] {
    let mut out = [Provider::OpenAi; NAMED.len() + COMPATIBLE.len()];
    let mut i = 0;
    while i < out.len() {
        out[i] = if i < NAMED.len() { NAMED[i] } else { Provider::Compatible((i - NAMED.len()) as u8) };
        i += 1;
    }
    out
}

impl Provider {
    /// Every provider: the named ones, then each row of [`COMPATIBLE`].
    pub const ALL: [Provider; NAMED.len() + COMPATIBLE.len()] = all();

    /// The provider's position in [`Provider::ALL`] (per-provider tables are indexed by it).
    pub fn index(self) -> usize {
        match self {
            Provider::Compatible(row) => NAMED.len() + usize::from(row),
            named => NAMED.iter().position(|&p| p == named).unwrap_or(0),
        }
    }

    /// The row of an OpenAI-compatible provider without a variant of its own.
    pub fn compatible(self) -> Option<&'static CompatibleProvider> {
        match self {
            Provider::Compatible(row) => COMPATIBLE.get(usize::from(row)),
            _ => None,
        }
    }

    /// The providers with a variant of their own (error messages list these by name).
    pub fn named() -> &'static [Provider] {
        &NAMED
    }

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
            Provider::Codestral => "codestral",
            Provider::FireworksAi => "fireworks_ai",
            Provider::Xai => "xai",
            Provider::Anthropic => "anthropic",
            Provider::Azure => "azure",
            Provider::AzureAi => "azure_ai",
            Provider::Ollama => "ollama",
            Provider::OllamaChat => "ollama_chat",
            Provider::HuggingFace => "huggingface",
            Provider::Cohere => "cohere",
            Provider::CohereChat => "cohere_chat",
            Provider::Gemini => "gemini",
            Provider::VertexAi => "vertex_ai",
            Provider::Bedrock => "bedrock",
            Provider::Compatible(row) => COMPATIBLE[usize::from(row)].name,
        }
    }

    pub fn from_prefix(prefix: &str) -> Option<Provider> {
        Provider::ALL.into_iter().find(|p| p.prefix() == prefix)
    }

    /// The base URL used when a deployment gives no `api_base`. `hosted_vllm`, Azure and Azure
    /// AI have none (each server or resource has its own); Vertex AI's and Bedrock's are made
    /// from the deployment's project, location or region (`pointwork-config` does).
    pub fn default_api_base(self) -> Option<&'static str> {
        match self {
            Provider::OpenAi => Some("https://api.openai.com/v1"),
            Provider::OpenRouter => Some("https://openrouter.ai/api/v1"),
            Provider::Groq => Some("https://api.groq.com/openai/v1"),
            Provider::TogetherAi => Some("https://api.together.xyz/v1"),
            Provider::DeepSeek => Some("https://api.deepseek.com/v1"),
            Provider::Mistral => Some("https://api.mistral.ai/v1"),
            Provider::Codestral => Some("https://codestral.mistral.ai/v1"),
            Provider::FireworksAi => Some("https://api.fireworks.ai/inference/v1"),
            Provider::Xai => Some("https://api.x.ai/v1"),
            // The server root: the Messages API is `/v1/messages` under it.
            Provider::Anthropic => Some("https://api.anthropic.com"),
            // The server root (LiteLLM's default); the OpenAI-compatible API is under `/v1`.
            Provider::Ollama | Provider::OllamaChat => Some("http://localhost:11434"),
            Provider::HuggingFace => Some("https://router.huggingface.co/v1"),
            Provider::Cohere | Provider::CohereChat => Some("https://api.cohere.ai/compatibility/v1"),
            Provider::Gemini => Some("https://generativelanguage.googleapis.com/v1beta"),
            Provider::Compatible(row) => COMPATIBLE[usize::from(row)].api_base,
            Provider::HostedVllm | Provider::Azure | Provider::AzureAi | Provider::VertexAi | Provider::Bedrock => None,
        }
    }

    /// The wire format the provider speaks for `upstream_model`: Vertex AI serves Anthropic's
    /// models (`claude-…`) with the Messages API and the rest with `generateContent`.
    pub fn dialect(self, upstream_model: &str) -> Dialect {
        match self {
            Provider::Anthropic => Dialect::AnthropicMessages,
            Provider::VertexAi if upstream_model.starts_with("claude") => Dialect::AnthropicMessages,
            Provider::Gemini | Provider::VertexAi => Dialect::Gemini,
            Provider::Bedrock => Dialect::BedrockConverse,
            _ => Dialect::OpenAiChat,
        }
    }

    /// The path, under the `api_base`, that serves `route` for an OpenAI-compatible or
    /// Anthropic deployment: a chat request to Anthropic goes to its Messages API, a Messages
    /// request to an OpenAI-compatible provider to its chat completions (both translated).
    /// Azure, Gemini, Vertex AI and Bedrock put the model in the path (the gateway's routes
    /// build theirs).
    pub fn upstream_path(self, route: RouteKind) -> &'static str {
        match (self.dialect(""), route) {
            (Dialect::AnthropicMessages, _) => "/v1/messages",
            (_, RouteKind::Embeddings) => "/embeddings",
            (_, RouteKind::Responses) if self.serves_responses() => "/responses",
            (_, _) => "/chat/completions",
        }
    }

    /// Whether the provider serves embeddings (`docs/routing.md`'s capability table): Groq,
    /// DeepSeek, OpenRouter, Codestral, xAI, Anthropic, Hugging Face's router and Vertex AI here
    /// do not, nor (not known for each) the OpenAI-compatible providers of the table.
    pub fn serves_embeddings(self) -> bool {
        !matches!(
            self,
            Provider::Compatible(_)
                | Provider::Groq
                | Provider::DeepSeek
                | Provider::OpenRouter
                | Provider::Codestral
                | Provider::Xai
                | Provider::Anthropic
                | Provider::HuggingFace
                | Provider::VertexAi
        )
    }

    /// Whether the provider's own API serves OpenAI's Responses API (`/responses`): OpenAI and
    /// Azure OpenAI. A Responses request to any other is translated to chat completions.
    pub fn serves_responses(self) -> bool {
        matches!(self, Provider::OpenAi | Provider::Azure)
    }

    /// Whether the provider serves `route` (the route-capability filter reads this). Every
    /// provider here serves chat completions, Messages and Responses, in its own dialect or
    /// translated.
    pub fn serves(self, route: RouteKind) -> bool {
        match route {
            RouteKind::ChatCompletions | RouteKind::Messages | RouteKind::Responses => true,
            RouteKind::Embeddings => self.serves_embeddings(),
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
        assert_eq!(Provider::from_prefix("sagemaker"), None);
    }

    #[test]
    fn dialects_decide_the_path_and_whether_to_translate() {
        use crate::RouteKind;
        assert_eq!(Provider::Anthropic.upstream_path(RouteKind::Messages), "/v1/messages");
        assert_eq!(Provider::Anthropic.upstream_path(RouteKind::ChatCompletions), "/v1/messages");
        assert_eq!(Provider::OpenAi.upstream_path(RouteKind::Messages), "/chat/completions");
        assert_eq!(Provider::OpenAi.upstream_path(RouteKind::Embeddings), "/embeddings");
        assert_eq!(Provider::VertexAi.dialect("claude-sonnet-4@20250514"), Dialect::AnthropicMessages);
        assert_eq!(Provider::VertexAi.dialect("gemini-2.5-pro"), Dialect::Gemini);
        assert_eq!(Provider::Bedrock.dialect("anthropic.claude-3-5-sonnet-20240620-v1:0"), Dialect::BedrockConverse);
        assert_eq!(Provider::Ollama.dialect("llama3"), Dialect::OpenAiChat);
    }

    #[test]
    fn the_capability_table() {
        use crate::RouteKind;
        let embeddings: Vec<&str> =
            Provider::ALL.into_iter().filter(|p| p.serves(RouteKind::Embeddings)).map(Provider::prefix).collect();
        assert_eq!(
            embeddings,
            [
                "openai",
                "hosted_vllm",
                "together_ai",
                "mistral",
                "fireworks_ai",
                "azure",
                "azure_ai",
                "ollama",
                "ollama_chat",
                "cohere",
                "cohere_chat",
                "gemini",
                "bedrock"
            ]
        );
        assert!(Provider::ALL.into_iter().all(|p| p.serves(RouteKind::ChatCompletions)));
    }
}
