//! One adapter per provider: what its wire needs beyond the dialect — the request line's path
//! for each route (streamed or not), how its key or token goes in the head, its fixed headers,
//! whether it streams on another path, a body rewrite it needs. Heads are built
//! here once per deployment when the routes are built (`crate::routes`), never per request;
//! the translators between dialects stay pure in the dialect crate.
//!
//! Which provider speaks which dialect and serves which route is `pointwork_core::Provider`
//! (the pick's capability filter reads it); its `litellm_params` and environment variables are
//! read by `pointwork-config` (`provider_params.rs`, `azure.rs`, `google.rs`, `aws.rs`), which
//! also attaches a credential that is not a fixed key (`UpstreamAuth`: SigV4 for Bedrock, an
//! Entra ID client for Azure, a service account for Vertex AI); `crate::credentials` signs with
//! it or adds its refreshed token to each request.

mod anthropic;
mod azure;
mod azure_ai;
mod bedrock;
mod gemini;
mod openai_compatible;
#[cfg(test)]
mod tests;
mod vertex;

use pointwork_core::{Deployment, Provider, RouteKind};

use crate::dialect::Untranslatable;
use crate::http::write;
use crate::upstream::target::Target;

/// One provider's wire specifics. Every method runs when the routes are built, except
/// [`ProviderAdapter::rewrite_body`] (only on a request that is rewritten anyway).
pub(crate) trait ProviderAdapter: Sync {
    /// Appends the request line's path, after the `api_base`'s own path, for `route`; `model`
    /// is the upstream model (the deployment's, or what a wildcard filled in).
    fn path(&self, out: &mut Vec<u8>, d: &Deployment, model: &str, route: RouteKind, stream: bool);

    /// Whether the path names the model (then a wildcard's model needs a head of its own).
    fn names_model_in_path(&self) -> bool {
        false
    }

    /// Appends the header carrying the deployment's fixed credential, if it has one: by
    /// default its key as `authorization: Bearer`.
    fn credential_headers(&self, out: &mut Vec<u8>, _target: &Target, d: &Deployment) {
        if let Some(key) = d.api_key.as_deref() {
            bearer(out, key);
        }
    }

    /// Appends the provider's fixed headers after `content-type`.
    fn fixed_headers(&self, _out: &mut Vec<u8>, _stream: bool) {}

    /// Whether a streamed chat or Messages request goes to another path than a whole one.
    fn streams_elsewhere(&self) -> bool {
        false
    }

    /// Which of a caller's `anthropic-beta` betas the provider takes; `None`: all.
    fn betas(&self) -> Option<crate::request::BetaFilter> {
        None
    }

    /// A body already in the deployment's dialect, as the provider takes it.
    fn rewrite_body(&self, _d: &Deployment, body: Vec<u8>) -> Result<Vec<u8>, Untranslatable> {
        Ok(body)
    }
}

/// The adapter of `provider`.
pub(crate) fn adapter(provider: Provider) -> &'static dyn ProviderAdapter {
    match provider {
        Provider::OpenAi
        | Provider::HostedVllm
        | Provider::OpenRouter
        | Provider::Groq
        | Provider::TogetherAi
        | Provider::DeepSeek
        | Provider::Mistral
        | Provider::Codestral
        | Provider::FireworksAi
        | Provider::Xai
        | Provider::Ollama
        | Provider::OllamaChat
        | Provider::HuggingFace
        | Provider::Cohere
        | Provider::CohereChat
        | Provider::Compatible(_) => &openai_compatible::OpenAiCompatible,
        Provider::Anthropic => &anthropic::Anthropic,
        Provider::Azure => &azure::Azure,
        Provider::AzureAi => &azure_ai::AzureAi,
        Provider::Gemini => &gemini::Gemini,
        Provider::VertexAi => &vertex::VertexAi,
        Provider::Bedrock => &bedrock::Bedrock,
    }
}

const USER_AGENT: &str = concat!("pointwork/", env!("CARGO_PKG_VERSION"));

/// The fixed part of an upstream request head, up to `content-length`. The caller's own
/// credentials are never copied: the deployment's key is the only credential sent; signatures
/// and refreshed tokens are added per request (`crate::credentials`).
pub(crate) fn request_head(target: &Target, d: &Deployment, model: &str, route: RouteKind, stream: bool) -> Vec<u8> {
    let adapter = adapter(d.provider);
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(b"POST ");
    out.extend_from_slice(target.path_prefix.as_bytes());
    adapter.path(&mut out, d, model, route, stream);
    out.extend_from_slice(b" HTTP/1.1\r\n");
    write::header(&mut out, "host", target.authority.as_bytes());
    adapter.credential_headers(&mut out, target, d);
    write::header(&mut out, "content-type", b"application/json");
    adapter.fixed_headers(&mut out, stream);
    write::header(&mut out, "user-agent", USER_AGENT.as_bytes());
    out
}

/// Whether `d`'s provider names the model in the request's path (Azure, Bedrock, Vertex AI,
/// Gemini).
pub(crate) fn names_model_in_path(d: &Deployment) -> bool {
    adapter(d.provider).names_model_in_path()
}

/// Whether `d`'s streamed chat and Messages requests have heads of their own.
pub(crate) fn streams_elsewhere(d: &Deployment) -> bool {
    adapter(d.provider).streams_elsewhere()
}

/// `body`, translated into `d`'s dialect, as its provider takes it (Vertex AI's Anthropic body).
pub(crate) fn rewrite_body(d: &Deployment, body: Vec<u8>) -> Result<Vec<u8>, Untranslatable> {
    adapter(d.provider).rewrite_body(d, body)
}

/// Which of a caller's `anthropic-beta` betas `d`'s provider takes (`None`: all, as sent).
pub(crate) fn betas(d: &Deployment) -> Option<crate::request::BetaFilter> {
    adapter(d.provider).betas()
}

/// `authorization: Bearer {token}`.
fn bearer(out: &mut Vec<u8>, token: &str) {
    write::header(out, "authorization", format!("Bearer {token}").as_bytes());
}

/// `{collection}{model}{method}`, the model as one path segment: a path that names the model
/// (Gemini's `/models/{model}:generateContent`, Bedrock's `/model/{id}/converse`).
fn model_path(out: &mut Vec<u8>, collection: &str, model: &str, method: &str) {
    out.extend_from_slice(collection.as_bytes());
    percent_encode_into(out, model);
    out.extend_from_slice(method.as_bytes());
}

/// A model name as one path segment: unreserved bytes kept, the rest percent-encoded (Bedrock's
/// `…-v1:0` becomes `…-v1%3A0`, an ARN's `/` `%2F`).
fn percent_encode_into(out: &mut Vec<u8>, segment: &str) {
    for &b in segment.as_bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b);
        } else {
            out.extend_from_slice(format!("%{b:02X}").as_bytes());
        }
    }
}
