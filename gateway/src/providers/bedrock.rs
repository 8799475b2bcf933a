//! AWS Bedrock: the Converse API (`dialect/src/bedrock`), `{api_base}/model/{id}/converse`,
//! streams on `/converse-stream` as AWS's binary event stream (asked for with `accept`),
//! embeddings through InvokeModel (`/model/{id}/invoke`). Every request is signed with SigV4
//! (`crate::credentials::sigv4`); a fixed key, when given, goes as `authorization: Bearer`.

use pointwork_core::{Deployment, RouteKind};

use super::{model_path, ProviderAdapter};
use crate::http::write;

pub(super) struct Bedrock;

impl ProviderAdapter for Bedrock {
    fn path(&self, out: &mut Vec<u8>, _d: &Deployment, model: &str, route: RouteKind, stream: bool) {
        let action = match (route, stream) {
            (RouteKind::Embeddings, _) => "/invoke",
            (_, true) => "/converse-stream",
            (_, false) => "/converse",
        };
        model_path(out, "/model/", model, action);
    }

    fn names_model_in_path(&self) -> bool {
        true
    }

    fn fixed_headers(&self, out: &mut Vec<u8>, stream: bool) {
        let accept: &[u8] = if stream { b"application/vnd.amazon.eventstream" } else { b"application/json" };
        write::header(out, "accept", accept);
    }

    fn streams_elsewhere(&self) -> bool {
        true
    }
}
