//! `litellm_params.model`: `provider/upstream-model`, e.g. `openrouter/anthropic/claude-3.5-sonnet`
//! → provider `openrouter`, upstream `anthropic/claude-3.5-sonnet` (everything after the FIRST
//! slash).

use pointwork_core::Provider;

/// Bare model names LiteLLM sends to OpenAI without a prefix.
const BARE_OPENAI_PREFIXES: [&str; 6] = ["gpt-", "o1", "o3", "o4", "chatgpt-", "text-embedding-"];

/// The provider and upstream model of one deployment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ModelRef {
    pub(crate) provider: Provider,
    pub(crate) upstream_model: String,
}

pub(crate) fn parse_model_ref(model: &str) -> Result<ModelRef, String> {
    let model = model.trim();
    match model.split_once('/') {
        Some((prefix, upstream)) => {
            let Some(provider) = Provider::from_prefix(prefix) else {
                return Err(format!(
                    "provider {prefix} is not supported yet (supported: {})",
                    supported_list()
                ));
            };
            if upstream.trim().is_empty() {
                return Err(format!("missing the model name after \"{prefix}/\""));
            }
            Ok(ModelRef {
                provider,
                upstream_model: upstream.to_string(),
            })
        }
        None if BARE_OPENAI_PREFIXES.iter().any(|p| model.starts_with(p)) => Ok(ModelRef {
            provider: Provider::OpenAi,
            upstream_model: model.to_string(),
        }),
        None => Err(format!(
            "{model:?} has no provider prefix; write \"openai/{model}\" if an OpenAI-compatible API serves it (supported: {})",
            supported_list()
        )),
    }
}

fn supported_list() -> String {
    Provider::ALL.iter().map(|p| p.prefix()).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(model: &str) -> (Provider, String) {
        let r = parse_model_ref(model).expect("supported");
        (r.provider, r.upstream_model)
    }

    #[test]
    fn the_upstream_model_is_everything_after_the_first_slash() {
        assert_eq!(
            ok("openrouter/anthropic/claude-3.5-sonnet"),
            (Provider::OpenRouter, "anthropic/claude-3.5-sonnet".into())
        );
        assert_eq!(ok("hosted_vllm/meta-llama/Llama-3.1-8B"), (Provider::HostedVllm, "meta-llama/Llama-3.1-8B".into()));
        assert_eq!(ok("groq/llama3-8b-8192"), (Provider::Groq, "llama3-8b-8192".into()));
    }

    #[test]
    fn bare_openai_names_are_openai() {
        assert_eq!(ok("gpt-4o"), (Provider::OpenAi, "gpt-4o".into()));
        assert_eq!(ok("o3-mini"), (Provider::OpenAi, "o3-mini".into()));
        assert_eq!(ok("text-embedding-3-small"), (Provider::OpenAi, "text-embedding-3-small".into()));
    }

    #[test]
    fn other_bare_names_suggest_the_openai_prefix() {
        let err = parse_model_ref("claude-3-opus").unwrap_err();
        assert!(err.starts_with(r#""claude-3-opus" has no provider prefix; write "openai/claude-3-opus""#), "{err}");
    }

    #[test]
    fn unsupported_providers_are_named() {
        assert_eq!(
            parse_model_ref("anthropic/claude-3-opus").unwrap_err(),
            "provider anthropic is not supported yet (supported: openai, hosted_vllm, openrouter, groq, together_ai, deepseek, mistral, fireworks_ai)"
        );
        assert_eq!(parse_model_ref("openai/").unwrap_err(), "missing the model name after \"openai/\"");
    }
}
