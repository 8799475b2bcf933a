//! The complexity auto-router's config: `auto_router/complexity_router` entries of `model_list`
//! and their `complexity_router_config`, read into exactly the `RouterConfig` the gateway gets,
//! every mistake named by its key path.

mod common;

use std::time::Duration;

use common::{errors, load};
use pointwork_core::complexity::{
    ClassifierFallback, ClassifierSettings, LlmClassifier, RouterConfig, Tier, TierBoundaries, TierSelection,
    TokenThresholds, Weights,
};

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn warnings(yaml: &str) -> Vec<String> {
    let loaded = load(yaml).unwrap_or_else(|e| panic!("{e}"));
    loaded.warnings.iter().map(|w| w.to_string()).collect()
}

fn routers(yaml: &str) -> Vec<RouterConfig> {
    load(yaml).unwrap_or_else(|e| panic!("{e}")).config.complexity_routers
}

/// Spec 002's router: a two-group SIMPLE tier (one dead, one live), a string tier, and session
/// affinity.
const SPEC_002: &str = r#"
model_list:
  - model_name: dead-tier-model
    litellm_params: {model: openai/gpt-4o-mini, api_base: "http://127.0.0.1:9/v1"}
  - model_name: live-tier-model
    litellm_params: {model: openai/gpt-4o-mini}
  - model_name: gpt-4o
    litellm_params: {model: openai/gpt-4o}
  - model_name: claude-sonnet
    litellm_params: {model: anthropic/claude-sonnet-4-20250514}
  - model_name: o3
    litellm_params: {model: openai/o3}
  - model_name: tier-health-router
    litellm_params:
      model: auto_router/complexity_router
      complexity_router_config:
        session_affinity: true
        tiers:
          SIMPLE: ["dead-tier-model", "live-tier-model"]
          MEDIUM: gpt-4o          # a string is a one-group pool
          COMPLEX: [claude-sonnet, gpt-4o]
          REASONING: [o3]
"#;

fn defaults(name: &str, tiers: [&[&str]; 4]) -> RouterConfig {
    RouterConfig {
        name: name.to_string(),
        tiers: tiers.map(names),
        default_model: None,
        selection: TierSelection::Shuffle,
        session_affinity: false,
        session_ttl: Duration::from_secs(3600),
        classifier: ClassifierSettings::default(),
        llm: None,
        fallback: ClassifierFallback::Heuristic,
    }
}

#[test]
fn the_spec_002_router_loads() {
    let loaded = load(SPEC_002).unwrap_or_else(|e| panic!("{e}"));
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let config = loaded.config;
    assert_eq!(config.deployments.len(), 5, "the router is no deployment");
    assert!(config.left_out.is_empty());
    let expected = RouterConfig {
        session_affinity: true,
        ..defaults(
            "tier-health-router",
            [&["dead-tier-model", "live-tier-model"], &["gpt-4o"], &["claude-sonnet", "gpt-4o"], &["o3"]],
        )
    };
    assert_eq!(config.complexity_routers, [expected]);
    assert!(config.summary().contains(
        "complexity router tier-health-router: SIMPLE [dead-tier-model, live-tier-model], MEDIUM [gpt-4o], \
         COMPLEX [claude-sonnet, gpt-4o], REASONING [o3]; classifier heuristic; tier_selection shuffle; \
         session affinity 3600s\n"
    ));
}

/// Three groups named like LiteLLM's default tier models, and room for routers.
const GROUPS: &str = "model_list:
  - model_name: gpt-4o
    litellm_params: {model: openai/gpt-4o}
  - model_name: gpt-4o-mini
    litellm_params: {model: openai/gpt-4o-mini}
  - model_name: claude-sonnet-4-20250514
    litellm_params: {model: anthropic/claude-sonnet-4-20250514}
";

/// `GROUPS` and a router `auto` (model_list[3]) with `config` as its (flow-style)
/// `complexity_router_config`.
fn with_config(config: &str) -> String {
    format!(
        "{GROUPS}  - model_name: auto\n    litellm_params:\n      model: auto_router/complexity_router\n      complexity_router_config: {config}\n"
    )
}

const AT: &str = "model_list[3].litellm_params.complexity_router_config";

#[test]
fn without_a_config_the_router_has_litellms_defaults() {
    let yaml = format!("{GROUPS}  - model_name: auto\n    litellm_params: {{model: auto_router/complexity_router}}\n");
    let expected =
        defaults("auto", [&["gpt-4o-mini"], &["gpt-4o"], &["claude-sonnet-4-20250514"], &["claude-sonnet-4-20250514"]]);
    assert_eq!(routers(&yaml), std::slice::from_ref(&expected));
    assert_eq!(routers(&with_config("{}")), [expected]);
}

#[test]
fn the_default_tiers_must_name_model_groups_here() {
    let yaml = "model_list:\n  - model_name: gpt-4o\n    litellm_params: {model: openai/gpt-4o}\n  - model_name: auto\n    litellm_params: {model: auto_router/complexity_router}\n";
    let found = errors(yaml);
    assert_eq!(
        found[0],
        r#"model_list[1].litellm_params.complexity_router_config.tiers: unknown model group "gpt-4o-mini" (LiteLLM's default tiers, as `tiers` is not set); model groups: gpt-4o"#
    );
    assert_eq!(found.len(), 3, "{found:?}");
}

#[test]
fn every_knob_is_read() {
    let config = r#"{
      tiers: {simple: [gpt-4o-mini, gpt-4o-mini, gpt-4o], Medium: gpt-4o, COMPLEX: [claude-sonnet-4-20250514]},
      default_model: gpt-4o,
      tier_selection: weighted,
      session_affinity: "true",
      session_affinity_ttl_seconds: 600,
      classifier_type: llm,
      classifier_llm_config: {model: gpt-4o-mini, timeout_ms: 1500},
      classifier_fallback: default_model,
      keyword_tier_rules: [{keywords: [" prove ", "", "derive"], tier: reasoning}, {keywords: [hello], tier: SIMPLE}],
      tier_boundaries: {simple_medium: 0.2},
      token_thresholds: {simple: 10, complex: 300},
      dimension_weights: {codePresence: 0.5, questionComplexity: 0},
      reasoning_override_min_score: -0.1,
      code_keywords: [fn, "  ", impl],
      reasoning_keywords: [hmm],
      technical_keywords: [tcp],
      custom_technical_keywords: [TCP, quic, quic],
      simple_keywords: [hi]
    }"#;
    let expected = RouterConfig {
        name: "auto".to_string(),
        tiers: [names(&["gpt-4o-mini", "gpt-4o"]), names(&["gpt-4o"]), names(&["claude-sonnet-4-20250514"]), vec![]],
        default_model: Some("gpt-4o".to_string()),
        selection: TierSelection::Weighted,
        session_affinity: true,
        session_ttl: Duration::from_secs(600),
        classifier: ClassifierSettings {
            code_keywords: names(&["fn", "impl"]),
            reasoning_keywords: names(&["hmm"]),
            technical_keywords: names(&["tcp", "quic"]),
            simple_keywords: names(&["hi"]),
            weights: Weights { code_presence: 0.5, question_complexity: 0.0, ..Weights::default() },
            boundaries: TierBoundaries { simple_medium: 0.2, ..TierBoundaries::default() },
            token_thresholds: TokenThresholds { simple: 10, complex: 300 },
            reasoning_override_min_score: Some(-0.1),
            keyword_tier_rules: vec![
                ("prove".to_string(), Tier::Reasoning),
                ("derive".to_string(), Tier::Reasoning),
                ("hello".to_string(), Tier::Simple),
            ],
        },
        llm: Some(LlmClassifier { model: "gpt-4o-mini".to_string(), timeout: Duration::from_millis(1500) }),
        fallback: ClassifierFallback::DefaultModel,
    };
    let yaml = with_config(config);
    assert_eq!(warnings(&yaml), Vec::<String>::new());
    let found = routers(&yaml);
    assert_eq!(found, [expected]);
    let summary = load(&yaml).unwrap().config.summary();
    assert!(
        summary.contains(
            "complexity router auto: SIMPLE [gpt-4o-mini, gpt-4o], MEDIUM [gpt-4o], COMPLEX [claude-sonnet-4-20250514], \
             REASONING (default_model); default_model gpt-4o; classifier llm gpt-4o-mini (timeout 1.5s), falls back to \
             default_model; 3 keyword rules; tier_selection weighted; session affinity 600s\n"
        ),
        "{summary}"
    );
}

#[test]
fn litellms_deployment_default_model_wins_over_the_configs() {
    let yaml = format!(
        "{GROUPS}  - model_name: auto\n    litellm_params:\n      model: auto_router/complexity_router\n      complexity_router_default_model: gpt-4o-mini\n      complexity_router_config: {{tiers: {{SIMPLE: gpt-4o}}, default_model: gpt-4o, classifier_fallback: default_model}}\n"
    );
    let found = routers(&yaml);
    assert_eq!(found[0].default_model.as_deref(), Some("gpt-4o-mini"));
    assert_eq!(found[0].tiers[Tier::Medium as usize], Vec::<String>::new());
}

#[test]
fn a_tier_nothing_serves_needs_medium_or_a_default_model() {
    assert_eq!(
        errors(&with_config("{tiers: {SIMPLE: gpt-4o-mini, COMPLEX: gpt-4o, REASONING: gpt-4o}}")),
        [format!(
            "{AT}.tiers: tier MEDIUM lists no model group, and there is neither a MEDIUM tier nor a default_model to serve it"
        )]
    );
    let found = routers(&with_config("{tiers: {MEDIUM: gpt-4o}}"));
    assert_eq!(found[0].tiers, [vec![], names(&["gpt-4o"]), vec![], vec![]]);
}

#[test]
fn a_bad_complexity_router_is_named_by_its_key_path() {
    let big: Vec<String> = (0..65).map(|i| format!("g{i}")).collect();
    let cases: Vec<(String, String)> = vec![
        (
            "{tiers: {EXPERT: gpt-4o, MEDIUM: gpt-4o}}".into(),
            format!(r#"{AT}.tiers.EXPERT: unknown tier "EXPERT": Pointwork supports the four tiers SIMPLE, MEDIUM, COMPLEX, REASONING (not LiteLLM's NON_REASONING nor tier_definitions' own tiers)"#),
        ),
        (
            "{tiers: {NON_REASONING: gpt-4o, MEDIUM: gpt-4o}}".into(),
            format!(r#"{AT}.tiers.NON_REASONING: unknown tier "NON_REASONING": Pointwork supports the four tiers SIMPLE, MEDIUM, COMPLEX, REASONING (not LiteLLM's NON_REASONING nor tier_definitions' own tiers)"#),
        ),
        (
            "{tiers: {MEDIUM: gpt-4o, medium: gpt-4o}}".into(),
            format!("{AT}.tiers.medium: tier MEDIUM is already listed at {AT}.tiers.MEDIUM"),
        ),
        (
            "{tiers: {MEDIUM: [gpt-4o, gpt-5]}}".into(),
            format!(r#"{AT}.tiers.MEDIUM[1]: unknown model group "gpt-5"; model groups: gpt-4o, gpt-4o-mini, claude-sonnet-4-20250514"#),
        ),
        ("{tiers: {MEDIUM: []}}".into(), format!("{AT}.tiers.MEDIUM: an empty list: list at least one model group, or leave the tier out")),
        ("{tiers: {MEDIUM: [3]}}".into(), format!("{AT}.tiers.MEDIUM[0]: expected a model group name or a list of them, got 3")),
        ("{tiers: [gpt-4o]}".into(), format!(r#"{AT}.tiers: expected a map, got a list"#)),
        (
            "{tiers: {MEDIUM: gpt-4o}, default_model: nope}".into(),
            format!(r#"{AT}.default_model: unknown model group "nope"; model groups: gpt-4o, gpt-4o-mini, claude-sonnet-4-20250514"#),
        ),
        (
            "{classifier_type: heuristic_v2}".into(),
            format!(r#"{AT}.classifier_type: "heuristic_v2" is not supported by Pointwork; supported: heuristic, llm"#),
        ),
        ("{classifier_type: smart}".into(), format!(r#"{AT}.classifier_type: unknown classifier_type "smart"; supported: heuristic, llm"#)),
        (
            "{classifier_type: llm}".into(),
            format!("{AT}.classifier_llm_config: required when classifier_type is llm (expected a map with `model`)"),
        ),
        (
            "{classifier_type: llm, classifier_llm_config: {timeout_ms: 100}}".into(),
            format!("{AT}.classifier_llm_config.model: required key is missing (expected a model group of model_list)"),
        ),
        (
            "{classifier_type: llm, classifier_llm_config: {model: judge}}".into(),
            format!(r#"{AT}.classifier_llm_config.model: unknown model group "judge"; model groups: gpt-4o, gpt-4o-mini, claude-sonnet-4-20250514"#),
        ),
        (
            "{classifier_type: llm, classifier_llm_config: {model: gpt-4o, timeout_ms: 0}}".into(),
            format!("{AT}.classifier_llm_config.timeout_ms: expected a positive integer, got 0"),
        ),
        (
            "{classifier_type: llm, classifier_llm_config: {model: gpt-4o, timeout: 3}}".into(),
            format!(r#"{AT}.classifier_llm_config.timeout: unknown key; valid keys: model, timeout_ms"#),
        ),
        (
            "{classifier_fallback: default_model}".into(),
            format!("{AT}.classifier_fallback: default_model needs a default model: set complexity_router_config.default_model (or litellm_params.complexity_router_default_model)"),
        ),
        ("{classifier_fallback: error}".into(), format!(r#"{AT}.classifier_fallback: unknown classifier_fallback "error"; valid: heuristic, default_model"#)),
        (
            "{keyword_tier_rules: [{keywords: [x], tier: HARD}]}".into(),
            format!(r#"{AT}.keyword_tier_rules[0].tier: unknown tier "HARD": Pointwork supports the four tiers SIMPLE, MEDIUM, COMPLEX, REASONING (not LiteLLM's NON_REASONING nor tier_definitions' own tiers)"#),
        ),
        (
            "{keyword_tier_rules: [{keywords: [' ', ''], tier: SIMPLE}]}".into(),
            format!("{AT}.keyword_tier_rules[0].keywords: needs at least one non-blank keyword"),
        ),
        (
            "{keyword_tier_rules: [{keywords: [x]}]}".into(),
            format!("{AT}.keyword_tier_rules[0].tier: required key is missing (expected one of SIMPLE, MEDIUM, COMPLEX, REASONING)"),
        ),
        (
            "{keyword_tier_rules: [{keywords: [x], tier: SIMPLE, tiers: x}]}".into(),
            format!(r#"{AT}.keyword_tier_rules[0].tiers: unknown key; did you mean "tier"? valid keys: keywords, tier"#),
        ),
        (
            "{tier_boundaries: {simple_medium: 0.5}}".into(),
            format!("{AT}.tier_boundaries: the boundaries must ascend: simple_medium (0.5) < medium_complex (0.35) < complex_reasoning (0.6)"),
        ),
        (
            "{tier_boundaries: {simple_medium: \"NaN\"}}".into(),
            format!("{AT}.tier_boundaries.simple_medium: expected a number, got \"NaN\""),
        ),
        (
            "{tier_boundaries: {simple: 0.1}}".into(),
            format!("{AT}.tier_boundaries.simple: unknown key; valid keys: simple_medium, medium_complex, complex_reasoning"),
        ),
        ("{token_thresholds: {simple: 500}}".into(), format!("{AT}.token_thresholds: simple (500) must be less than complex (400)")),
        ("{token_thresholds: {complex: -1}}".into(), format!("{AT}.token_thresholds.complex: expected a non-negative integer, got -1")),
        ("{dimension_weights: {codePresence: -1}}".into(), format!("{AT}.dimension_weights.codePresence: expected a number (0 or more), got -1")),
        (
            "{dimension_weights: {tokencount: 0.1}}".into(),
            format!(r#"{AT}.dimension_weights.tokencount: unknown key; did you mean "tokenCount"? valid keys: tokenCount, codePresence, reasoningMarkers, technicalTerms, simpleIndicators, multiStepPatterns, questionComplexity"#),
        ),
        ("{code_keywords: function}".into(), format!(r#"{AT}.code_keywords: expected a list of strings, got "function""#)),
        ("{session_affinity_ttl_seconds: 0}".into(), format!("{AT}.session_affinity_ttl_seconds: expected a positive integer, got 0")),
        ("{session_affinity: maybe}".into(), format!(r#"{AT}.session_affinity: expected true or false, got "maybe""#)),
        ("{tier_selection: random}".into(), format!(r#"{AT}.tier_selection: unknown tier_selection "random"; valid: shuffle, in_order, weighted"#)),
        ("{reasoning_override_min_score: high}".into(), format!(r#"{AT}.reasoning_override_min_score: expected a number, got "high""#)),
        ("{teirs: {MEDIUM: gpt-4o}}".into(), format!(r#"{AT}.teirs: unknown key; did you mean "tiers"? valid keys: tiers, default_model, session_affinity, session_affinity_ttl_seconds, classifier_type, classifier_llm_config, classifier_fallback, tier_selection, keyword_tier_rules, tier_boundaries, token_thresholds, dimension_weights, reasoning_override_min_score, code_keywords, reasoning_keywords, technical_keywords, custom_technical_keywords, simple_keywords"#)),
        ("[tiers]".into(), format!(r#"{AT}: expected a map, got a list"#)),
    ];
    for (config, expected) in cases {
        assert_eq!(errors(&with_config(&config)), [expected], "{config}");
    }
    let found = errors(&with_config(&format!("{{tiers: {{MEDIUM: [{}]}}}}", big.join(", "))));
    assert!(found.contains(&format!("{AT}.tiers.MEDIUM: lists 65 model groups; a tier takes at most 64")), "{found:?}");
}

#[test]
fn a_router_needs_a_name_of_its_own() {
    let router =
        |name: &str| format!("  - model_name: {name}\n    litellm_params: {{model: auto_router/complexity_router}}\n");
    let policy = "  - model_name: auto\n    litellm_params: {model: pointwork/policy_router}\n";
    let cases = [
        (
            format!("{GROUPS}{}", router("gpt-4o")),
            r#"model_list[3].model_name: "gpt-4o" is also a model group: a complexity router needs a name of its own"#,
        ),
        (
            format!("{GROUPS}{}{}", router("auto"), router("auto")),
            r#"model_list[4].model_name: "auto" already names the complexity router at model_list[3]"#,
        ),
        (
            format!("{GROUPS}{policy}{}", router("auto")),
            r#"model_list[4].model_name: "auto" already names the policy router at model_list[3]"#,
        ),
        (
            format!("{GROUPS}{}router_settings:\n  model_group_alias: {{auto: gpt-4o}}\n", router("auto")),
            r#"model_list[3].model_name: "auto" is also an alias (router_settings.model_group_alias): a complexity router needs a name of its own"#,
        ),
    ];
    for (yaml, expected) in cases {
        let found = errors(&yaml);
        assert!(found.iter().any(|e| e == expected), "{found:?}\n{yaml}");
    }
}

#[test]
fn a_tier_names_model_groups_not_routers_aliases_or_left_out_groups() {
    let extra = "  - model_name: vertex\n    litellm_params: {model: sagemaker/gemini-pro}\n  - model_name: other\n    litellm_params: {model: auto_router/complexity_router}\n  - model_name: auto\n    litellm_params:\n      model: auto_router/complexity_router\n      complexity_router_config: {tiers: {MEDIUM: [vertex, other, fast]}}\nrouter_settings:\n  model_group_alias: {fast: gpt-4o}\n";
    let at = "model_list[5].litellm_params.complexity_router_config.tiers.MEDIUM";
    assert_eq!(
        errors(&format!("{GROUPS}{extra}")),
        [
            format!(
                r#"{at}[0]: "vertex" is served only by deployments left out (Pointwork does not serve provider sagemaker yet): nothing here can serve it"#
            ),
            format!(r#"{at}[1]: "other" is a router, not a model group: a complexity router routes to model groups"#),
            format!(
                r#"{at}[2]: "fast" is an alias (router_settings.model_group_alias); name its model group "gpt-4o""#
            ),
        ]
    );
}

#[test]
fn what_pointwork_does_not_implement_is_warned_about() {
    let yaml = format!(
        "{GROUPS}  - model_name: auto\n    litellm_params:\n      model: auto_router/complexity_router\n      api_key: sk-x\n      complexity_router_config:\n        tiers:\n          MEDIUM: [gpt-4o, {{model_name: gpt-4o-mini, litellm_params: {{reasoning_effort: high}}}}]\n        adaptive: true\n        escalation_keywords: [LITELLM ESCALATE]\n        cache_aware_routing: false\n        classifier_llm_config: {{model: gpt-4o, vision: {{enabled: true}}}}\n        reasoning_keywords: []\n    model_info: {{id: x}}\n"
    );
    let loaded = load(&yaml).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(loaded.config.complexity_routers[0].tiers[1], names(&["gpt-4o", "gpt-4o-mini"]));
    assert_eq!(loaded.config.complexity_routers[0].llm, None);
    let found: Vec<String> = loaded.warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(
        found,
        [
            format!("{AT}.tiers.MEDIUM[1].litellm_params: ignored: per-tier request parameters are not supported by Pointwork"),
            format!("{AT}.classifier_llm_config.vision: ignored: not supported by Pointwork"),
            format!("{AT}.classifier_llm_config: unused: classifier_type is heuristic"),
            format!("{AT}.reasoning_keywords: no keywords: LiteLLM's default list applies"),
            format!("{AT}.adaptive: ignored: not supported by Pointwork"),
            format!("{AT}.escalation_keywords: ignored: not supported by Pointwork"),
            format!("{AT}.cache_aware_routing: ignored: not supported by Pointwork"),
            "model_list[3].litellm_params.api_key: ignored: a complexity router is not a deployment".to_string(),
            "model_list[3].model_info: ignored: a complexity router is not a deployment".to_string(),
        ]
    );
}

#[test]
fn other_auto_router_models_stay_left_out() {
    let yaml = format!("{GROUPS}  - model_name: semantic\n    litellm_params: {{model: auto_router/auto_router_1}}\n");
    let loaded = load(&yaml).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(loaded.config.left_out.len(), 1);
    assert!(loaded.config.complexity_routers.is_empty());
}

#[test]
fn complexity_routers_alone_still_need_deployments() {
    assert_eq!(
        errors("model_list:\n  - model_name: auto\n    litellm_params: {model: auto_router/complexity_router}\n"),
        ["model_list: at least one deployment is required"]
    );
}

/// LiteLLM's "Full Configuration" example (`litellm/router_strategy/complexity_router/README.md`,
/// v1.110.2) verbatim, with deployments for the groups it names.
const LITELLM_FULL_EXAMPLE: &str = r#"model_list:
  - model_name: smart-router
    litellm_params:
      model: auto_router/complexity_router
      complexity_router_config:
        # Display names for the tiers (optional, config keys stay canonical)
        tier_labels:
          SIMPLE: Cheap
          MEDIUM: Standard
          COMPLEX: Premium
          REASONING: Deep

        # Tier to model mapping
        tiers:
          SIMPLE: gpt-4o-mini
          MEDIUM: gpt-4o  
          COMPLEX: claude-sonnet-4
          REASONING: o1-preview
        
        # Tier boundaries (normalized scores)
        tier_boundaries:
          simple_medium: 0.15
          medium_complex: 0.35
          complex_reasoning: 0.60
        
        # Token count thresholds
        token_thresholds:
          simple: 15    # Below this = "short" (default: 15)
          complex: 400  # Above this = "long" (default: 400)
        
        # Dimension weights (must sum to ~1.0)
        dimension_weights:
          tokenCount: 0.10
          codePresence: 0.30
          reasoningMarkers: 0.25
          technicalTerms: 0.25
          simpleIndicators: 0.05
          multiStepPatterns: 0.03
          questionComplexity: 0.02
        
        # Override default keyword lists
        code_keywords:
          - function
          - class
          - def
          - async
          - database
        
        reasoning_keywords:
          - step by step
          - think through
          - analyze
        
        # Fallback model if tier cannot be determined
        default_model: gpt-4o

        # Replace a routed model that cannot take image input (default: false)
        modality_routing: true

        # Let that replacement also override a kept session pin, for image turns only (default: false)
        modality_pin_override: true

        # Refreshes on every pin reuse, so this is idle time rather than total session length (default: 3600)
        session_affinity_ttl_seconds: 300
  - model_name: gpt-4o-mini
    litellm_params: {model: openai/gpt-4o-mini}
  - model_name: gpt-4o
    litellm_params: {model: openai/gpt-4o}
  - model_name: claude-sonnet-4
    litellm_params: {model: anthropic/claude-sonnet-4-20250514}
  - model_name: o1-preview
    litellm_params: {model: openai/o1-preview}
"#;

/// The same README's "Basic Configuration", with deployments.
const LITELLM_BASIC_EXAMPLE: &str = r#"model_list:
  - model_name: smart-router
    litellm_params:
      model: auto_router/complexity_router
      complexity_router_config:
        tiers:
          SIMPLE: gpt-4o-mini
          MEDIUM: gpt-4o  
          COMPLEX: claude-sonnet-4
          REASONING: o1-preview
  - model_name: gpt-4o-mini
    litellm_params: {model: openai/gpt-4o-mini}
  - model_name: gpt-4o
    litellm_params: {model: openai/gpt-4o}
  - model_name: claude-sonnet-4
    litellm_params: {model: anthropic/claude-sonnet-4-20250514}
  - model_name: o1-preview
    litellm_params: {model: openai/o1-preview}
"#;

#[test]
fn litellms_documented_examples_load() {
    let tiers: [&[&str]; 4] = [&["gpt-4o-mini"], &["gpt-4o"], &["claude-sonnet-4"], &["o1-preview"]];
    assert_eq!(routers(LITELLM_BASIC_EXAMPLE), [defaults("smart-router", tiers)]);

    let loaded = load(LITELLM_FULL_EXAMPLE).unwrap_or_else(|e| panic!("{e}"));
    let at = "model_list[0].litellm_params.complexity_router_config";
    let found: Vec<String> = loaded.warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(
        found,
        [
            format!("{at}.tier_labels: ignored: not supported by Pointwork"),
            format!("{at}.modality_routing: ignored: not supported by Pointwork"),
            format!("{at}.modality_pin_override: ignored: not supported by Pointwork"),
        ]
    );
    let expected = RouterConfig {
        default_model: Some("gpt-4o".to_string()),
        session_ttl: Duration::from_secs(300),
        classifier: ClassifierSettings {
            code_keywords: names(&["function", "class", "def", "async", "database"]),
            reasoning_keywords: names(&["step by step", "think through", "analyze"]),
            ..ClassifierSettings::default()
        },
        ..defaults("smart-router", tiers)
    };
    assert_eq!(loaded.config.complexity_routers, [expected]);
}
