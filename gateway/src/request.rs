//! What every phase of a proxied request shares: the request as the handlers see it, the
//! response headers that name the routing decision, what each log line of the request carries,
//! and how the request ended. A leaf: it names no feature of the gateway.

use std::time::{Duration, Instant};

use pointwork_core::{Decision, DeploymentIdx, Dialect, GroupIdx, RouteKind};

use crate::http::request::RequestHead;
use crate::http::write;

/// Response headers naming the routing decision, defined once.
pub const HEADER_DEPLOYMENT: &str = "x-pointwork-deployment";
pub const HEADER_MODEL_GROUP: &str = "x-pointwork-model-group";
pub const HEADER_ATTEMPTS: &str = "x-pointwork-attempts";
/// The request's fields a translation left out, comma-separated (`context_management,top_k`):
/// what the provider's API has no equivalent for.
pub const HEADER_DROPPED: &str = "x-pointwork-dropped";
/// The decision's one-line reason (`simple-shuffle picked d1 of 2 candidates (1 in cooldown)`).
pub const HEADER_ROUTE: &str = "x-pointwork-route";

/// The gateway's own time in milliseconds (`0.412`): the request's time but its attempts'
/// upstream time, as LiteLLM's `x-litellm-overhead-duration-ms`.
pub const HEADER_OVERHEAD: &str = "x-pointwork-overhead-ms";

/// The [`HEADER_OVERHEAD`] line for `d`, appended to `out` (a response's extra headers). Every
/// proxied response has one: the line is made on the stack and appended in one copy (`write!`
/// costs a few hundred instructions more).
pub(crate) fn write_overhead(out: &mut Vec<u8>, d: Duration) {
    const NAME: &[u8; 25] = b"x-pointwork-overhead-ms: ";
    let micros = d.as_micros().min(u128::from(u64::MAX)) as u64;
    let (millis, frac) = (micros / 1000, (micros % 1000) as u16);
    let mut line = [0u8; 25 + 20 + 6];
    line[..NAME.len()].copy_from_slice(NAME);
    let mut at = NAME.len();
    // Most answers take the gateway less than ten milliseconds: one digit.
    if millis < 10 {
        line[at] = b'0' + millis as u8;
        at += 1;
    } else {
        let mut digits = itoa::Buffer::new();
        let digits = digits.format(millis).as_bytes();
        line[at..at + digits.len()].copy_from_slice(digits);
        at += digits.len();
    }
    let decimals = [b'0' + (frac / 100) as u8, b'0' + (frac / 10 % 10) as u8, b'0' + (frac % 10) as u8];
    line[at..at + 6].copy_from_slice(&[b'.', decimals[0], decimals[1], decimals[2], b'\r', b'\n']);
    out.extend_from_slice(&line[..at + 6]);
}

/// The `anthropic-version` an Anthropic deployment gets when the caller sends none.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// One request as the handlers see it.
pub struct Request<'a> {
    pub head: &'a RequestHead,
    /// The `Authorization` header's value, if sent.
    pub authorization: Option<&'a [u8]>,
    /// The `x-litellm-tags` header's value, if sent.
    pub tags: Option<&'a [u8]>,
    /// The `x-llmeu-*` headers, name and value (the policy router's overrides).
    pub llmeu: &'a [(&'a [u8], &'a [u8])],
    /// `x-api-key`, `anthropic-version`, `anthropic-beta`.
    pub anthropic: Anthropic<'a>,
    /// `traceparent`, `tracestate`.
    pub trace: TraceContext<'a>,
    /// The whole head as received (the MCP endpoint reads its own headers from it).
    pub raw_head: &'a [u8],
    pub body: &'a [u8],
}

pub use crate::export::trace_context::TraceContext;

/// The Anthropic API's request headers' values.
#[derive(Clone, Copy, Default)]
pub struct Anthropic<'a> {
    pub api_key: Option<&'a [u8]>,
    pub version: Option<&'a [u8]>,
    pub beta: Option<&'a [u8]>,
}

/// What every log line of a request shares.
#[derive(Clone, Copy)]
pub(crate) struct RequestInfo<'a> {
    pub(crate) path: &'a str,
    pub(crate) model: &'a str,
    pub(crate) bytes_in: usize,
    pub(crate) started: Instant,
    /// The policy the request runs under, if any.
    pub(crate) policy: Option<&'a str>,
    /// The API surface called (its errors take that API's shape).
    pub(crate) route: RouteKind,
    /// Who called: its name in the logs, its names and digests in the metrics' labels (never
    /// the key).
    pub(crate) caller: &'a crate::keys::Caller,
    /// The request's trace, when an exporter is on.
    pub(crate) trace: Option<&'a crate::export::draft::TraceDraft>,
    /// The response cache's headers for this request's answer (`x-pointwork-cache`, the key's
    /// digest); empty without a cache.
    pub(crate) cache_headers: &'a [u8],
}

/// How the request ended, for metrics and the access log.
pub(crate) struct Ending {
    pub(crate) group: Option<GroupIdx>,
    pub(crate) deployment: Option<DeploymentIdx>,
    pub(crate) status: u16,
    pub(crate) attempts: u32,
    pub(crate) stream: bool,
    pub(crate) upstream: Option<Duration>,
    pub(crate) bytes_out: u64,
    pub(crate) decision: Option<Decision>,
    /// The route and its cause when no pick decided it (the policy router's sentence).
    pub(crate) route: Option<(String, &'static str)>,
    /// Deployments whose attempts failed before this one (the policy router's failover).
    pub(crate) failed_over: Vec<DeploymentIdx>,
    /// What decided before the pick, for the route line: the complexity router's decision
    /// (`auto-router SIMPLE heuristic_scorer … routed=g`), the pareto walk's
    /// (`openrouter-pareto winner novita/fp8`).
    pub(crate) before_pick: Option<String>,
    /// The complexity router's record (the access log's `routing_decision`), as JSON.
    pub(crate) routing_decision: Option<String>,
    /// The answer came from the response cache (`crate::cache`).
    pub(crate) cache_hit: bool,
}

impl Ending {
    pub(crate) fn refused(status: u16, bytes_out: usize) -> Ending {
        Ending {
            group: None,
            deployment: None,
            status,
            attempts: 0,
            stream: false,
            upstream: None,
            bytes_out: bytes_out as u64,
            decision: None,
            route: None,
            failed_over: Vec::new(),
            before_pick: None,
            routing_decision: None,
            cache_hit: false,
        }
    }
}

/// An upstream request's head: the deployment's precomputed part, and the headers of this
/// request (an Anthropic deployment's `anthropic-version` and `anthropic-beta`), written
/// together without a copy of the head in between.
#[derive(Clone, Copy)]
pub struct UpstreamHead<'a> {
    pub fixed: &'a [u8],
    pub extra: [Option<(&'static str, &'a [u8])>; 2],
    /// What the provider accepts of the `anthropic-beta` betas, each as it takes it (Vertex AI
    /// refuses betas it does not know); `None`: all, as sent.
    pub betas: Option<BetaFilter>,
    /// The Trace Context header lines the upstream gets (`traceparent: …\r\n`), if any.
    pub trace: Option<&'a [u8]>,
}

/// The name a provider takes a beta by, or `None` when it does not take it.
pub type BetaFilter = fn(&str) -> Option<&'static str>;

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
        UpstreamHead { fixed, extra, betas: None, trace: None }
    }

    /// The head with the Trace Context header lines `trace`.
    pub(crate) fn with_trace(self, trace: Option<&'a [u8]>) -> UpstreamHead<'a> {
        UpstreamHead { trace, ..self }
    }

    /// The head with only the betas `filter` accepts.
    pub(crate) fn with_betas(self, filter: Option<BetaFilter>) -> UpstreamHead<'a> {
        UpstreamHead { betas: filter, ..self }
    }

    pub(crate) fn len(&self) -> usize {
        self.fixed.len()
            + self.extra.iter().flatten().map(|(n, v)| n.len() + v.len() + 4).sum::<usize>()
            + self.trace.map_or(0, <[u8]>::len)
    }

    #[inline]
    pub(crate) fn write_to(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.fixed);
        for (name, value) in self.extra.iter().flatten() {
            match self.betas {
                Some(filter) if *name == "anthropic-beta" => write_betas(out, filter, value),
                _ => write::header(out, name, value),
            }
        }
        if let Some(trace) = self.trace {
            out.extend_from_slice(trace);
        }
    }
}

/// `anthropic-beta` with only the betas `filter` takes, by its names; no header when none is.
#[cold]
fn write_betas(out: &mut Vec<u8>, filter: BetaFilter, betas: &[u8]) {
    let betas = String::from_utf8_lossy(betas);
    let mut kept: Vec<&str> = betas.split(',').filter_map(|beta| filter(beta.trim())).collect();
    kept.dedup();
    if !kept.is_empty() {
        write::header(out, "anthropic-beta", kept.join(",").as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overhead_is_milliseconds_with_three_decimals() {
        let most = (u64::MAX, "18446744073709551.615");
        for (micros, shown) in
            [(0, "0.000"), (7, "0.007"), (412, "0.412"), (1_000, "1.000"), (123_456_789, "123456.789"), most]
        {
            let mut out = Vec::new();
            write_overhead(&mut out, Duration::from_micros(micros));
            assert_eq!(String::from_utf8(out).unwrap(), format!("x-pointwork-overhead-ms: {shown}\r\n"));
        }
    }
}
