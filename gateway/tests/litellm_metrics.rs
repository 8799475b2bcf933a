//! LiteLLM's Prometheus metric names on `/metrics` (`litellm_settings.callbacks: ["prometheus"]`
//! or `pointwork.telemetry.litellm_metrics: true`), through real processes: counts, labels,
//! tokens and spend from the answers' usage, a cooled-down deployment's state, a key's budget —
//! and none of it without the setting.

mod common;
#[path = "../../db/tests/support/postgres.rs"]
mod postgres;
#[path = "database/support.rs"]
mod support;

use std::time::Duration;

use common::{chat_body, config, deployment, wait_until, Gateway, GatewayOptions, Mock, Response};
use pointwork_gateway::keys::digest_hex;

const MASTER: &str = "sk-master-7777";
const KEY: &str = "sk-team-key-4242";
/// How long the shards' counts may take to reach `/metrics` (they hand over a few times a
/// second; a debug build on a busy machine is slower).
const METRICS_DEADLINE: Duration = Duration::from_secs(20);
const INPUT_PRICE: f64 = 0.001;
const OUTPUT_PRICE: f64 = 0.002;

fn chat(gateway: &Gateway, secret: &str, model: &str, stream: bool) -> Response {
    let bearer = format!("Bearer {secret}");
    let headers = [("authorization", bearer.as_str())];
    gateway.client().request("POST", "/v1/chat/completions", &headers, chat_body(model, stream).as_bytes())
}

/// One series of `/metrics`: its name, labels and value.
#[derive(Debug)]
struct Series {
    name: String,
    labels: Vec<(String, String)>,
    value: f64,
}

fn parse(text: &str) -> Vec<Series> {
    let mut all = Vec::new();
    for line in text.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
        let (head, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("bad line {line:?}"));
        let value = match value {
            "+Inf" => f64::INFINITY,
            v => v.parse().unwrap_or_else(|e| panic!("bad value in {line:?}: {e}")),
        };
        let (name, labels) = match head.split_once('{') {
            Some((name, rest)) => (name, parse_labels(rest.strip_suffix('}').expect("labels end with }"))),
            None => (head, Vec::new()),
        };
        all.push(Series { name: name.to_string(), labels, value });
    }
    all
}

/// `a="x",b="y"` (values here have no escaped quotes).
fn parse_labels(text: &str) -> Vec<(String, String)> {
    let mut labels = Vec::new();
    let mut rest = text;
    while let Some((name, after)) = rest.split_once("=\"") {
        let end = after.find('"').expect("closing quote");
        labels.push((name.to_string(), after[..end].to_string()));
        rest = after[end + 1..].trim_start_matches(',');
    }
    labels
}

/// The series named `name` whose labels include `want`.
fn matching<'a>(all: &'a [Series], name: &str, want: &[(&str, &str)]) -> Vec<&'a Series> {
    all.iter()
        .filter(|s| s.name == name)
        .filter(|s| want.iter().all(|(k, v)| s.labels.iter().any(|(n, x)| n == k && x == v)))
        .collect()
}

/// The one series named `name` with labels `want` (fails naming what there is).
fn value(all: &[Series], name: &str, want: &[(&str, &str)]) -> f64 {
    match matching(all, name, want)[..] {
        [one] => one.value,
        ref other => panic!(
            "{} series {name} with {want:?}: {other:#?}\nall of {name}: {:#?}",
            other.len(),
            matching(all, name, &[])
        ),
    }
}

fn label_names(series: &Series) -> Vec<&str> {
    series.labels.iter().map(|(n, _)| n.as_str()).collect()
}

/// Scrapes until `ready` holds for what `/metrics` says.
fn scrape_until(gateway: &Gateway, what: &str, ready: impl Fn(&[Series]) -> bool) -> Vec<Series> {
    let mut last = Vec::new();
    wait_until(METRICS_DEADLINE, what, || {
        last = parse(&gateway.get("/metrics").text());
        ready(&last)
    });
    last
}

fn prometheus_yaml(good: &Mock, bad: &Mock) -> String {
    let prices = format!("input_cost_per_token: {INPUT_PRICE}, output_cost_per_token: {OUTPUT_PRICE}");
    config(
        &[
            deployment("gpt", "dep-good", "openai/gpt-4o-mini", good, &format!("{prices}, rpm: 900")),
            // The shuffle weighs by rpm when deployments set it: both do, alike.
            deployment("gpt", "dep-bad", "openai/gpt-4o-mini", bad, &format!("{prices}, rpm: 900")),
        ],
        &format!(
            "router_settings: {{allowed_fails: 0, cooldown_time: 600, num_retries: 1}}\n\
             litellm_settings:\n  callbacks: [\"prometheus\"]\n\
             general_settings: {{master_key: {MASTER}}}\n\
             pointwork:\n  auth:\n    virtual_keys:\n      - {{name: team-key, sha256: {}, max_budget: 10}}\n",
            digest_hex(KEY.as_bytes())
        ),
    )
}

#[test]
fn litellm_names_count_requests_failures_tokens_spend_cooldowns_and_budget() {
    let good = Mock::start("good", &[]);
    let bad = Mock::start("bad", &["--fault", "status:500"]);
    let gateway =
        Gateway::start_with(&prometheus_yaml(&good, &bad), GatewayOptions { shards: 2, ..GatewayOptions::default() });
    // Until the shuffle tried the failing deployment once: it failed, cooled down, and the
    // retry went to the good one. Every answer is a success.
    let mut answers = Vec::new();
    for _ in 0..common::SHUFFLE_TRIES {
        let r = chat(&gateway, KEY, "gpt", false);
        assert_eq!((r.status, r.deployment()), (200, "dep-good"), "{}", r.text());
        answers.push(r);
        if bad.request_count() > 0 {
            break;
        }
    }
    assert_eq!(bad.request_count(), 1, "dep-bad was tried once, then cooled down");
    answers.push(chat(&gateway, KEY, "gpt", false));
    let refused = chat(&gateway, KEY, "no-such-model", false);
    assert_eq!(refused.status, 400, "{}", refused.text());
    let master = chat(&gateway, MASTER, "gpt", false);
    assert_eq!(master.status, 200, "{}", master.text());

    let n = answers.len() as f64;
    let (mut input, mut output) = (0.0, 0.0);
    for a in &answers {
        let usage = &a.json()["usage"];
        input += usage["prompt_tokens"].as_f64().expect("prompt_tokens");
        output += usage["completion_tokens"].as_f64().expect("completion_tokens");
    }
    let spend = input * INPUT_PRICE + output * OUTPUT_PRICE;
    let hashed = digest_hex(KEY.as_bytes());
    let key = [("hashed_api_key", hashed.as_str()), ("api_key_alias", "team-key")];
    let total = "litellm_proxy_total_requests_metric_total";
    let all = scrape_until(&gateway, "every request counted under LiteLLM's names", |all| {
        let ok = [&key[..], &[("status_code", "200")]].concat();
        matching(all, total, &ok).first().is_some_and(|s| s.value == n)
            && !matching(all, total, &[("status_code", "400")]).is_empty()
            && !matching(all, total, &[("hashed_api_key", "litellm_proxy_master_key")]).is_empty()
    });

    // The proxy's requests: by key, requested model, status, and what served them.
    let ok = value(
        &all,
        total,
        &[&key[..], &[("requested_model", "gpt"), ("status_code", "200"), ("model_id", "dep-good")]].concat(),
    );
    assert_eq!(ok, n);
    let series = &matching(&all, total, &key)[0];
    // LiteLLM's label names, sorted as prometheus_client writes them.
    #[rustfmt::skip]
    assert_eq!(label_names(series), [
        "api_key_alias", "api_provider", "client_ip", "end_user", "hashed_api_key", "model_id", "requested_model",
        "route", "status_code", "team", "team_alias", "user", "user_agent", "user_email",
    ]);
    let refused_labels = [
        ("requested_model", "other"),
        ("exception_status", "400"),
        ("route", "/v1/chat/completions"),
        ("model_id", "None"),
    ];
    assert_eq!(value(&all, "litellm_proxy_failed_requests_metric_total", &[&key[..], &refused_labels].concat()), 1.0);
    assert_eq!(
        value(&all, total, &[("hashed_api_key", "litellm_proxy_master_key"), ("user", "default_user_id")]),
        1.0,
        "the master key is named by LiteLLM's stand-in, never by itself or its hash"
    );
    assert!(!gateway.get("/metrics").text().contains(&digest_hex(MASTER.as_bytes())));
    assert_eq!(value(&all, "litellm_requests_metric_total", &[&key[..], &[("model", "gpt-4o-mini")]].concat()), n);

    // The LLM API calls: per deployment, the failed one with LiteLLM's exception names.
    let good_calls = [&key[..], &[("model_id", "dep-good"), ("model_group", "gpt")]].concat();
    let bad_calls = [&key[..], &[("model_id", "dep-bad")]].concat();
    assert_eq!(value(&all, "litellm_deployment_success_responses_total", &good_calls), n);
    assert_eq!(value(&all, "litellm_deployment_total_requests_total", &good_calls), n);
    assert_eq!(value(&all, "litellm_deployment_total_requests_total", &bad_calls), 1.0);
    assert!(matching(&all, "litellm_deployment_success_responses_total", &bad_calls).is_empty());
    let failure = [("exception_status", "500"), ("exception_class", "Openai.InternalServerError")];
    assert_eq!(value(&all, "litellm_deployment_failure_responses_total", &[&bad_calls[..], &failure].concat()), 1.0);
    let cooled = [("litellm_model_name", "gpt"), ("model_id", "dep-bad"), ("exception_status", "500")];
    assert_eq!(value(&all, "litellm_deployment_cooled_down_total", &cooled), 1.0);
    assert_eq!(value(&all, "litellm_deployment_state", &[("model_id", "dep-bad")]), 2.0, "complete outage: cooling");
    assert_eq!(value(&all, "litellm_deployment_state", &[("model_id", "dep-good")]), 0.0);
    assert_eq!(value(&all, "litellm_deployment_rpm_limit", &[("model_id", "dep-good")]), 900.0);

    // Tokens and spend, from the answers' usage at the deployment's prices.
    let tokens = [&key[..], &[("model_id", "dep-good"), ("requested_model", "gpt")]].concat();
    assert_eq!(value(&all, "litellm_input_tokens_metric_total", &tokens), input);
    assert_eq!(value(&all, "litellm_output_tokens_metric_total", &tokens), output);
    assert_eq!(value(&all, "litellm_total_tokens_metric_total", &tokens), input + output);
    let spent = value(&all, "litellm_spend_metric_total", &tokens);
    assert!((spent - spend).abs() < 1e-9, "spend {spent}, answers cost {spend}");
    let left = value(&all, "litellm_remaining_api_key_budget_metric", &key);
    assert!((left - (10.0 - spend)).abs() < 1e-6, "remaining budget {left}, expected {}", 10.0 - spend);
    assert_eq!(value(&all, "litellm_api_key_max_budget_metric", &key), 10.0);

    // Latency histograms with LiteLLM's buckets.
    let latency = [&key[..], &[("model_id", "dep-good")]].concat();
    assert_eq!(value(&all, "litellm_llm_api_latency_metric_count", &latency), n);
    assert_eq!(value(&all, "litellm_request_total_latency_metric_count", &latency), n);
    assert_eq!(value(&all, "litellm_overhead_latency_metric_count", &latency), n);
    let inf = [&latency[..], &[("le", "+Inf")]].concat();
    assert_eq!(value(&all, "litellm_request_total_latency_metric_bucket", &inf), n);
    let le: Vec<&str> = matching(&all, "litellm_llm_api_latency_metric_bucket", &latency)
        .iter()
        .map(|s| s.labels.iter().find(|(n, _)| n == "le").map(|(_, v)| v.as_str()).unwrap())
        .collect();
    #[rustfmt::skip]
    assert_eq!(le, ["0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1.0", "2.0", "5.0", "10.0", "30.0",
                    "60.0", "120.0", "300.0", "420.0", "600.0", "+Inf"]);

    // Pointwork's own metrics are still there.
    assert!(!matching(&all, "pointwork_requests_total", &[("deployment", "dep-good")]).is_empty());
}

#[test]
fn pointwork_telemetry_turns_them_on_and_a_stream_has_its_first_token_time() {
    let mock = Mock::start("mock", &[]);
    let yaml = config(
        &[deployment("gpt", "dep-a", "openai/gpt-4o-mini", &mock, "")],
        "pointwork:\n  telemetry:\n    litellm_metrics: true\n",
    );
    let gateway = Gateway::start(&yaml);
    let mut client = gateway.client();
    client.send("POST", "/v1/chat/completions", &[], chat_body("gpt", true).as_bytes());
    let head = client.read_head().expect("head");
    assert_eq!(head.status, 200);
    let events = client.events().collect_all().expect("events");
    assert!(events.len() > 1, "a stream of events: {events:?}");
    let ttft = "litellm_llm_api_time_to_first_token_metric_count";
    let all = scrape_until(&gateway, "the stream counted", |all| !matching(all, ttft, &[]).is_empty());
    // No key is configured: LiteLLM's labels for the caller stay empty.
    let caller = [("hashed_api_key", "None"), ("api_key_alias", "None"), ("model_id", "dep-a")];
    assert_eq!(value(&all, ttft, &caller), 1.0);
    assert!(value(&all, "litellm_output_tokens_metric_total", &caller) > 0.0, "the stream's usage was read");
    assert!(value(&all, "litellm_spend_metric_total", &caller) > 0.0, "at the cost map's prices");
    assert!(matching(&all, "litellm_remaining_api_key_budget_metric", &[]).is_empty(), "no keys: no key budgets");
}

#[test]
fn without_the_setting_no_litellm_name_appears() {
    let mock = Mock::start("mock", &["--fault", "status:500", "--fault-ratio", "0.5"]);
    let gateway = Gateway::start(&config(
        &[deployment("gpt", "dep-a", "openai/gpt-4o-mini", &mock, "")],
        "router_settings: {num_retries: 0}\n",
    ));
    let statuses: Vec<u16> = (0..4).map(|_| gateway.chat("gpt").status).collect();
    assert!(statuses.contains(&200) && statuses.contains(&500), "{statuses:?}");
    let all = scrape_until(&gateway, "Pointwork's own counts", |all| {
        matching(all, "pointwork_requests_total", &[]).iter().map(|s| s.value).sum::<f64>() == 4.0
    });
    let litellm: Vec<&Series> = all.iter().filter(|s| s.name.starts_with("litellm_")).collect();
    assert!(litellm.is_empty(), "{litellm:#?}");
    assert!(!gateway.get("/metrics").text().contains("litellm_"));
}

#[test]
fn a_database_keys_alias_team_and_user_label_its_requests_and_budgets() {
    let pg = &support::server();
    let db = "litellm_metrics_keys";
    let url = pg.litellm_database(db);
    pg.psql(
        db,
        "INSERT INTO \"LiteLLM_TeamTable\" (team_id, team_alias, models, spend, max_budget) \
         VALUES ('t-prom', 'platform', '{}', 1, 5)",
    );
    pg.psql(db, "INSERT INTO \"LiteLLM_UserTable\" (user_id, spend, models, max_budget) VALUES ('u-prom', 0, '{}', 3)");
    let secret = "sk-prom-db-key-0001";
    let (columns, values) = (", key_alias, team_id, user_id, max_budget", ", 'prom-alias', 't-prom', 'u-prom', 2");
    pg.insert_key(db, secret, columns, values);
    let mock = Mock::start("m", &[]);
    let gateway = support::start(&support::yaml(&mock, &url, "litellm_settings:\n  callbacks: [prometheus]\n"));
    let mut spend = 0.0;
    for _ in 0..3 {
        let r = support::chat(&gateway, secret, "gpt");
        assert_eq!(r.status, 200, "{}", r.text());
        // `priced`: 0.001 a token, in and out.
        spend += r.json()["usage"]["total_tokens"].as_f64().expect("total_tokens") * 0.001;
    }
    let token = digest_hex(secret.as_bytes());
    let key = [("hashed_api_key", token.as_str()), ("api_key_alias", "prom-alias")];
    let total = "litellm_proxy_total_requests_metric_total";
    let all = scrape_until(&gateway, "the key's requests", |all| {
        matching(all, total, &key).iter().map(|s| s.value).sum::<f64>() == 3.0
    });
    let who = [&key[..], &[("team", "t-prom"), ("team_alias", "platform"), ("user", "u-prom")]].concat();
    assert_eq!(value(&all, total, &[&who[..], &[("status_code", "200")]].concat()), 3.0);
    assert_eq!(value(&all, "litellm_deployment_success_responses_total", &[&key[..], &who[2..4]].concat()), 3.0);
    let near = |name: &str, labels: &[(&str, &str)], want: f64| {
        let got = value(&all, name, labels);
        assert!((got - want).abs() < 1e-6, "{name} {labels:?}: {got}, expected {want}");
    };
    near("litellm_remaining_api_key_budget_metric", &key, 2.0 - spend);
    near("litellm_api_key_max_budget_metric", &key, 2.0);
    let team = [("team", "t-prom"), ("team_alias", "platform")];
    near("litellm_remaining_team_budget_metric", &team, 5.0 - 1.0 - spend);
    near("litellm_team_max_budget_metric", &team, 5.0);
    near("litellm_remaining_user_budget_metric", &[("user", "u-prom")], 3.0 - spend);
}
