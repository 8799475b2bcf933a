//! A request's trace while it runs, on its shard: its ids (the caller's trace continued), each
//! attempt as it ends, and the answer's facts; [`TraceDraft::finish`] turns it into the
//! [`RequestRecord`] the exporters get. Only requests on a gateway with an exporter have one.

use std::cell::RefCell;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use pointwork_core::{budget::response_cost, Deployment, Rng, RouteKind};

use super::record::{AttemptRecord, RequestRecord, MAX_KEPT_BODY};
use super::trace_context::{new_span_id, new_trace_id, parse_traceparent, traceparent, valid_tracestate, TraceContext};
use crate::access_log::Entry;
use crate::keys::Caller;
use crate::upstream::exchange::{AttemptError, Delivered};

/// The trace of one request in flight.
pub struct TraceDraft {
    pub trace_id: [u8; 16],
    pub span_id: [u8; 8],
    parent: Option<[u8; 8]>,
    trace_state: Option<String>,
    /// The request's start, on both clocks.
    started: Instant,
    start_unix_nanos: u64,
    request_body: Option<Vec<u8>>,
    /// A database key's team and user.
    team_id: Option<String>,
    user_id: Option<String>,
    /// What the attempts so far did, and the answer.
    run: RefCell<Run>,
}

#[derive(Default)]
struct Run {
    attempts: Vec<AttemptRecord>,
    /// The attempt going out: its span and start.
    current: Option<([u8; 8], Instant)>,
    answer: Option<Answer>,
    error: Option<String>,
}

/// What the delivered answer said.
struct Answer {
    usage: Option<crate::usage::Usage>,
    cost: Option<f64>,
    first_token: Option<Duration>,
    facts: Option<Box<crate::usage::AnswerFacts>>,
}

/// The largest upstream error message kept for an attempt's span.
const MAX_ERROR: usize = 1024;

impl TraceDraft {
    /// The trace of a request (its Trace Context headers `trace`, its `body`), started at
    /// `started`: the caller's, when its `traceparent` is valid, else a new one.
    pub(crate) fn begin(
        trace: &TraceContext<'_>,
        body: &[u8],
        caller: &Caller,
        started: Instant,
        ids: &mut Rng,
    ) -> TraceDraft {
        let names = caller.virtual_key().and_then(|k| k.db.as_ref()).map(|entry| &entry.names);
        let name = |n: Option<&std::sync::Arc<str>>| n.map(|n| n.to_string());
        let caller = trace.parent.and_then(parse_traceparent);
        let trace_id = match caller {
            Some((trace, _, _)) => trace,
            None => new_trace_id(ids),
        };
        let start = SystemTime::now().checked_sub(started.elapsed()).unwrap_or_else(SystemTime::now);
        TraceDraft {
            trace_id,
            span_id: new_span_id(ids),
            parent: caller.map(|(_, parent, _)| parent),
            trace_state: caller.and(trace.state).and_then(valid_tracestate).map(str::to_string),
            started,
            start_unix_nanos: unix_nanos(start),
            request_body: (body.len() <= MAX_KEPT_BODY).then(|| body.to_vec()),
            team_id: name(names.and_then(|n| n.team_id.as_ref())),
            user_id: name(names.and_then(|n| n.user_id.as_ref())),
            run: RefCell::default(),
        }
    }

    fn unix_nanos_at(&self, t: Instant) -> u64 {
        self.start_unix_nanos + t.saturating_duration_since(self.started).as_nanos() as u64
    }

    /// The Trace Context lines an attempt's upstream gets: a new attempt's span when it starts at
    /// `new_span`, else the current attempt's (its request sent again, translated).
    pub(crate) fn attempt_lines(&self, new_span: Option<Instant>, ids: &mut Rng) -> Vec<u8> {
        let mut run = self.run.borrow_mut();
        let span = match (new_span, run.current) {
            (None, Some((span, _))) => span,
            (start, _) => {
                let span = new_span_id(ids);
                run.current = Some((span, start.unwrap_or_else(Instant::now)));
                span
            }
        };
        trace_lines(&traceparent(&self.trace_id, &span), self.trace_state.as_deref().map(str::as_bytes))
    }

    /// The attempt at deployment `d` (whose upstream is at `server`) ended: answered (`Ok`) or
    /// failed before anything reached the client.
    pub(crate) fn attempt_ended(
        &self,
        (d, server): (&Deployment, &str),
        cause: &'static str,
        outcome: Result<&Delivered, &AttemptError>,
    ) {
        let now = Instant::now();
        let mut run = self.run.borrow_mut();
        let Some((span_id, start)) = run.current.take() else { return };
        let (status, failure, first_token, error) = match outcome {
            Ok(delivered) => {
                (Some(delivered.status), delivered.body_failure.map(|f| f.as_str()), delivered.first_body, None)
            }
            Err(err) => {
                ((err.status != 0).then_some(err.status), Some(err.failure.as_str()), None, Some(kept_error(&err.body)))
            }
        };
        run.attempts.push(AttemptRecord {
            span_id,
            start_unix_nanos: self.unix_nanos_at(start),
            end_unix_nanos: self.unix_nanos_at(now),
            deployment: d.id.clone(),
            provider: d.provider.prefix(),
            upstream_model: d.upstream_model.clone(),
            server: server.to_string(),
            status,
            failure,
            cause,
            first_token,
            error,
        });
        if let Ok(delivered) = outcome {
            let usage = delivered.usage;
            let cost = usage.and_then(|u| response_cost(d, u.prompt_tokens, u.completion_tokens));
            let first_token = delivered.first_body.map(|f| start.saturating_duration_since(self.started) + f);
            run.answer = Some(Answer { usage, cost, first_token, facts: delivered.answer.clone() });
        }
    }

    /// The request ends with an error reply of the gateway's own (`body`, its error shape).
    pub(crate) fn refused(&self, body: &[u8]) {
        self.run.borrow_mut().error = Some(kept_error(body));
    }

    /// The record of the request as its access-log `entry` describes it.
    pub(crate) fn finish(&self, entry: &Entry<'_>, route: RouteKind) -> Box<RequestRecord> {
        let mut run = self.run.borrow_mut();
        let upstream: Duration = run
            .attempts
            .iter()
            .map(|a| Duration::from_nanos(a.end_unix_nanos.saturating_sub(a.start_unix_nanos)))
            .sum();
        let answer = run.answer.take();
        let facts = answer.as_ref().and_then(|a| a.facts.as_deref());
        let own_error = run.error.take();
        let last = run.attempts.last();
        let error = match (entry.status >= 400, own_error) {
            (false, _) => None,
            (true, Some(own)) => Some(own),
            (true, None) => last.and_then(|a| a.error.clone()),
        };
        Box::new(RequestRecord {
            trace_id: self.trace_id,
            span_id: self.span_id,
            parent_span_id: self.parent,
            trace_state: self.trace_state.clone(),
            start_unix_nanos: self.start_unix_nanos,
            end_unix_nanos: self.start_unix_nanos + entry.total.as_nanos() as u64,
            route,
            path: entry.path.to_string(),
            status: entry.status,
            stream: entry.stream,
            requested_model: entry.model.to_string(),
            model_group: entry.model_group.map(str::to_string),
            deployment: entry.deployment.map(str::to_string),
            provider: last.map(|a| a.provider),
            upstream_model: last.map(|a| a.upstream_model.clone()),
            key_alias: entry.key.map(str::to_string),
            team_id: self.team_id.clone(),
            user_id: self.user_id.clone(),
            route_reason: entry.route.map(str::to_string),
            cause: entry.cause.map(str::to_string),
            policy: entry.policy.map(str::to_string),
            usage: answer.as_ref().and_then(|a| a.usage),
            cost: answer.as_ref().and_then(|a| a.cost),
            first_token: answer.as_ref().and_then(|a| a.first_token),
            overhead: entry.total.saturating_sub(upstream),
            response_model: facts.and_then(|f| f.model.clone()),
            finish_reasons: facts.map(|f| f.finish_reasons.clone()).unwrap_or_default(),
            error,
            cache_hit: entry.cache_hit,
            request_body: self.request_body.clone(),
            response_body: facts.and_then(|f| f.body.clone()),
            attempts: std::mem::take(&mut run.attempts),
        })
    }
}

/// The Trace Context lines an upstream gets when no exporter runs: the caller's, as sent (a
/// proxy that does not trace passes them on).
pub(crate) fn passed_on(trace: &TraceContext<'_>) -> Option<Vec<u8>> {
    let parent = trace.parent?;
    parse_traceparent(parent)?;
    Some(trace_lines(parent.trim_ascii(), trace.state.and_then(valid_tracestate).map(str::as_bytes)))
}

fn trace_lines(parent: &[u8], state: Option<&[u8]>) -> Vec<u8> {
    let mut out = Vec::with_capacity(80 + state.map_or(0, <[u8]>::len));
    crate::http::write::header(&mut out, "traceparent", parent);
    if let Some(state) = state {
        crate::http::write::header(&mut out, "tracestate", state);
    }
    out
}

/// An error body as a span keeps it: text, at most [`MAX_ERROR`] bytes.
fn kept_error(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(&body[..body.len().min(MAX_ERROR)]);
    text.into_owned()
}

fn unix_nanos(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}
