//! `litellm_params` that are request parameters (`temperature`, `max_tokens`, `stop`, …): LiteLLM
//! passes a deployment's `litellm_params` to `litellm.completion` under the request's own
//! (`{**litellm_params, **request}`), so each of OpenAI's chat parameters set there is a default
//! the request's own value overrides. Each is kept as its name and its value's JSON text, in
//! config order, `os.environ/` substituted; the gateway adds those a request does not set.
//!
//! And LiteLLM's rule for the models that refuse `max_tokens` (the gpt-5 family, the o-series):
//! theirs goes upstream as `max_completion_tokens`, decided here once per deployment.

use pointwork_core::Provider;

use crate::check::{Checker, Fields};
use crate::cost_map;
use crate::kinds::{self, Kind};
use crate::node::Node;

/// What the value of a request default must be (the provider would refuse anything else).
enum Expect {
    Number,
    Count,
    Integer,
    Bool,
    String,
    /// A string, a list or an object: passed as written.
    Json,
}

/// OpenAI's chat parameters that LiteLLM's `completion` takes by name (`OPENAI_CHAT_COMPLETION_PARAMS`
/// without its transport keys, `stream` and `stream_options`, which are the request's own, and
/// `tools`, which LiteLLM merges with the request's instead of defaulting).
const REQUEST_DEFAULTS: [(&str, Expect); 30] = [
    ("temperature", Expect::Number),
    ("top_p", Expect::Number),
    ("n", Expect::Count),
    ("stop", Expect::Json),
    ("max_tokens", Expect::Count),
    ("max_completion_tokens", Expect::Count),
    ("presence_penalty", Expect::Number),
    ("frequency_penalty", Expect::Number),
    ("logit_bias", Expect::Json),
    ("user", Expect::String),
    ("response_format", Expect::Json),
    ("seed", Expect::Integer),
    ("tool_choice", Expect::Json),
    ("parallel_tool_calls", Expect::Bool),
    ("logprobs", Expect::Bool),
    ("top_logprobs", Expect::Count),
    ("reasoning_effort", Expect::String),
    ("verbosity", Expect::String),
    ("thinking", Expect::Json),
    ("modalities", Expect::Json),
    ("prediction", Expect::Json),
    ("audio", Expect::Json),
    ("web_search_options", Expect::Json),
    ("service_tier", Expect::String),
    ("store", Expect::Bool),
    ("prompt_cache_key", Expect::String),
    ("prompt_cache_retention", Expect::String),
    ("safety_identifier", Expect::String),
    ("functions", Expect::Json),
    ("function_call", Expect::Json),
];

const INTEGER: Kind<i64> = Kind {
    expected: "an integer",
    parse: |n| match n {
        Node::Int(i) => i64::try_from(*i).ok(),
        Node::Str(s) => s.trim().parse().ok(),
        _ => None,
    },
    secret: false,
};

/// The request defaults of one entry's `litellm_params`, in config order (`null` = not set).
pub(crate) fn read_request_defaults(c: &mut Checker, params: &mut Fields) -> Vec<(Box<str>, Box<str>)> {
    // Config order, as `extra_body` keeps it.
    let named: Vec<(&str, &Expect)> = params
        .untaken()
        .filter_map(|(key, _, _)| REQUEST_DEFAULTS.iter().find(|(name, _)| *name == key).map(|(n, e)| (*n, e)))
        .collect();
    let mut out = Vec::new();
    for (name, expect) in named {
        let json = match expect {
            Expect::Number => c.optional(params, name, &kinds::FINITE_NUMBER).map(serde_json::Value::from),
            Expect::Count => c.optional(params, name, &kinds::NON_NEGATIVE_INT).map(serde_json::Value::from),
            Expect::Integer => c.optional(params, name, &INTEGER).map(serde_json::Value::from),
            Expect::Bool => c.optional(params, name, &kinds::BOOL).map(serde_json::Value::from),
            Expect::String => c.optional(params, name, &kinds::STRING).map(serde_json::Value::from),
            Expect::Json => match params.take(name) {
                None | Some((Node::Null, _)) => None,
                Some((node, path)) => c.resolved(node, &path).map(|n| n.to_json()),
            },
        };
        if let Some(json) = json {
            out.push((Box::from(name), json.to_string().into_boxed_str()));
        }
    }
    out
}

/// Whether the deployment's API refuses `max_tokens` and takes `max_completion_tokens` in its
/// place: LiteLLM's `OpenAIGPT5Config.is_model_gpt_5_model` (a name with `gpt-5` or `gpt-6`,
/// not `gpt-5-chat`) for OpenAI and Azure; for the o-series, `is_model_o_series_model` on
/// OpenAI (`o` and a digit, a chat model of OpenAI's in the cost map) and Azure's looser
/// `is_o_series_model` (the name holds `o1`, `o3` or `o4`).
pub(crate) fn takes_max_completion_tokens(provider: Provider, upstream_model: &str) -> bool {
    let last = upstream_model.rsplit('/').next().unwrap_or(upstream_model);
    let gpt_5 = (upstream_model.contains("gpt-5") || upstream_model.contains("gpt-6")) && !last.contains("gpt-5-chat");
    match provider {
        Provider::OpenAi => gpt_5 || is_openai_o_series(last),
        Provider::Azure => gpt_5 || ["o1", "o3", "o4", "o_series/"].iter().any(|m| upstream_model.contains(m)),
        _ => false,
    }
}

fn is_openai_o_series(model: &str) -> bool {
    let mut chars = model.chars();
    chars.next() == Some('o')
        && chars.next().is_some_and(|c| c.is_ascii_digit())
        && cost_map::bundled().provider_of(model) == Some("openai")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load_str;
    use std::path::Path;

    fn env(name: &str) -> Option<String> {
        (name == "TEMP").then(|| "0.25".to_string())
    }

    fn entry(model: &str, params: &str) -> String {
        format!("model_list:\n  - model_name: g\n    litellm_params:\n      model: {model}\n{params}")
    }

    fn loaded(params: &str) -> pointwork_core::Deployment {
        let loaded = load_str(&entry("openai/gpt-4o", params), Path::new(""), &env).expect("compiles");
        assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
        loaded.config.deployments[0].clone()
    }

    fn defaults(params: &str) -> Vec<(String, String)> {
        loaded(params).request_defaults.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn defaults_keep_config_order_as_json_text() {
        let params = "      max_tokens: 300\n      stop: [END, '###']\n      temperature: os.environ/TEMP\n      \
                      response_format: {type: json_object}\n      seed: -4\n      logprobs: 'true'\n      user: null\n";
        assert_eq!(
            defaults(params),
            [
                ("max_tokens".to_string(), "300".to_string()),
                ("stop".to_string(), r####"["END","###"]"####.to_string()),
                ("temperature".to_string(), "0.25".to_string()),
                ("response_format".to_string(), r#"{"type":"json_object"}"#.to_string()),
                ("seed".to_string(), "-4".to_string()),
                ("logprobs".to_string(), "true".to_string()),
            ]
        );
        assert!(defaults("").is_empty());
    }

    #[test]
    fn a_value_of_the_wrong_kind_is_an_error_with_its_path() {
        let errors = load_str(
            &entry("openai/gpt-4o", "      temperature: warm\n      max_tokens: -1\n      seed: 1.5\n"),
            Path::new(""),
            &env,
        )
        .expect_err("refused")
        .0;
        let errors: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(
            errors,
            [
                r#"model_list[0].litellm_params.temperature: expected a number, got "warm""#,
                "model_list[0].litellm_params.max_tokens: expected a non-negative integer, got -1",
                "model_list[0].litellm_params.seed: expected an integer, got 1.5",
            ]
        );
    }

    #[test]
    fn gpt_5_and_the_o_series_take_max_completion_tokens() {
        for model in ["gpt-5", "gpt-5-mini", "gpt-5.1-codex", "o1", "o3-mini", "o4-mini", "ft:gpt-5:acme::x"] {
            assert!(takes_max_completion_tokens(Provider::OpenAi, model), "{model}");
        }
        for model in ["gpt-4o", "gpt-5-chat-latest", "gpt-4.1-mini", "omni-moderation-latest", "o9-unknown"] {
            assert!(!takes_max_completion_tokens(Provider::OpenAi, model), "{model}");
        }
        assert!(takes_max_completion_tokens(Provider::Azure, "my-o3-deployment"));
        assert!(takes_max_completion_tokens(Provider::Azure, "gpt-5-prod"));
        assert!(!takes_max_completion_tokens(Provider::Azure, "gpt-4o-prod"));
        assert!(!takes_max_completion_tokens(Provider::HostedVllm, "gpt-5"));
        let load = |model: &str| loaded_model(model).max_tokens_as_max_completion_tokens;
        assert!(load("openai/gpt-5-mini"));
        assert!(load("openai/o3"));
        assert!(!load("openai/gpt-4o"));
    }

    fn loaded_model(model: &str) -> pointwork_core::Deployment {
        let loaded = load_str(&entry(model, ""), Path::new(""), &env).expect("compiles");
        loaded.config.deployments[0].clone()
    }
}
