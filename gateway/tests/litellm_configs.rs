//! LiteLLM configs as they are written in the wild, served by the real gateway: entries of
//! providers Pointwork does not serve yet are left out and the rest serves; keys pooled for one
//! model are separate deployments; fallbacks to a deployment id and to a name a wildcard group
//! serves; access groups in a virtual key's models.

mod common;

use common::{chat_body, config, deployment, recorded_headers, Gateway, GatewayOptions, Mock, SHUFFLE_TRIES};
use pointwork_gateway::keys::digest_hex;

const MODEL: &str = "openai/gpt-4o-mini";

#[test]
fn entries_of_providers_not_served_yet_are_left_out_and_the_rest_serves() {
    let mock = Mock::start("openai", &[]);
    let yaml = config(
        &[
            "  - model_name: gpt\n    litellm_params: {model: sagemaker/gpt-4o-eu, aws_region_name: eu-west-1}\n"
                .to_string(),
            deployment("gpt", "dep-openai", MODEL, &mock, ""),
            "  - model_name: claude\n    litellm_params: {model: watsonx/ibm/granite-13b-chat-v2}\n".to_string(),
        ],
        "router_settings: {num_retries: 0, fallbacks: [{gpt: [claude]}]}\n",
    );
    let gateway = Gateway::start(&yaml);
    let stderr = gateway.process.stderr();
    assert!(
        stderr
            .contains("model_list[0].litellm_params.model: left out: Pointwork does not serve provider sagemaker yet"),
        "{stderr}"
    );
    assert!(
        stderr.contains("model_list[2].litellm_params.model: left out: Pointwork does not serve provider watsonx yet"),
        "{stderr}"
    );
    for _ in 0..4 {
        let r = gateway.chat("gpt");
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(r.deployment(), "dep-openai", "the sagemaker entry is not in the group");
    }
    assert_eq!(mock.request_count(), 4);
    // The left-out group is no model here.
    let models = gateway.get("/v1/models").text();
    assert!(models.contains("\"gpt\"") && !models.contains("claude"), "{models}");
}

#[test]
fn keys_pooled_for_one_model_are_separate_deployments_and_each_key_is_used() {
    let mock = Mock::start("openai", &[]);
    let entry = |key: &str| {
        format!(
            "  - model_name: gpt\n    litellm_params: {{model: {MODEL}, api_base: \"{}\", api_key: {key}}}\n",
            mock.api_base()
        )
    };
    let gateway = Gateway::start(&config(&[entry("sk-pool-one"), entry("sk-pool-two")], ""));
    let mut deployments = std::collections::BTreeSet::new();
    for _ in 0..SHUFFLE_TRIES {
        let r = gateway.chat("gpt");
        assert_eq!(r.status, 200, "{}", r.text());
        deployments.insert(r.deployment().to_string());
        if deployments.len() == 2 {
            break;
        }
    }
    let ids: Vec<&String> = deployments.iter().collect();
    assert_eq!(ids.len(), 2, "both pooled entries serve: {ids:?}");
    assert_eq!(*ids[1], format!("{}-2", ids[0]), "the second entry's id is the first's, numbered");
    let keys: std::collections::BTreeSet<String> = mock
        .requests()
        .iter()
        .flat_map(|r| recorded_headers(r, "authorization").into_iter().map(str::to_string).collect::<Vec<_>>())
        .collect();
    assert!(keys.contains("Bearer sk-pool-one") && keys.contains("Bearer sk-pool-two"), "{keys:?}");
}

#[test]
fn a_fallback_may_name_a_deployment_id_or_a_name_a_wildcard_group_serves() {
    let failing = Mock::start("failing", &["--fault", "status:503"]);
    let backup = Mock::start("backup", &[]);
    let wild = Mock::start("wild", &[]);
    let wildcard = format!(
        "  - model_name: 'openai/*'\n    litellm_params: {{model: 'openai/*', api_base: \"{}\", api_key: sk-wild}}\n    model_info: {{id: dep-wild}}\n",
        wild.api_base()
    );
    let yaml = config(
        &[
            deployment("gpt", "dep-failing", MODEL, &failing, ""),
            deployment("mini", "dep-failing-mini", MODEL, &failing, ""),
            deployment("backup", "backup-eu", MODEL, &backup, ""),
            wildcard,
        ],
        "router_settings: {num_retries: 0, disable_cooldowns: true, fallbacks: [{gpt: [backup-eu]}, {mini: [openai/gpt-4.1]}]}\n",
    );
    let gateway = Gateway::start(&yaml);
    let r = gateway.chat("gpt");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.deployment(), "backup-eu");
    let r = gateway.chat("mini");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.deployment(), "dep-wild");
    let sent: serde_json::Value = serde_json::from_str(wild.requests()[0]["body"].as_str().unwrap()).unwrap();
    assert_eq!(sent["model"], "gpt-4.1", "the wildcard's match is the upstream model");
}

#[test]
fn a_virtual_key_naming_an_access_group_may_use_its_groups() {
    let mock = Mock::start("openai", &[]);
    let secret = "sk-beta-tester-1";
    let yaml = config(
        &[
            deployment("gpt", "dep-gpt", MODEL, &mock, "").replace("{id: dep-gpt}", "{id: dep-gpt, access_groups: [beta]}"),
            deployment("other", "dep-other", MODEL, &mock, ""),
        ],
        &format!(
            "general_settings: {{master_key: sk-master-9}}\npointwork:\n  auth:\n    virtual_keys:\n      - {{name: beta, sha256: {}, models: [beta]}}\n",
            digest_hex(secret.as_bytes())
        ),
    );
    let gateway = Gateway::start(&yaml);
    let call = |model: &str| {
        let auth = format!("Bearer {secret}");
        gateway.client().request(
            "POST",
            "/v1/chat/completions",
            &[("authorization", &auth)],
            chat_body(model, false).as_bytes(),
        )
    };
    let r = call("gpt");
    assert_eq!(r.status, 200, "{}", r.text());
    let r = call("other");
    assert_eq!(r.status, 401, "{}", r.text());
    assert!(r.text().contains("This token can only access models=['beta', 'gpt']"), "{}", r.text());
}

#[test]
fn an_openai_compatible_provider_of_the_table_forwards_with_the_key_and_base_its_variables_name() {
    let mock = Mock::start("cerebras", &[]);
    let yaml = config(&["  - model_name: fast\n    litellm_params: {model: cerebras/llama3.1-8b}\n".to_string()], "");
    let base = mock.api_base();
    let options = GatewayOptions {
        env: vec![("CEREBRAS_API_BASE", base.as_str()), ("CEREBRAS_API_KEY", "csk-from-env")],
        ..GatewayOptions::default()
    };
    let gateway = Gateway::start_with(&yaml, options);
    let r = gateway.chat("fast");
    assert_eq!(r.status, 200, "{}", r.text());
    let requests = mock.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(recorded_headers(&requests[0], "authorization"), ["Bearer csk-from-env"]);
    let body = requests[0]["body"].as_str().unwrap_or_default();
    assert!(body.contains(r#""model":"llama3.1-8b""#), "the prefix is cut: {body}");
    assert_eq!(requests[0]["path"], "/v1/chat/completions");
}
