//! LiteLLM's metrics in Prometheus' text format, as LiteLLM's `/metrics` exposes them through
//! `prometheus_client`: a counter `x` as `x_total`, histograms with LiteLLM's buckets, LiteLLM's
//! label names (written sorted by name, `le` among them, as `prometheus_client` writes them), a
//! label without a value as `None`. (`prometheus_client` also
//! exposes each counter's and histogram's creation time as `x_created`; dashboards do not read
//! it, and it is left out.)

use std::collections::BTreeMap;
use std::fmt::Write;

use super::counts::{AttemptCounts, Buckets, LiteLlmReport, RequestCounts, DEFAULT_BUCKETS, LATENCY_BUCKETS};
use super::labels::{exception_status, provider_class, refusal_class, Where, Who, NONE};
use crate::metrics::escape;

/// Label name and value pairs, in the metric's order.
pub(super) type Pairs<'a> = [(&'a str, Option<&'a str>)];

/// The labels' text: `name="value",…` (escaped; `None` for no value), sorted by name as
/// `prometheus_client` writes them.
pub(super) fn labels(pairs: &Pairs<'_>) -> String {
    let (before, after) = split(pairs);
    joined(&before, None, &after)
}

/// The sorted labels' text in two: those before `le` and those after (where a histogram's
/// bucket puts it).
fn split(pairs: &Pairs<'_>) -> (String, String) {
    let mut sorted: Vec<&(&str, Option<&str>)> = pairs.iter().collect();
    sorted.sort_by_key(|(name, _)| *name);
    let (mut before, mut after) = (String::new(), String::new());
    for (name, value) in sorted {
        let text = if *name < "le" { &mut before } else { &mut after };
        let sep = if text.is_empty() { "" } else { "," };
        let _ = write!(text, "{sep}{name}=\"{}\"", escape(value.unwrap_or(NONE)));
    }
    (before, after)
}

fn joined(before: &str, middle: Option<&str>, after: &str) -> String {
    [before, middle.unwrap_or(""), after].iter().filter(|p| !p.is_empty()).copied().collect::<Vec<_>>().join(",")
}

fn o(value: &Option<std::sync::Arc<str>>) -> Option<&str> {
    value.as_deref()
}

fn v(value: &str) -> Option<&str> {
    Some(value)
}

/// A family's `# HELP` and `# TYPE` lines.
pub(super) fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

/// A counter as `prometheus_client` exposes it: `name_total`.
fn counter(out: &mut String, name: &str, help: &str, series: BTreeMap<String, f64>) {
    let name = format!("{name}_total");
    family(out, &name, "counter", help);
    for (labels, value) in series {
        let _ = writeln!(out, "{name}{{{labels}}} {value}");
    }
}

/// A gauge's series.
pub(super) fn gauge(out: &mut String, name: &str, help: &str, series: BTreeMap<String, f64>) {
    family(out, name, "gauge", help);
    for (labels, value) in series {
        let value = if value.is_infinite() {
            (if value > 0.0 { "+Inf" } else { "-Inf" }).to_string()
        } else {
            value.to_string()
        };
        let _ = writeln!(out, "{name}{{{labels}}} {value}");
    }
}

fn histogram<const N: usize>(
    out: &mut String,
    name: &str,
    help: &str,
    bounds: &[f64; N],
    series: BTreeMap<(String, String), Buckets<N>>,
) {
    family(out, name, "histogram", help);
    for ((before, after), b) in series {
        let mut running = 0;
        let bucket = |le: &str| joined(&before, Some(&format!("le=\"{le}\"")), &after);
        for (le, n) in bounds.iter().zip(b.counts) {
            running += n;
            let _ = writeln!(out, "{name}_bucket{{{}}} {running}", bucket(&format!("{le:?}")));
        }
        let _ = writeln!(out, "{name}_bucket{{{}}} {}", bucket("+Inf"), b.count);
        let labels = joined(&before, None, &after);
        let _ = writeln!(out, "{name}_count{{{labels}}} {}", b.count);
        let _ = writeln!(out, "{name}_sum{{{labels}}} {}", b.sum);
    }
}

/// Adds `value` to the series `pairs` name.
fn add<T: std::ops::AddAssign + Default>(series: &mut BTreeMap<String, T>, pairs: &Pairs<'_>, value: T) {
    *series.entry(labels(pairs)).or_default() += value;
}

fn add_buckets<const N: usize>(series: &mut Histograms<N>, pairs: &Pairs<'_>, b: &Buckets<N>) {
    if b.count > 0 {
        series.entry(split(pairs)).or_default().add(b);
    }
}

/// The proxy's own counts: every request the client sent, failed ones, and the latency of the
/// successful ones.
pub(super) fn requests(out: &mut String, report: &LiteLlmReport) {
    let (mut total, mut failed, mut succeeded) = (BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
    let (mut latency, mut overhead) = (BTreeMap::new(), BTreeMap::new());
    for (s, c) in &report.requests {
        let w = &s.who;
        let route = s.route.path();
        let status = s.status.to_string();
        let served = s.served.as_deref();
        let (model_id, provider) = (served.map(|p| &*p.model_id), served.map(|p| p.api_provider));
        let n = c.requests as f64;
        #[rustfmt::skip]
        add(&mut total, &[
            ("end_user", None), ("hashed_api_key", o(&w.hashed_api_key)), ("api_key_alias", o(&w.api_key_alias)),
            ("requested_model", v(&s.requested)), ("team", o(&w.team)), ("team_alias", o(&w.team_alias)),
            ("user", o(&w.user)), ("status_code", v(&status)), ("user_email", None), ("route", v(&route)),
            ("client_ip", None), ("user_agent", None), ("model_id", model_id), ("api_provider", provider),
        ], n);
        if s.status >= 400 {
            let class = match served {
                Some(p) => provider_class(p.api_provider, pointwork_core::Failure::Status(s.status)),
                None => refusal_class(s.status).to_string(),
            };
            #[rustfmt::skip]
            add(&mut failed, &[
                ("end_user", None), ("hashed_api_key", o(&w.hashed_api_key)), ("api_key_alias", o(&w.api_key_alias)),
                ("requested_model", v(&s.requested)), ("team", o(&w.team)), ("team_alias", o(&w.team_alias)),
                ("user", o(&w.user)), ("user_email", None), ("exception_status", v(&status)),
                ("exception_class", v(&class)), ("route", v(&route)), ("client_ip", None), ("user_agent", None),
                ("model_id", model_id), ("api_provider", provider),
            ], n);
            continue;
        }
        let Some(p) = served else { continue };
        #[rustfmt::skip]
        add(&mut succeeded, &[
            ("end_user", None), ("hashed_api_key", o(&w.hashed_api_key)), ("api_key_alias", o(&w.api_key_alias)),
            ("model", v(&p.model)), ("team", o(&w.team)), ("team_alias", o(&w.team_alias)), ("user", o(&w.user)),
            ("user_email", None), ("client_ip", None), ("user_agent", None), ("requested_model", v(&p.model_group)),
            ("model_id", v(&p.model_id)), ("api_provider", Some(p.api_provider)),
        ], n);
        latencies(&mut latency, &mut overhead, w, p, c);
    }
    counter(out, "litellm_proxy_total_requests_metric", HELP_PROXY_TOTAL, total);
    counter(out, "litellm_proxy_failed_requests_metric", HELP_PROXY_FAILED, failed);
    counter(out, "litellm_requests_metric", HELP_REQUESTS, succeeded);
    histogram(out, "litellm_request_total_latency_metric", HELP_TOTAL_LATENCY, &LATENCY_BUCKETS, latency);
    histogram(out, "litellm_overhead_latency_metric", HELP_OVERHEAD, &LATENCY_BUCKETS, overhead);
}

/// Histograms' series by their labels before and after `le`.
type Histograms<const N: usize> = BTreeMap<(String, String), Buckets<N>>;
type Latencies = Histograms<17>;

fn latencies(latency: &mut Latencies, overhead: &mut Latencies, w: &Who, p: &Where, c: &RequestCounts) {
    #[rustfmt::skip]
    add_buckets(latency, &[
        ("model_group", v(&p.model_group)), ("end_user", None), ("hashed_api_key", o(&w.hashed_api_key)),
        ("api_key_alias", o(&w.api_key_alias)), ("requested_model", v(&p.model_group)), ("team", o(&w.team)),
        ("team_alias", o(&w.team_alias)), ("user", o(&w.user)), ("model", v(&p.model)),
        ("model_id", v(&p.model_id)), ("api_provider", Some(p.api_provider)), ("service_tier", None),
    ], &c.total_latency);
    #[rustfmt::skip]
    add_buckets(overhead, &[
        ("model_group", v(&p.model_group)), ("api_provider", Some(p.api_provider)), ("api_base", v(&p.api_base)),
        ("litellm_model_name", v(&p.model)), ("hashed_api_key", o(&w.hashed_api_key)),
        ("api_key_alias", o(&w.api_key_alias)), ("model_id", v(&p.model_id)),
    ], &c.overhead);
}

/// The LLM API calls: per deployment and caller, successes and failures, tokens, spend, and
/// their latency.
pub(super) fn attempts(out: &mut String, report: &LiteLlmReport) {
    let mut by: [BTreeMap<String, f64>; 8] = Default::default();
    let [success, failure, total, api_failed, spend, tokens, input, output] = &mut by;
    let (mut api_latency, mut first_token, mut per_token) = (BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
    for ((w, p), c) in &report.attempts {
        #[rustfmt::skip]
        let deployment: [(&str, Option<&str>); 6] = [
            ("model_group", v(&p.model_group)), ("requested_model", v(&p.model_group)),
            ("litellm_model_name", v(&p.model)), ("model_id", v(&p.model_id)),
            ("api_base", v(&p.api_base)), ("api_provider", Some(p.api_provider)),
        ];
        #[rustfmt::skip]
        let caller: [(&str, Option<&str>); 6] = [
            ("hashed_api_key", o(&w.hashed_api_key)), ("api_key_alias", o(&w.api_key_alias)), ("team", o(&w.team)),
            ("team_alias", o(&w.team_alias)), ("client_ip", None), ("user_agent", None),
        ];
        let both = [&deployment[..], &caller[..]].concat();
        if c.successes > 0 {
            add(success, &both, c.successes as f64);
        }
        add(total, &both, (c.successes + c.failures()) as f64);
        for &(f, n) in &c.failures {
            let (status, class) = (exception_status(f).to_string(), provider_class(p.api_provider, f));
            let exception = [("exception_status", Some(status.as_str())), ("exception_class", Some(class.as_str()))];
            add(failure, &[&deployment[..], &exception[..], &caller[..]].concat(), n as f64);
        }
        if c.failures() > 0 {
            #[rustfmt::skip]
            add(api_failed, &[
                ("end_user", None), ("hashed_api_key", o(&w.hashed_api_key)), ("api_key_alias", o(&w.api_key_alias)),
                ("model", v(&p.model)), ("team", o(&w.team)), ("team_alias", o(&w.team_alias)),
                ("user", o(&w.user)), ("model_id", v(&p.model_id)),
            ], c.failures() as f64);
        }
        if c.successes == 0 {
            continue;
        }
        successes(SuccessSeries { spend, tokens, input, output }, w, p, c);
        #[rustfmt::skip]
        let timing = [
            ("model_group", v(&p.model_group)), ("model", v(&p.model)), ("hashed_api_key", o(&w.hashed_api_key)),
            ("api_key_alias", o(&w.api_key_alias)), ("team", o(&w.team)), ("team_alias", o(&w.team_alias)),
            ("requested_model", v(&p.model_group)), ("end_user", None), ("user", o(&w.user)),
            ("model_id", v(&p.model_id)), ("api_provider", Some(p.api_provider)), ("service_tier", None),
        ];
        add_buckets(&mut api_latency, &timing, &c.api_latency);
        add_buckets(&mut first_token, &timing, &c.first_token);
        #[rustfmt::skip]
        add_buckets(&mut per_token, &[
            ("model_group", v(&p.model_group)), ("litellm_model_name", v(&p.model)),
            ("model_id", v(&p.model_id)), ("api_base", v(&p.api_base)), ("api_provider", Some(p.api_provider)),
            ("hashed_api_key", o(&w.hashed_api_key)), ("api_key_alias", o(&w.api_key_alias)), ("team", o(&w.team)),
            ("team_alias", o(&w.team_alias)),
        ], &c.per_output_token);
    }
    let [success, failure, total, api_failed, spend, tokens, input, output] = by;
    counter(out, "litellm_deployment_success_responses", HELP_DEPLOYMENT_SUCCESS, success);
    counter(out, "litellm_deployment_failure_responses", HELP_DEPLOYMENT_FAILURE, failure);
    counter(out, "litellm_deployment_total_requests", HELP_DEPLOYMENT_TOTAL, total);
    counter(out, "litellm_llm_api_failed_requests_metric", HELP_API_FAILED, api_failed);
    counter(out, "litellm_spend_metric", "Total spend on LLM requests", spend);
    counter(out, "litellm_total_tokens_metric", "Total number of input + output tokens from LLM requests", tokens);
    counter(out, "litellm_input_tokens_metric", "Total number of input tokens from LLM requests", input);
    counter(out, "litellm_output_tokens_metric", "Total number of output tokens from LLM requests", output);
    histogram(out, "litellm_llm_api_latency_metric", HELP_API_LATENCY, &LATENCY_BUCKETS, api_latency);
    histogram(out, "litellm_llm_api_time_to_first_token_metric", HELP_TTFT, &LATENCY_BUCKETS, first_token);
    histogram(out, "litellm_deployment_latency_per_output_token", HELP_PER_TOKEN, &DEFAULT_BUCKETS, per_token);
    cooldowns(out, report);
}

struct SuccessSeries<'a> {
    spend: &'a mut BTreeMap<String, f64>,
    tokens: &'a mut BTreeMap<String, f64>,
    input: &'a mut BTreeMap<String, f64>,
    output: &'a mut BTreeMap<String, f64>,
}

/// Spend and tokens of a caller's successful calls to a deployment.
fn successes(s: SuccessSeries<'_>, w: &Who, p: &Where, c: &AttemptCounts) {
    #[rustfmt::skip]
    let head = [
        ("end_user", None), ("hashed_api_key", o(&w.hashed_api_key)), ("api_key_alias", o(&w.api_key_alias)),
        ("model", v(&p.model)), ("team", o(&w.team)), ("team_alias", o(&w.team_alias)), ("user", o(&w.user)),
        ("user_email", None),
    ];
    let tail =
        [("requested_model", v(&p.model_group)), ("model_id", v(&p.model_id)), ("api_provider", Some(p.api_provider))];
    let who_asked = [("client_ip", None), ("user_agent", None)];
    add(s.spend, &[&head[..], &who_asked[..], &tail[..], &[("service_tier", None)]].concat(), c.spend);
    let token_labels = [&head[..], &tail[..]].concat();
    add(s.tokens, &token_labels, c.total_tokens as f64);
    add(s.input, &token_labels, c.input_tokens as f64);
    add(s.output, &token_labels, c.output_tokens as f64);
}

fn cooldowns(out: &mut String, report: &LiteLlmReport) {
    let mut series = BTreeMap::new();
    for ((p, f), n) in &report.cooldowns {
        let status = exception_status(*f).to_string();
        // LiteLLM's cooldown callback names the deployment by its model group here.
        #[rustfmt::skip]
        add(&mut series, &[
            ("litellm_model_name", v(&p.model_group)), ("model_id", v(&p.model_id)),
            ("api_base", v(&p.api_base)), ("api_provider", Some(p.api_provider)),
            ("exception_status", v(&status)),
        ], *n as f64);
    }
    counter(out, "litellm_deployment_cooled_down", HELP_COOLED_DOWN, series);
}

const HELP_PROXY_TOTAL: &str =
    "Total number of requests made to the proxy server - track number of client side requests";
const HELP_PROXY_FAILED: &str =
    "Total number of failed responses from proxy - the client did not get a success response from litellm proxy";
const HELP_REQUESTS: &str = "deprecated - use litellm_proxy_total_requests_metric. Total number of LLM calls to litellm - track total per API Key, team, user";
const HELP_TOTAL_LATENCY: &str = "End-to-end latency (seconds) for a request to LiteLLM Proxy Server, from the moment the request reached the proxy through the end of processing -- includes authentication, pre-call hooks, the LLM API call, and post-call processing";
const HELP_OVERHEAD: &str = "Latency overhead (milliseconds) added by LiteLLM processing";
const HELP_DEPLOYMENT_SUCCESS: &str = "LLM Deployment Analytics - Total number of successful LLM API calls via litellm";
const HELP_DEPLOYMENT_FAILURE: &str = "LLM Deployment Analytics - Total number of failed LLM API calls for a specific LLM deploymeny. exception_status is the status of the exception from the llm api";
const HELP_DEPLOYMENT_TOTAL: &str =
    "LLM Deployment Analytics - Total number of LLM API calls via litellm - success + failure";
const HELP_API_FAILED: &str = "deprecated - use litellm_proxy_failed_requests_metric";
const HELP_API_LATENCY: &str = "Total latency (seconds) for a models LLM API call";
const HELP_TTFT: &str = "Time to first token for a models LLM API call";
const HELP_PER_TOKEN: &str = "LLM Deployment Analytics - Latency per output token";
const HELP_COOLED_DOWN: &str = "LLM Deployment Analytics - Number of times a deployment has been cooled down by LiteLLM load balancing logic. exception_status is the status of the exception that caused the deployment to be cooled down";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::litellm::counts::Latency;

    #[test]
    fn labels_are_sorted_and_a_buckets_le_takes_its_place_among_them() {
        let mut b = Latency::default();
        b.observe(0.3, &LATENCY_BUCKETS);
        let mut series = Histograms::new();
        add_buckets(&mut series, &[("model_group", Some("g\"1")), ("api_key_alias", None)], &b);
        let mut out = String::new();
        histogram(&mut out, "h", "Help.", &LATENCY_BUCKETS, series);
        assert!(out.starts_with("# HELP h Help.\n# TYPE h histogram\n"), "{out}");
        assert!(out.contains("h_bucket{api_key_alias=\"None\",le=\"0.25\",model_group=\"g\\\"1\"} 0\n"), "{out}");
        assert!(out.contains("h_bucket{api_key_alias=\"None\",le=\"0.5\",model_group=\"g\\\"1\"} 1\n"), "{out}");
        assert!(out.contains("h_bucket{api_key_alias=\"None\",le=\"600.0\",model_group=\"g\\\"1\"} 1\n"), "{out}");
        assert!(out.contains("h_bucket{api_key_alias=\"None\",le=\"+Inf\",model_group=\"g\\\"1\"} 1\n"), "{out}");
        assert!(out.contains("h_count{api_key_alias=\"None\",model_group=\"g\\\"1\"} 1\n"), "{out}");
    }

    #[test]
    fn counters_take_the_total_suffix_and_gauges_write_infinity_as_prometheus_does() {
        let mut counts = BTreeMap::new();
        add(&mut counts, &[("b", Some("2")), ("a", Some("1"))], 2.0);
        add(&mut counts, &[("a", Some("1")), ("b", Some("2"))], 1.0);
        let mut out = String::new();
        counter(&mut out, "c", "Help.", counts);
        assert_eq!(out, "# HELP c_total Help.\n# TYPE c_total counter\nc_total{a=\"1\",b=\"2\"} 3\n");
        let mut out = String::new();
        gauge(&mut out, "g", "Help.", BTreeMap::from([(labels(&[("k", None)]), f64::INFINITY)]));
        assert!(out.ends_with("g{k=\"None\"} +Inf\n"), "{out}");
    }
}
