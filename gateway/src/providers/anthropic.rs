//! Anthropic's Messages API: `{api_base}/v1/messages` for every route (a chat request
//! translated to it), the key as `x-api-key`. The `anthropic-version` and `anthropic-beta`
//! headers are the caller's, added per request (`crate::request::UpstreamHead`).

use pointwork_core::{Deployment, RouteKind};

use super::ProviderAdapter;
use crate::http::write;
use crate::upstream::target::Target;

pub(super) struct Anthropic;

impl ProviderAdapter for Anthropic {
    fn path(&self, out: &mut Vec<u8>, d: &Deployment, _model: &str, route: RouteKind, _stream: bool) {
        out.extend_from_slice(d.provider.upstream_path(route).as_bytes());
    }

    fn credential_headers(&self, out: &mut Vec<u8>, _target: &Target, d: &Deployment) {
        x_api_key(out, d);
    }
}

/// The deployment's key as `x-api-key`, as Anthropic's Messages API takes it (also on Vertex AI).
pub(super) fn x_api_key(out: &mut Vec<u8>, d: &Deployment) {
    if let Some(key) = d.api_key.as_deref() {
        write::header(out, "x-api-key", key.as_bytes());
    }
}
