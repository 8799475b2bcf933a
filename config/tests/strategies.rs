//! The router settings and deployment keys the stateful strategies read, and the model cost map.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{errors, load, test_env};
use pointwork_config::{load_str, CostMapSource};
use pointwork_core::RoutingStrategy;

fn with_router(router: &str) -> String {
    format!("model_list: [{{model_name: g, litellm_params: {{model: openai/gpt-4o}}}}]\nrouter_settings: {router}\n")
}

/// The folder of the cost map that ships with Pointwork.
fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data")
}

#[test]
fn every_strategy_parses_and_v1_usage_is_read_as_v2_with_a_warning() {
    for s in RoutingStrategy::ALL {
        let loaded = load(&with_router(&format!("{{routing_strategy: {}}}", s.as_str()))).unwrap();
        assert_eq!(loaded.config.router.routing_strategy, s);
        assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
        assert!(loaded.config.summary().contains(&format!("router: {}", s.as_str())));
    }
    let loaded = load(&with_router("{routing_strategy: usage-based-routing}")).unwrap();
    assert_eq!(loaded.config.router.routing_strategy, RoutingStrategy::UsageBasedV2);
    assert_eq!(
        loaded.warnings.iter().map(|w| w.to_string()).collect::<Vec<_>>(),
        [
            r#"router_settings.routing_strategy: "usage-based-routing" is read as "usage-based-routing-v2"; write "usage-based-routing-v2" to say so"#
        ]
    );
}

#[test]
fn routing_strategy_args_read_the_latency_buffer_and_warn_about_the_rest() {
    let loaded = load(&with_router(
        "{routing_strategy: latency-based-routing, routing_strategy_args: {lowest_latency_buffer: 0.5, ttl: 10}}",
    ))
    .unwrap();
    assert_eq!(loaded.config.router.lowest_latency_buffer, 0.5);
    assert_eq!(
        loaded.warnings.iter().map(|w| w.to_string()).collect::<Vec<_>>(),
        ["router_settings.routing_strategy_args.ttl: ignored: not implemented by Pointwork yet"]
    );
    assert_eq!(load(&with_router("{}")).unwrap().config.router.lowest_latency_buffer, 0.0);
    assert_eq!(
        errors(&with_router("{routing_strategy_args: {lowest_latency_buffer: -1}}")),
        ["router_settings.routing_strategy_args.lowest_latency_buffer: expected a number (0 or more), got -1"]
    );
    assert_eq!(
        errors(&with_router("{routing_strategy_args: fast}")),
        [r#"router_settings.routing_strategy_args: expected a map, got "fast""#]
    );
}

#[test]
fn health_check_routing_keys() {
    let r = load(&with_router("{}")).unwrap().config.router;
    assert!(!r.enable_health_check_routing);
    assert_eq!(r.health_check_staleness_threshold, Duration::from_secs(60));
    let r = load(&with_router("{enable_health_check_routing: true, health_check_staleness_threshold: 90}"))
        .unwrap()
        .config
        .router;
    assert!(r.enable_health_check_routing);
    assert_eq!(r.health_check_staleness_threshold, Duration::from_secs(90));
    let summary = load(&with_router("{enable_health_check_routing: true, routing_strategy: latency-based-routing}"))
        .unwrap()
        .config
        .summary();
    assert!(summary.contains("router: latency-based-routing (lowest_latency_buffer 0), "), "{summary}");
    assert!(summary.contains("pre-call checks off, health-check routing on (results stale after 60s)"), "{summary}");
    assert_eq!(
        errors(&with_router("{enable_health_check_routing: sometimes, health_check_staleness_threshold: -5}")),
        [
            r#"router_settings.enable_health_check_routing: expected true or false, got "sometimes""#,
            "router_settings.health_check_staleness_threshold: expected a number of seconds (0 or more), got -5",
        ]
    );
}

#[test]
fn prices_and_limits_from_litellm_params_and_model_info() {
    let yaml = "model_list:\n\
                - model_name: g\n  litellm_params: {model: openai/a, input_cost_per_token: 1e-6, output_cost_per_token: 2e-6, rpm: 5}\n  \
                  model_info: {rpm: 50, tpm: 1000, input_cost_per_token: 9e-6}\n\
                - model_name: g\n  litellm_params: {model: openai/b}\n  \
                  model_info: {id: b, rpm: 7, tpm: \"700\", input_cost_per_token: 0, output_cost_per_token: 3e-7}\n";
    let config = load(yaml).unwrap().config;
    let (a, b) = (&config.deployments[0], &config.deployments[1]);
    // litellm_params wins over model_info.
    assert_eq!(
        (a.rpm, a.tpm, a.input_cost_per_token, a.output_cost_per_token),
        (Some(5), Some(1000), Some(1e-6), Some(2e-6))
    );
    assert_eq!(
        (b.rpm, b.tpm, b.input_cost_per_token, b.output_cost_per_token),
        (Some(7), Some(700), Some(0.0), Some(3e-7))
    );
    // model_info keeps them, as numbers.
    assert_eq!(config.deployment_info[1].model_info["tpm"], serde_json::json!(700));
    assert_eq!(config.deployment_info[1].model_info["output_cost_per_token"], serde_json::json!(3e-7));

    let bad = "model_list:\n\
               - model_name: g\n  litellm_params: {model: openai/a, input_cost_per_token: cheap, output_cost_per_token: -1}\n  \
                 model_info: {rpm: -3, output_cost_per_token: \"NaN\"}\n";
    assert_eq!(
        errors(bad),
        [
            r#"model_list[0].litellm_params.input_cost_per_token: expected a number (0 or more), got "cheap""#,
            "model_list[0].litellm_params.output_cost_per_token: expected a number (0 or more), got -1",
            "model_list[0].model_info.rpm: expected a non-negative integer, got -3",
            r#"model_list[0].model_info.output_cost_per_token: expected a number (0 or more), got "NaN""#,
        ]
    );
}

#[test]
fn the_model_cost_map_fills_in_prices_a_deployment_does_not_set() {
    let list = "model_list:\n\
                - {model_name: g, litellm_params: {model: openai/gpt-4o}}\n\
                - {model_name: g, litellm_params: {model: gpt-4o-mini}}\n\
                - {model_name: g, litellm_params: {model: openai/gpt-4o, input_cost_per_token: 1e-6}, model_info: {id: own}}\n\
                - {model_name: g, litellm_params: {model: openai/no-such-model}}\n";
    let expected = [(Some(2.5e-6), Some(1e-5)), (Some(1.5e-7), Some(6e-7)), (Some(1e-6), Some(1e-5)), (None, None)];
    let prices = |yaml: &str| {
        let config = load_str(yaml, &data_dir(), &test_env).unwrap().config;
        let prices: Vec<_> =
            config.deployments.iter().map(|d| (d.input_cost_per_token, d.output_cost_per_token)).collect();
        (config.gateway.model_cost_map, prices)
    };
    // The map that ships with Pointwork, by default.
    assert_eq!(prices(list), (CostMapSource::Bundled, expected.to_vec()));
    // A file (here the same map).
    let file = format!("{list}pointwork: {{model_cost_map: model_prices_and_context_window.json}}\n");
    let source = CostMapSource::File(data_dir().join("model_prices_and_context_window.json"));
    assert_eq!(prices(&file), (source, expected.to_vec()));
    // Turned off: only what the deployments set.
    for off in ["false", "off"] {
        let (source, prices) = prices(&format!("{list}pointwork: {{model_cost_map: {off}}}\n"));
        assert_eq!(source, CostMapSource::Off);
        assert_eq!(prices, [(None, None), (None, None), (Some(1e-6), None), (None, None)]);
    }
}

#[test]
fn an_unreadable_or_invalid_cost_map_is_an_error_at_its_key() {
    let dir = common::fixtures();
    let yaml = |file: &str| {
        format!("model_list: [{{model_name: g, litellm_params: {{model: openai/x}}}}]\npointwork: {{model_cost_map: {file}}}\n")
    };
    let err = match load_str(&yaml("missing.json"), &dir, &test_env) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("loaded"),
    };
    assert!(err.starts_with("pointwork.model_cost_map: cannot read "), "{err}");
    assert!(err.contains("missing.json"), "{err}");
    // A JSON file of another shape (an OpenAI chat request).
    let err = match load_str(&yaml("not_a_cost_map.json"), &dir, &test_env) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("loaded"),
    };
    assert!(err.starts_with("pointwork.model_cost_map: "), "{err}");
    assert!(err.contains("is not a LiteLLM model cost map: expected a JSON object of model names to prices"), "{err}");
    assert_eq!(
        errors("model_list: [{model_name: g, litellm_params: {model: openai/x}}]\npointwork: {model_cost_map: ''}\n"),
        [r#"pointwork.model_cost_map: expected a file path, or false for no map, got """#]
    );
}
