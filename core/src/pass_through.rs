//! LiteLLM's pass-through deployments (`litellm_params.model: "*"`): one deployment per
//! provider the environment holds a key for, each serving the requested names that are that
//! provider's. A name says its provider as LiteLLM reads it: `provider/model` by its prefix, a
//! bare name by the model cost map's `litellm_provider`, else by its shape (`claude-…` is
//! Anthropic's, `gpt-…` OpenAI's, `anthropic.claude-…` Bedrock's).

use std::collections::HashMap;

use crate::{Deployment, Provider};

/// Bare model names LiteLLM sends to OpenAI without a prefix.
const BARE_OPENAI_PREFIXES: [&str; 6] = ["gpt-", "o1", "o3", "o4", "chatgpt-", "text-embedding-"];

/// Bedrock's model ids: `vendor.model-version`, optionally behind a cross-region profile
/// (`us.anthropic.claude-…`).
const BEDROCK_VENDORS: [&str; 10] =
    ["anthropic.", "amazon.", "meta.", "mistral.", "cohere.", "ai21.", "deepseek.", "qwen.", "writer.", "openai."];
const BEDROCK_REGION_PROFILES: [&str; 6] = ["us.", "eu.", "apac.", "global.", "jp.", "au."];

/// The provider (by LiteLLM's name) a bare model name's shape says, when the cost map does not
/// know the name.
pub fn provider_by_shape(model: &str) -> Option<&'static str> {
    let unprofiled = BEDROCK_REGION_PROFILES.iter().find_map(|p| model.strip_prefix(p)).unwrap_or(model);
    if BEDROCK_VENDORS.iter().any(|v| unprofiled.starts_with(v)) {
        Some("bedrock")
    } else if model.starts_with("claude-") {
        Some("anthropic")
    } else if BARE_OPENAI_PREFIXES.iter().any(|p| model.starts_with(p)) {
        Some("openai")
    } else {
        None
    }
}

/// The served provider of each bare model name the model cost map knows; built with the
/// config, only when a pass-through deployment exists.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModelProviders {
    by_name: HashMap<String, Provider>,
}

impl ModelProviders {
    pub fn new(by_name: HashMap<String, Provider>) -> ModelProviders {
        ModelProviders { by_name }
    }

    /// The provider a requested name is for, if Pointwork serves it.
    pub fn provider_of(&self, requested: &str) -> Option<Provider> {
        if let Some((prefix, model)) = requested.split_once('/') {
            if let Some(provider) = Provider::from_prefix(prefix).filter(|_| !model.is_empty()) {
                return Some(provider);
            }
        }
        if let Some(&provider) = self.by_name.get(requested) {
            return Some(provider);
        }
        provider_by_shape(requested).and_then(Provider::from_prefix)
    }
}

/// The model a pass-through deployment sends for `requested`: the name without the
/// deployment's provider prefix (`anthropic/claude-3-5-haiku` → `claude-3-5-haiku`).
pub fn pass_through_model<'r>(d: &Deployment, requested: &'r str) -> &'r str {
    requested.strip_prefix(d.provider.prefix()).and_then(|rest| rest.strip_prefix('/')).unwrap_or(requested)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_says_its_provider_by_prefix_then_the_map_then_its_shape() {
        let map = ModelProviders::new(HashMap::from([("mistral-large-latest".to_string(), Provider::Mistral)]));
        assert_eq!(map.provider_of("anthropic/claude-x"), Some(Provider::Anthropic));
        assert_eq!(map.provider_of("groq/llama-3.1-8b"), Some(Provider::Groq));
        assert_eq!(map.provider_of("mistral-large-latest"), Some(Provider::Mistral));
        assert_eq!(map.provider_of("claude-3-5-haiku-20241022"), Some(Provider::Anthropic));
        assert_eq!(map.provider_of("gpt-4o-mini-2024-07-18"), Some(Provider::OpenAi));
        assert_eq!(map.provider_of("us.anthropic.claude-3-haiku"), Some(Provider::Bedrock));
        assert_eq!(map.provider_of("llama3"), None);
        assert_eq!(map.provider_of("anthropic/"), None);
        assert_eq!(map.provider_of("sagemaker/x"), None);
    }

    #[test]
    fn the_pass_through_model_drops_its_own_prefix_only() {
        let d = Deployment::new("a", "*", Provider::Anthropic, "*", "http://127.0.0.1:1");
        assert_eq!(pass_through_model(&d, "anthropic/claude-x"), "claude-x");
        assert_eq!(pass_through_model(&d, "claude-x"), "claude-x");
        assert_eq!(pass_through_model(&d, "anthropicx/claude"), "anthropicx/claude");
    }
}
