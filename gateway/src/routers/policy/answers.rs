//! What the policy router answers: the decision's headers and the `llmeu` block every answer
//! carries, and its refusals in the OpenAI error shape with the code that names them.

use pointwork_core::policy::{AdmitRefusal, PolicyEndpoint, PolicyRefusal};
use serde_json::json;

use crate::http::write;
use crate::request::{HEADER_ATTEMPTS, HEADER_DEPLOYMENT, HEADER_MODEL_GROUP, HEADER_ROUTE};
use crate::respond::Reply;
use crate::routes::Routes;

/// The `llmeu` block's headers.
pub const HEADER_MODEL_USED: &str = "x-llmeu-model-used";
pub const HEADER_INFERENCE_REGION: &str = "x-llmeu-inference-region";
pub const HEADER_SOVEREIGNTY_CLASS: &str = "x-llmeu-sovereignty-class";
pub const HEADER_POLICY_ID: &str = "x-llmeu-policy-id";
pub const HEADER_ROUTE_REASON: &str = "x-llmeu-route-reason";

/// The member of a response that reports the choice.
pub(super) const LLMEU_BLOCK: &str = "llmeu";

/// The code of a request whose `llmeu` object or headers cannot be read.
pub(super) const INVALID_LLMEU: &str = "invalid_llmeu";

/// The decision's headers: the gateway's own and the `llmeu` block's.
pub(super) fn headers(routes: &Routes, e: &PolicyEndpoint, policy: &str, reason: &str, attempt: u32) -> Vec<u8> {
    let d = routes.snapshot.deployment(e.deployment);
    let mut out = Vec::with_capacity(512);
    write::header(&mut out, HEADER_DEPLOYMENT, d.id.as_bytes());
    write::header(&mut out, HEADER_MODEL_GROUP, d.model_name.as_bytes());
    write::header_decimal(&mut out, HEADER_ATTEMPTS, u64::from(attempt));
    write::header(&mut out, HEADER_ROUTE, reason.as_bytes());
    for (name, value) in llmeu_headers(e, policy, reason) {
        write::header(&mut out, name, value.as_bytes());
    }
    out
}

fn llmeu_headers<'a>(e: &'a PolicyEndpoint, policy: &'a str, reason: &'a str) -> [(&'static str, &'a str); 5] {
    [
        (HEADER_MODEL_USED, &e.model),
        (HEADER_INFERENCE_REGION, &e.region),
        (HEADER_SOVEREIGNTY_CLASS, e.class.as_str()),
        (HEADER_POLICY_ID, policy),
        (HEADER_ROUTE_REASON, reason),
    ]
}

/// The `llmeu` block a response carries: what served it, where, under which policy, and why.
pub(super) fn llmeu_block(e: &PolicyEndpoint, policy: &str, reason: &str) -> Vec<u8> {
    let block = json!({
        "model_used": &*e.model,
        "inference_region": &*e.region,
        "sovereignty_class": e.class.as_str(),
        "policy_id": policy,
        "route_reason": reason,
    });
    block.to_string().into_bytes()
}

pub(super) fn add_llmeu_headers(reply: &mut Reply, e: &PolicyEndpoint, policy: &str, reason: &str) {
    for (name, value) in llmeu_headers(e, policy, reason) {
        reply.header(name, value.as_bytes());
    }
}

/// An error in the OpenAI shape whose `code` names what happened (`no_endpoint_for_policy`, …),
/// with an `llmeu` block when there is something to say in it.
fn policy_error(kind: &str, code: &str, message: &str, llmeu: Option<serde_json::Value>) -> Vec<u8> {
    let mut body = json!({"error": {"message": message, "type": kind, "param": null, "code": code}});
    if let Some(block) = llmeu {
        body["llmeu"] = block;
    }
    body.to_string().into_bytes()
}

pub(super) fn bad_request(message: &str) -> Reply {
    Reply::json(400, policy_error("invalid_request_error", INVALID_LLMEU, message, None))
}

pub(super) fn admission_reply(refusal: &AdmitRefusal) -> Reply {
    let status = 400;
    let kind = match refusal {
        AdmitRefusal::BudgetExceeded { .. } => "budget_exceeded",
        _ => "invalid_request_error",
    };
    Reply::json(status, policy_error(kind, refusal.code(), &refusal.to_string(), None))
}

/// The refusals' statuses: 409 for what the policy rules out (`no_endpoint_for_policy`,
/// `hosted_unavailable`), 404 for a model that does not exist, 403 for one the policy denies,
/// 400 for one that cannot answer a chat.
pub(crate) fn refusal_status(refusal: &PolicyRefusal) -> u16 {
    match refusal {
        PolicyRefusal::NoEndpoint { .. } | PolicyRefusal::HostedUnavailable(_) => 409,
        PolicyRefusal::ModelNotFound(_) => 404,
        PolicyRefusal::ModelDenied(_) => 403,
        PolicyRefusal::NotATextModel(_) => 400,
    }
}

pub(super) fn refusal_reply(refusal: &PolicyRefusal, policy: &str, residency: &str) -> Reply {
    let status = refusal_status(refusal);
    let kind = match refusal {
        PolicyRefusal::ModelNotFound(_) => "not_found_error",
        PolicyRefusal::ModelDenied(_) => "permission_error",
        _ => "invalid_request_error",
    };
    let block = json!({"model_requested": refusal.model(), "policy_id": policy, "residency_requested": residency});
    let mut reply = Reply::json(status, policy_error(kind, refusal.code(), &refusal.to_string(), Some(block)));
    reply.header(HEADER_POLICY_ID, policy.as_bytes());
    reply
}
