//! Configs that compile, and what they compile into.

mod common;

use std::time::Duration;

use common::{fixture, fixtures, load, test_env};
use pointwork_config::{load_file, load_str, IoDriver};
use pointwork_core::{Provider, RoutingStrategy};
use sha2::{Digest, Sha256};

fn realistic() -> pointwork_config::Loaded {
    let yaml = std::fs::read_to_string(fixture("litellm_realistic.yaml")).unwrap();
    load(&yaml).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn minimal_config_gets_litellm_defaults() {
    let path = fixture("minimal.yaml");
    let loaded = load_file(&path).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let config = loaded.config;
    assert_eq!(config.files, [path]);
    let [d] = config.deployments.as_slice() else { panic!("one deployment expected") };
    assert_eq!(d.model_name, "gpt-4o-mini");
    assert_eq!(d.provider, Provider::OpenAi);
    assert_eq!(d.upstream_model, "gpt-4o-mini");
    assert_eq!(d.api_base, "https://api.openai.com/v1");
    assert_eq!(d.api_key, None);
    assert_eq!(d.id.len(), 16);
    assert!(config.deployment_info[0].derived_id);
    assert_eq!(config.router, Default::default());
    assert_eq!(config.gateway, Default::default());
    assert_eq!(config.gateway.listen.to_string(), "0.0.0.0:4000");
    assert_eq!(config.master_key, None);
    let snapshot = config.snapshot().unwrap();
    assert_eq!(snapshot.public_model_names().collect::<Vec<_>>(), ["gpt-4o-mini"]);
}

#[test]
fn realistic_config_compiles_every_deployment_in_order() {
    let config = realistic().config;
    let summary: Vec<(&str, &str, Provider, &str, &str)> = config
        .deployments
        .iter()
        .map(|d| (d.model_name.as_str(), d.id.as_str(), d.provider, d.upstream_model.as_str(), d.api_base.as_str()))
        .collect();
    let derived = |i: usize| config.deployments[i].id.as_str();
    assert_eq!(
        summary,
        [
            ("gpt-4o", "gpt-4o-primary", Provider::OpenAi, "gpt-4o", "https://api.openai.com/v1"),
            ("gpt-4o", derived(1), Provider::OpenRouter, "openai/gpt-4o", "https://openrouter.ai/api/v1"),
            ("llama-3.1-8b", derived(2), Provider::Groq, "llama-3.1-8b-instant", "https://api.groq.com/openai/v1"),
            ("gpt-4o-mini", derived(3), Provider::OpenAi, "gpt-4o-mini", "https://api.openai.com/v1"),
            (
                "llama-3.1-70b",
                "vllm-70b",
                Provider::HostedVllm,
                "meta-llama/Llama-3.1-70B-Instruct",
                "http://10.0.0.7:8000/v1"
            ),
            (
                "text-embedding-3-small",
                derived(5),
                Provider::OpenAi,
                "text-embedding-3-small",
                "https://api.openai.com/v1"
            ),
        ]
    );
    let sources: Vec<String> = config.deployment_info.iter().map(|i| i.source.to_string()).collect();
    assert_eq!(
        sources,
        [
            "model_list[0]",
            "model_list[1]",
            "model_list[2]",
            "model_list[3]",
            "shared/self_hosted.yaml: model_list[0]",
            "shared/embeddings.yaml: model_list[0]",
        ]
    );
    assert_eq!(config.files, [fixtures().join("shared/self_hosted.yaml"), fixtures().join("shared/embeddings.yaml")]);
}

#[test]
fn anchors_and_merge_keys_share_params_and_explicit_keys_win() {
    let config = realistic().config;
    let [primary, openrouter, ..] = config.deployments.as_slice() else { panic!("deployments missing") };
    for d in [primary, openrouter] {
        assert_eq!(d.timeout, Some(Duration::from_secs(30)));
        assert_eq!(d.stream_timeout, Some(Duration::from_secs(120)));
        assert_eq!(d.max_parallel_requests, Some(64));
    }
    // The merged-in api_key is overridden by the entry's own.
    assert_eq!(primary.api_key.as_deref(), Some("sk-openai-test-key-1111"));
    assert_eq!(openrouter.api_key.as_deref(), Some("sk-or-test-key-2222"));
}

#[test]
fn litellm_params_are_read() {
    let config = realistic().config;
    let d = &config.deployments;
    assert_eq!((d[0].weight, d[0].rpm, d[0].order), (Some(3), Some(500), None));
    assert_eq!(d[0].tags, ["prod", "us"]);
    assert_eq!(d[0].region_name.as_deref(), Some("us-east-1"));
    assert_eq!((d[1].weight, d[1].order), (Some(1), Some(2)));
    assert_eq!(d[1].cooldown_time, Some(Duration::ZERO));
    assert_eq!(d[2].tpm, Some(100000));
    let snapshot = config.snapshot().unwrap();
    let weights: Vec<u64> = snapshot.deployments.iter().map(|d| d.shuffle_weight).collect();
    assert_eq!(weights, [3, 1, 100000, 1, 1, 1]);
}

#[test]
fn environment_variables_win_over_the_process_environment() {
    let config = realistic().config;
    // The test environment also sets GROQ_API_KEY; the config's own value wins, as in LiteLLM.
    assert_eq!(config.deployments[2].api_key.as_deref(), Some("gsk-from-config-0000aaaa"));
    assert_eq!(config.master_key.as_deref(), Some("sk-master-secret-3333"));
}

#[test]
fn model_info_is_kept_without_its_id() {
    let config = realistic().config;
    let info = &config.deployment_info[0].model_info;
    assert_eq!(info.get("mode"), Some(&serde_json::json!("chat")));
    assert_eq!(info.get("base_model"), Some(&serde_json::json!("gpt-4o")));
    assert_eq!(info.get("id"), None);
    assert!(!config.deployment_info[0].derived_id);
    assert!(config.deployment_info[1].derived_id);
    assert!(config.deployment_info[3].model_info.is_empty());
}

#[test]
fn router_settings_win_over_litellm_settings() {
    let r = realistic().config.router;
    assert_eq!(r.routing_strategy, RoutingStrategy::SimpleShuffle);
    assert_eq!(r.num_retries, 3);
    assert_eq!(r.allowed_fails, Some(2));
    assert_eq!(r.cooldown_time, Duration::from_secs(30));
    assert_eq!(r.timeout, Duration::from_secs(600));
    assert_eq!(r.stream_timeout, Some(Duration::from_secs(60)));
    assert!(r.enable_pre_call_checks);
    assert!(!r.disable_cooldowns);
}

#[test]
fn litellm_settings_apply_when_router_settings_are_silent() {
    let loaded = load(
        "model_list: [{model_name: a, litellm_params: {model: openai/gpt-4o}}]\n\
         litellm_settings: {request_timeout: 900, num_retries: 0, allowed_fails: 1, cooldown_time: 2.5, disable_cooldowns: yes}\n",
    )
    .unwrap();
    let r = loaded.config.router;
    assert_eq!(r.timeout, Duration::from_secs(900));
    assert_eq!(r.num_retries, 0);
    assert_eq!(r.allowed_fails, Some(1));
    assert_eq!(r.cooldown_time, Duration::from_millis(2500));
    assert!(r.disable_cooldowns);
}

#[test]
fn pointwork_section_is_read() {
    let g = realistic().config.gateway;
    assert_eq!(g.listen.to_string(), "127.0.0.1:8080");
    assert_eq!(g.shards, Some(2));
    assert_eq!(g.io_driver, IoDriver::Legacy);
    assert_eq!(g.limits.max_body_bytes, 1048576);
    assert_eq!(g.limits.max_headers, 100);
    assert_eq!(g.timeouts.connect, Duration::from_millis(500));
    assert_eq!(g.timeouts.keepalive_idle, Duration::from_secs(60));
    assert_eq!(g.timeouts.upstream_idle, Duration::from_secs(120));
}

#[test]
fn ignored_litellm_keys_are_warned_with_their_paths() {
    let warnings: Vec<String> = realistic().warnings.iter().map(|w| w.to_string()).collect();
    let ignored = "ignored: not implemented by Pointwork yet";
    let expected: Vec<String> =
        ["model_list[3].litellm_params.drop_params", "litellm_settings.drop_params", "x-openai-defaults", "guardrails"]
            .iter()
            .map(|p| format!("{p}: {ignored}"))
            .collect();
    // `os.environ/DATABASE_URL` unset: no database, said where it is written.
    let mut expected = expected;
    expected.insert(
        2,
        "general_settings.database_url: environment variable DATABASE_URL is not set: no database (keys come from the config)".into(),
    );
    // Langfuse is exported to once its keys are set.
    let langfuse = "langfuse: LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY are needed: nothing goes to Langfuse";
    expected.insert(3, format!("litellm_settings.success_callback[0]: {langfuse}"));
    assert_eq!(warnings, expected);
    assert_eq!(realistic().config.warning_count, expected.len());
    let aliases = realistic().config.router.model_group_alias;
    assert_eq!(
        aliases,
        [pointwork_core::ModelGroupAlias { alias: "gpt-4".into(), group: "gpt-4o".into(), hidden: false }]
    );
}

#[test]
fn ignored_keys_are_not_substituted() {
    // DATABASE_URL is unset: keys Pointwork ignores never fail the load.
    assert_eq!(test_env("DATABASE_URL"), None);
    realistic();
}

#[test]
fn router_settings_redis_host_shares_state_through_redis() {
    let cluster = realistic().config.gateway.cluster.expect("redis_host turns Redis on");
    assert_eq!(cluster.redis.url(), "redis://redis.internal:6379/0");
    assert_eq!(cluster.named_by, "router_settings.redis_host");
}

#[test]
fn the_derived_id_follows_the_documented_recipe() {
    let config = realistic().config;
    let canonical = r#"{"cooldown_time":0,"max_parallel_requests":64,"model":"openrouter/openai/gpt-4o","order":2,"stream_timeout":120,"timeout":30,"weight":1}"#;
    let digest = Sha256::digest(format!("gpt-4o\0{canonical}").as_bytes());
    let expected: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(config.deployments[1].id, expected);
}

#[test]
fn the_derived_id_survives_key_rotation_and_reformatting() {
    let before = "model_list:\n  - model_name: g\n    litellm_params:\n      model: openai/gpt-4o\n      api_key: os.environ/OPENAI_API_KEY\n      rpm: 10\n";
    let rotated = |name: &str| (name == "OPENAI_API_KEY").then(|| "sk-rotated-key-0000".to_string());
    let a = load_str(before, &fixtures(), &test_env).unwrap().config;
    let b = load_str(before, &fixtures(), &rotated).unwrap().config;
    let literal_key =
        "model_list:\n- model_name: g\n  litellm_params: {rpm: 10, api_key: sk-literal, model: openai/gpt-4o}\n";
    let c = load(literal_key).unwrap().config;
    let no_key = "model_list:\n- model_name: g\n  litellm_params: {rpm: 10, model: openai/gpt-4o}\n";
    let d = load(no_key).unwrap().config;
    assert_eq!(a.deployments[0].id, b.deployments[0].id);
    assert_eq!(a.deployments[0].id, c.deployments[0].id);
    assert_eq!(a.deployments[0].id, d.deployments[0].id);
    let other_rpm = load(&no_key.replace("rpm: 10", "rpm: 11")).unwrap().config;
    assert_ne!(a.deployments[0].id, other_rpm.deployments[0].id);
}

#[test]
fn provider_default_api_bases() {
    let yaml = "model_list:\n".to_string()
        + &[
            ("openai/m", "https://api.openai.com/v1"),
            ("openrouter/m", "https://openrouter.ai/api/v1"),
            ("groq/m", "https://api.groq.com/openai/v1"),
            ("together_ai/m", "https://api.together.xyz/v1"),
            ("deepseek/m", "https://api.deepseek.com/v1"),
            ("mistral/m", "https://api.mistral.ai/v1"),
            ("fireworks_ai/m", "https://api.fireworks.ai/inference/v1"),
        ]
        .iter()
        .map(|(m, _)| format!("  - {{model_name: {m}, litellm_params: {{model: {m}}}}}\n"))
        .collect::<String>();
    let config = load(&yaml).unwrap().config;
    let bases: Vec<&str> = config.deployments.iter().map(|d| d.api_base.as_str()).collect();
    assert_eq!(
        bases,
        [
            "https://api.openai.com/v1",
            "https://openrouter.ai/api/v1",
            "https://api.groq.com/openai/v1",
            "https://api.together.xyz/v1",
            "https://api.deepseek.com/v1",
            "https://api.mistral.ai/v1",
            "https://api.fireworks.ai/inference/v1",
        ]
    );
}

#[test]
fn xai_takes_its_default_api_base_and_its_key_from_xai_api_key() {
    let yaml = "environment_variables: {XAI_API_KEY: xai-key}\nmodel_list:\n  - {model_name: grok, litellm_params: {model: xai/grok-3-mini}}\n";
    let config = load(yaml).unwrap().config;
    let d = &config.deployments[0];
    assert_eq!((d.provider, d.upstream_model.as_str()), (Provider::Xai, "grok-3-mini"));
    assert_eq!((d.api_base.as_str(), d.api_key.as_deref()), ("https://api.x.ai/v1", Some("xai-key")));
}

#[test]
fn explicit_api_base_loses_its_trailing_slash() {
    let config =
        load("model_list: [{model_name: a, litellm_params: {model: openai/x, api_base: 'http://127.0.0.1:9000/v1/'}}]")
            .unwrap()
            .config;
    assert_eq!(config.deployments[0].api_base, "http://127.0.0.1:9000/v1");
}

#[test]
fn values_from_the_environment_are_parsed_like_written_ones() {
    let env = |name: &str| match name {
        "RPM" => Some("120".to_string()),
        "SHARDS" => Some("4".to_string()),
        _ => None,
    };
    let yaml = "model_list: [{model_name: a, litellm_params: {model: openai/x, rpm: os.environ/RPM}}]\n\
                pointwork: {shards: os.environ/SHARDS}\n";
    let config = load_str(yaml, &fixtures(), &env).unwrap().config;
    assert_eq!(config.deployments[0].rpm, Some(120));
    assert_eq!(config.gateway.shards, Some(4));
}

#[test]
fn integer_ids_are_strings() {
    let config =
        load("model_list: [{model_name: a, litellm_params: {model: openai/x}, model_info: {id: 7}}]").unwrap().config;
    assert_eq!(config.deployments[0].id, "7");
}

#[test]
fn snapshot_errors_name_the_entries() {
    let mut config = realistic().config;
    // Only reachable by editing a loaded config: loading refuses duplicate ids itself.
    config.deployments.push(config.deployments[0].clone());
    let mut info = config.deployment_info[4].clone();
    info.derived_id = false;
    config.deployment_info.push(info);
    let err = config.snapshot().unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"shared/self_hosted.yaml: model_list[0].model_info.id: duplicate deployment id "gpt-4o-primary" (first used by model_list[0])"#
    );
}

#[test]
fn drain_access_log_and_health_checks() {
    use pointwork_config::AccessLogTarget;
    let defaults = load("model_list: [{model_name: a, litellm_params: {model: openai/x}}]").unwrap().config.gateway;
    assert_eq!(defaults.drain_timeout, Duration::from_secs(30));
    assert_eq!(defaults.access_log, AccessLogTarget::Off);
    assert!(!defaults.health_checks.background);
    assert_eq!(defaults.health_checks.interval, Duration::from_secs(300));
    let yaml = "model_list: [{model_name: a, litellm_params: {model: openai/x}}]\n\
                general_settings: {background_health_checks: true, health_check_interval: 15, \
                background_health_check_model_groups: [a]}\n\
                pointwork: {drain_timeout: 2s, access_log: logs/access.jsonl, \
                health_checks: {timeout: 500ms, prompt: hello, max_tokens: 3}}\n";
    let config = load_str(yaml, &fixtures(), &|_| None).unwrap().config;
    let g = config.gateway;
    assert_eq!(g.drain_timeout, Duration::from_secs(2));
    assert_eq!(g.access_log, AccessLogTarget::File(fixtures().join("logs/access.jsonl")));
    assert!(g.health_checks.background);
    assert_eq!(g.health_checks.interval, Duration::from_secs(15));
    assert_eq!(g.health_checks.model_groups, Some(vec!["a".to_string()]));
    assert_eq!(g.health_checks.timeout, Duration::from_millis(500));
    assert_eq!(g.health_checks.prompt, "hello");
    assert_eq!(g.health_checks.max_tokens, 3);
    let stdout =
        load("model_list: [{model_name: a, litellm_params: {model: openai/x}}]\npointwork: {access_log: stdout}")
            .unwrap()
            .config;
    assert_eq!(stdout.gateway.access_log, AccessLogTarget::Stdout);
}

#[test]
fn fallbacks_and_the_retry_policy_from_both_sections() {
    use pointwork_core::ErrorClass;
    let yaml = "model_list:\n\
                - {model_name: a, litellm_params: {model: openai/x}}\n\
                - {model_name: b, litellm_params: {model: openai/y}}\n\
                - {model_name: big, litellm_params: {model: openai/z}}\n\
                litellm_settings:\n  fallbacks: [{a: [b]}]\n  default_fallbacks: [b]\n  max_fallbacks: 9\n\
                router_settings:\n  context_window_fallbacks: [{a: [big]}]\n  max_fallbacks: 2\n\
                \x20 retry_policy: {RateLimitErrorRetries: 4, BadRequestErrorRetries: 0}\n";
    let settings = load(yaml).unwrap().config.router;
    let f = &settings.fallbacks;
    assert_eq!(f.for_failure("a", ErrorClass::RateLimit), ["b"]);
    assert_eq!(f.for_failure("big", ErrorClass::InternalServer), ["b"], "default_fallbacks is a * entry");
    assert_eq!(f.for_failure("a", ErrorClass::ContextWindow), ["big"]);
    assert!(f.for_failure("a", ErrorClass::ContentPolicy).is_empty());
    assert_eq!(f.max_fallbacks, 2, "router_settings wins");
    assert_eq!(settings.retry_policy.retries_for(ErrorClass::RateLimit, 1), 4);
    assert_eq!(settings.retry_policy.retries_for(ErrorClass::BadRequest, 1), 0);
    assert_eq!(settings.retry_policy.retries_for(ErrorClass::Timeout, 1), 1);
}

#[test]
fn affinity_checks_per_group_and_ttl() {
    use pointwork_core::AffinityKinds;
    let yaml = "model_list:\n\
                - {model_name: a, litellm_params: {model: openai/x}}\n\
                - {model_name: b, litellm_params: {model: openai/y}}\n\
                router_settings:\n  optional_pre_call_checks: [session_affinity, prompt_caching]\n\
                \x20 model_group_affinity_config: {b: [deployment_affinity, session_affinity]}\n\
                \x20 deployment_affinity_ttl_seconds: 600\n";
    let loaded = load(yaml).unwrap();
    let a = &loaded.config.router.affinity;
    assert_eq!(a.kinds_for("a"), AffinityKinds { session: true, deployment: false });
    assert_eq!(a.kinds_for("b"), AffinityKinds { session: true, deployment: true });
    assert_eq!(a.ttl, Duration::from_secs(600));
    let warnings: Vec<String> = loaded.warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(warnings, ["router_settings.optional_pre_call_checks[1]: ignored: not implemented by Pointwork yet"]);
}
