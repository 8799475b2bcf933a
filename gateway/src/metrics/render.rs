//! Prometheus text exposition format (version 0.0.4) of the merged totals.

use std::collections::HashMap;
use std::fmt::Write;

use super::{Gauges, Hist, Totals};

/// Upstream latency and time-to-first-token buckets, seconds (LLM calls take 50 ms to minutes).
const LATENCY_BUCKETS_S: [f64; 16] =
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0];
/// The pick's buckets, seconds (it takes tens of nanoseconds to a few microseconds).
const PICK_BUCKETS_S: [f64; 10] = [5e-8, 1e-7, 2.5e-7, 5e-7, 1e-6, 2.5e-6, 5e-6, 1e-5, 1e-4, 1e-3];

/// Renders everything; `gauges` are read by the caller at scrape time.
pub fn render(totals: &Totals, gauges: Gauges) -> String {
    let c = &totals.counts;
    let mut out = String::with_capacity(4096);
    family(
        &mut out,
        "pointwork_requests_total",
        "counter",
        "Requests answered, by model group, deployment and status.",
    );
    let mut requests: Vec<_> = c.requests.iter().collect();
    requests.sort();
    for ((group, deployment, status), n) in requests {
        let _ = writeln!(
            out,
            "pointwork_requests_total{{model_group=\"{}\",deployment=\"{}\",status=\"{status}\"}} {n}",
            escape(group),
            escape(deployment)
        );
    }
    histograms(
        &mut out,
        "pointwork_upstream_latency_seconds",
        "Upstream time of answered attempts, by model group.",
        &c.upstream_latency,
        1e-6,
        &LATENCY_BUCKETS_S,
    );
    histograms(
        &mut out,
        "pointwork_time_to_first_token_seconds",
        "Time to the first streamed body bytes, by model group.",
        &c.first_token,
        1e-6,
        &LATENCY_BUCKETS_S,
    );
    family(
        &mut out,
        "pointwork_pick_duration_seconds",
        "histogram",
        "The pick's own time (resolution, filters, strategy), one pick in 16 sampled.",
    );
    if let Some(pick) = &c.pick {
        histogram(&mut out, "pointwork_pick_duration_seconds", "", pick, 1e-9, &PICK_BUCKETS_S);
    }
    family(
        &mut out,
        "pointwork_policy_requests_total",
        "counter",
        "Requests routed under a policy, by policy and outcome (routed, upstream_error, or the refusal's code).",
    );
    let mut policy_requests: Vec<_> = c.policy_requests.iter().collect();
    policy_requests.sort();
    for ((policy, outcome), n) in policy_requests {
        let _ = writeln!(
            out,
            "pointwork_policy_requests_total{{policy=\"{}\",outcome=\"{}\"}} {n}",
            escape(policy),
            escape(outcome)
        );
    }
    family(
        &mut out,
        "pointwork_pareto_decisions_total",
        "counter",
        "The OpenRouter best-value walk's decisions, by model (rule key) and reason.",
    );
    let mut decisions: Vec<_> = c.pareto_decisions.iter().collect();
    decisions.sort();
    for ((model, reason), n) in decisions {
        let _ =
            writeln!(out, "pointwork_pareto_decisions_total{{model=\"{}\",reason=\"{reason}\"}} {n}", escape(model));
    }
    family(
        &mut out,
        "pointwork_auto_router_decisions_total",
        "counter",
        "The complexity routers' decisions, by router, tier (none: the default model) and cause.",
    );
    let mut decisions: Vec<_> = c.auto_router_decisions.iter().collect();
    decisions.sort();
    for ((router, tier, cause), n) in decisions {
        let _ = writeln!(
            out,
            "pointwork_auto_router_decisions_total{{router=\"{}\",tier=\"{tier}\",cause=\"{cause}\"}} {n}",
            escape(router)
        );
    }
    counter(&mut out, "pointwork_retries_total", "Attempts retried on another deployment after a failure.", c.retries);
    counter(&mut out, "pointwork_fallbacks_total", "Attempts that fell back to another model group.", c.fallbacks);
    family(&mut out, "pointwork_cooldowns_started_total", "counter", "Cooldowns started, by deployment.");
    let mut cooldowns: Vec<_> = c.cooldowns_started.iter().collect();
    cooldowns.sort();
    for (deployment, n) in cooldowns {
        let _ = writeln!(out, "pointwork_cooldowns_started_total{{deployment=\"{}\"}} {n}", escape(deployment));
    }
    gauge(&mut out, "pointwork_deployments_cooling_down", "Deployments cooling down now.", gauges.cooling_down as i64);
    family(&mut out, "pointwork_reloads_total", "counter", "Config reloads, by outcome.");
    let _ = writeln!(out, "pointwork_reloads_total{{outcome=\"ok\"}} {}", totals.reloads_ok);
    let _ = writeln!(out, "pointwork_reloads_total{{outcome=\"failed\"}} {}", totals.reloads_failed);
    gauge(&mut out, "pointwork_open_connections", "Open client connections.", gauges.open_connections);
    gauge(&mut out, "pointwork_draining", "1 while the gateway drains before exiting.", i64::from(gauges.draining));
    out
}

fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

pub(crate) fn counter(out: &mut String, name: &str, help: &str, value: u64) {
    family(out, name, "counter", help);
    let _ = writeln!(out, "{name} {value}");
}

pub(crate) fn gauge(out: &mut String, name: &str, help: &str, value: i64) {
    family(out, name, "gauge", help);
    let _ = writeln!(out, "{name} {value}");
}

fn histograms(
    out: &mut String,
    name: &str,
    help: &str,
    by_group: &HashMap<String, Hist>,
    unit_s: f64,
    buckets_s: &[f64],
) {
    family(out, name, "histogram", help);
    let mut groups: Vec<_> = by_group.iter().collect();
    groups.sort_by(|a, b| a.0.cmp(b.0));
    for (group, hist) in groups {
        histogram(out, name, &format!("model_group=\"{}\",", escape(group)), hist, unit_s, buckets_s);
    }
}

/// One histogram's series; `labels` is empty or ends with a comma.
fn histogram(out: &mut String, name: &str, labels: &str, hist: &Hist, unit_s: f64, buckets_s: &[f64]) {
    let bounds: Vec<u64> = buckets_s.iter().map(|b| (b / unit_s).round() as u64).collect();
    for (le, n) in buckets_s.iter().zip(hist.cumulative(&bounds)) {
        let _ = writeln!(out, "{name}_bucket{{{labels}le=\"{le}\"}} {n}");
    }
    let _ = writeln!(out, "{name}_bucket{{{labels}le=\"+Inf\"}} {}", hist.count());
    let labels = labels.trim_end_matches(',');
    let braces = if labels.is_empty() { String::new() } else { format!("{{{labels}}}") };
    let _ = writeln!(out, "{name}_sum{braces} {}", hist.sum() as f64 * unit_s);
    let _ = writeln!(out, "{name}_count{braces} {}", hist.count());
}

/// A label value as Prometheus wants it: backslash, double quote and newline escaped.
pub(crate) fn escape(value: &str) -> String {
    value.replace('\\', r"\\").replace('"', "\\\"").replace('\n', r"\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counters_histograms_and_escapes_labels() {
        let mut totals = Totals::default();
        totals.counts.requests.insert(("g\"1".into(), "d1".into(), 200), 3);
        let mut h = Hist::new();
        h.record(20_000);
        h.record(2_000_000);
        totals.counts.upstream_latency.insert("g\"1".into(), h);
        totals.reloads_ok = 2;
        let text = render(&totals, Gauges { open_connections: 4, cooling_down: 1, draining: false });
        assert!(
            text.contains("pointwork_requests_total{model_group=\"g\\\"1\",deployment=\"d1\",status=\"200\"} 3\n"),
            "{text}"
        );
        assert!(
            text.contains("pointwork_upstream_latency_seconds_bucket{model_group=\"g\\\"1\",le=\"0.025\"} 1\n"),
            "{text}"
        );
        assert!(
            text.contains("pointwork_upstream_latency_seconds_bucket{model_group=\"g\\\"1\",le=\"2.5\"} 2\n"),
            "{text}"
        );
        assert!(text.contains("pointwork_upstream_latency_seconds_count{model_group=\"g\\\"1\"} 2\n"), "{text}");
        assert!(text.contains("pointwork_reloads_total{outcome=\"ok\"} 2\n"));
        assert!(text.contains("pointwork_open_connections 4\n"));
        assert!(text.contains("pointwork_deployments_cooling_down 1\n"));
    }
}
