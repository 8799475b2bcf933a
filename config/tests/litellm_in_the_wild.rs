//! LiteLLM configs as they are written in the wild (its shipped examples, its documentation's
//! YAML): each shape that used to be refused loads, with warnings where Pointwork serves less.

mod common;

use common::{errors, load, test_env};
use pointwork_config::{load_str, LeftOutBecause, Loaded};
use pointwork_core::Provider;

const DIGEST: &str = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

fn warnings(loaded: &Loaded) -> Vec<String> {
    loaded.warnings.iter().map(|w| w.to_string()).collect()
}

fn ids(loaded: &Loaded) -> Vec<&str> {
    loaded.config.deployments.iter().map(|d| d.id.as_str()).collect()
}

#[test]
fn a_deployment_of_a_provider_not_served_yet_is_left_out_and_the_rest_serves() {
    let yaml = "model_list:
  - model_name: gpt-4o
    litellm_params: {model: sagemaker/gpt-4o-eu, aws_region_name: eu-west-1}
  - model_name: gpt-4o
    litellm_params: {model: openai/gpt-4o, api_key: os.environ/OPENAI_API_KEY}
  - model_name: claude
    litellm_params: {model: watsonx/claude-3-5-sonnet@20240620}
router_settings:
  fallbacks: [{gpt-4o: [claude]}, {claude: [gpt-4o]}]
  model_group_alias: {sonnet: claude}
  provider_budget_config: {watsonx: {budget_limit: 10, time_period: 1d}}
";
    let loaded = load(yaml).unwrap();
    let config = &loaded.config;
    assert_eq!(config.deployments.len(), 1, "only the OpenAI entry serves");
    assert_eq!(config.deployments[0].provider, Provider::OpenAi);
    let left: Vec<_> = config.left_out.iter().map(|l| (l.source.index, l.model_name.as_str(), &l.because)).collect();
    assert_eq!(
        left,
        [
            (0, "gpt-4o", &LeftOutBecause::ProviderNotServed("sagemaker".into())),
            (2, "claude", &LeftOutBecause::ProviderNotServed("watsonx".into())),
        ]
    );
    assert_eq!(
        warnings(&loaded),
        [
            "model_list[0].litellm_params.model: left out: Pointwork does not serve provider sagemaker yet; the rest of the config serves without this deployment",
            "model_list[2].litellm_params.model: left out: Pointwork does not serve provider watsonx yet; the rest of the config serves without this deployment",
            "router_settings.provider_budget_config.watsonx: Pointwork does not serve provider watsonx yet: this budget limits nothing",
            r#"router_settings.fallbacks[0].gpt-4o[0]: "claude" is served only by deployments left out (Pointwork does not serve provider watsonx yet): this rule is skipped"#,
            r#"router_settings.fallbacks[1]: "claude" is served only by deployments left out (Pointwork does not serve provider watsonx yet): this rule is skipped"#,
            r#"router_settings.model_group_alias.sonnet: "claude" is served only by deployments left out (Pointwork does not serve provider watsonx yet): this rule is skipped"#,
        ]
    );
    // The rules naming what was left out are gone; the snapshot builds.
    assert!(config.router.fallbacks.generic.entries().iter().all(|(_, to)| to.is_empty()));
    assert_eq!(config.router.fallbacks.generic.for_group("claude"), [] as [String; 0]);
    config.snapshot().unwrap();
}

#[test]
fn several_keys_for_one_model_are_separate_deployments_with_stable_ids() {
    let pool = |keys: [&str; 3]| {
        let entries: String = keys
            .iter()
            .map(|k| format!("  - {{model_name: gpt-4o, litellm_params: {{model: openai/gpt-4o, api_key: {k}}}}}\n"))
            .collect();
        load(&format!("model_list:\n{entries}")).unwrap()
    };
    let before = pool(["sk-one", "sk-two", "sk-three"]);
    let before_ids = ids(&before);
    assert_eq!(before_ids.len(), 3);
    assert_eq!(before_ids[1], format!("{}-2", before_ids[0]));
    assert_eq!(before_ids[2], format!("{}-3", before_ids[0]));
    before.config.snapshot().unwrap();
    // Rotating the second key keeps every id (and so every deployment's state).
    let rotated = pool(["sk-one", "sk-two-rotated", "sk-three"]);
    assert_eq!(ids(&rotated), before_ids);
    assert_eq!(rotated.config.deployments[1].api_key.as_deref(), Some("sk-two-rotated"));
    // Explicit ids still must be unique.
    let errs = errors(
        "model_list:\n  - {model_name: a, litellm_params: {model: openai/x}, model_info: {id: one}}\n  - {model_name: a, litellm_params: {model: openai/y}, model_info: {id: one}}\n",
    );
    assert_eq!(errs, [r#"model_list[1].model_info.id: duplicate deployment id "one" (first used by model_list[0])"#]);
}

#[test]
fn a_bare_model_name_gets_its_provider_as_in_litellm() {
    let loaded = load(
        "model_list:
  - {model_name: gpt, litellm_params: {model: gpt-4o}}
  - {model_name: claude, litellm_params: {model: claude-3-5-sonnet-20240620}}
  - {model_name: bedrock-claude, litellm_params: {model: anthropic.claude-3-sonnet-20240229-v1:0, aws_region_name: us-east-1}}
environment_variables: {AWS_ACCESS_KEY_ID: AKIDEXAMPLE, AWS_SECRET_ACCESS_KEY: secret}
",
    )
    .unwrap();
    let d = &loaded.config.deployments[0];
    assert_eq!(
        (d.provider, d.upstream_model.as_str(), d.api_base.as_str()),
        (Provider::OpenAi, "gpt-4o", "https://api.openai.com/v1")
    );
    assert!(loaded.config.left_out.is_empty(), "{:?}", loaded.config.left_out);
    let bedrock = &loaded.config.deployments[2];
    assert_eq!(
        (bedrock.provider, bedrock.upstream_model.as_str(), bedrock.api_base.as_str()),
        (
            Provider::Bedrock,
            "anthropic.claude-3-sonnet-20240229-v1:0",
            "https://bedrock-runtime.us-east-1.amazonaws.com"
        )
    );
    let claude = &loaded.config.deployments[1];
    assert_eq!(
        (claude.provider, claude.upstream_model.as_str(), claude.api_base.as_str()),
        (Provider::Anthropic, "claude-3-5-sonnet-20240620", "https://api.anthropic.com")
    );
}

#[test]
fn a_fallback_may_name_a_deployment_id_or_a_name_a_wildcard_group_serves() {
    let loaded = load(
        "model_list:
  - {model_name: gpt, litellm_params: {model: openai/gpt-4o}}
  - {model_name: backup, litellm_params: {model: openai/gpt-4o-mini}, model_info: {id: backup-eu}}
  - {model_name: 'openai/*', litellm_params: {model: 'openai/*'}}
router_settings:
  fallbacks: [{gpt: [backup-eu, openai/gpt-4.1]}]
",
    )
    .unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    assert_eq!(loaded.config.router.fallbacks.generic.for_group("gpt"), ["backup-eu", "openai/gpt-4.1"]);
    let errs = errors("model_list: [{model_name: gpt, litellm_params: {model: openai/gpt-4o}}]\nrouter_settings: {fallbacks: [{gpt: [gpt-5]}]}\n");
    assert_eq!(
        errs,
        [
            r#"router_settings.fallbacks[0].gpt[0]: unknown model group, alias or deployment id "gpt-5"; model groups: gpt"#
        ]
    );
}

#[test]
fn a_provider_budget_without_deployments_is_a_warning() {
    let loaded = load(
        "model_list: [{model_name: gpt, litellm_params: {model: openai/gpt-4o}}]
router_settings:
  provider_budget_config:
    openai: {budget_limit: 100, time_period: 1d}
    groq: {budget_limit: 10, time_period: 1d}
    sagemaker: {budget_limit: 100, time_period: 1d}
",
    )
    .unwrap();
    assert_eq!(
        warnings(&loaded),
        [
            "router_settings.provider_budget_config.sagemaker: Pointwork does not serve provider sagemaker yet: this budget limits nothing",
            "router_settings.provider_budget_config.groq: no deployment of provider groq: this budget limits nothing",
        ]
    );
    let providers: Vec<_> = loaded.config.router.provider_budgets.iter().map(|b| b.provider).collect();
    assert_eq!(providers, [Provider::OpenAi, Provider::Groq]);
}

#[test]
fn a_virtual_key_may_name_an_access_group() {
    let loaded = load(&format!(
        "model_list:
  - {{model_name: gpt, litellm_params: {{model: openai/gpt-4o}}, model_info: {{access_groups: [beta-models]}}}}
  - {{model_name: mini, litellm_params: {{model: openai/gpt-4o-mini}}, model_info: {{access_groups: [beta-models, cheap]}}}}
  - {{model_name: llama, litellm_params: {{model: groq/llama3-8b-8192}}}}
pointwork:
  auth:
    virtual_keys: [{{name: beta, sha256: {DIGEST}, models: [beta-models]}}]
"
    ))
    .unwrap();
    let key = &loaded.config.auth.virtual_keys[0];
    assert_eq!(key.models.as_deref().unwrap(), ["beta-models", "gpt", "mini"]);
    assert_eq!(loaded.config.deployment_info[1].access_groups, ["beta-models", "cheap"]);
    let errs =
        errors("model_list: [{model_name: g, litellm_params: {model: openai/x}, model_info: {access_groups: beta}}]\n");
    assert_eq!(errs, [r#"model_list[0].model_info.access_groups: expected a list of strings, got "beta""#]);
}

#[test]
fn supported_environments_keep_the_entries_of_this_environment() {
    let yaml = "model_list:
  - {model_name: gpt, litellm_params: {model: openai/gpt-4o}, model_info: {supported_environments: [production]}}
  - {model_name: gpt, litellm_params: {model: openai/gpt-4o-mini}, model_info: {supported_environments: [development, staging]}}
";
    let in_env = |value: &'static str| {
        let env =
            move |name: &str| if name == "LITELLM_ENVIRONMENT" { Some(value.to_string()) } else { test_env(name) };
        load_str(yaml, &common::fixtures(), &env)
    };
    let production = in_env("production").unwrap();
    assert_eq!(production.config.deployments.len(), 1);
    assert_eq!(production.config.deployments[0].upstream_model, "gpt-4o");
    assert_eq!(
        warnings(&production),
        ["model_list[1].model_info.supported_environments: left out: supported_environments exclude LITELLM_ENVIRONMENT=production; the rest of the config serves without this deployment"]
    );
    let staging = in_env("staging").unwrap();
    assert_eq!(staging.config.deployments[0].upstream_model, "gpt-4o-mini");
    // As in LiteLLM: the environment must be named, and be one of the three.
    let errs: Vec<String> = match in_env("prod") {
        Err(e) => e.0.iter().map(|e| e.to_string()).collect(),
        Ok(_) => panic!("loaded"),
    };
    assert_eq!(
        errs[0],
        r#"model_list[0].model_info.supported_environments: LITELLM_ENVIRONMENT is "prod"; valid: development, staging, production"#
    );
    // LITELLM_ENVIRONMENT unset: the entries serve, as LiteLLM's proxy counts them active.
    let unset = load(yaml).unwrap();
    assert!(unset.config.left_out.is_empty());
    assert_eq!(
        unset.warnings[0].to_string(),
        "model_list[0].model_info.supported_environments: LITELLM_ENVIRONMENT is unset, so this entry serves in every environment; set it (development, staging, production) to apply the list"
    );
}

#[test]
fn an_environment_variable_without_a_value_is_left_to_the_process() {
    let loaded = load(
        "environment_variables: {OPENAI_API_KEY: null, UNUSED:}\nmodel_list: [{model_name: g, litellm_params: {model: openai/x, api_key: os.environ/OPENAI_API_KEY}}]\n",
    )
    .unwrap();
    assert_eq!(loaded.config.deployments[0].api_key.as_deref(), Some("sk-openai-test-key-1111"));
}

#[test]
fn an_entry_that_fails_is_not_blamed_again_by_what_names_it() {
    let provider_error = r#"model_list[0].litellm_params.model: missing the model name after "openai/""#;
    // The only entry fails: no "model groups: " with an empty list.
    let errs = errors(
        "model_list:\n  - {model_name: gpt, litellm_params: {model: openai/}}\nrouter_settings: {fallbacks: [{gpt: [other]}], model_group_alias: {g: gpt}}\n",
    );
    assert_eq!(errs, [provider_error]);
    // Beside a good entry: what names the failed entry's group is not an error of its own.
    let errs = errors(
        "model_list:\n  - {model_name: gpt, litellm_params: {model: openai/}}\n  - {model_name: mini, litellm_params: {model: openai/y}}\nrouter_settings: {fallbacks: [{gpt: [mini]}], model_group_alias: {g: gpt}}\n",
    );
    assert_eq!(errs, [provider_error]);
}
