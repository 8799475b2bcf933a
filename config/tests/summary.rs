//! `Config::summary()` and the other places a key could leak.

mod common;

use common::{fixture, load};
use pointwork_config::load_file;

fn realistic() -> pointwork_config::Config {
    let yaml = std::fs::read_to_string(fixture("litellm_realistic.yaml")).unwrap();
    load(&yaml).unwrap_or_else(|e| panic!("{e}")).config
}

const FULL_KEYS: [&str; 4] =
    ["sk-openai-test-key-1111", "sk-or-test-key-2222", "gsk-from-config-0000aaaa", "sk-master-secret-3333"];

/// The OpenRouter entry writes no key: it gets `OPENROUTER_API_KEY` from the environment, as in
/// LiteLLM.
#[test]
fn the_summary_is_one_screen() {
    let config = load(
        "model_list:\n\
         - model_name: gpt-4o\n  litellm_params: {model: openai/gpt-4o, api_key: sk-proj-abcdefgh1234, weight: 2}\n  model_info: {id: east}\n\
         - model_name: gpt-4o\n  litellm_params: {model: openrouter/openai/gpt-4o, order: 1}\n  model_info: {id: backup-openrouter}\n\
         - model_name: llama\n  litellm_params: {model: hosted_vllm/llama-3, api_base: 'http://10.0.0.7:8000/v1'}\n  model_info: {id: vllm}\n\
         general_settings: {master_key: sk-1234567890}\n\
         litellm_settings: {set_verbose: true}\n",
    )
    .unwrap()
    .config;
    let expected = "\
model groups: 2, deployments: 3
  gpt-4o
    east               openai       gpt-4o         https://api.openai.com/v1     weight 2, wire openai-chat, key …1234
    backup-openrouter  openrouter   openai/gpt-4o  https://openrouter.ai/api/v1  order 1, wire openai-chat, key …2222
  llama
    vllm               hosted_vllm  llama-3        http://10.0.0.7:8000/v1       wire openai-chat, key none
router: simple-shuffle, num_retries 2, allowed_fails not set, cooldown_time 5s, timeout 6000s, stream_timeout = timeout, pre-call checks off
gateway: listen 0.0.0.0:4000, shards one per core, io_driver auto
  limits: max_header_bytes 65536, max_headers 100, max_body_bytes 33554432
  timeouts: connect 5s, keepalive_idle 60s, upstream_idle 90s
  drain_timeout 30s, access_log off
  health checks off: every 300s (all groups), timeout 10s, max_tokens 1
general: master_key …7890
warnings: 1
";
    assert_eq!(config.summary(), expected);
}

#[test]
fn the_summary_lists_the_files() {
    let path = fixture("minimal.yaml");
    let summary = load_file(&path).unwrap().config.summary();
    assert!(summary.starts_with(&format!("files: {}\n", path.display())), "{summary}");
}

#[test]
fn no_full_key_in_the_summary_or_debug_output() {
    let config = realistic();
    let summary = config.summary();
    let debug = format!("{config:?}");
    for key in FULL_KEYS {
        assert!(!summary.contains(key), "summary shows {key}:\n{summary}");
        assert!(!debug.contains(key), "Debug shows {key}");
    }
    assert!(summary.contains("key …1111"), "{summary}");
    assert!(summary.contains("master_key …3333"), "{summary}");
}

#[test]
fn the_listeners_tls_is_one_line_under_the_gateway() {
    let models = "model_list: [{model_name: g, litellm_params: {model: openai/gpt-4o, api_key: sk-x}}]\n";
    let config = load(&format!("{models}pointwork: {{tls: {{cert: c.pem, key: /k/k.pem, client_ca: ca.pem}}}}\n"))
        .unwrap()
        .config;
    let dir = common::fixtures();
    let (cert, ca) = (dir.join("c.pem"), dir.join("ca.pem"));
    let with_ca = format!(
        "\n  tls: certificate {}, key /k/k.pem, client certificates required (client_ca {})\n",
        cert.display(),
        ca.display()
    );
    let summary = config.summary();
    assert!(summary.contains(&format!("io_driver auto{with_ca}  limits:")), "{summary}");
    // `pointwork check` reads the certificate and says when it expires.
    let expiring = |left| config.summary_with_tls_expiry(Some(left));
    let certificate = format!("  tls: certificate {}", cert.display());
    assert!(expiring(83 * 86_400 + 5).contains(&format!("{certificate} (expires in 83 days), key")));
    assert!(expiring(5 * 3_600 + 1).contains(&format!("{certificate} (expires in 5 hours), key")));
    assert!(expiring(-2 * 86_400).contains(&format!("{certificate} (expired 2 days ago), key")));

    let config = load(models).unwrap().config;
    assert!(!config.summary().contains("tls:"), "no TLS, no line");
}
