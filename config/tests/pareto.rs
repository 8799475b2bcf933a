//! The OpenRouter best-value walk's configuration (LiteLLM's `litellm-plugin-openrouter-pareto`):
//! on when `litellm_settings.callbacks` names the plugin's callback, its settings from
//! `litellm_settings` or the plugin's JSON environment variables, and the checks against the
//! model list.

mod common;

use std::path::PathBuf;
use std::time::Duration;

use common::fixtures;
use pointwork_config::{load_str, ConfigErrors, Loaded};
use pointwork_core::pareto::{CooldownSettings, ParetoRule, ParetoSettings, TelemetrySettings, DEFAULT_RULE_MODEL};

const CALLBACK: &str = "litellm_plugin_openrouter_pareto.plugin.openrouter_pareto_callback";

/// One wildcard deployment of `z-ai/glm-5.2`, then `litellm_settings` with the plugin's callback
/// and `settings` (indented lines of `litellm_settings`).
fn config(settings: &str) -> String {
    format!(
        "model_list:\n  - model_name: z-ai/glm-5.2\n    litellm_params: {{model: openrouter/z-ai/glm-5.2}}\n\
         litellm_settings:\n  callbacks: [\"{CALLBACK}\"]\n{settings}"
    )
}

fn load_with(yaml: &str, vars: &[(&str, &str)]) -> Result<Loaded, ConfigErrors> {
    let vars: Vec<(String, String)> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let env = move |name: &str| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    load_str(yaml, &fixtures(), &env)
}

/// The walk's settings and the warnings, with `HOME=/home/op` and `vars`.
fn walk(yaml: &str, vars: &[(&str, &str)]) -> (ParetoSettings, Vec<String>) {
    let mut all = vec![("HOME", "/home/op")];
    all.extend_from_slice(vars);
    let loaded = load_with(yaml, &all).unwrap_or_else(|e| panic!("{e}"));
    let warnings = loaded.warnings.iter().map(ToString::to_string).collect();
    (loaded.config.pareto.expect("the walk is on"), warnings)
}

fn errors(yaml: &str, vars: &[(&str, &str)]) -> Vec<String> {
    match load_with(yaml, vars) {
        Ok(loaded) => panic!("expected errors, got {:?}", loaded.config.pareto),
        Err(e) => e.0.iter().map(ToString::to_string).collect(),
    }
}

/// The other callback the configs name: an exporter (`export.rs`), without its keys here.
const LANGFUSE_WITHOUT_KEYS: &str =
    "litellm_settings.callbacks[0]: langfuse: LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY are needed: nothing goes to Langfuse";

#[test]
fn without_the_callback_the_walk_is_off_and_its_keys_are_ignored() {
    let yaml = "model_list:\n  - model_name: g\n    litellm_params: {model: openai/gpt-4o}\n\
                litellm_settings:\n  callbacks: [langfuse, prometheus]\n  openrouter_pareto_rules: {m/x: {min_context: 0}}\n";
    let loaded = load_with(yaml, &[("OPENROUTER_PARETO_COOLDOWN", "not json")]).unwrap();
    assert_eq!(loaded.config.pareto, None);
    let warnings: Vec<String> = loaded.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        warnings,
        [
            &format!("litellm_settings.openrouter_pareto_rules: ignored: litellm_settings.callbacks does not name {CALLBACK}"),
            LANGFUSE_WITHOUT_KEYS,
        ]
    );
    let plain = "model_list:\n  - model_name: g\n    litellm_params: {model: openai/gpt-4o}\n";
    assert_eq!(load_with(plain, &[]).unwrap().config.pareto, None);
}

#[test]
fn naming_the_callback_turns_the_walk_on_with_every_default() {
    let yaml = config("").replace(&format!("[\"{CALLBACK}\"]"), &format!("[langfuse, {CALLBACK}]"));
    let (p, warnings) = walk(&yaml, &[]);
    assert_eq!(warnings, [LANGFUSE_WITHOUT_KEYS]);
    assert_eq!(p.rules, [(DEFAULT_RULE_MODEL.to_string(), ParetoRule::built_in())]);
    assert_eq!(p.cooldown, CooldownSettings::default());
    let state = PathBuf::from("/home/op/.local/state/pointwork/openrouter-pareto");
    assert_eq!(p.telemetry, TelemetrySettings { cache_dir: Some(state.clone()), ..TelemetrySettings::default() });
    assert_eq!(p.telemetry.base_url, "https://openrouter.ai");
    assert_eq!(p.telemetry.poll_interval, Duration::from_secs(300));
    assert_eq!(p.telemetry.timeout, Duration::from_secs(15));
    assert_eq!(p.telemetry.cache_retention, Duration::from_secs(7 * 86_400));
    assert_eq!((&p.routing_log, &p.error_log), (&state.join("routing.log"), &state.join("errors.log")));
    assert_eq!(p.rule("openrouter/z-ai/glm-5.2[1m]").map(|(k, _)| k), Some("z-ai/glm-5.2"));
}

#[test]
fn a_single_string_callback_and_the_package_reexport_count() {
    let single = config("").replace(&format!("[\"{CALLBACK}\"]"), CALLBACK);
    assert!(walk(&single, &[]).1.is_empty());
    let reexport = config("").replace(CALLBACK, "litellm_plugin_openrouter_pareto.openrouter_pareto_callback");
    assert_eq!(walk(&reexport, &[]).0.rules.len(), 1);
}

#[test]
fn naming_the_class_or_the_module_is_an_error() {
    let class = config("").replace(CALLBACK, "litellm_plugin_openrouter_pareto.plugin.OpenRouterParetoCallback");
    assert_eq!(
        errors(&class, &[]),
        [format!(
            "litellm_settings.callbacks[0]: \"litellm_plugin_openrouter_pareto.plugin.OpenRouterParetoCallback\" names the callback's class; LiteLLM needs the instance: write {CALLBACK}"
        )]
    );
    let module = config("").replace(CALLBACK, "litellm_plugin_openrouter_pareto");
    assert_eq!(
        errors(&module, &[]),
        [format!(
            "litellm_settings.callbacks[0]: \"litellm_plugin_openrouter_pareto\" names the plugin's module; LiteLLM needs the callback instance: write {CALLBACK}"
        )]
    );
}

#[test]
fn the_built_in_rule_without_its_group_is_a_warning() {
    let yaml = format!(
        "model_list:\n  - model_name: g\n    litellm_params: {{model: openai/gpt-4o}}\nlitellm_settings:\n  callbacks: [{CALLBACK}]\n"
    );
    let (_, warnings) = walk(&yaml, &[]);
    assert_eq!(
        warnings,
        ["litellm_settings.callbacks[0]: no openrouter_pareto_rules, so the built-in rule for \"z-ai/glm-5.2\" applies; no model group \"z-ai/glm-5.2\" (after normalisation) serves it: the walk manages nothing"]
    );
}

#[test]
fn rules_cooldown_allowlist_and_telemetry_from_the_config() {
    let (p, warnings) = walk(
        &config(
            "  openrouter_pareto_rules:\n    z-ai/glm-5.2: {wildcard: true, exclude_regions: [cn]}\n    \
             deepseek/v4: {precision: bf16}\n  openrouter_pareto_cooldown: {rate_limit_threshold: 5}\n  \
             openrouter_pareto_allowlist: {ttl_s: 600}\n  openrouter_pareto_telemetry: {poll_interval_s: 60, cache_dir: false}\n",
        ),
        &[],
    );
    let keys: Vec<&str> = p.rules.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["deepseek/v4", "z-ai/glm-5.2"], "sorted by key");
    assert_eq!(p.rule("z-ai/glm-5.2").unwrap().1.exclude_regions, ["CN"]);
    assert_eq!(
        p.cooldown,
        CooldownSettings { rate_limit_threshold: 5, allowlist_ttl_s: 600.0, ..CooldownSettings::default() }
    );
    assert_eq!((p.telemetry.poll_interval, p.telemetry.cache_dir.as_ref()), (Duration::from_secs(60), None));
    assert_eq!(
        warnings,
        [
            r#"litellm_settings.openrouter_pareto_rules."deepseek/v4": no model group "deepseek/v4" (after normalisation) serves this rule"#
        ]
    );
}

#[test]
fn each_setting_falls_back_to_its_json_environment_variable() {
    let vars = [
        ("OPENROUTER_PARETO_RULES", r#"{"openrouter/z-ai/glm-5.2": {"min_context": 200000, "wildcard": true}}"#),
        ("OPENROUTER_PARETO_COOLDOWN", r#"{"rate_limit_window_s": 60}"#),
        ("OPENROUTER_PARETO_ALLOWLIST", r#"{"ttl_s": 30.5}"#),
        ("OPENROUTER_PARETO_TELEMETRY", r#"{"ssl_verify": false}"#),
        ("OPENROUTER_PARETO_ROUTING_LOG", "/var/log/pw/routing.log"),
        ("OPENROUTER_PARETO_ERROR_LOG", "/var/log/pw/errors.log"),
        ("XDG_STATE_HOME", "/state"),
    ];
    let (p, warnings) = walk(&config(""), &vars);
    let expected = ParetoRule { min_context: 200_000, wildcard: true, ..ParetoRule::default() };
    assert_eq!(p.rules, [("z-ai/glm-5.2".to_string(), expected)]);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].starts_with(r#"OPENROUTER_PARETO_RULES (env)."openrouter/z-ai/glm-5.2": read as "z-ai/glm-5.2""#)
    );
    assert_eq!((p.cooldown.rate_limit_window_s, p.cooldown.allowlist_ttl_s), (60.0, 30.5));
    assert!(!p.telemetry.ssl_verify);
    assert_eq!(p.telemetry.cache_dir, Some(PathBuf::from("/state/pointwork/openrouter-pareto")));
    assert_eq!(p.routing_log, PathBuf::from("/var/log/pw/routing.log"));
    assert_eq!(p.error_log, PathBuf::from("/var/log/pw/errors.log"));
}

#[test]
fn environment_variables_of_the_config_count_and_an_empty_one_is_unset() {
    let yaml = format!(
        "{}environment_variables:\n  OPENROUTER_PARETO_COOLDOWN: '{{\"rate_limit_threshold\": 9}}'\n",
        config("")
    );
    assert_eq!(walk(&yaml, &[]).0.cooldown.rate_limit_threshold, 9);
    assert_eq!(walk(&config(""), &[("OPENROUTER_PARETO_RULES", "")]).0.rules[0].1, ParetoRule::built_in());
}

#[test]
fn the_config_key_wins_over_the_variable() {
    let yaml = config("  openrouter_pareto_cooldown: {rate_limit_threshold: 4}\n");
    let (p, warnings) = walk(&yaml, &[("OPENROUTER_PARETO_COOLDOWN", "{\"rate_limit_threshold\": 7}")]);
    assert_eq!(p.cooldown.rate_limit_threshold, 4);
    assert_eq!(
        warnings,
        ["litellm_settings.openrouter_pareto_cooldown: OPENROUTER_PARETO_COOLDOWN is set too and is not read: this key wins"]
    );
}

#[test]
fn errors_in_a_variable_name_the_variable() {
    let vars = [
        ("OPENROUTER_PARETO_RULES", r#"{"z-ai/glm-5.2": {"min_context": 0, "precison": "fp8"}}"#),
        ("OPENROUTER_PARETO_COOLDOWN", "{rate_limit_threshold: 3}"),
        ("OPENROUTER_PARETO_TELEMETRY", "[]"),
    ];
    let errors = errors(&config(""), &vars);
    assert_eq!(errors.len(), 4, "{errors:?}");
    assert_eq!(
        errors[0],
        r#"OPENROUTER_PARETO_RULES (env)."z-ai/glm-5.2".min_context: expected a positive integer, got 0"#
    );
    assert!(
        errors[1].starts_with(
            r#"OPENROUTER_PARETO_RULES (env)."z-ai/glm-5.2".precison: unknown key; did you mean "precision"?"#
        ),
        "{}",
        errors[1]
    );
    assert!(
        errors[2].starts_with("OPENROUTER_PARETO_COOLDOWN (env): not valid JSON: key must be a string"),
        "{}",
        errors[2]
    );
    assert_eq!(errors[3], "OPENROUTER_PARETO_TELEMETRY (env): expected a map, got a list");
}

#[test]
fn errors_in_the_config_name_their_key_paths() {
    let yaml = config(
        "  openrouter_pareto_rules:\n    z-ai/glm-5.2: {precison: fp8, max_price: -1}\n  \
         openrouter_pareto_cooldown: {rate_limit_window_s: 0}\n  openrouter_pareto_allowlist: {ttl: 1}\n  \
         openrouter_pareto_telemetry: {ssl_verify: false, ssl_ca_cert: /etc/ca.pem}\n",
    );
    let errors = errors(&yaml, &[]);
    let paths: Vec<&str> = errors.iter().map(|e| e.split(": ").next().unwrap()).collect();
    assert_eq!(
        paths,
        [
            r#"litellm_settings.openrouter_pareto_rules."z-ai/glm-5.2".max_price"#,
            r#"litellm_settings.openrouter_pareto_rules."z-ai/glm-5.2".precison"#,
            "litellm_settings.openrouter_pareto_cooldown.rate_limit_window_s",
            "litellm_settings.openrouter_pareto_allowlist.ttl",
            "litellm_settings.openrouter_pareto_telemetry.ssl_ca_cert",
        ]
    );
}

#[test]
fn pinned_deployments_of_a_managed_group_need_a_list_of_provider_slugs() {
    let yaml = format!(
        "model_list:\n\
         - model_name: z-ai/glm-5.2\n  litellm_params: {{model: openrouter/z-ai/glm-5.2, extra_body: {{provider: {{only: [novita/fp8], zdr: true}}}}}}\n\
         - model_name: z-ai/glm-5.2\n  litellm_params: {{model: openrouter/z-ai/glm-5.2, extra_body: {{provider: {{only: novita/fp8}}}}}}\n\
         - model_name: z-ai/glm-5.2\n  litellm_params: {{model: openrouter/z-ai/glm-5.2, extra_body: {{provider: {{only: ['']}}}}}}\n\
         - model_name: other\n  litellm_params: {{model: openrouter/other/x, extra_body: {{provider: {{only: 3}}}}}}\n\
         litellm_settings:\n  callbacks: [{CALLBACK}]\n  openrouter_pareto_rules: {{z-ai/glm-5.2: {{}}}}\n"
    );
    let rule = r#"the walk's rule litellm_settings.openrouter_pareto_rules."z-ai/glm-5.2" pins providers by it"#;
    assert_eq!(
        errors(&yaml, &[]),
        [
            format!(
                r#"model_list[1].litellm_params.extra_body.provider.only: expected a non-empty list of provider slugs, got "novita/fp8"; {rule}"#
            ),
            format!(
                r#"model_list[2].litellm_params.extra_body.provider.only: expected a non-empty list of provider slugs, got [""]; {rule}"#
            ),
        ]
    );
    // In wildcard mode the walk injects `only` itself: the deployment's is not checked.
    let wildcard = yaml.replace("z-ai/glm-5.2: {}", "z-ai/glm-5.2: {wildcard: true}");
    let (_, warnings) = walk(&wildcard, &[]);
    assert_eq!(
        warnings,
        [
            r#"litellm_settings.openrouter_pareto_rules."z-ai/glm-5.2".wildcard: model group "z-ai/glm-5.2" has 3 deployments: wildcard mode injects the winner into whichever one is picked; it wants one deployment per model"#
        ]
    );
}

#[test]
fn a_wildcard_model_group_serves_a_rule() {
    let yaml = format!(
        "model_list:\n  - model_name: openrouter/*\n    litellm_params: {{model: openrouter/*}}\n\
         litellm_settings:\n  callbacks: [{CALLBACK}]\n  openrouter_pareto_rules: {{deepseek/v4: {{wildcard: true}}}}\n"
    );
    assert_eq!(walk(&yaml, &[]).1, Vec::<String>::new());
}

#[test]
fn the_summary_has_a_line_for_the_walk() {
    let yaml = config("  openrouter_pareto_rules: {z-ai/glm-5.2: {wildcard: true}, a/b: {}}\n");
    let summary = load_with(&yaml, &[]).unwrap().config.summary();
    assert!(
        summary.contains(
            "openrouter best-value walk: 2 rules: a/b pinned, z-ai/glm-5.2 wildcard; telemetry https://openrouter.ai every 300s\n"
        ),
        "{summary}"
    );
    let built_in = load_with(&config(""), &[]).unwrap().config.summary();
    assert!(built_in.contains("openrouter best-value walk: the built-in rule: z-ai/glm-5.2 pinned;"), "{built_in}");
    let off = "model_list:\n  - model_name: g\n    litellm_params: {model: openai/gpt-4o}\n";
    assert!(!load_with(off, &[]).unwrap().config.summary().contains("best-value"));
}

#[test]
fn the_callback_named_twice_is_one_walk_and_a_warning() {
    let yaml = config("").replace(&format!("[\"{CALLBACK}\"]"), &format!("[{CALLBACK}, {CALLBACK}]"));
    let (p, warnings) = walk(&yaml, &[]);
    assert_eq!(p.rules.len(), 1);
    assert_eq!(
        warnings,
        ["litellm_settings.callbacks[1]: named twice (first at litellm_settings.callbacks[0]): one walk runs"]
    );
}
