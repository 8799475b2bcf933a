//! The policy router's config: endpoint attributes in `model_info`, `pointwork.policies`,
//! `default_policy`, a key's `policy`, and the auto model (`pointwork/policy_router`) — read into
//! exactly the values the engine gets, every mistake named by its key path.

mod common;

use common::{errors, load};
use pointwork_config::{Loaded, PolicyRouterEntry};
use pointwork_core::policy::{
    EndpointKind, Modalities, Modality, Policy, PolicyAttrs, PolicyEndpoint, ResidencyAllowed, SovereigntyClass,
};
use pointwork_core::DeploymentIdx;
use serde_json::json;

const DIGEST_A: &str = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
const DIGEST_B: &str = "60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752";

/// An EU catalogue: EU-owned endpoints in de-ber and fr-par, an EU region of a non-EU parent,
/// a non-EU one, a catalogue row, a down one, a partner one, one without policy attributes; two
/// policies, a default, a key bound to a policy, and two auto models (default pool, listed pool).
fn eu_catalogue() -> String {
    format!(
        r#"
model_list:
  - model_name: qwen3-coder-30b
    litellm_params:
      model: hosted_vllm/Qwen/Qwen3-Coder-30B
      api_base: http://10.0.0.7:8000/v1
      input_cost_per_token: 0.0000002
      output_cost_per_token: 0.0000008
    model_info:
      id: qwen-ber
      sovereignty_class: eu_owned_eu_operated
      region: de-ber
      provider: ionos
      modalities: [text]
      task_fit: {{coding: 0.9, chat: 0.6}}
      language_fit: {{en: 0.9, de: 0.8}}
      docs_completeness: 1
  - model_name: mistral-large
    litellm_params: {{model: mistral/mistral-large-latest}}
    model_info: {{id: mistral-par, sovereignty_class: eu_owned_eu_operated, region: fr-par, provider: mistral, modalities: [text, vision], sovereignty_bonus: 0.8}}
  - model_name: gpt-4o
    litellm_params: {{model: openai/gpt-4o, api_base: "https://eu.api.openai.com/v1"}}
    model_info: {{id: gpt-4o-eu, sovereignty_class: eu_region_of_non_eu_parent, region: eu-central-1, provider: openai}}
  - model_name: gpt-4o
    litellm_params: {{model: openai/gpt-4o}}
    model_info: {{id: gpt-4o-us, sovereignty_class: non_eu, region: us-east-1, provider: openai}}
  - model_name: llama-405b
    litellm_params: {{model: together_ai/meta-llama/Llama-3.1-405B-Instruct}}
    model_info: {{id: llama-catalogue, kind: catalogue_only, sovereignty_class: catalogue_unknown}}
  - model_name: qwen3-coder-30b
    litellm_params: {{model: hosted_vllm/Qwen/Qwen3-Coder-30B, api_base: "http://10.0.0.8:8000/v1"}}
    model_info: {{id: qwen-fra, status: down, sovereignty_class: eu_owned_eu_operated, region: de-fra}}
  - model_name: mistral-small
    litellm_params: {{model: openrouter/mistralai/mistral-small, region_name: nl-ams}}
    model_info: {{id: mistral-partner, partner: true, sovereignty_class: eu_region_of_non_eu_parent, input_cost_per_token: 0.0000001, output_cost_per_token: 0.0000003}}
  - model_name: gpt-4o-mini
    litellm_params: {{model: openai/gpt-4o-mini}}
    model_info: {{id: plain}}
  - model_name: llmeu-auto
    litellm_params: {{model: pointwork/policy_router}}
  - model_name: llmeu-eu-owned
    litellm_params:
      model: pointwork/policy_router
      policy_router_config: {{pool: [qwen3-coder-30b, mistral-large]}}
pointwork:
  policies:
    eu-strict:
      residency_allowed: [eu_owned_eu_operated, de, fr]
      providers_deny: [openai]
      max_usd_per_1m: 5
      retention: 0
      data_classes_allowed: [public, internal]
      max_usd_per_day: 100
    eu-relaxed:
      allow_partner_endpoints: true
      models_allow: [qwen3-coder-30b, mistral-large, mistral-small, gpt-4o]
      providers_allow: [ionos, mistral, openai, openrouter]
      models_deny: [llama-405b]
  default_policy: eu-strict
  auth:
    virtual_keys:
      - {{name: team-eu, sha256: {DIGEST_A}, policy: eu-relaxed}}
      - {{name: team-plain, sha256: {DIGEST_B}}}
"#
    )
}

fn loaded() -> Loaded {
    load(&eu_catalogue()).unwrap_or_else(|e| panic!("{e}"))
}

fn names(list: &[&str]) -> Vec<Box<str>> {
    list.iter().map(|s| Box::from(*s)).collect()
}

fn fits(list: &[(&str, f64)]) -> Vec<(Box<str>, f64)> {
    list.iter().map(|(k, v)| (Box::from(*k), *v)).collect()
}

fn eu(class: SovereigntyClass, region: &str) -> PolicyAttrs {
    PolicyAttrs { class: Some(class), region: Some(region.into()), ..PolicyAttrs::default() }
}

#[test]
fn the_eu_catalogue_loads_into_exactly_the_expected_endpoints() {
    let config = loaded().config;
    let attrs: Vec<(&str, Option<PolicyAttrs>)> =
        config.deployments.iter().map(|d| (d.id.as_str(), d.policy.as_deref().cloned())).collect();
    use SovereigntyClass::*;
    let expected = vec![
        (
            "qwen-ber",
            Some(PolicyAttrs {
                provider: Some("ionos".into()),
                modalities: Modalities::TEXT,
                task_fit: fits(&[("coding", 0.9), ("chat", 0.6)]),
                language_fit: fits(&[("en", 0.9), ("de", 0.8)]),
                docs_completeness: Some(1.0),
                ..eu(EuOwnedEuOperated, "de-ber")
            }),
        ),
        (
            "mistral-par",
            Some(PolicyAttrs {
                provider: Some("mistral".into()),
                modalities: Modalities::of(&[Modality::Text, Modality::Vision]),
                sovereignty_bonus: Some(0.8),
                ..eu(EuOwnedEuOperated, "fr-par")
            }),
        ),
        (
            "gpt-4o-eu",
            Some(PolicyAttrs { provider: Some("openai".into()), ..eu(EuRegionOfNonEuParent, "eu-central-1") }),
        ),
        ("gpt-4o-us", Some(PolicyAttrs { provider: Some("openai".into()), ..eu(NonEu, "us-east-1") })),
        (
            "llama-catalogue",
            Some(PolicyAttrs {
                kind: EndpointKind::CatalogueOnly,
                class: Some(CatalogueUnknown),
                ..PolicyAttrs::default()
            }),
        ),
        ("qwen-fra", Some(PolicyAttrs { status: Some("down".into()), ..eu(EuOwnedEuOperated, "de-fra") })),
        (
            "mistral-partner",
            Some(PolicyAttrs { partner: true, class: Some(EuRegionOfNonEuParent), ..PolicyAttrs::default() }),
        ),
        ("plain", None),
    ];
    assert_eq!(attrs, expected);
    assert!(!config.deployments.iter().any(|d| d.model_name.starts_with("llmeu")), "an auto model is no deployment");
}

#[test]
fn the_attributes_stay_in_the_kept_model_info() {
    let config = loaded().config;
    let info = |i: usize| serde_json::Value::Object(config.deployment_info[i].model_info.clone());
    assert_eq!(
        info(0),
        json!({
            "sovereignty_class": "eu_owned_eu_operated", "region": "de-ber", "provider": "ionos",
            "modalities": ["text"], "task_fit": {"coding": 0.9, "chat": 0.6},
            "language_fit": {"en": 0.9, "de": 0.8}, "docs_completeness": 1.0,
        })
    );
    assert_eq!(info(4), json!({"kind": "catalogue_only", "sovereignty_class": "catalogue_unknown"}));
    assert_eq!(
        info(6),
        json!({
            "input_cost_per_token": 0.0000001, "output_cost_per_token": 0.0000003,
            "partner": true, "sovereignty_class": "eu_region_of_non_eu_parent",
        })
    );
}

#[test]
fn the_engine_sees_the_documented_defaults_of_what_model_info_leaves_out() {
    let config = loaded().config;
    let endpoint = |i: usize| {
        let d = &config.deployments[i];
        PolicyEndpoint::of(DeploymentIdx(i as u32), d, d.policy.as_deref().unwrap())
    };
    let partner = endpoint(6);
    // region from litellm_params.region_name, provider from the model's prefix, prices from
    // model_info.
    assert_eq!((&*partner.region, &*partner.provider, &*partner.status), ("nl-ams", "openrouter", "up"));
    assert_eq!(partner.usd_per_1m.map(|p| (p * 1e6).round() / 1e6), Some(0.4));
    assert_eq!((partner.docs_completeness, partner.sovereignty_bonus), (0.5, 0.5));
    let catalogue = endpoint(4);
    assert_eq!((&*catalogue.region, catalogue.sovereignty_bonus), ("", 0.0));
    // mistral-large's window and price come from the model cost map.
    let mistral = endpoint(1);
    assert_eq!(mistral.context_window, Some(262_144));
    assert_eq!(mistral.usd_per_1m.map(|p| (p * 1e6).round() / 1e6), Some(2.0));
}

#[test]
fn policies_default_policy_and_the_keys_policy() {
    let config = loaded().config;
    let strict = Policy {
        residency_allowed: ResidencyAllowed {
            classes: vec![SovereigntyClass::EuOwnedEuOperated],
            regions: names(&["de", "fr"]),
        },
        providers_deny: names(&["openai"]),
        max_usd_per_1m: Some(5.0),
        retention: Some(0),
        data_classes_allowed: names(&["public", "internal"]),
        max_usd_per_day: Some(100.0),
        ..Policy::new("eu-strict")
    };
    let relaxed = Policy {
        allow_partner_endpoints: true,
        models_allow: names(&["qwen3-coder-30b", "mistral-large", "mistral-small", "gpt-4o"]),
        providers_allow: names(&["ionos", "mistral", "openai", "openrouter"]),
        models_deny: names(&["llama-405b"]),
        ..Policy::new("eu-relaxed")
    };
    assert_eq!(config.policies, [strict, relaxed]);
    assert_eq!(
        config.policies[1].residency_allowed,
        ResidencyAllowed::default(),
        "absent: both EU classes, any region"
    );
    assert_eq!(config.default_policy.as_deref(), Some("eu-strict"));
    let keys: Vec<(&str, Option<&str>)> =
        config.auth.virtual_keys.iter().map(|k| (k.name.as_str(), k.policy.as_deref())).collect();
    assert_eq!(keys, [("team-eu", Some("eu-relaxed")), ("team-plain", None)]);
}

#[test]
fn auto_models_with_the_default_pool_and_a_listed_one() {
    let config = loaded().config;
    let entry = |name: &str, pool: &[&str]| PolicyRouterEntry {
        model_name: name.into(),
        pool: pool.iter().map(|g| g.to_string()).collect(),
    };
    assert_eq!(
        config.policy_routers,
        [
            // Every group with a deployment that has policy attributes, in model-list order;
            // gpt-4o-mini has none.
            entry("llmeu-auto", &["qwen3-coder-30b", "mistral-large", "gpt-4o", "llama-405b", "mistral-small"]),
            entry("llmeu-eu-owned", &["qwen3-coder-30b", "mistral-large"]),
        ]
    );
}

#[test]
fn a_price_cap_warns_about_the_endpoints_it_can_never_cap() {
    let warnings: Vec<String> = loaded().warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(
        warnings,
        ["pointwork.policies.eu-strict.max_usd_per_1m: these deployments have no input_cost_per_token/output_cost_per_token (nor a model_cost_map entry) and are never above this cap: qwen-fra"]
    );
}

#[test]
fn the_summary_shows_policies_routers_and_endpoints() {
    let summary = loaded().config.summary();
    for expected in [
        "policies: 2 (default eu-strict)\n",
        "  eu-strict: eu_owned_eu_operated in de, fr; providers deny [openai]; data classes [public, internal]; max $5 per 1M tokens; max $100 per day; retention 0\n",
        "  eu-relaxed: eu_owned_eu_operated, eu_region_of_non_eu_parent in any region; providers allow [ionos, mistral, openai, openrouter]; models allow [qwen3-coder-30b, mistral-large, mistral-small, gpt-4o]; models deny [llama-405b]; partners allowed\n",
        "policy router llmeu-auto: pool [qwen3-coder-30b, mistral-large, gpt-4o, llama-405b, mistral-small]\n",
        "policy router llmeu-eu-owned: pool [qwen3-coder-30b, mistral-large]\n",
        "  key team-eu, every model, policy eu-relaxed\n",
        "eu_owned_eu_operated @ de-ber, wire openai-chat, key none\n",
        "eu_owned_eu_operated @ de-fra, status down, wire openai-chat, key none\n",
        "catalogue_unknown @ no region, catalogue_only, wire openai-chat, key none\n",
        "eu_region_of_non_eu_parent @ nl-ams, partner, wire openai-chat, key …2222\n",
    ] {
        assert!(summary.contains(expected), "missing {expected:?} in:\n{summary}");
    }
}

/// One hosted_vllm deployment of group `g` with `info` as its model_info flow map body.
fn endpoint(info: &str) -> String {
    format!(
        "model_list:\n  - model_name: g\n    litellm_params: {{model: hosted_vllm/m, api_base: 'http://h:8000/v1'}}\n    model_info: {{{info}}}\n"
    )
}

/// A config with one policy endpoint and `pointwork` as the section's YAML body (indented).
fn with_pointwork(pointwork: &str) -> String {
    format!("{}pointwork:\n{pointwork}", endpoint("sovereignty_class: eu_owned_eu_operated, region: de-ber"))
}

#[test]
fn defaults_when_the_keys_are_absent() {
    let loaded = load(&format!(
        "{}  - model_name: plain\n    litellm_params: {{model: openai/gpt-4o}}\npointwork:\n  policies:\n    empty: {{}}\n    null-too:\n",
        endpoint("status: up")
    ))
    .unwrap();
    let config = &loaded.config;
    assert_eq!(
        config.deployments[0].policy.as_deref(),
        Some(&PolicyAttrs { status: Some("up".into()), ..PolicyAttrs::default() }),
        "one key makes a policy endpoint; the rest are defaults"
    );
    let d = PolicyAttrs::default();
    assert_eq!((d.kind, d.class, d.partner, d.modalities), (EndpointKind::Hosted, None, false, Modalities::TEXT));
    assert_eq!(config.deployments[1].policy, None);
    assert_eq!(config.policies, [Policy::new("empty"), Policy::new("null-too")]);
    assert_eq!(
        config.policies[0].residency_allowed.classes,
        [SovereigntyClass::EuOwnedEuOperated, SovereigntyClass::EuRegionOfNonEuParent]
    );
    assert!(config.policies[0].residency_allowed.regions.is_empty());
    assert_eq!((config.default_policy.as_deref(), config.policy_routers.len()), (None, 0));
    let warnings: Vec<String> = loaded.warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(
        warnings,
        ["model_list[0].model_info: policy attributes without sovereignty_class: the endpoint is catalogue_unknown and never serves a policy-routed request"]
    );
}

#[test]
fn residency_allowed_is_exactly_what_it_lists() {
    let config = load(&with_pointwork(
        "  policies:\n    wide: {residency_allowed: [non_eu, eu_owned_eu_operated, non_eu, de-ber, eu]}\n",
    ))
    .unwrap()
    .config;
    assert_eq!(
        config.policies[0].residency_allowed,
        ResidencyAllowed {
            classes: vec![SovereigntyClass::NonEu, SovereigntyClass::EuOwnedEuOperated],
            regions: names(&["de-ber", "eu"]),
        }
    );
}

#[test]
fn a_bad_endpoint_attribute_is_named_by_its_key_path() {
    let classes = "eu_owned_eu_operated, eu_region_of_non_eu_parent, non_eu, catalogue_unknown";
    let modalities = "text, vision, embedding, speech-recognition, reranker";
    let cases: [(&str, String); 9] = [
        (
            "sovereignty_class: eu",
            format!(r#"model_list[0].model_info.sovereignty_class: unknown sovereignty class "eu"; valid: {classes}"#),
        ),
        (
            "sovereignty_class: eu_owned_eu_operated, modalities: [text, audio]",
            format!(r#"model_list[0].model_info.modalities[1]: unknown modality "audio"; valid: {modalities}"#),
        ),
        ("sovereignty_class: eu_owned_eu_operated, modalities: []", format!("model_list[0].model_info.modalities: empty: list at least one of {modalities}")),
        (
            "sovereignty_class: eu_owned_eu_operated, task_fit: {coding: 1.5}",
            "model_list[0].model_info.task_fit.coding: expected a number from 0 to 1, got 1.5".into(),
        ),
        (
            "sovereignty_class: eu_owned_eu_operated, language_fit: [de]",
            "model_list[0].model_info.language_fit: expected a map, got a list".into(),
        ),
        (
            "sovereignty_class: eu_owned_eu_operated, docs_completeness: -0.1",
            "model_list[0].model_info.docs_completeness: expected a number from 0 to 1, got -0.1".into(),
        ),
        (
            "sovereignty_class: eu_owned_eu_operated, kind: served",
            r#"model_list[0].model_info.kind: expected hosted or catalogue_only, got "served""#.into(),
        ),
        (
            "sovereignty_class: eu_owned_eu_operated, status: Down",
            r#"model_list[0].model_info.status: expected a status word in lowercase (up, degraded, down, maintenance, …), got "Down""#.into(),
        ),
        (
            "sovereignty_class: eu_owned_eu_operated, region: DE-BER",
            r#"model_list[0].model_info.region: expected a region in lowercase, like de-ber, eu-central-1 or de, got "DE-BER""#.into(),
        ),
    ];
    for (info, expected) in cases {
        assert_eq!(errors(&endpoint(info)), [expected], "{info}");
    }
}

#[test]
fn a_bad_policy_is_named_by_its_key_path() {
    let keys = "residency_allowed, providers_allow, providers_deny, models_allow, models_deny, allow_partner_endpoints, max_usd_per_1m, retention, data_classes_allowed, max_usd_per_day";
    let cases: [(&str, String); 9] = [
        (
            "  policies:\n    p: {retention: 1}\n",
            "pointwork.policies.p.retention: only zero retention is implemented (days a provider may keep a prompt), got 1".into(),
        ),
        (
            "  policies:\n    p: {residency_allowed: [eu_owned_eu_operated, catalogue_unknown]}\n",
            "pointwork.policies.p.residency_allowed[1]: catalogue_unknown is not an addressable residency: an endpoint of that class never serves a policy-routed request".into(),
        ),
        (
            "  policies:\n    p: {residency_allowed: [eu-hosted]}\n",
            r#"pointwork.policies.p.residency_allowed[0]: "eu-hosted" is a residency a request names; residency_allowed lists sovereignty classes and regions: write eu_owned_eu_operated, eu_region_of_non_eu_parent, eu"#.into(),
        ),
        (
            "  policies:\n    p: {residency_allowed: [eu_owned]}\n",
            r#"pointwork.policies.p.residency_allowed[0]: "eu_owned" is neither a sovereignty class (eu_owned_eu_operated, eu_region_of_non_eu_parent, non_eu) nor a region (a country code like de, a region like de-ber, or eu)"#.into(),
        ),
        (
            "  policies:\n    p: {residency_allowed: [de, fr]}\n",
            "pointwork.policies.p.residency_allowed: names no sovereignty class, so no endpoint could serve under this policy; add one or more of eu_owned_eu_operated, eu_region_of_non_eu_parent, non_eu".into(),
        ),
        (
            "  policies:\n    p: {max_usd_per_1m: -1}\n",
            "pointwork.policies.p.max_usd_per_1m: expected a number (0 or more), got -1".into(),
        ),
        (
            "  policies:\n    p: {residency: [de]}\n",
            format!(r#"pointwork.policies.p.residency: unknown key; valid keys: {keys}"#),
        ),
        (
            "  policies:\n    p: {}\n  default_policy: q\n",
            r#"pointwork.default_policy: unknown policy "q"; policies: p"#.into(),
        ),
        ("  policies:\n    eu strict: {}\n", "pointwork.policies.eu strict: a policy name is letters, digits, '.', '_' or '-'".into()),
    ];
    for (section, expected) in cases {
        assert_eq!(errors(&with_pointwork(section)), [expected], "{section}");
    }
}

#[test]
fn a_policy_reference_naming_nothing_is_an_error() {
    let yaml = with_pointwork(&format!(
        "  default_policy: eu\n  auth:\n    virtual_keys:\n      - {{name: a, sha256: {DIGEST_A}, policy: eu-strict}}\n"
    ));
    assert_eq!(
        errors(&yaml),
        [
            r#"pointwork.default_policy: unknown policy "eu"; pointwork.policies defines none"#,
            r#"pointwork.auth.virtual_keys[0].policy: unknown policy "eu-strict"; pointwork.policies defines none"#,
        ]
    );
    // A policy with errors is still a name: a reference to it is not reported again.
    let yaml = with_pointwork(&format!(
        "  policies:\n    eu: {{retention: 7}}\n  default_policy: eu\n  auth:\n    virtual_keys:\n      - {{name: a, sha256: {DIGEST_A}, policy: eu}}\n"
    ));
    assert_eq!(
        errors(&yaml),
        ["pointwork.policies.eu.retention: only zero retention is implemented (days a provider may keep a prompt), got 7"]
    );
}

/// The one policy endpoint (group `g`), a plain group `plain`, then `routers` (model_list items).
fn with_routers(routers: &str) -> String {
    format!(
        "{}  - model_name: plain\n    litellm_params: {{model: openai/gpt-4o}}\n{routers}",
        endpoint("sovereignty_class: eu_owned_eu_operated, region: de-ber")
    )
}

const ROUTER: &str = "litellm_params: {model: pointwork/policy_router";

#[test]
fn a_bad_auto_model_is_named_by_its_key_path() {
    let cases: [(String, Vec<String>); 6] = [
        (
            format!("  - model_name: auto\n    {ROUTER}, policy_router_config: {{pool: [g, gg]}}}}\n"),
            vec![r#"model_list[2].litellm_params.policy_router_config.pool[1]: unknown model group "gg"; model groups: g, plain"#.into()],
        ),
        (
            format!("  - model_name: plain\n    {ROUTER}}}\n"),
            vec![r#"model_list[2].model_name: "plain" is also a model group: a policy router needs a name of its own"#.into()],
        ),
        (
            format!("  - model_name: auto\n    {ROUTER}, policy_router_config: {{pool: [plain]}}}}\n"),
            vec!["model_list[2]: nothing to route to: no deployment in this policy router's pool has policy attributes (model_info.sovereignty_class, region, …)".into()],
        ),
        (
            format!("  - model_name: auto\n    {ROUTER}}}\n  - model_name: auto\n    {ROUTER}}}\n"),
            vec![r#"model_list[3].model_name: "auto" already names the policy router at model_list[2]"#.into()],
        ),
        (
            format!("  - model_name: auto\n    {ROUTER}, policy_router_config: {{pools: [g]}}}}\n"),
            vec![r#"model_list[2].litellm_params.policy_router_config.pools: unknown key; did you mean "pool"? valid keys: pool"#.into()],
        ),
        (
            "  - model_name: auto\n    litellm_params: {model: pointwork/auto_router}\n".to_string(),
            vec![r#"model_list[2].litellm_params.model: unknown Pointwork model "pointwork/auto_router"; the one there is: pointwork/policy_router"#.into()],
        ),
    ];
    for (routers, expected) in cases {
        assert_eq!(errors(&with_routers(&routers)), expected, "{routers}");
    }
}

#[test]
fn an_auto_model_colliding_with_an_alias_is_an_error() {
    let yaml = format!(
        "{}router_settings:\n  model_group_alias: {{auto: g}}\n",
        with_routers(&format!("  - model_name: auto\n    {ROUTER}}}\n"))
    );
    assert_eq!(
        errors(&yaml),
        [
            r#"model_list[2].model_name: "auto" is also an alias (router_settings.model_group_alias): a policy router needs a name of its own"#
        ]
    );
}

#[test]
fn a_config_of_auto_models_alone_still_needs_deployments() {
    assert_eq!(
        errors(&format!("model_list:\n  - model_name: auto\n    {ROUTER}}}\n")),
        ["model_list: at least one deployment is required"]
    );
}

#[test]
fn an_auto_model_warns_about_what_means_nothing_to_it() {
    let loaded = load(&with_routers(&format!(
        "  - model_name: auto\n    {ROUTER}, api_key: sk-x, policy_router_config: {{pool: [g, plain, g]}}}}\n    model_info: {{id: x}}\n"
    )))
    .unwrap();
    assert_eq!(loaded.config.policy_routers[0].pool, ["g", "plain"], "listed once each");
    let warnings: Vec<String> = loaded.warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(
        warnings,
        [
            "model_list[2].litellm_params.api_key: ignored: a policy router is not a deployment",
            "model_list[2].model_info: ignored: a policy router is not a deployment",
            r#"model_list[2].litellm_params.policy_router_config.pool[1]: no deployment of "plain" has policy attributes (model_info.sovereignty_class, region, …): the policy router never routes to it"#,
        ]
    );
}

#[test]
fn a_pool_group_served_only_by_left_out_entries_is_a_warning() {
    let loaded = load(&with_routers(&format!(
        "  - model_name: claude\n    litellm_params: {{model: sagemaker/claude-3-5-sonnet}}\n  - model_name: auto\n    {ROUTER}, policy_router_config: {{pool: [g, claude]}}}}\n"
    )))
    .unwrap();
    assert_eq!(loaded.config.policy_routers[0].pool, ["g"]);
    let warnings: Vec<String> = loaded.warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(
        warnings[1],
        r#"model_list[3].litellm_params.policy_router_config.pool[1]: "claude" is served only by deployments left out (Pointwork does not serve provider sagemaker yet): not in the pool"#
    );
}
