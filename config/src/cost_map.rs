//! `switchyard.model_cost_map`: LiteLLM's `model_prices_and_context_window.json`, read for the
//! prices cost-based routing compares. A deployment that sets no price of its own gets the
//! map's, looked up by its `litellm_params.model` as written, then without the provider prefix
//! (`openai/gpt-4o` → `gpt-4o`), then with it (`gpt-4o` → `openai/gpt-4o`).

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;
use switchyard_core::Deployment;

/// The key under `switchyard:` that names the map.
pub(crate) const MODEL_COST_MAP: &str = "model_cost_map";

/// The prices of one model; other fields of the map are skipped unread.
#[derive(Deserialize)]
struct Entry {
    #[serde(default)]
    input_cost_per_token: Option<serde_json::Value>,
    #[serde(default)]
    output_cost_per_token: Option<serde_json::Value>,
}

/// Input and output dollars per token by model name; a price that is not a number of 0 or more
/// (the map's `sample_spec` documents fields with strings) is unknown.
pub(crate) struct CostMap {
    prices: HashMap<String, (Option<f64>, Option<f64>)>,
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
        let prices = entries
            .into_iter()
            .map(|(name, e)| (name, (price(e.input_cost_per_token), price(e.output_cost_per_token))))
            .collect();
        Ok(CostMap { prices })
    }

    /// The map's prices for a deployment whose `litellm_params.model` is `written`.
    fn lookup(&self, written: &str, d: &Deployment) -> Option<(Option<f64>, Option<f64>)> {
        let with_prefix = format!("{}/{}", d.provider.prefix(), d.upstream_model);
        let found = [written, d.upstream_model.as_str(), with_prefix.as_str()]
            .into_iter()
            .find_map(|name| self.prices.get(name).copied());
        found
    }

    /// Fills in the prices `d` does not set itself.
    pub(crate) fn fill(&self, written: &str, d: &mut Deployment) {
        if d.input_cost_per_token.is_some() && d.output_cost_per_token.is_some() {
            return;
        }
        if let Some((input, output)) = self.lookup(written, d) {
            d.input_cost_per_token = d.input_cost_per_token.or(input);
            d.output_cost_per_token = d.output_cost_per_token.or(output);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchyard_core::Provider;

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
        m.fill("openai/gpt-4o", &mut d);
        assert_eq!((d.input_cost_per_token, d.output_cost_per_token), (Some(2.5e-6), Some(1e-5)));
        let mut d = dep(Provider::Groq, "llama-3.1-8b-instant");
        m.fill("llama-3.1-8b-instant", &mut d);
        assert_eq!(d.input_cost_per_token, Some(5e-8));
        let mut d = dep(Provider::OpenRouter, "x/y");
        m.fill("openrouter/x/y", &mut d);
        assert_eq!((d.input_cost_per_token, d.output_cost_per_token), (Some(1e-6), None));
        let mut d = dep(Provider::OpenAi, "unknown");
        m.fill("openai/unknown", &mut d);
        assert_eq!(d.price_per_token(), None);
    }

    #[test]
    fn a_deployment_own_price_wins_half_by_half() {
        let mut d = dep(Provider::OpenAi, "gpt-4o");
        d.input_cost_per_token = Some(1e-6);
        map().fill("openai/gpt-4o", &mut d);
        assert_eq!((d.input_cost_per_token, d.output_cost_per_token), (Some(1e-6), Some(1e-5)));
    }

    #[test]
    fn non_numeric_prices_are_unknown_and_other_shapes_are_refused() {
        assert_eq!(map().prices["sample_spec"], (None, None));
        let refused = CostMap::parse("[1, 2]").err().unwrap_or_default();
        assert!(refused.starts_with("expected a JSON object of model names to prices"), "{refused}");
        assert!(CostMap::parse("{\"a\": 1}").is_err());
        assert!(CostMap::parse("{").is_err());
    }
}
