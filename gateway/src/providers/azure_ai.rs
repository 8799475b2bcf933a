//! Azure AI Foundry's OpenAI-compatible model inference API: OpenAI's paths under the
//! `api_base` (`…/models` on an AI Foundry host), `?api-version=V` only when one is given; the
//! key as `api-key` on Azure's own hosts and as `authorization: Bearer` elsewhere (a serverless
//! endpoint), as LiteLLM decides; or an Entra ID token as for Azure OpenAI.

use pointwork_core::{Deployment, RouteKind};

use super::azure::entra_token;
use super::{bearer, ProviderAdapter};
use crate::http::write;
use crate::upstream::target::Target;

pub(super) struct AzureAi;

impl ProviderAdapter for AzureAi {
    fn path(&self, out: &mut Vec<u8>, d: &Deployment, _model: &str, route: RouteKind, _stream: bool) {
        out.extend_from_slice(d.provider.upstream_path(route).as_bytes());
        if let Some(version) = &d.api_version {
            out.extend_from_slice(b"?api-version=");
            out.extend_from_slice(version.as_bytes());
        }
    }

    fn credential_headers(&self, out: &mut Vec<u8>, target: &Target, d: &Deployment) {
        match d.api_key.as_deref() {
            Some(key) if takes_api_key_header(&target.host) => write::header(out, "api-key", key.as_bytes()),
            Some(key) => bearer(out, key),
            None => {}
        }
        entra_token(out, d);
    }
}

/// Whether an Azure AI endpoint takes its key as `api-key` (Azure's own hosts) rather than as a
/// bearer token.
fn takes_api_key_header(host: &str) -> bool {
    host.ends_with(".services.ai.azure.com") || host.ends_with(".openai.azure.com")
}
