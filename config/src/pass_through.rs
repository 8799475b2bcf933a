//! `litellm_params.model: "*"`: LiteLLM's pass-through of any model name to the provider the
//! name says. The entry becomes one deployment per provider the environment holds a key (or
//! base URL) for, each with LiteLLM's variables for that provider (`OPENAI_API_KEY`,
//! `OPENAI_BASE_URL`, `ANTHROPIC_API_KEY`, …); the pick sends a name to its provider's
//! deployment ([`pointwork_core::pass_through`]). A written `api_base` or `api_key` applies to
//! every one of them, as in LiteLLM, and makes OpenAI's one of them.
//!
//! Only providers whose model name travels in the request body serve here: Azure, Bedrock,
//! Vertex AI and Gemini name the model in the request's path, which Pointwork builds once per
//! deployment.

use std::collections::HashMap;

use pointwork_core::pass_through::ModelProviders;
use pointwork_core::{Deployment, Provider};

use crate::check::{Checker, KeyPath};
use crate::cost_map::CostMap;
use crate::litellm_providers::provider_of_map_entry;
use crate::provider_env::provider_env;
use crate::provider_params::keyed_endpoint;

/// The model a pass-through entry writes.
pub(crate) const PASS_THROUGH_MODEL: &str = "*";

/// The providers a pass-through entry may serve, in the order its deployments are listed
/// (then the OpenAI-compatible ones of `pointwork_core::compatible`).
const PROVIDERS: [Provider; 14] = [
    Provider::OpenAi,
    Provider::Anthropic,
    Provider::OpenRouter,
    Provider::Groq,
    Provider::TogetherAi,
    Provider::DeepSeek,
    Provider::Mistral,
    Provider::Codestral,
    Provider::FireworksAi,
    Provider::Xai,
    Provider::Cohere,
    Provider::HuggingFace,
    Provider::HostedVllm,
    Provider::Ollama,
];

/// The environment variables that turn a provider on, for the warning when none is set.
pub(crate) fn key_names() -> String {
    let names: Vec<&str> = PROVIDERS.iter().filter_map(|p| provider_env(*p).keys.first().copied()).collect();
    names.join(", ")
}

/// The deployments a pass-through entry becomes: `template` (all the entry says besides its
/// endpoint) once per provider that can serve, its id suffixed with the provider's name.
pub(crate) fn expand(
    c: &mut Checker,
    template: &Deployment,
    written_base: Option<&str>,
    written_key: Option<&str>,
    entry: &KeyPath,
) -> Vec<Deployment> {
    let written = written_base.is_some() || written_key.is_some();
    let mut out = Vec::new();
    let compatible = Provider::ALL.into_iter().filter(|p| p.compatible().is_some());
    for provider in PROVIDERS.into_iter().chain(compatible) {
        let env = provider_env(provider);
        let (env_key, env_base) = (env.key(c), env.base(c));
        let base_known = written_base.is_some() || env_base.is_some() || provider.default_api_base().is_some();
        let chosen = env_key.is_some() || env_base.is_some() || (provider == Provider::OpenAi && written);
        // Ollama's default (localhost) is no sign that a server runs: its variable must say so.
        if !chosen || !base_known || (provider == Provider::Ollama && env_base.is_none() && written_base.is_none()) {
            continue;
        }
        let base = written_base.map(str::to_string);
        let Some(endpoint) = keyed_endpoint(c, provider, PASS_THROUGH_MODEL.to_string(), base, entry) else {
            continue;
        };
        let mut d = template.clone();
        d.id = format!("{}-{}", template.id, provider.prefix());
        d.provider = provider;
        d.upstream_model = endpoint.upstream_model;
        d.api_base = endpoint.api_base;
        d.api_key = written_key.map(str::to_string).or(env_key);
        d.pass_through = true;
        out.push(d);
    }
    out
}

/// The served provider of every bare model name `map` knows, for the pick to place a
/// requested name.
pub(crate) fn model_providers(map: &CostMap) -> ModelProviders {
    let by_name: HashMap<String, Provider> = map
        .providers()
        .filter(|(name, _)| !name.contains('/'))
        .filter_map(|(name, listed)| Some((name.to_string(), Provider::from_prefix(provider_of_map_entry(listed))?)))
        .collect();
    ModelProviders::new(by_name)
}
