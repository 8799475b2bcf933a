//! Helpers of the provider tests (`providers_in_the_wild.rs`, `providers_in_litellms_examples.rs`).
#![allow(dead_code)]

use pointwork_config::{load_str, Loaded};
use pointwork_core::{Deployment, Provider, UpstreamAuth};

/// The test-only service account (a locally generated key of no Google account).
pub const SERVICE_ACCOUNT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/test-only-service-account.json");
pub const SA_EMAIL: &str = "pointwork-test@pointwork-test.iam.gserviceaccount.com";
pub const AWS_KEY_ID: &str = "AKIDEXAMPLE";
pub const AWS_SECRET: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";

/// Loads `yaml` in a process environment of exactly `vars`, and requires that it loads with
/// every entry served.
pub fn load_with(yaml: &str, vars: &[(&str, &str)]) -> Loaded {
    let env = |name: &str| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string());
    let loaded = load_str(yaml, &super::common::fixtures(), &env).unwrap_or_else(|e| panic!("{e}"));
    assert!(loaded.config.left_out.is_empty(), "left out: {:?}", loaded.config.left_out);
    loaded
}

pub fn warnings(loaded: &Loaded) -> Vec<String> {
    loaded.warnings.iter().map(|w| w.to_string()).collect()
}

pub fn only(loaded: &Loaded) -> &Deployment {
    assert_eq!(loaded.config.deployments.len(), 1);
    &loaded.config.deployments[0]
}

pub fn named<'l>(loaded: &'l Loaded, model_name: &str) -> &'l Deployment {
    loaded.config.deployments.iter().find(|d| d.model_name == model_name).unwrap_or_else(|| panic!("{model_name}"))
}

/// Provider, upstream model, base URL.
pub fn target(d: &Deployment) -> (Provider, &str, &str) {
    (d.provider, d.upstream_model.as_str(), d.api_base.as_str())
}

/// Asserts SigV4 signing with the test keys in `region`.
pub fn assert_sigv4(d: &Deployment, region: &str) {
    let Some(UpstreamAuth::AwsSigV4(c)) = d.auth.as_deref() else { panic!("{}: {:?}", d.model_name, d.auth) };
    assert_eq!((c.access_key_id.as_str(), c.secret_access_key.as_str()), (AWS_KEY_ID, AWS_SECRET));
    assert_eq!((c.region.as_str(), c.service.as_str(), d.api_key.as_deref()), (region, "bedrock", None));
}

pub fn assert_service_account(d: &Deployment) {
    let Some(UpstreamAuth::GoogleServiceAccount(a)) = d.auth.as_deref() else { panic!("{:?}", d.auth) };
    assert_eq!((a.client_email.as_str(), a.token_uri.as_str()), (SA_EMAIL, "https://oauth2.googleapis.com/token"));
    assert_eq!(d.api_key, None);
}

pub const AWS_ENV: [(&str, &str); 3] =
    [("AWS_ACCESS_KEY_ID", AWS_KEY_ID), ("AWS_SECRET_ACCESS_KEY", AWS_SECRET), ("AWS_REGION_NAME", "eu-west-3")];
