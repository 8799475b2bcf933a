//! What the LiteLLM pick adds to an answer: the decision's headers, with what decided before the
//! pick (the complexity router, the pareto walk) ahead of the pick's own sentence.

use pointwork_core::{Basis, Cause, Decision, RoutingStrategy};

use crate::http::write;
use crate::request::{HEADER_ATTEMPTS, HEADER_DEPLOYMENT, HEADER_MODEL_GROUP, HEADER_ROUTE};
use crate::routers::pareto::Steered;

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
