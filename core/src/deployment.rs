//! One deployment: a provider endpoint that can serve a model group.

use std::time::Duration;

use crate::facts::{RequestParams, RouteKind};
use crate::provider::{Dialect, Provider};
use crate::secret::redact;
use crate::upstream_auth::UpstreamAuth;

/// A deployment's position in [`crate::Snapshot::deployments`]. The hot path addresses
/// deployments by this index; the string id is for humans and for state that survives a reload.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DeploymentIdx(pub u32);

impl DeploymentIdx {
    pub fn get(self) -> usize {
        self.0 as usize
    }
}

/// A deployment as the router sees it, compiled from one `model_list` entry. Its `Debug`
/// output redacts the api key.
#[derive(Clone, PartialEq)]
pub struct Deployment {
    /// `model_info.id`, or a stable id derived from the entry's content.
    pub id: String,
    /// The public model group name (`model_name`).
    pub model_name: String,
    pub provider: Provider,
    /// The model name sent upstream (`openai/gpt-4o-mini` → `gpt-4o-mini`).
    pub upstream_model: String,
    /// The base URL without a trailing slash, e.g. `https://api.openai.com/v1`.
    pub api_base: String,
    pub api_key: Option<String>,
    /// Azure's `api-version` query (`api_version`, else `AZURE_API_VERSION`).
    pub api_version: Option<String>,
    /// Azure's Microsoft Entra ID bearer token (`azure_ad_token`), sent when there is no
    /// `api_key`.
    pub azure_ad_token: Option<String>,
    /// A credential signed per request or exchanged for a refreshed token (Bedrock's SigV4,
    /// Entra ID client credentials, a Google service account); `None`: the key header alone.
    pub auth: Option<Box<UpstreamAuth>>,
    /// The weight the simple shuffle uses, resolved per group at build time
    /// (`weight`, else `rpm`, else `tpm`, else 1 for every member).
    pub shuffle_weight: u64,
    pub weight: Option<u64>,
    pub rpm: Option<u64>,
    pub tpm: Option<u64>,
    pub order: Option<u32>,
    pub tags: Vec<String>,
    pub region_name: Option<String>,
    /// Per-request timeout for non-streaming calls (`litellm_params.timeout`).
    pub timeout: Option<Duration>,
    /// Per-request timeout for streaming calls (`litellm_params.stream_timeout`).
    pub stream_timeout: Option<Duration>,
    pub max_parallel_requests: Option<u32>,
    /// Per-deployment override of `router_settings.cooldown_time`.
    pub cooldown_time: Option<Duration>,
    /// US dollars per input token (`litellm_params`/`model_info` `input_cost_per_token`, else
    /// the model cost map); `None` = unknown. Cost-based routing reads it.
    pub input_cost_per_token: Option<f64>,
    /// US dollars per output token, like `input_cost_per_token`.
    pub output_cost_per_token: Option<f64>,
    /// `model_info.blocked`: an admin paused the deployment; the blocked filter drops it.
    pub blocked: bool,
    /// `model_info.supports_vision`, else the model cost map's; `None` = not declared (the
    /// text-only filter treats it as "no").
    pub supports_vision: Option<bool>,
    /// The prompt's limit: `model_info.max_input_tokens`, else the model cost map's.
    pub max_input_tokens: Option<u64>,
    /// `model_info.max_tokens`, else the cost map's: read as a total (prompt + output) window
    /// when `max_input_tokens` is unknown.
    pub max_tokens: Option<u64>,
    /// The request parameters the deployment declares it does not take (`supports_*: false` in
    /// `model_info`, else the model cost map). Not declared = taken.
    pub unsupported_params: RequestParams,
    /// The policy router's attributes (`model_info.kind`, `sovereignty_class`, `region`, …),
    /// when the entry sets any.
    pub policy: Option<Box<crate::policy::PolicyAttrs>>,
    /// `litellm_params.extra_body`: members sent at the top level of every request body that
    /// does not set them itself, each as its name and its value's JSON text, in config order
    /// (an OpenRouter `provider` block pins a provider this way).
    pub extra_body: Vec<(Box<str>, Box<str>)>,
    /// `litellm_params` that are OpenAI chat parameters (`temperature`, `max_tokens`, `stop`,
    /// …): defaults added to every request that does not set them itself, each as its name and
    /// its value's JSON text, in config order.
    pub request_defaults: Vec<(Box<str>, Box<str>)>,
    /// The model refuses `max_tokens` (gpt-5, the o-series): a request's, or a default's, goes
    /// upstream as `max_completion_tokens`.
    pub max_tokens_as_max_completion_tokens: bool,
    /// The most tokens one answer may hold (`max_output_tokens` of `model_info` or the cost
    /// map), told to clients that ask for a model's limits (Anthropic's models list).
    pub max_output_tokens: Option<u64>,
    /// Whether the server serves OpenAI's Responses API itself, as `model_info.supported_endpoints`
    /// states it (LiteLLM's opt-in: `/v1/responses` listed or not); `None` when unstated: the
    /// provider's own default ([`Provider::serves_responses`]), corrected on a 404/405.
    pub native_responses: Option<bool>,
    /// A pass-through deployment (`litellm_params.model: "*"`): its upstream model is the
    /// requested name, and it serves only the names that are its provider's
    /// ([`crate::pass_through`]).
    pub pass_through: bool,
}

impl Deployment {
    /// A deployment with LiteLLM's defaults for everything but its identity and endpoint.
    pub fn new(id: &str, model_name: &str, provider: Provider, upstream_model: &str, api_base: &str) -> Deployment {
        Deployment {
            id: id.to_string(),
            model_name: model_name.to_string(),
            provider,
            upstream_model: upstream_model.to_string(),
            api_base: api_base.trim_end_matches('/').to_string(),
            api_key: None,
            api_version: None,
            azure_ad_token: None,
            auth: None,
            shuffle_weight: 1,
            weight: None,
            rpm: None,
            tpm: None,
            order: None,
            tags: Vec::new(),
            region_name: None,
            timeout: None,
            stream_timeout: None,
            max_parallel_requests: None,
            cooldown_time: None,
            input_cost_per_token: None,
            output_cost_per_token: None,
            blocked: false,
            supports_vision: None,
            max_input_tokens: None,
            max_tokens: None,
            unsupported_params: RequestParams::NONE,
            policy: None,
            extra_body: Vec::new(),
            request_defaults: Vec::new(),
            max_tokens_as_max_completion_tokens: false,
            max_output_tokens: None,
            native_responses: None,
            pass_through: false,
        }
    }

    /// The price cost-based routing compares: input plus output dollars per token, when both
    /// are known and are finite numbers of 0 or more.
    pub fn price_per_token(&self) -> Option<f64> {
        let price = self.input_cost_per_token? + self.output_cost_per_token?;
        (price.is_finite() && price >= 0.0).then_some(price)
    }

    /// The wire format this deployment speaks (its provider's, for its model).
    pub fn dialect(&self) -> Dialect {
        self.provider.dialect(&self.upstream_model)
    }

    /// Whether serving `route` here takes a translation (the deployment speaks another dialect
    /// than the route's).
    pub fn translates(&self, route: RouteKind) -> bool {
        route.dialect() != self.dialect()
    }

    /// Whether a Responses request goes to the server's own `/responses`, as configured or by
    /// the provider's default (the gateway may still learn that the server has none).
    pub fn native_responses(&self) -> bool {
        self.native_responses.unwrap_or_else(|| self.provider.serves_responses())
    }

    /// Whether a request's parameters are edited on the way (defaults added, `max_tokens`
    /// renamed): a deployment without either sends the body as it came.
    pub fn edits_parameters(&self) -> bool {
        !self.request_defaults.is_empty() || self.max_tokens_as_max_completion_tokens
    }

    /// Whether the request body is rewritten even in the deployment's own dialect: Vertex AI's
    /// Messages API takes the model in the path and `anthropic_version` in the body.
    pub fn rewrites_body(&self) -> bool {
        self.provider == Provider::VertexAi
    }

    /// The context window the pre-call check compares: `max_input_tokens` (the prompt alone),
    /// else `max_tokens` read as a total (prompt + `max_tokens` of the request); `None` = unknown.
    pub fn context_window(&self) -> Option<ContextWindow> {
        match (self.max_input_tokens, self.max_tokens) {
            (Some(limit), _) => Some(ContextWindow { limit, total: false }),
            (None, Some(limit)) => Some(ContextWindow { limit, total: true }),
            (None, None) => None,
        }
    }
}

/// A deployment's context window, as the pre-call check reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContextWindow {
    pub limit: u64,
    /// The limit counts the prompt and the output (`max_tokens`), not the prompt alone.
    pub total: bool,
}

impl ContextWindow {
    /// Whether a prompt of `prompt` tokens asking for up to `max_tokens` output tokens fits.
    pub fn fits(self, prompt: u64, max_tokens: Option<u64>) -> bool {
        let needed = if self.total { prompt.saturating_add(max_tokens.unwrap_or(0)) } else { prompt };
        needed <= self.limit
    }
}

impl std::fmt::Debug for Deployment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let key = self.api_key.as_deref().map(redact);
        let token = self.azure_ad_token.as_deref().map(redact);
        f.debug_struct("Deployment")
            .field("id", &self.id)
            .field("model_name", &self.model_name)
            .field("provider", &self.provider)
            .field("upstream_model", &self.upstream_model)
            .field("api_base", &self.api_base)
            .field("api_key", &key)
            .field("api_version", &self.api_version)
            .field("azure_ad_token", &token)
            .field("auth", &self.auth)
            .field("shuffle_weight", &self.shuffle_weight)
            .field("weight", &self.weight)
            .field("rpm", &self.rpm)
            .field("tpm", &self.tpm)
            .field("order", &self.order)
            .field("tags", &self.tags)
            .field("region_name", &self.region_name)
            .field("timeout", &self.timeout)
            .field("stream_timeout", &self.stream_timeout)
            .field("max_parallel_requests", &self.max_parallel_requests)
            .field("cooldown_time", &self.cooldown_time)
            .field("input_cost_per_token", &self.input_cost_per_token)
            .field("output_cost_per_token", &self.output_cost_per_token)
            .field("blocked", &self.blocked)
            .field("supports_vision", &self.supports_vision)
            .field("max_input_tokens", &self.max_input_tokens)
            .field("max_tokens", &self.max_tokens)
            .field("unsupported_params", &self.unsupported_params)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_key() {
        let mut d = Deployment::new("a", "g", Provider::OpenAi, "m", "http://x");
        d.api_key = Some("sk-very-secret-1234".into());
        let shown = format!("{d:?}");
        assert!(!shown.contains("very-secret"), "{shown}");
        assert!(shown.contains("…1234"));
    }
}
