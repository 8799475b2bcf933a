//! LiteLLM's model cost map (`model_prices_and_context_window.json`), read for the prices
//! cost-based routing compares and for what the filters read: the context window
//! (`max_input_tokens`, `max_tokens`), `supports_vision`, and the `supports_*` flags of the
//! unsupported-params check. A deployment that does not set one of these itself (in
//! `litellm_params` / `model_info`) gets the map's, looked up by its `litellm_params.model` as
//! written, then without the provider prefix (`openai/gpt-4o` → `gpt-4o`), then with it
//! (`gpt-4o` → `openai/gpt-4o`). The map also names each model's provider (`litellm_provider`),
//! which is how a bare model name finds its provider, as in LiteLLM.
//!
//! A copy of LiteLLM's map ships inside the binary, as LiteLLM's own package ships one
//! (`data/model_prices_and_context_window.json`, from the litellm 1.110.2 wheel, verbatim);
//! `pointwork.model_cost_map` replaces it with a file or turns it off.

use std::collections::HashMap;
use std::path::Path;
use std::sync::OnceLock;

use pointwork_core::{Deployment, Param};
use serde::Deserialize;

/// The key under `pointwork:` that names the map.
pub(crate) const MODEL_COST_MAP: &str = "model_cost_map";

/// The map that ships with Pointwork.
const BUNDLED_MAP: &str = include_str!("../data/model_prices_and_context_window.json");

/// The shipped map, parsed on first use (once per process: it never changes).
pub(crate) fn bundled() -> &'static CostMap {
    static MAP: OnceLock<CostMap> = OnceLock::new();
    MAP.get_or_init(|| {
        CostMap::parse(BUNDLED_MAP).expect("the bundled cost map is a LiteLLM cost map (a unit test reads it)")
    })
}

/// The fields of one model Pointwork reads; the others are skipped unread. Values of another
/// type (the map's `sample_spec` documents fields with strings) are unknown.
#[derive(Deserialize)]
struct Entry {
    #[serde(default)]
    input_cost_per_token: Option<serde_json::Value>,
    #[serde(default)]
    output_cost_per_token: Option<serde_json::Value>,
    #[serde(default)]
    max_input_tokens: Option<serde_json::Value>,
    #[serde(default)]
    max_tokens: Option<serde_json::Value>,
    max_output_tokens: Option<serde_json::Value>,
    #[serde(default)]
    supports_vision: Option<serde_json::Value>,
    #[serde(default)]
    supports_function_calling: Option<serde_json::Value>,
    #[serde(default)]
    supports_tool_choice: Option<serde_json::Value>,
    #[serde(default)]
    supports_parallel_function_calling: Option<serde_json::Value>,
    #[serde(default)]
    supports_response_schema: Option<serde_json::Value>,
    #[serde(default)]
    supports_reasoning: Option<serde_json::Value>,
    #[serde(default)]
    litellm_provider: Option<serde_json::Value>,
}

/// What the map says about one model.
#[derive(Clone, Debug, Default, PartialEq)]
struct ModelFacts {
    /// `litellm_provider`, e.g. `openai`, `bedrock_converse`, `vertex_ai-language-models`.
    provider: Option<Box<str>>,
    input: Option<f64>,
    output: Option<f64>,
    max_input_tokens: Option<u64>,
    max_tokens: Option<u64>,
    max_output_tokens: Option<u64>,
    supports_vision: Option<bool>,
    /// `supports_*` for each of [`Param::ALL`], in that order.
    supports: [Option<bool>; Param::ALL.len()],
}

/// What the map says by model name.
pub(crate) struct CostMap {
    models: HashMap<String, ModelFacts>,
}

impl CostMap {
    /// Reads the map, or says what is wrong with the file.
    pub(crate) fn read(path: &Path) -> Result<CostMap, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        CostMap::parse(&text).map_err(|e| format!("{} is not a LiteLLM model cost map: {e}", path.display()))
    }

    fn parse(text: &str) -> Result<CostMap, String> {
        let entries: HashMap<String, Entry> = serde_json::from_str(text).map_err(|e| {
            // serde_json says "invalid type: …, expected a map" for a document of another shape.
            format!("expected a JSON object of model names to prices ({e})")
        })?;
        let price = |v: Option<serde_json::Value>| v.and_then(|v| v.as_f64()).filter(|p| p.is_finite() && *p >= 0.0);
        let count = |v: Option<serde_json::Value>| v.and_then(|v| v.as_u64());
        let flag = |v: Option<serde_json::Value>| v.and_then(|v| v.as_bool());
        let models = entries
            .into_iter()
            .map(|(name, e)| {
                let facts = ModelFacts {
                    provider: e.litellm_provider.as_ref().and_then(|v| v.as_str()).map(Box::from),
                    input: price(e.input_cost_per_token),
                    output: price(e.output_cost_per_token),
                    max_input_tokens: count(e.max_input_tokens),
                    max_tokens: count(e.max_tokens),
                    max_output_tokens: count(e.max_output_tokens),
                    supports_vision: flag(e.supports_vision),
                    supports: [
                        flag(e.supports_function_calling),
                        flag(e.supports_tool_choice),
                        flag(e.supports_parallel_function_calling),
                        flag(e.supports_response_schema),
                        flag(e.supports_reasoning),
                    ],
                };
                (name, facts)
            })
            .collect();
        Ok(CostMap { models })
    }

    /// The map's entry for a deployment whose `litellm_params.model` is `written`.
    fn lookup(&self, written: &str, d: &Deployment) -> Option<&ModelFacts> {
        let with_prefix = format!("{}/{}", d.provider.prefix(), d.upstream_model);
        let found = [written, d.upstream_model.as_str(), with_prefix.as_str()]
            .into_iter()
            .find_map(|name| self.models.get(name));
        found
    }

    /// The `litellm_provider` the map gives the model named exactly `model`.
    pub(crate) fn provider_of(&self, model: &str) -> Option<&str> {
        self.models.get(model)?.provider.as_deref()
    }

    /// Every model's name with its `litellm_provider`.
    pub(crate) fn providers(&self) -> impl Iterator<Item = (&str, &str)> {
        self.models.iter().filter_map(|(name, facts)| Some((name.as_str(), facts.provider.as_deref()?)))
    }

    /// Fills in what `d` does not set itself: prices, context window, vision, `supports_*`.
    /// The context window comes whole from one place: a deployment that sets either of
    /// `max_input_tokens` / `max_tokens` in `model_info` keeps its own.
    /// `model_info` is the entry's own (a `supports_*` key there wins over the map's).
    pub(crate) fn fill(
        &self,
        written: &str,
        d: &mut Deployment,
        model_info: &serde_json::Map<String, serde_json::Value>,
    ) {
        let Some(m) = self.lookup(written, d) else {
            return;
        };
        d.input_cost_per_token = d.input_cost_per_token.or(m.input);
        d.output_cost_per_token = d.output_cost_per_token.or(m.output);
        if d.max_input_tokens.is_none() && d.max_tokens.is_none() {
            d.max_input_tokens = m.max_input_tokens;
            d.max_tokens = m.max_tokens;
        }
        d.max_output_tokens = d.max_output_tokens.or(m.max_output_tokens);
        d.supports_vision = d.supports_vision.or(m.supports_vision);
        // Only "declared false" removes a deployment; whatever `model_info` declares wins.
        for (param, supported) in Param::ALL.into_iter().zip(m.supports) {
            if supported == Some(false) && !model_info.contains_key(param.supports_key()) {
                d.unsupported_params.insert(param);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pointwork_core::Provider;

    fn map() -> CostMap {
        CostMap::parse(
            r#"{"gpt-4o": {"input_cost_per_token": 2.5e-6, "output_cost_per_token": 1e-5, "mode": "chat"},
                "groq/llama-3.1-8b-instant": {"input_cost_per_token": 5e-8, "output_cost_per_token": 8e-8},
                "sample_spec": {"input_cost_per_token": "dollars", "max_input_tokens": "many"},
                "openrouter/x/y": {"input_cost_per_token": 1e-6}}"#,
        )
        .unwrap()
    }

    fn dep(provider: Provider, upstream: &str) -> Deployment {
        Deployment::new("d", "g", provider, upstream, "http://h")
    }

    #[test]
    fn lookups_try_as_written_then_without_then_with_the_prefix() {
        let m = map();
        let mut d = dep(Provider::OpenAi, "gpt-4o");
        m.fill("openai/gpt-4o", &mut d, &serde_json::Map::new());
        assert_eq!((d.input_cost_per_token, d.output_cost_per_token), (Some(2.5e-6), Some(1e-5)));
        let mut d = dep(Provider::Groq, "llama-3.1-8b-instant");
        m.fill("llama-3.1-8b-instant", &mut d, &serde_json::Map::new());
        assert_eq!(d.input_cost_per_token, Some(5e-8));
        let mut d = dep(Provider::OpenRouter, "x/y");
        m.fill("openrouter/x/y", &mut d, &serde_json::Map::new());
        assert_eq!((d.input_cost_per_token, d.output_cost_per_token), (Some(1e-6), None));
        let mut d = dep(Provider::OpenAi, "unknown");
        m.fill("openai/unknown", &mut d, &serde_json::Map::new());
        assert_eq!(d.price_per_token(), None);
    }

    #[test]
    fn a_deployment_own_price_wins_half_by_half() {
        let mut d = dep(Provider::OpenAi, "gpt-4o");
        d.input_cost_per_token = Some(1e-6);
        map().fill("openai/gpt-4o", &mut d, &serde_json::Map::new());
        assert_eq!((d.input_cost_per_token, d.output_cost_per_token), (Some(1e-6), Some(1e-5)));
    }

    #[test]
    fn windows_vision_and_supports_flags_come_from_the_map_unless_the_deployment_says() {
        let m = CostMap::parse(
            r#"{"v": {"max_input_tokens": 128000, "max_tokens": 16384, "supports_vision": true,
                      "supports_function_calling": false, "supports_reasoning": false},
                "old": {"max_tokens": 8192}}"#,
        )
        .unwrap();
        let mut d = dep(Provider::OpenAi, "v");
        m.fill("openai/v", &mut d, &serde_json::Map::new());
        assert_eq!((d.max_input_tokens, d.max_tokens, d.supports_vision), (Some(128000), Some(16384), Some(true)));
        assert_eq!(d.context_window(), Some(pointwork_core::ContextWindow { limit: 128000, total: false }));
        assert!(d.unsupported_params.contains(Param::Tools) && d.unsupported_params.contains(Param::ReasoningEffort));
        let mut d = dep(Provider::OpenAi, "v");
        d.max_tokens = Some(1000);
        d.supports_vision = Some(false);
        let info: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(r#"{"supports_function_calling": true}"#).unwrap();
        m.fill("v", &mut d, &info);
        assert_eq!((d.max_input_tokens, d.max_tokens, d.supports_vision), (None, Some(1000), Some(false)));
        assert!(!d.unsupported_params.contains(Param::Tools) && d.unsupported_params.contains(Param::ReasoningEffort));
        let mut d = dep(Provider::OpenAi, "old");
        m.fill("old", &mut d, &serde_json::Map::new());
        assert_eq!(d.context_window(), Some(pointwork_core::ContextWindow { limit: 8192, total: true }));
    }

    #[test]
    fn the_bundled_map_reads_and_names_providers() {
        let m = bundled();
        assert_eq!(m.provider_of("gpt-4o"), Some("openai"));
        assert_eq!(m.provider_of("claude-sonnet-4-5"), Some("anthropic"));
        assert_eq!(m.provider_of("anthropic.claude-3-5-sonnet-20240620-v1:0"), Some("bedrock"));
        assert_eq!(m.provider_of("no-such-model"), None);
        let mut d = dep(Provider::OpenAi, "gpt-4o");
        m.fill("openai/gpt-4o", &mut d, &serde_json::Map::new());
        assert_eq!((d.max_input_tokens, d.supports_vision), (Some(128000), Some(true)));
        assert!(d.unsupported_params.is_empty());
    }

    #[test]
    fn non_numeric_prices_are_unknown_and_other_shapes_are_refused() {
        assert_eq!(map().models["sample_spec"], ModelFacts::default());
        let refused = CostMap::parse("[1, 2]").err().unwrap_or_default();
        assert!(refused.starts_with("expected a JSON object of model names to prices"), "{refused}");
        assert!(CostMap::parse("{\"a\": 1}").is_err());
        assert!(CostMap::parse("{").is_err());
    }
}
