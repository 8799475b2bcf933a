//! Google AI Studio's Gemini API: `generateContent` (`dialect/src/gemini`),
//! `{api_base}/models/{model}:generateContent`, streams on `:streamGenerateContent?alt=sse`,
//! embeddings on `:batchEmbedContents`; the key as `x-goog-api-key`.

use pointwork_core::{Deployment, RouteKind};

use super::{model_path, ProviderAdapter};
use crate::http::write;
use crate::upstream::target::Target;

pub(super) struct Gemini;

impl ProviderAdapter for Gemini {
    fn path(&self, out: &mut Vec<u8>, _d: &Deployment, model: &str, route: RouteKind, stream: bool) {
        generate_content_path(out, model, route, stream);
    }

    fn names_model_in_path(&self) -> bool {
        true
    }

    fn credential_headers(&self, out: &mut Vec<u8>, _target: &Target, d: &Deployment) {
        x_goog_api_key(out, d);
    }

    fn streams_elsewhere(&self) -> bool {
        true
    }
}

/// `/models/{model}:{method}`: the path of a `generateContent` model (also on Vertex AI).
pub(super) fn generate_content_path(out: &mut Vec<u8>, model: &str, route: RouteKind, stream: bool) {
    let method = match (route, stream) {
        (RouteKind::Embeddings, _) => ":batchEmbedContents",
        (_, true) => ":streamGenerateContent?alt=sse",
        (_, false) => ":generateContent",
    };
    model_path(out, "/models/", model, method);
}

/// The deployment's key as `x-goog-api-key`.
pub(super) fn x_goog_api_key(out: &mut Vec<u8>, d: &Deployment) {
    if let Some(key) = d.api_key.as_deref() {
        write::header(out, "x-goog-api-key", key.as_bytes());
    }
}
