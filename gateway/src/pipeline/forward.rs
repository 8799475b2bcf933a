//! The forward phase: an attempt's upstream request — the deployment's precomputed head, the
//! headers of this request, and the body with `model` spliced, the deployment's `extra_body`
//! added, or translated into the provider's dialect (`translate`).

use pointwork_core::{DeploymentIdx, RouteKind};

use super::translate;
use crate::buffers::Buffers;
use crate::facts::Extracted;
use crate::http::write;
use crate::request::{UpstreamHead, HEADER_DROPPED};
use crate::respond::Reply;
use crate::routers::pareto::body::with_extra_body;
use crate::routers::{Attempt, Cx, ExtraBody};
use crate::upstream::attempt_error::AttemptError;

/// The request `attempt` sends, translated into the deployment's dialect or not, or the 400
/// naming what cannot be translated. What a translation dropped is named in the attempt's
/// labels (`x-pointwork-dropped`).
pub(super) fn attempt_request(cx: &Cx<'_>, attempt: &mut Attempt, translating: bool) -> Result<Vec<u8>, Reply> {
    let (routes, body, extracted) = (cx.routes, cx.request.body, cx.extracted);
    let idx = attempt.deployment;
    let upstream = &routes.upstreams[idx.get()];
    let deployment = routes.snapshot.deployment(idx);
    let model_json = attempt.model_json.as_deref().unwrap_or(&upstream.model_json);
    // A translated Responses request is a chat request from here on.
    let sent_as = match (cx.route, translating) {
        (RouteKind::Responses, true) => RouteKind::ChatCompletions,
        (route, _) => route,
    };
    let head = UpstreamHead::new(deployment.dialect(), upstream.head(sent_as, extracted.facts.stream), cx.request)
        .with_betas(crate::providers::betas(deployment));
    if translating || deployment.rewrites_body() {
        let translated = translate::request(cx, deployment, head, model_json)?;
        if !translated.dropped.is_empty() {
            write::header(&mut attempt.labels, HEADER_DROPPED, translated.dropped.join(",").as_bytes());
        }
        return Ok(translated.body);
    }
    Ok(match &attempt.extra_body {
        ExtraBody::Added(edit) if edit.is_some() || !deployment.extra_body.is_empty() => {
            with_extra_body(routes, edit.as_ref(), idx, head, body, extracted, model_json)
        }
        _ => upstream_request(head, body, extracted, model_json, &cx.shard.upstream.buffers),
    })
}

/// `request` with deployment `idx`'s credential added (a SigV4 signature, a refreshed token),
/// or the attempt's error when there is none to add.
pub(super) fn authorize(cx: &Cx<'_>, idx: DeploymentIdx, request: Vec<u8>) -> Result<Vec<u8>, AttemptError> {
    match &cx.routes.upstreams[idx.get()].auth {
        Some(auth) => auth.authorize(request, &cx.routes.snapshot.deployment(idx).id),
        None => Ok(request),
    }
}

/// The upstream request: precomputed head, content-length, and the body with `model` spliced
/// (and LiteLLM's top-level `tags` cut).
fn upstream_request(
    head: UpstreamHead<'_>,
    body: &[u8],
    extracted: &Extracted,
    model_json: &[u8],
    buffers: &Buffers,
) -> Vec<u8> {
    let len = extracted.forwarded_len(body, model_json);
    let mut out = buffers.take(head.len() + 32 + len);
    head.write_to(&mut out);
    write::header_decimal(&mut out, "content-length", len as u64);
    write::end_head(&mut out);
    extracted.append_forwarded(&mut out, body, model_json);
    out
}
