//! The forward phase: an attempt's upstream request — the deployment's precomputed head, the
//! headers of this request, and the body with `model` spliced, the deployment's `extra_body`
//! and request defaults added (`parameters`), or translated into the provider's dialect
//! (`translate`).

use pointwork_core::{Deployment, DeploymentIdx, Dialect, Provider, RouteKind};

use super::parameters::{edited, request_defaults};
use super::translate;
use crate::buffers::Buffers;
use crate::facts::Extracted;
use crate::http::write;
use crate::request::{UpstreamHead, HEADER_DROPPED};
use crate::respond::Reply;
use crate::routers::pareto::body::{extra_body_members, walked_provider_block};
use crate::routers::{Attempt, Cx, ExtraBody};
use crate::upstream::attempt_error::AttemptError;

/// The request `attempt` sends, translated into the deployment's dialect or not, or the 400
/// naming what cannot be translated. What a translation dropped is named in the attempt's
/// labels (`x-pointwork-dropped`).
/// `trace`: the Trace Context lines the upstream gets.
pub(super) fn attempt_request(
    cx: &Cx<'_>,
    attempt: &mut Attempt,
    translating: bool,
    trace: Option<&[u8]>,
) -> Result<Vec<u8>, Reply> {
    let (routes, body, extracted) = (cx.routes, cx.request.body, cx.extracted);
    attempt.usage_asked = false;
    let idx = attempt.deployment;
    let upstream = &routes.upstreams[idx.get()];
    let deployment = routes.snapshot.deployment(idx);
    let model_json = attempt.model_json.as_deref().unwrap_or(&upstream.model_json);
    // A translated Responses request is a chat request from here on.
    let sent_as = match (cx.route, translating) {
        (RouteKind::Responses, true) => RouteKind::ChatCompletions,
        (route, _) => route,
    };
    let stream = extracted.facts.stream;
    // A wildcard's model in a provider's path makes this request's head; every other head is
    // the deployment's, built once.
    let wildcard_head = match &attempt.model_json {
        Some(json) if crate::providers::names_model_in_path(deployment) => {
            let model: String = serde_json::from_slice(json).unwrap_or_default();
            Some(upstream.head_with_model(deployment, &model, sent_as, stream))
        }
        _ => None,
    };
    let fixed = wildcard_head.as_deref().unwrap_or_else(|| upstream.head(sent_as, stream));
    let head = UpstreamHead::new(deployment.dialect(), fixed, cx.request)
        .with_betas(crate::providers::betas(deployment))
        .with_trace(trace);
    if translating || deployment.rewrites_body() {
        let translated = translate::request(cx, deployment, head, model_json)?;
        if !translated.dropped.is_empty() {
            write::header(&mut attempt.labels, HEADER_DROPPED, translated.dropped.join(",").as_bytes());
        }
        return Ok(translated.body);
    }
    let extra_body = match &attempt.extra_body {
        ExtraBody::Added(edit) if edit.is_some() || !deployment.extra_body.is_empty() => Some(edit.as_ref()),
        _ => None,
    };
    let ask = asks_for_usage(cx, attempt, deployment);
    attempt.usage_asked = ask.is_some();
    if extra_body.is_none() && !deployment.edits_parameters() {
        return Ok(upstream_request(head, body, extracted, model_json, ask, &cx.shard.upstream.buffers));
    }
    let walked = extra_body.and_then(|edit| walked_provider_block(routes, edit, idx));
    let mut added: Vec<(&str, &str)> = match extra_body {
        Some(_) => extra_body_members(&deployment.extra_body, walked.as_deref()).collect(),
        None => Vec::new(),
    };
    if ask.is_some() {
        added.push(("stream_options", STREAM_OPTIONS_USAGE));
    }
    let shape = (cx.route != RouteKind::Embeddings).then(|| cx.route.dialect());
    added.extend(request_defaults(deployment, shape));
    let mut forwarded = Vec::with_capacity(extracted.forwarded_len(body, model_json));
    extracted.append_forwarded(&mut forwarded, body, model_json);
    let rename = deployment.max_tokens_as_max_completion_tokens && shape == Some(Dialect::OpenAiChat);
    let edited = edited(&forwarded, &added, rename);
    let mut out = cx.shard.upstream.buffers.take(head.len() + 32 + edited.len());
    head.write_to(&mut out);
    write::header_decimal(&mut out, "content-length", edited.len() as u64);
    write::end_head(&mut out);
    out.extend_from_slice(&edited);
    Ok(out)
}

/// What a chat stream adds so that its upstream reports usage: the client did not ask for it
/// (no `stream_options`), but someone reads it (a budget, spend, usage-based routing). LiteLLM
/// counts such a stream's tokens itself; here the provider counts them, and the event carrying
/// them is cut from what the client hears (`crate::usage::UsageEventCut`).
const STREAM_USAGE: &[u8] = br#""stream_options":{"include_usage":true},"#;
/// [`STREAM_USAGE`]'s value, as a member added among others.
const STREAM_OPTIONS_USAGE: &str = r#"{"include_usage":true}"#;

/// Where [`STREAM_USAGE`] goes in the body (just inside its `{`), when it is asked for.
fn asks_for_usage(cx: &Cx<'_>, attempt: &Attempt, deployment: &Deployment) -> Option<usize> {
    if !attempt.read_usage || !cx.extracted.facts.stream || cx.route != RouteKind::ChatCompletions {
        return None;
    }
    if deployment.dialect() != Dialect::OpenAiChat || !takes_stream_options(deployment) {
        return None;
    }
    let body = cx.request.body;
    if memchr::memmem::find(body, b"\"stream_options\"").is_some() {
        return None;
    }
    let open = body.iter().position(|c| !c.is_ascii_whitespace()).filter(|&i| body[i] == b'{')? + 1;
    let first = body[open..].iter().position(|c| !c.is_ascii_whitespace())?;
    (body[open + first] == b'"').then_some(open)
}

/// Whether the deployment's API takes `stream_options` (a strict one refuses what it does not
/// know: Azure before `2024-09-01-preview` answers 400). The others are left as they are; a
/// stream of theirs without usage is not charged.
fn takes_stream_options(deployment: &Deployment) -> bool {
    match deployment.provider {
        Provider::OpenAi | Provider::HostedVllm | Provider::OpenRouter | Provider::DeepSeek => true,
        // `YYYY-MM-DD[-preview]` compares as text.
        Provider::Azure => deployment.api_version.as_deref().is_some_and(|v| v >= "2024-09-01"),
        _ => false,
    }
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
/// (and LiteLLM's top-level `tags` cut, and [`STREAM_USAGE`] added when asked for).
fn upstream_request(
    head: UpstreamHead<'_>,
    body: &[u8],
    extracted: &Extracted,
    model_json: &[u8],
    ask_usage_at: Option<usize>,
    buffers: &Buffers,
) -> Vec<u8> {
    let added = if ask_usage_at.is_some() { STREAM_USAGE.len() } else { 0 };
    let len = extracted.forwarded_len(body, model_json) + added;
    let mut out = buffers.take(head.len() + 32 + len);
    head.write_to(&mut out);
    write::header_decimal(&mut out, "content-length", len as u64);
    write::end_head(&mut out);
    let body_at = out.len();
    extracted.append_forwarded(&mut out, body, model_json);
    if let Some(at) = ask_usage_at {
        // Before `model` and every member cut: the bytes up to `at` are the body's own.
        out.splice(body_at + at..body_at + at, STREAM_USAGE.iter().copied());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_apis_that_take_stream_options_are_asked_for_usage() {
        let deployment = |provider, version: Option<&str>| {
            let mut d = Deployment::new("d", "m", provider, "m", "http://127.0.0.1:9");
            d.api_version = version.map(str::to_string);
            d
        };
        assert!(takes_stream_options(&deployment(Provider::OpenAi, None)));
        assert!(takes_stream_options(&deployment(Provider::HostedVllm, None)));
        assert!(takes_stream_options(&deployment(Provider::Azure, Some("2024-10-21"))));
        assert!(takes_stream_options(&deployment(Provider::Azure, Some("2024-09-01-preview"))));
        assert!(!takes_stream_options(&deployment(Provider::Azure, Some("2024-02-15-preview"))));
        assert!(!takes_stream_options(&deployment(Provider::Azure, None)));
        assert!(!takes_stream_options(&deployment(Provider::Mistral, None)));
    }
}
