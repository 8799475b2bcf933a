//! What the proxy writes besides the answer it relays: the upstream request, the decision's
//! response headers, and the error replies of a failed attempt or a failed pick.

use pointwork_core::{Basis, Cause, Decision, DeploymentIdx, Dialect, RouteError, RoutingStrategy};

use crate::buffers::Buffers;
use crate::errors::openai_error;
use crate::facts::Extracted;
use crate::http::write;
use crate::pareto::Steered;
use crate::proxy::{HEADER_ATTEMPTS, HEADER_DEPLOYMENT, HEADER_MODEL_GROUP, HEADER_ROUTE};
use crate::respond::Reply;
use crate::routes::ANTHROPIC_VERSION;
use crate::server::endpoints::Request;
use crate::upstream::exchange::AttemptError;

/// The upstream request: precomputed head, content-length, and the body with `model` spliced
/// (and LiteLLM's top-level `tags` cut).
pub(crate) fn upstream_request(
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

/// An upstream request's head: the deployment's precomputed part, and the headers of this
/// request (an Anthropic deployment's `anthropic-version` and `anthropic-beta`), written
/// together without a copy of the head in between.
#[derive(Clone, Copy)]
pub(crate) struct UpstreamHead<'a> {
    pub(crate) fixed: &'a [u8],
    pub(crate) extra: [Option<(&'static str, &'a [u8])>; 2],
}

impl<'a> UpstreamHead<'a> {
    /// The head for a deployment speaking `dialect`: Anthropic's Messages API gets the caller's
    /// `anthropic-version` (else [`ANTHROPIC_VERSION`]) and `anthropic-beta`; every other
    /// dialect the fixed part alone.
    pub(crate) fn new(dialect: Dialect, fixed: &'a [u8], request: &Request<'a>) -> UpstreamHead<'a> {
        let extra = match dialect {
            Dialect::AnthropicMessages => [
                Some(("anthropic-version", request.anthropic.version.unwrap_or(ANTHROPIC_VERSION.as_bytes()))),
                request.anthropic.beta.map(|beta| ("anthropic-beta", beta)),
            ],
            _ => [None, None],
        };
        UpstreamHead { fixed, extra }
    }

    pub(crate) fn len(&self) -> usize {
        self.fixed.len() + self.extra.iter().flatten().map(|(n, v)| n.len() + v.len() + 4).sum::<usize>()
    }

    pub(crate) fn write_to(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.fixed);
        for (name, value) in self.extra.iter().flatten() {
            write::header(out, name, value);
        }
    }
}

pub(crate) fn decision_headers(
    snap: &pointwork_core::Snapshot,
    decision: &Decision,
    attempt: u32,
    before_pick: Option<&str>,
) -> Vec<u8> {
    let d = snap.deployment(decision.deployment);
    let mut out = Vec::with_capacity(256);
    write::header(&mut out, HEADER_DEPLOYMENT, d.id.as_bytes());
    write::header(&mut out, HEADER_MODEL_GROUP, snap.group(decision.group).name.as_bytes());
    write::header_decimal(&mut out, HEADER_ATTEMPTS, u64::from(attempt));
    match before_pick {
        // What decided before the pick first (the complexity router, the pareto walk), then the
        // pick's sentence.
        Some(before) => {
            let route = format!("{before}; {}", decision.route_reason(snap));
            write::header(&mut out, HEADER_ROUTE, route.as_bytes());
        }
        None => route_header(&mut out, snap, decision),
    }
    out
}

/// What decided before the pick, joined for the route line: the complexity router's decision,
/// then the pareto walk's.
pub(crate) fn before_pick(auto: Option<&str>, steered: Option<&Steered<'_>>) -> Option<String> {
    match (auto, steered.map(Steered::describe)) {
        (Some(auto), Some(walk)) => Some(format!("{auto}; {walk}")),
        (Some(auto), None) => Some(auto.to_string()),
        (None, walk) => walk,
    }
}

/// `x-pointwork-route`. The common decision — a fresh simple-shuffle pick that removed nothing —
/// is written straight into the head (formatting the sentence into a `String` cost ~1 400
/// instructions a request); any other takes the decision's own sentence.
fn route_header(out: &mut Vec<u8>, snap: &pointwork_core::Snapshot, decision: &Decision) {
    let plain = decision.rejected.is_empty()
        && decision.cause == Cause::Fresh
        && matches!(decision.basis, Basis::Weight(_))
        && snap.settings.routing_strategy == RoutingStrategy::SimpleShuffle;
    if !plain {
        write::header(out, HEADER_ROUTE, decision.route_reason(snap).as_bytes());
        return;
    }
    out.extend_from_slice(HEADER_ROUTE.as_bytes());
    out.extend_from_slice(b": ");
    out.extend_from_slice(RoutingStrategy::SimpleShuffle.as_str().as_bytes());
    out.extend_from_slice(b" picked ");
    out.extend_from_slice(snap.deployment(decision.deployment).id.as_bytes());
    out.extend_from_slice(b" of ");
    write::push_decimal(out, u64::from(decision.candidates));
    out.extend_from_slice(if decision.candidates == 1 { b" candidate\r\n" } else { b" candidates\r\n" });
}

pub(crate) fn error_reply(
    snap: &pointwork_core::Snapshot,
    idx: DeploymentIdx,
    attempts: u32,
    err: AttemptError,
) -> Reply {
    let d = snap.deployment(idx);
    let mut reply = Reply::json(err.status, err.body);
    reply.header(HEADER_DEPLOYMENT, d.id.as_bytes());
    reply.header(HEADER_MODEL_GROUP, d.model_name.as_bytes());
    reply.header_decimal(HEADER_ATTEMPTS, u64::from(attempts));
    if let Some(ra) = err.retry_after {
        reply.header("retry-after", ra.as_bytes());
    }
    reply
}

pub(crate) fn route_error_reply(e: &RouteError) -> Reply {
    let status = e.status();
    let param = matches!(e, RouteError::UnknownModel { .. }).then_some("model");
    let mut reply = Reply::json(status, openai_error(status, &e.to_string(), param));
    if let Some(secs) = e.retry_after_secs() {
        reply.header_decimal("retry-after", secs);
    }
    reply
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;
    use pointwork_core::{pick, Deployment, PickRequest, Provider, Rng, RouterSettings, Snapshot, State};

    #[test]
    fn the_route_header_says_what_the_decision_says() {
        let dep = |id: &str| Deployment::new(id, "gpt", Provider::OpenAi, "m", "http://127.0.0.1:1/v1");
        for deployments in [vec![dep("only")], vec![dep("a"), dep("b")]] {
            let snap = Snapshot::build(deployments, RouterSettings::default()).unwrap();
            let state = State::new(&snap);
            let req = PickRequest::new("gpt", &pointwork_core::NO_FACTS);
            let decision = pick(&snap, &state, &req, Instant::now(), &mut Rng::new(1)).unwrap();
            let mut out = Vec::new();
            route_header(&mut out, &snap, &decision);
            let expected = format!("{HEADER_ROUTE}: {}\r\n", decision.route_reason(&snap));
            assert_eq!(String::from_utf8(out).unwrap(), expected);
        }
    }
}
