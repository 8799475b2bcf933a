//! What each provider reads beyond `model`, `api_base` and `api_key`: its endpoint's shape, its
//! credentials, LiteLLM's environment variables for both. Every provider's keys are taken from
//! every entry, so a key of another provider is a warning naming whose it is, never "unknown".

use pointwork_core::{Deployment, Provider, UpstreamAuth};

use crate::aws::{apply_aws_params, bedrock_api_base, bedrock_model_id, read_aws_params, AwsParams};
use crate::azure::{apply_azure_params, azure_api_base, lookup, read_azure_params, AzureParams};
use crate::check::{Checker, Fields, KeyPath};
use crate::google::{gemini_key, read_vertex_params, vertex_api_base, warn_vertex_params_ignored, VertexParams};
use crate::provider_env::provider_env;

pub(crate) struct ProviderParams {
    azure: AzureParams,
    aws: AwsParams,
    vertex: VertexParams,
}

pub(crate) fn read_provider_params(c: &mut Checker, p: &mut Fields) -> ProviderParams {
    ProviderParams { azure: read_azure_params(c, p), aws: read_aws_params(c, p), vertex: read_vertex_params(c, p) }
}

/// A deployment as far as its endpoint goes: the upstream model as the provider names it, the
/// base URL the gateway's paths go under, and a credential made with it (Vertex AI's).
pub(crate) struct Endpoint {
    pub(crate) upstream_model: String,
    pub(crate) api_base: String,
    pub(crate) auth: Option<Box<UpstreamAuth>>,
}

/// The endpoint of `provider`'s deployment of `upstream_model`, `written` being `api_base` as
/// written; `None` after an error.
pub(crate) fn endpoint(
    c: &mut Checker,
    provider: Provider,
    upstream_model: String,
    written: Option<String>,
    params: &ProviderParams,
    entry: &KeyPath,
) -> Option<Endpoint> {
    match provider {
        Provider::Azure | Provider::AzureAi => {
            let api_base = azure_api_base(c, provider, written, &entry.key("api_base"))?;
            Some(Endpoint { upstream_model, api_base, auth: None })
        }
        Provider::Bedrock => Some(Endpoint {
            upstream_model: bedrock_model_id(&upstream_model, &params.aws).to_string(),
            api_base: bedrock_api_base(c, written, &params.aws)?,
            auth: None,
        }),
        Provider::VertexAi => {
            let (api_base, auth) = vertex_api_base(c, written, &upstream_model, &params.vertex, entry)?;
            Some(Endpoint { upstream_model, api_base, auth: Some(auth) })
        }
        _ => keyed_endpoint(c, provider, upstream_model, written, entry),
    }
}

/// The endpoint of a provider a base URL and a key are all there is to: `written`, else the
/// provider's environment variable (`OPENAI_BASE_URL`, …), else its default.
pub(crate) fn keyed_endpoint(
    c: &mut Checker,
    provider: Provider,
    upstream_model: String,
    written: Option<String>,
    entry: &KeyPath,
) -> Option<Endpoint> {
    let written = match written {
        Some(base) => Some(base),
        None => env_api_base(c, provider)?,
    };
    let plain = |api_base: String| Some(Endpoint { upstream_model: upstream_model.clone(), api_base, auth: None });
    match provider {
        Provider::Ollama | Provider::OllamaChat => {
            let root = written.unwrap_or_else(|| default_base(provider));
            let root = root.trim_end_matches('/');
            plain(format!("{}/v1", root.strip_suffix("/v1").unwrap_or(root)))
        }
        Provider::HuggingFace => Some(hugging_face(upstream_model, written)),
        // `cohere_chat/v1/…`: LiteLLM's route to Cohere's v1 API, not part of the model.
        Provider::Cohere | Provider::CohereChat => {
            let model = ["v1/", "v2/"].iter().find_map(|p| upstream_model.strip_prefix(p)).unwrap_or(&upstream_model);
            let api_base = written.unwrap_or_else(|| default_base(provider));
            Some(Endpoint { upstream_model: model.to_string(), api_base, auth: None })
        }
        Provider::Anthropic => plain(anthropic_root(&written.unwrap_or_else(|| default_base(provider))).to_string()),
        Provider::Compatible(_) => {
            let row = provider.compatible()?;
            match written.or(row.api_base.map(str::to_string)) {
                Some(base) if row.name == BIGMODEL => plain(bigmodel_base(&base)),
                Some(base) => plain(base),
                None => {
                    let names = row.base_env.join(" or ");
                    c.error(
                        entry.key("api_base"),
                        format!("required for {} (or set {names}): it has no default address", row.name),
                    );
                    None
                }
            }
        }
        _ => match (written, provider.default_api_base()) {
            (Some(base), _) => plain(base),
            (None, Some(default)) => plain(default.to_string()),
            (None, None) => {
                let why = format!("required for {} (a self-hosted server has no default address)", provider.prefix());
                c.error(entry.key("api_base"), why);
                None
            }
        },
    }
}

/// The base URL LiteLLM takes from the environment for `provider` (`OPENAI_BASE_URL`, …), if
/// one is set; `None` after an error.
fn env_api_base(c: &mut Checker, provider: Provider) -> Option<Option<String>> {
    let env = provider_env(provider);
    let Some((name, value)) = env.bases.iter().find_map(|name| lookup(c, name).map(|v| (name, v))) else {
        return Some(None);
    };
    match crate::api_base::parse_api_base(&value) {
        Ok(base) => Some(Some(base)),
        Err(e) => {
            c.error(format!("{name} (environment)"), e);
            None
        }
    }
}

/// Zhipu's BigModel platform (LiteLLM's `bigmodel/…`).
const BIGMODEL: &str = "bigmodel";

/// A BigModel address as LiteLLM completes it (`get_bigmodel_url`): the server root, or a base
/// ending in one of its API paths, gets the chat API's path (`/api/paas/v4`, or the coding
/// plan's `/api/coding/paas/v4` when that is the one written).
fn bigmodel_base(base: &str) -> String {
    const CODING: &str = "/api/coding/paas/v4";
    // LiteLLM's list, longest first where one ends another.
    const KNOWN: [&str; 10] = [
        "/api/coding/paas/v4/chat/completions",
        CODING,
        "/api/paas/v4/chat/completions",
        "/api/anthropic/v1/messages",
        "/api/anthropic/v1",
        "/api/v1/responses",
        "/api/paas/v4",
        "/api/anthropic",
        "/api/v1",
        "/api",
    ];
    let base = base.trim_end_matches('/');
    let suffix = KNOWN.iter().find(|k| base.ends_with(*k)).copied().unwrap_or("");
    let root = &base[..base.len() - suffix.len()];
    let path = if suffix.starts_with(CODING) { CODING } else { "/api/paas/v4" };
    format!("{root}{path}")
}

fn default_base(provider: Provider) -> String {
    provider.default_api_base().unwrap_or_default().to_string()
}

/// An Anthropic `api_base` as the server root (`…/v1/messages` and `…/v1` cut): LiteLLM configs
/// also write the root with `/v1` or the whole endpoint.
fn anthropic_root(base: &str) -> &str {
    let base = base.trim_end_matches('/');
    let base = base.strip_suffix("/messages").unwrap_or(base);
    base.strip_suffix("/v1").unwrap_or(base)
}

/// Hugging Face's router: `huggingface/{provider}/{org}/{model}` asks for that inference
/// provider, which the router's OpenAI-compatible API takes as the model `{org}/{model}:{provider}`
/// (LiteLLM looks the provider's own model id up at Hugging Face per request instead);
/// `{org}/{model}` alone lets the router choose. `api_base` (else `HF_API_BASE` /
/// `HUGGINGFACE_API_BASE`) is a whole endpoint: the model goes there as written, as in LiteLLM.
fn hugging_face(upstream_model: String, written: Option<String>) -> Endpoint {
    if let Some(base) = written {
        let base = base.trim_end_matches('/');
        let base = base.strip_suffix("/chat/completions").unwrap_or(base).to_string();
        return Endpoint { upstream_model, api_base: base, auth: None };
    }
    const ROUTER: &str = "https://router.huggingface.co/v1";
    let model = match upstream_model.split_once('/') {
        Some((inference, model)) if model.contains('/') => format!("{model}:{inference}"),
        _ => upstream_model,
    };
    Endpoint { upstream_model: model, api_base: ROUTER.to_string(), auth: None }
}

/// The credentials and the rest each provider reads, with LiteLLM's environment variables.
pub(crate) fn apply_provider_params(c: &mut Checker, params: ProviderParams, d: &mut Deployment, entry: &KeyPath) {
    if d.provider != Provider::VertexAi {
        warn_vertex_params_ignored(c, &params.vertex, d.provider);
    }
    apply_azure_params(c, params.azure, d, entry);
    apply_aws_params(c, params.aws, d, entry);
    if d.provider == Provider::Gemini {
        return gemini_key(c, d, entry);
    }
    if d.api_key.is_none() {
        d.api_key = provider_env(d.provider).key(c);
    }
}

#[cfg(test)]
mod tests {
    use super::bigmodel_base;

    #[test]
    fn a_bigmodel_address_gets_the_chat_api_path_as_litellm_gives_it() {
        assert_eq!(bigmodel_base("https://open.bigmodel.cn"), "https://open.bigmodel.cn/api/paas/v4");
        assert_eq!(bigmodel_base("https://open.bigmodel.cn/api/paas/v4/"), "https://open.bigmodel.cn/api/paas/v4");
        assert_eq!(
            bigmodel_base("https://open.bigmodel.cn/api/paas/v4/chat/completions"),
            "https://open.bigmodel.cn/api/paas/v4"
        );
        assert_eq!(
            bigmodel_base("https://open.bigmodel.cn/api/coding/paas/v4"),
            "https://open.bigmodel.cn/api/coding/paas/v4"
        );
        assert_eq!(bigmodel_base("https://open.bigmodel.cn/api/anthropic"), "https://open.bigmodel.cn/api/paas/v4");
    }
}
