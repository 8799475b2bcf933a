//! Google Cloud Vertex AI: Gemini models through `generateContent` (paths as the Gemini API's,
//! under `…/publishers/google`), Anthropic's models through the Messages API on `:rawPredict` /
//! `:streamRawPredict` (under `…/publishers/anthropic`) with the model in the path and
//! Vertex's `anthropic_version` in the body. Its credential is a service account's token,
//! obtained and refreshed off the hot path (`crate::credentials::tokens`).

use pointwork_core::{Deployment, Dialect, RouteKind};

use super::anthropic::x_api_key;
use super::gemini::{generate_content_path, x_goog_api_key};
use super::{model_path, ProviderAdapter};
use crate::dialect::Untranslatable;
use crate::upstream::target::Target;

/// Vertex AI's version of Anthropic's Messages API.
const VERTEX_ANTHROPIC_VERSION: &str = "vertex-2023-10-16";

pub(super) struct VertexAi;

impl ProviderAdapter for VertexAi {
    fn path(&self, out: &mut Vec<u8>, d: &Deployment, route: RouteKind, stream: bool) {
        if d.dialect() != Dialect::AnthropicMessages {
            return generate_content_path(out, d, route, stream);
        }
        let method = if stream { ":streamRawPredict" } else { ":rawPredict" };
        model_path(out, "/models/", &d.upstream_model, method);
    }

    fn credential_headers(&self, out: &mut Vec<u8>, _target: &Target, d: &Deployment) {
        match d.dialect() {
            Dialect::AnthropicMessages => x_api_key(out, d),
            _ => x_goog_api_key(out, d),
        }
    }

    fn streams_elsewhere(&self) -> bool {
        true
    }

    fn rewrite_body(&self, d: &Deployment, body: Vec<u8>) -> Result<Vec<u8>, Untranslatable> {
        match d.dialect() {
            Dialect::AnthropicMessages => anthropic_body(&body),
            _ => Ok(body),
        }
    }
}

/// A Messages body as Vertex AI takes it: no `model` (it is in the path), `anthropic_version`
/// set.
fn anthropic_body(body: &[u8]) -> Result<Vec<u8>, Untranslatable> {
    let mut map = crate::dialect::parse_request(body)?;
    map.remove("model");
    map.insert("anthropic_version".into(), VERTEX_ANTHROPIC_VERSION.into());
    Ok(crate::dialect::json_bytes(&serde_json::Value::Object(map)))
}
