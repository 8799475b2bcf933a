//! The routers: what the attempt loop (`crate::pipeline::attempts`) asks which deployment the
//! next attempt goes to, what to do after an attempt failed, and what the answer's headers and
//! the log say about the choice.
//!
//! - `litellm`: LiteLLM's pick and its walk of retries, order tiers and fallbacks. The two
//!   auto-routers narrow it: `complexity` decides the group once per request, `pareto` the
//!   providers of a managed OpenRouter group once per attempt.
//! - `policy`: the residency policy router; its failover never leaves the policy's decision.

pub(crate) mod complexity;
pub(crate) mod litellm;
pub(crate) mod pareto;
pub mod policy;

use std::sync::Arc;
use std::time::{Duration, Instant};

use pointwork_core::{DeploymentIdx, RouteError, RouteKind, Snapshot};

use crate::errors::openai_error;
use crate::facts::Extracted;
use crate::keys::{Caller, VirtualKey};
use crate::request::{Ending, Request, HEADER_ATTEMPTS, HEADER_DEPLOYMENT, HEADER_MODEL_GROUP};
use crate::respond::Reply;
use crate::routes::Routes;
use crate::shard::Shard;
use crate::upstream::exchange::{AttemptError, Delivered};
use crate::usage::Usage;
use pareto::body::ProviderEdit;

/// What a router reads of the request it routes (every phase after `understand` reads it).
pub(crate) struct Cx<'a> {
    pub(crate) shard: &'a Shard,
    /// The routes the request started with (it keeps them through a reload).
    pub(crate) routes: &'a Arc<Routes>,
    /// The API surface called.
    pub(crate) route: RouteKind,
    pub(crate) request: &'a Request<'a>,
    pub(crate) extracted: &'a Extracted,
    pub(crate) caller: &'a Caller,
    /// The caller's virtual key, if it has one.
    pub(crate) key: Option<&'a VirtualKey>,
    /// A Responses request's place in its conversation.
    pub(crate) responses: Option<&'a crate::responses::Turn<'a>>,
    /// The response cache's miss: where the answer is stored once it ended well.
    pub(crate) cache: Option<&'a crate::cache::Miss>,
}

/// One router's part in a request: asked before every attempt and after every failure.
pub(crate) trait Router {
    /// What the router keeps of its choice until the attempt ends (the pick's decision, the
    /// endpoint's place in the failover order).
    type Chosen;

    /// Where the next attempt goes, or the answer that ends the request. `now`: the clock read
    /// the choice is made at.
    fn choose(&mut self, now: Instant) -> Next<Self::Chosen>;

    /// Why `chosen` went where it did (`fresh`, `retry`, `fallback`, a policy's failover), for
    /// the attempt's span.
    fn cause(&self, chosen: &Self::Chosen) -> &'static str;

    /// The attempt goes out now (its request is written).
    fn sending(&mut self, _chosen: &Self::Chosen, _now: Instant) {}

    /// The answer's usage arrived (before its end reaches the client): what it cost.
    fn spent(&self, idx: DeploymentIdx, started: Instant, usage: Option<Usage>);

    /// The attempt at `idx` was answered: how the request ended ([`delivered`] and the route).
    fn delivered(&mut self, chosen: Self::Chosen, idx: DeploymentIdx, d: &Delivered) -> Ending;

    /// The attempt at `idx` failed before anything reached the client: try again (after a
    /// pause), or the answer that ends the request.
    fn after_failure(&mut self, chosen: Self::Chosen, idx: DeploymentIdx, err: AttemptError) -> AfterFailure;

    /// The request could not be written in the deployment's dialect (`reply` says why).
    fn unforwardable(&mut self, _reply: &Reply) {}
}

/// What a router chose.
pub(crate) enum Next<C> {
    /// An attempt, and what the router keeps of its choice.
    Attempt(Attempt, C),
    /// Nothing (more) to try: the answer and how the request ended.
    End(Reply, Ending),
}

/// What a router decided after a failed attempt.
// Returned once per failed attempt and matched at once: not worth a box.
#[allow(clippy::large_enum_variant)]
pub(crate) enum AfterFailure {
    /// Choose again, after this pause.
    Again(Duration),
    End(Reply, Ending),
}

/// One attempt as a router chose it; the forward phase writes its request.
pub(crate) struct Attempt {
    pub(crate) deployment: DeploymentIdx,
    /// When the attempt starts (its timeouts and latency count from here).
    pub(crate) started: Instant,
    /// The response headers that name the decision.
    pub(crate) labels: Vec<u8>,
    /// The model sent upstream when not the deployment's own (what a wildcard's `*` matched),
    /// JSON-encoded.
    pub(crate) model_json: Option<Vec<u8>>,
    /// Whether the deployment's `extra_body` is added, and how the pareto walk edits its
    /// `provider` block.
    pub(crate) extra_body: ExtraBody,
    /// A member added to a JSON answer in the client's own dialect (the policy router's `llmeu`).
    pub(crate) block: Option<(&'static str, Vec<u8>)>,
    /// Whether the answer's usage is read (spend, budgets, usage-based routing).
    pub(crate) read_usage: bool,
    /// The upstream stream was asked for its usage on the client's behalf (set when the request
    /// is written): its usage-only event is cut from what the client hears.
    pub(crate) usage_asked: bool,
}

/// What becomes of a deployment's `extra_body` members.
pub(crate) enum ExtraBody {
    /// Not sent (the policy router's attempts).
    Left,
    /// Added to the body the request does not set itself; the `provider` block as the pareto
    /// walk edits it, when it steers.
    Added(Option<ProviderEdit>),
}

/// Why a dry run could not run: a status and a message for the API's error shape.
#[derive(Debug, PartialEq, Eq)]
pub struct DryRunError {
    pub status: u16,
    pub message: String,
}

/// How a request whose attempt was answered ended, as far as the answer goes: its status, size
/// and time (a router adds its route).
pub(crate) fn delivered(d: &Delivered, stream: bool) -> Ending {
    Ending { status: d.status, stream, upstream: Some(d.took), bytes_out: d.bytes_out, ..Ending::refused(0, 0) }
}

/// The answer to a failed attempt the router does not retry: the upstream's error as it came,
/// with the decision's headers.
pub(crate) fn attempt_error_reply(snap: &Snapshot, idx: DeploymentIdx, attempts: u32, err: AttemptError) -> Reply {
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

/// The answer when the pick found nothing to route to.
pub(crate) fn route_error_reply(e: &RouteError) -> Reply {
    let status = e.status();
    let param = matches!(e, RouteError::UnknownModel { .. }).then_some("model");
    let mut reply = Reply::json(status, openai_error(status, &e.to_string(), param));
    if let Some(secs) = e.retry_after_secs() {
        reply.header_decimal("retry-after", secs);
    }
    reply
}
