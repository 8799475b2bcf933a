//! Azure OpenAI: OpenAI's wire format under a resource endpoint,
//! `{api_base}/openai/deployments/{deployment}/chat/completions?api-version=V` (the deployment
//! name percent-encoded; the version checked at load, else the default) and
//! `{api_base}/openai/responses?api-version=V` (the deployment is the body's `model`), the key as `api-key`,
//! or a Microsoft Entra ID token as `authorization: Bearer` — a fixed `azure_ad_token`, or one
//! obtained with client credentials and refreshed (`crate::credentials::tokens`).

use pointwork_core::{Deployment, RouteKind};

use super::{bearer, percent_encode_into, ProviderAdapter};
use crate::http::write;
use crate::upstream::target::Target;

pub(super) struct Azure;

impl ProviderAdapter for Azure {
    fn path(&self, out: &mut Vec<u8>, d: &Deployment, model: &str, route: RouteKind, _stream: bool) {
        if route == RouteKind::Responses {
            // The Responses API names the deployment in the body's `model`, not in the path.
            out.extend_from_slice(b"/openai/responses");
        } else {
            out.extend_from_slice(b"/openai/deployments/");
            percent_encode_into(out, model);
            out.extend_from_slice(d.provider.upstream_path(route).as_bytes());
        }
        out.extend_from_slice(b"?api-version=");
        let version = d.api_version.as_deref().unwrap_or(pointwork_config::AZURE_DEFAULT_API_VERSION);
        out.extend_from_slice(version.as_bytes());
    }

    fn names_model_in_path(&self) -> bool {
        true
    }

    fn credential_headers(&self, out: &mut Vec<u8>, _target: &Target, d: &Deployment) {
        if let Some(key) = d.api_key.as_deref() {
            write::header(out, "api-key", key.as_bytes());
        }
        entra_token(out, d);
    }
}

/// A fixed Entra ID token (`azure_ad_token`) as `authorization: Bearer`, when there is no key.
pub(super) fn entra_token(out: &mut Vec<u8>, d: &Deployment) {
    if let (None, Some(token)) = (&d.api_key, &d.azure_ad_token) {
        bearer(out, token);
    }
}
