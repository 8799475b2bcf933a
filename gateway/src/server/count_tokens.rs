//! `POST /v1/messages/count_tokens` for every model: asked of an Anthropic deployment of the
//! model's group when it has one (Anthropic's own count), else — or when that fails — the
//! gateway's own prompt estimate, the one the context-window check uses (docs/routing.md, "The
//! prompt estimate").

use std::time::Duration;

use pointwork_core::{Provider, Resolution, RouteKind};

use crate::facts::{self, Needs};
use crate::request::{Request, ANTHROPIC_VERSION};
use crate::respond::Reply;
use crate::shard::Shard;
use crate::upstream::fetch::{self, Client};

/// How long the provider's count may take before the estimate answers instead.
const NATIVE_TIMEOUT: Duration = Duration::from_secs(10);

pub async fn count_tokens(shard: &Shard, req: &Request<'_>) -> Reply {
    let extracted = match facts::extract_to(RouteKind::Messages, req.body, Needs { prompt: true, ..Needs::NONE }) {
        Ok(e) => e,
        Err(e) => return Reply::json(400, crate::errors::openai_error(400, &e.to_string(), e.param())),
    };
    if let Some(counted) = ask_anthropic(shard, req, &extracted.facts.model).await {
        return Reply::json(200, counted);
    }
    let estimate = serde_json::json!({"input_tokens": extracted.facts.estimated_prompt_tokens});
    Reply::json(200, estimate.to_string().into_bytes())
}

/// Anthropic's count, from the first Anthropic deployment of `model`'s group; `None` when the
/// group has none or the count failed.
async fn ask_anthropic(shard: &Shard, req: &Request<'_>, model: &str) -> Option<Vec<u8>> {
    let routes = shard.sync();
    let snap = &routes.snapshot;
    let Resolution::Group { group, .. } = snap.resolve(model) else { return None };
    let idx = *snap.group(group).members.iter().find(|&&i| snap.deployment(i).provider == Provider::Anthropic)?;
    let (d, upstream) = (snap.deployment(idx), &routes.upstreams[idx.get()]);
    let mut body: serde_json::Value = serde_json::from_slice(req.body).ok()?;
    body["model"] = d.upstream_model.clone().into();
    // Fields a count refuses (it counts the prompt, it does not answer it).
    for field in ["max_tokens", "stream", "temperature", "top_p", "top_k", "stop_sequences", "metadata", "service_tier"]
    {
        body.as_object_mut()?.remove(field);
    }
    let body = serde_json::to_vec(&body).ok()?;
    let head = std::str::from_utf8(&upstream.messages_head).ok()?;
    let head = head.replacen("/v1/messages ", "/v1/messages/count_tokens ", 1);
    let mut request = head.into_bytes();
    let version = req.anthropic.version.unwrap_or(ANTHROPIC_VERSION.as_bytes());
    crate::http::write::header(&mut request, "anthropic-version", version);
    if let Some(beta) = req.anthropic.beta {
        crate::http::write::header(&mut request, "anthropic-beta", beta);
    }
    crate::http::write::header_decimal(&mut request, "content-length", body.len() as u64);
    crate::http::write::end_head(&mut request);
    request.extend_from_slice(&body);
    let client = Client { tls: Ok(shard.upstream.tls.clone()), timeout: NATIVE_TIMEOUT, max_body: 1 << 20 };
    let answer = fetch::send(&client, &upstream.target, request).await.ok()?;
    let counted: serde_json::Value = serde_json::from_slice(&answer).ok()?;
    counted.get("input_tokens")?.as_u64()?;
    Some(answer)
}
