//! Configs that are refused: every class of mistake, with its exact message and key path.

mod common;

use common::{errors, fixture, load};
use pointwork_config::load_file;

const SUPPORTED: &str =
    "openai, hosted_vllm, openrouter, groq, together_ai, deepseek, mistral, codestral, fireworks_ai, xai, anthropic, azure, azure_ai, ollama, ollama_chat, huggingface, cohere, cohere_chat, gemini, vertex_ai, bedrock and LiteLLM's OpenAI-compatible providers listed in docs/configuration.md";

/// A one-deployment config with `params` as the litellm_params flow map body.
fn one(params: &str) -> String {
    format!("model_list:\n  - model_name: g\n    litellm_params: {{{params}}}\n")
}

#[test]
fn yaml_syntax_errors_name_the_file_line_and_column() {
    let path = fixture("bad/syntax.yaml");
    let err = load_file(&path).unwrap_err();
    assert_eq!(err.0.len(), 1);
    let e = &err.0[0];
    assert_eq!(e.path, format!("{}:5:14", path.display()));
    assert!(e.message.starts_with("invalid YAML: "), "{e}");
}

#[test]
fn yaml_syntax_errors_in_a_string_config() {
    assert_eq!(errors("model_list: [a\nb: 1\n"), [r#"<config>:2:2: invalid YAML: illegal placement of ':' indicator"#]);
}

#[test]
fn a_missing_config_file() {
    let path = fixture("bad/nope.yaml");
    let err = load_file(&path).unwrap_err();
    assert_eq!(err.0[0].path, path.display().to_string());
    assert!(err.0[0].message.starts_with("cannot read the config file: "), "{err}");
}

#[test]
fn missing_model_name() {
    assert_eq!(
        errors("model_list:\n  - litellm_params: {model: openai/gpt-4o}\n"),
        ["model_list[0].model_name: required key is missing (expected a non-empty string)"]
    );
}

#[test]
fn missing_litellm_params_and_model() {
    assert_eq!(
        errors("model_list:\n  - model_name: a\n  - model_name: b\n    litellm_params: {api_key: sk-x}\n"),
        [
            "model_list[0].litellm_params: required key is missing (expected a map)",
            "model_list[1].litellm_params.model: required key is missing (expected a non-empty string)",
        ]
    );
}

/// The warnings of a config that loads, as `path: message` lines.
fn warnings(yaml: &str) -> Vec<String> {
    match load(yaml) {
        Ok(loaded) => loaded.warnings.iter().map(|w| w.to_string()).collect(),
        Err(e) => panic!("expected a config, got errors: {e}"),
    }
}

const LEFT_OUT: &str = "; the rest of the config serves without this deployment";
const NONE_SERVED: &str = "model_list: every entry is left out (see the warnings): no model is served";

#[test]
fn an_unknown_provider_is_left_out() {
    assert_eq!(
        warnings(&one("model: opneai/gpt-4o")),
        [
            format!(
                r#"model_list[0].litellm_params.model: left out: unknown provider "opneai" (providers Pointwork serves: {SUPPORTED}){LEFT_OUT}"#
            ),
            NONE_SERVED.to_string()
        ]
    );
}

#[test]
fn a_config_whose_every_entry_is_left_out_loads_and_serves_nothing() {
    let loaded = load(&one("model: sagemaker/my-endpoint")).unwrap();
    assert!(loaded.config.deployments.is_empty());
    assert_eq!(loaded.config.left_out.len(), 1);
    assert_eq!(loaded.warnings.last().unwrap().to_string(), NONE_SERVED);
}

#[test]
fn a_bare_model_name_no_provider_knows_is_left_out() {
    assert_eq!(
        warnings(&one("model: my-finetune"))[0],
        format!(
            r#"model_list[0].litellm_params.model: left out: "my-finetune" names no provider and LiteLLM's model cost map does not know it; write it as provider/model (providers Pointwork serves: {SUPPORTED}){LEFT_OUT}"#
        )
    );
}

#[test]
fn hosted_vllm_needs_an_api_base() {
    assert_eq!(
        errors(&one("model: hosted_vllm/llama")),
        ["model_list[0].litellm_params.api_base: required for hosted_vllm (a self-hosted server has no default address)"]
    );
}

#[test]
fn an_api_base_that_is_no_http_url_is_a_placeholder_and_left_out() {
    let yaml = one("model: openai/x, api_base: '<your-azure-endpoint>'")
        + "  - model_name: h\n    litellm_params: {model: openai/y}\n";
    let loaded = load(&yaml).unwrap();
    assert_eq!(loaded.config.deployments.len(), 1, "the other entry serves");
    assert_eq!(
        loaded.warnings.iter().map(|w| w.to_string()).collect::<Vec<_>>(),
        [format!(
            r#"model_list[0].litellm_params.api_base: left out: api_base "<your-azure-endpoint>" is a placeholder, not an http:// or https:// URL with a host{LEFT_OUT}"#
        )]
    );
    assert_eq!(warnings(&one("model: openai/x, api_base: 'localhost:8000/v1'")).len(), 2);
}

#[test]
fn bad_weight() {
    assert_eq!(
        errors(&one("model: openai/x, weight: high")),
        [r#"model_list[0].litellm_params.weight: expected a positive integer, got "high""#]
    );
    assert_eq!(
        errors(&one("model: openai/x, weight: 0")),
        ["model_list[0].litellm_params.weight: expected a positive integer, got 0"]
    );
}

#[test]
fn bad_numbers_and_lists() {
    assert_eq!(
        errors(&one(
            "model: openai/x, rpm: -1, tpm: 1.5, order: -1, tags: {a: b}, timeout: 0, stream_timeout: soon, \
             max_parallel_requests: 0, cooldown_time: -2, region_name: [eu]"
        )),
        [
            "model_list[0].litellm_params.rpm: expected a non-negative integer, got -1",
            "model_list[0].litellm_params.tpm: expected a non-negative integer, got 1.5",
            "model_list[0].litellm_params.order: expected a non-negative integer (at most 4294967295), got -1",
            "model_list[0].litellm_params.tags: expected a list of strings, got a map",
            "model_list[0].litellm_params.region_name: expected a string, got a list",
            "model_list[0].litellm_params.timeout: expected a number of seconds greater than 0, got 0",
            r#"model_list[0].litellm_params.stream_timeout: expected a number of seconds greater than 0, got "soon""#,
            "model_list[0].litellm_params.max_parallel_requests: expected a positive integer (at most 4294967295), got 0",
            "model_list[0].litellm_params.cooldown_time: expected a number of seconds (0 or more), got -2",
        ]
    );
}

#[test]
fn an_api_key_is_never_shown_in_an_error() {
    let errs = errors(&one("model: openai/x, api_key: 123456789012345"));
    assert_eq!(errs, ["model_list[0].litellm_params.api_key: expected a string, got an integer"]);
}

#[test]
fn unknown_pointwork_keys_are_errors_naming_the_valid_ones() {
    let yaml = one("model: openai/x")
        + "pointwork:\n  listn: 0.0.0.0:4000\n  limits: {max_body: 10}\n  timeouts: {conect: 1s}\n";
    assert_eq!(
        errors(&yaml),
        [
            "pointwork.limits.max_body: unknown key; valid keys: max_header_bytes, max_headers, max_body_bytes, max_uri_bytes, max_connections_per_shard",
            r#"pointwork.timeouts.conect: unknown key; did you mean "connect"? valid keys: connect, keepalive_idle, upstream_idle, request_head, request_body_idle"#,
            r#"pointwork.listn: unknown key; did you mean "listen"? valid keys: listen, shards, io_driver, limits, timeouts, model_cost_map, drain_timeout, access_log, health_checks, auth, policies, default_policy, cluster, cache, tls, telemetry"#,
        ]
    );
}

#[test]
fn bad_pointwork_values() {
    let yaml = one("model: openai/x")
        + "pointwork:\n  listen: example.com:80\n  shards: 0\n  io_driver: epoll\n  limits: {max_headers: many}\n";
    assert_eq!(
        errors(&yaml),
        [
            r#"pointwork.listen: expected host:port with an IP address or localhost, like "0.0.0.0:4000", got "example.com:80""#,
            "pointwork.shards: expected a positive integer, got 0",
            r#"pointwork.io_driver: expected one of auto, uring, legacy, got "epoll""#,
            r#"pointwork.limits.max_headers: expected a positive integer, got "many""#,
        ]
    );
}

#[test]
fn bad_duration_string() {
    let yaml = one("model: openai/x") + "pointwork:\n  timeouts:\n    connect: 30 parsecs\n";
    assert_eq!(
        errors(&yaml),
        [
            r#"pointwork.timeouts.connect: expected a duration greater than 0, like 30, "500ms", "30s" or "2m", got "30 parsecs""#
        ]
    );
}

#[test]
fn missing_environment_variable() {
    assert_eq!(
        errors(&one("model: openai/x, api_key: os.environ/NOT_SET_ANYWHERE")),
        ["model_list[0].litellm_params.api_key: environment variable NOT_SET_ANYWHERE is not set (os.environ/NOT_SET_ANYWHERE)"]
    );
}

#[test]
fn include_cycle() {
    let main = fixture("bad/cycle_a.yaml");
    let err = load_file(&main).unwrap_err();
    let lines: Vec<String> = err.0.iter().map(|e| e.to_string()).collect();
    assert_eq!(
        lines,
        [format!("cycle_b.yaml: include[0]: include cycle: {} → cycle_b.yaml → cycle_a.yaml", main.display())]
    );
}

#[test]
fn missing_include() {
    let main = fixture("bad/missing_include.yaml");
    let err = load_file(&main).unwrap_err();
    assert_eq!(err.0.len(), 1);
    assert_eq!(err.0[0].path, "include[0]");
    let missing = fixture("bad/does_not_exist.yaml");
    assert!(err.0[0].message.starts_with(&format!("cannot read {}: ", missing.display())), "{err}");
}

#[test]
fn a_section_set_in_two_files_names_both() {
    let main = fixture("bad/conflict_main.yaml");
    let err = load_file(&main).unwrap_err();
    let lines: Vec<String> = err.0.iter().map(|e| e.to_string()).collect();
    assert_eq!(
        lines,
        [
            format!(
                "conflict_included.yaml: router_settings: router_settings is also set in {}; only model_list may appear in more than one file",
                main.display()
            ),
            r#"conflict_included.yaml: model_list[0].litellm_params.weight: expected a positive integer, got "high""#.to_string(),
        ]
    );
}

#[test]
fn a_syntax_error_in_an_included_file_names_that_file() {
    let err = load_file(&fixture("bad/included_syntax.yaml")).unwrap_err();
    assert_eq!(err.0.len(), 1);
    assert!(err.0[0].path.starts_with("broken.yaml:"), "{err}");
    assert!(err.0[0].message.starts_with("invalid YAML: "), "{err}");
}

#[test]
fn duplicate_ids() {
    let yaml = "model_list:\n\
                - {model_name: a, litellm_params: {model: openai/x}, model_info: {id: same}}\n\
                - {model_name: b, litellm_params: {model: openai/y}, model_info: {id: same}}\n";
    assert_eq!(
        errors(yaml),
        [r#"model_list[1].model_info.id: duplicate deployment id "same" (first used by model_list[0])"#]
    );
}

#[test]
fn an_empty_or_missing_model_list_loads_when_models_come_from_the_database() {
    for yaml in [
        "general_settings: {store_model_in_db: true}\n",
        "model_list: []\ngeneral_settings: {store_model_in_db: true}\n",
    ] {
        let loaded = load(yaml).unwrap();
        assert!(loaded.config.deployments.is_empty(), "{yaml}");
    }
}

#[test]
fn empty_model_list() {
    let expected = ["model_list: at least one deployment is required"];
    assert_eq!(errors("model_list: []\n"), expected);
    assert_eq!(errors("general_settings: {master_key: sk-1234}\n"), expected);
    assert_eq!(errors(""), expected);
}

#[test]
fn model_list_of_the_wrong_shape() {
    assert_eq!(errors("model_list: {model_name: a}\n"), ["model_list: expected a list, got a map"]);
    assert_eq!(errors("model_list: [gpt-4o]\n"), [r#"model_list[0]: expected a map, got "gpt-4o""#]);
}

#[test]
fn the_top_level_must_be_a_map() {
    assert_eq!(errors("- a\n- b\n"), ["<config>: expected a map of config sections, got a list"]);
}

#[test]
fn unknown_routing_strategies() {
    let yaml = one("model: openai/x") + "router_settings: {routing_strategy: round-robin}\n";
    assert_eq!(
        errors(&yaml),
        [
            r#"router_settings.routing_strategy: unknown routing strategy "round-robin"; valid: simple-shuffle, least-busy, latency-based-routing, usage-based-routing-v2, cost-based-routing, usage-based-routing, lar1, provider-budget-routing"#
        ]
    );
}

#[test]
fn bad_router_and_litellm_settings() {
    let yaml = one("model: openai/x")
        + "router_settings: {num_retries: -1, disable_cooldowns: maybe, timeout: 0}\n\
           litellm_settings: {request_timeout: forever}\n";
    assert_eq!(
        errors(&yaml),
        [
            r#"litellm_settings.request_timeout: expected a number of seconds greater than 0, got "forever""#,
            "router_settings.num_retries: expected a non-negative integer (at most 4294967295), got -1",
            "router_settings.timeout: expected a number of seconds greater than 0, got 0",
            r#"router_settings.disable_cooldowns: expected true or false, got "maybe""#,
        ]
    );
}

#[test]
fn several_errors_are_reported_together() {
    let yaml = "model_list:\n\
                - model_name: a\n  litellm_params: {model: anthropik/claude, weight: high}\n\
                - litellm_params: {model: openai/x, api_key: os.environ/MISSING_KEY}\n\
                pointwork: {shardz: 2}\n";
    assert_eq!(
        errors(yaml),
        [
            "model_list[1].model_name: required key is missing (expected a non-empty string)".to_string(),
            "model_list[1].litellm_params.api_key: environment variable MISSING_KEY is not set (os.environ/MISSING_KEY)".to_string(),
            r#"pointwork.shardz: unknown key; did you mean "shards"? valid keys: listen, shards, io_driver, limits, timeouts, model_cost_map, drain_timeout, access_log, health_checks, auth, policies, default_policy, cluster, cache, tls, telemetry"#.to_string(),
        ]
    );
}

#[test]
fn errors_display_one_per_line() {
    let err = load("model_list:\n- {model_name: a}\n- {model_name: b}\n").unwrap_err();
    assert_eq!(
        err.to_string(),
        "model_list[0].litellm_params: required key is missing (expected a map)\n\
         model_list[1].litellm_params: required key is missing (expected a map)"
    );
}

#[test]
fn bad_drain_access_log_and_health_check_values() {
    let yaml = one("model: openai/x")
        + "general_settings:\n  background_health_checks: sometimes\n  health_check_interval: -5\n\
           pointwork:\n  drain_timeout: 0\n  access_log: ''\n  health_checks: {timeout: soon, max_tokens: 0, promt: hi}\n";
    assert_eq!(
        errors(&yaml),
        [
            r#"general_settings.background_health_checks: expected true or false, got "sometimes""#,
            "general_settings.health_check_interval: expected a number of seconds greater than 0, got -5",
            r#"pointwork.drain_timeout: expected a duration greater than 0, like 30, "500ms", "30s" or "2m", got 0"#,
            r#"pointwork.access_log: expected a non-empty string, got """#,
            r#"pointwork.health_checks.timeout: expected a duration greater than 0, like 30, "500ms", "30s" or "2m", got "soon""#,
            "pointwork.health_checks.max_tokens: expected a positive integer (at most 4294967295), got 0",
            r#"pointwork.health_checks.promt: unknown key; did you mean "prompt"? valid keys: timeout, prompt, max_tokens"#,
        ]
    );
}

#[test]
fn bad_fallbacks_name_the_entry() {
    let yaml = one("model: openai/x")
        + "router_settings:\n  fallbacks: [{g: [nope]}, {g: [g], h: [g]}, gpt]\n  context_window_fallbacks: [{g: big}]\n\
           \x20 default_fallbacks: [missing]\n  retry_policy: {RateLimitErorRetries: 2}\n";
    assert_eq!(
        errors(&yaml),
        [
            "router_settings.fallbacks[1]: expected one group per entry, got 2 keys",
            r#"router_settings.fallbacks[2]: expected a map {group: [fallback groups]}, got "gpt""#,
            r#"router_settings.context_window_fallbacks[0].g: expected a list of strings, got "big""#,
            r#"router_settings.retry_policy.RateLimitErorRetries: unknown key; did you mean "RateLimitErrorRetries"? valid keys: BadRequestErrorRetries, AuthenticationErrorRetries, TimeoutErrorRetries, RateLimitErrorRetries, ContentPolicyViolationErrorRetries, ContextWindowExceededErrorRetries, InternalServerErrorRetries"#,
            r#"router_settings.fallbacks[0].g[0]: unknown model group, alias or deployment id "nope"; model groups: g"#,
            r#"router_settings.default_fallbacks[0]: unknown model group, alias or deployment id "missing"; model groups: g"#,
        ]
    );
}

#[test]
fn bad_model_group_aliases_name_the_alias() {
    let yaml = one("model: openai/x")
        + "router_settings:\n  model_group_alias: {a: nope, b: {model: g, hiden: true}, c: {hidden: true}, d: 3}\n";
    assert_eq!(
        errors(&yaml),
        [
            r#"router_settings.model_group_alias.b.hiden: unknown key; did you mean "hidden"? valid keys: model, hidden"#,
            "router_settings.model_group_alias.c.model: required key is missing (expected a non-empty string)",
            "router_settings.model_group_alias.d: expected a non-empty string, got 3",
            r#"router_settings.model_group_alias.a: unknown model group "nope"; model groups: g"#,
        ]
    );
}

#[test]
fn bad_affinity_settings_name_the_key() {
    let yaml = one("model: openai/x")
        + "router_settings:\n  model_group_affinity_config: {g: [session_afinity], nope: [session_affinity]}\n\
           \x20 deployment_affinity_ttl_seconds: 0\n";
    assert_eq!(
        errors(&yaml),
        [
            r#"router_settings.model_group_affinity_config.g[0]: unknown affinity check "session_afinity"; valid: session_affinity, deployment_affinity"#,
            "router_settings.deployment_affinity_ttl_seconds: expected a number of seconds greater than 0, got 0",
            r#"router_settings.model_group_affinity_config.nope: unknown model group "nope"; model groups: g"#,
        ]
    );
}

#[test]
fn bad_provider_budgets_name_the_key() {
    let yaml = one("model: openai/x")
        + "router_settings:\n  provider_budget_config:\n    azzure: {budget_limit: 1, time_period: 1d}\n\
           \x20   openai: {budget_limit: -1, time_period: 1w}\n    groq: {time_period: 1d}\n";
    assert_eq!(
        errors(&yaml),
        [
            r#"router_settings.provider_budget_config.azzure: unknown provider "azzure"; providers: openai, hosted_vllm, openrouter, groq, together_ai, deepseek, mistral, codestral, fireworks_ai, xai, anthropic, azure, azure_ai, ollama, ollama_chat, huggingface, cohere, cohere_chat, gemini, vertex_ai, bedrock"#,
            "router_settings.provider_budget_config.openai.budget_limit: expected a number (0 or more), got -1",
            r#"router_settings.provider_budget_config.openai.time_period: expected a period like "1d", "1h", "15m" or "30s", got "1w""#,
            "router_settings.provider_budget_config.groq.budget_limit: required key is missing (expected a number (0 or more))",
        ]
    );
}
