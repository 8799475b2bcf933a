//! The pipeline of one proxied request, phase by phase (docs/architecture.md):
//!
//! 1. read — the server read the head and body (`crate::server`) and found the caller's key;
//! 2. understand — the request's facts, in its API's dialect (`crate::facts`);
//! 3. authenticate — the caller's virtual key admits the model, its limits the request
//!    (`authenticate`);
//! 4. cache — with a response cache configured, the lookup: a hit is answered here, before any
//!    router (`crate::cache`, `cached`); a miss's answer is stored once it ended well;
//! 5. choose — the router that applies (`crate::routers`) picks the attempt's deployment;
//! 6. forward — the upstream request in the provider's dialect (`forward`, `translate`);
//! 7. relay — the answer back to the client, streamed or whole (`crate::upstream::exchange`);
//! 8. record — what the attempt taught the shard's state, the metrics, the access log
//!    (`record`).
//!
//! Phases 5 to 8 are one attempt loop (`attempts`): after a failure the router says what next.

mod attempts;
mod authenticate;
mod cached;
mod forward;
pub(crate) mod parameters;
mod record;
mod translate;

use std::sync::Arc;
use std::time::{Duration, Instant};

use pointwork_core::RouteKind;

use crate::cache::{self, Looked};
use crate::errors::openai_error;
use crate::export::draft::TraceDraft;
use crate::facts;
use crate::keys::Caller;
use crate::request::{write_overhead, Ending, Request, RequestInfo};
use crate::respond::{self, Reply};
use crate::responses::Turn;
use crate::routers::litellm::LiteLlm;
use crate::routers::policy::Policy;
use crate::routers::Cx;
use crate::routes::Routes;
use crate::shard::Shard;
use crate::tcp_or_tls::ClientConn;

/// Serves one API request. Returns whether the client connection can carry another request.
pub async fn serve(
    shard: &Shard,
    route: RouteKind,
    path: &str,
    request: &Request<'_>,
    caller: &Caller,
    client: &mut ClientConn,
    keep_alive: bool,
) -> bool {
    let body = request.body;
    let started = Instant::now();
    let routes = shard.sync();
    let routes: &Arc<Routes> = &routes;
    // Boxed, and only with an exporter: a request without one does not carry its size.
    let trace = shard
        .export
        .as_ref()
        .map(|_| Box::new(TraceDraft::begin(&request.trace, body, caller, started, &mut shard.trace_ids.borrow_mut())));
    let trace = trace.as_deref();
    let info = |model| RequestInfo {
        path,
        model,
        bytes_in: body.len(),
        started,
        policy: None,
        route,
        caller,
        trace,
        cache_headers: &[],
    };
    let mut extracted = match facts::extract_to(route, body, routes.facts_needed) {
        Ok(e) => e,
        Err(e) => {
            let reply = Reply::json(400, openai_error(400, &e.to_string(), e.param()));
            return answer(shard, routes, &info(""), client, keep_alive, reply, Ending::refused(0, 0), Duration::ZERO)
                .await;
        }
    };
    // Held until the request ends: a database key's place among its parallel requests.
    let _in_flight = match authenticate::admit(routes, caller, request, &mut extracted) {
        Ok(in_flight) => in_flight,
        Err(reply) => {
            let info = info(&extracted.facts.model);
            return answer(shard, routes, &info, client, keep_alive, reply, Ending::refused(0, 0), Duration::ZERO)
                .await;
        }
    };
    let info = info(&extracted.facts.model);
    let turn = match route {
        // Boxed, the wait and the turn: only Responses requests have them.
        RouteKind::Responses => match Box::pin(Turn::new(&shard.hub.responses, body, &extracted)).await {
            Ok(turn) => Some(Box::new(turn)),
            Err(reply) => {
                return answer(shard, routes, &info, client, keep_alive, reply, Ending::refused(0, 0), Duration::ZERO)
                    .await
            }
        },
        _ => None,
    };
    let miss = match &routes.cache {
        // Boxed: only a cached request has it.
        Some(cache) => match Box::pin(cache::look(shard, cache, route, request, &extracted, caller)).await {
            Looked::Go(miss) => Some(miss),
            Looked::Hit(hit) => {
                let (extracted, key) = (&extracted, caller.virtual_key());
                let cx = Cx { shard, routes, route, request, extracted, caller, key, responses: None, cache: None };
                return Box::pin(cached::answer(&cx, &info, client, keep_alive, hit)).await;
            }
            Looked::Refused(reply) => {
                return answer(shard, routes, &info, client, keep_alive, reply, Ending::refused(0, 0), Duration::ZERO)
                    .await
            }
        },
        None => None,
    };
    let info = RequestInfo { cache_headers: miss.as_ref().map_or(&[], |m| &m.headers), ..info };
    let key = caller.virtual_key();
    let cache = miss.as_deref();
    let cx =
        Cx { shard, routes, route, request, extracted: &extracted, caller, key, responses: turn.as_deref(), cache };
    if let Some(mut policy) = Policy::applying(&cx) {
        let info = RequestInfo { policy: Some(policy.id()), ..info };
        // Boxed, as the rare branches in `exchange` are (see `take_or_connect`).
        return Box::pin(attempts::run(&mut policy, &cx, &info, client, keep_alive)).await;
    }
    let auto = match LiteLlm::auto_route(&cx) {
        Some(decided) => Some(decided.await),
        None => None,
    };
    // The router stays here and the loop borrows it: moving it into the loop's future would
    // copy it with the future.
    let mut litellm = LiteLlm::new(&cx, auto);
    attempts::run(&mut litellm, &cx, &info, client, keep_alive).await
}

/// Ends the request with `reply`: recorded as `ending` (its status and size are the reply's),
/// sent in the shape of the API called, with the gateway's own time (all of it but
/// `upstream`, the attempts' time).
#[allow(clippy::too_many_arguments)]
async fn answer(
    shard: &Shard,
    routes: &Arc<Routes>,
    info: &RequestInfo<'_>,
    client: &mut ClientConn,
    keep_alive: bool,
    mut reply: Reply,
    ending: Ending,
    upstream: Duration,
) -> bool {
    let ending = Ending { status: reply.status, bytes_out: reply.body.len() as u64, ..ending };
    reply.header_lines().extend_from_slice(info.cache_headers);
    if let (Some(trace), true) = (info.trace, reply.status >= 400) {
        trace.refused(&reply.body);
    }
    let overhead = info.started.elapsed().saturating_sub(upstream);
    write_overhead(reply.header_lines(), overhead);
    record::finish(shard, routes, info, ending);
    respond::send(client, respond::for_route(info.route, reply), keep_alive).await
}
