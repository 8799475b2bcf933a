//! Cloud credentials the way clouds hand them out, as the config reads them: Bedrock's STS
//! roles, web identity, shared-file profiles and AWS's default chain; Vertex AI's Application
//! Default Credentials (a service account or a user's file, gcloud's well-known file, the
//! metadata server). Which source each entry gets, the errors with their key paths, the
//! warnings. Nothing here calls a network (the gateway's tests fetch).

mod common;

use std::path::PathBuf;

use pointwork_config::{load_str, Loaded};
use pointwork_core::upstream_auth::{AwsRole, AwsSource, WebIdentityToken};
use pointwork_core::UpstreamAuth;

/// A fresh directory for files the config reads.
fn dir(label: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pointwork-config-creds-{label}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Loads `yaml` in an environment of only `vars` (with `HOME` pointing nowhere unless given).
fn load(yaml: &str, vars: &[(&str, &str)]) -> Result<Loaded, Vec<String>> {
    let env = |name: &str| {
        vars.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string()).or_else(|| match name {
            "HOME" => Some("/nonexistent-home".into()),
            _ => None,
        })
    };
    load_str(yaml, &common::fixtures(), &env).map_err(|e| e.0.iter().map(|e| e.to_string()).collect())
}

fn auth(loaded: &Loaded) -> &UpstreamAuth {
    loaded.config.deployments[0].auth.as_deref().expect("a credential")
}

fn aws_source(loaded: &Loaded) -> &AwsSource {
    match auth(loaded) {
        UpstreamAuth::AwsObtained(aws) => {
            assert_eq!((aws.region.as_str(), aws.service.as_str()), ("eu-west-3", "bedrock"));
            &aws.source
        }
        other => panic!("not obtained: {other:?}"),
    }
}

fn warnings(loaded: &Loaded) -> Vec<String> {
    loaded.warnings.iter().map(|w| w.to_string()).collect()
}

fn bedrock(params: &str) -> String {
    format!("model_list:\n  - model_name: claude\n    litellm_params: {{model: bedrock/anthropic.claude-3-haiku-20240307-v1:0, aws_region_name: eu-west-3{params}}}\n")
}

#[test]
fn a_role_is_assumed_with_the_entrys_keys_at_the_regional_sts() {
    let yaml = bedrock(", aws_access_key_id: AKIDBASE, aws_secret_access_key: base-secret, aws_role_name: \"arn:aws:iam::123456789012:role/bedrock\", aws_session_name: s1, aws_external_id: ext-7");
    let loaded = load(&yaml, &[]).unwrap();
    let AwsSource::AssumeRole { base, role } = aws_source(&loaded) else { panic!("not a role") };
    assert!(
        matches!(&**base, AwsSource::Keys(k) if k.access_key_id == "AKIDBASE" && k.secret_access_key == "base-secret")
    );
    assert_eq!(
        role,
        &AwsRole {
            role_arn: "arn:aws:iam::123456789012:role/bedrock".into(),
            session_name: Some("s1".into()),
            external_id: Some("ext-7".into()),
            sts_endpoint: "https://sts.eu-west-3.amazonaws.com".into(),
            sts_region: "eu-west-3".into(),
        }
    );
    assert!(warnings(&loaded).is_empty(), "{:?}", warnings(&loaded));
    assert_eq!(loaded.config.deployments[0].api_base, "https://bedrock-runtime.eu-west-3.amazonaws.com");
}

#[test]
fn sts_is_signed_for_the_region_its_endpoint_names_else_the_environments() {
    let yaml = bedrock(", aws_access_key_id: A, aws_secret_access_key: s, aws_role_name: r, aws_sts_endpoint: \"https://sts.us-east-2.amazonaws.com\"");
    let loaded = load(&yaml, &[("AWS_REGION", "ap-south-1")]).unwrap();
    let AwsSource::AssumeRole { role, .. } = aws_source(&loaded) else { panic!("not a role") };
    assert_eq!(
        (role.sts_endpoint.as_str(), role.sts_region.as_str()),
        ("https://sts.us-east-2.amazonaws.com", "us-east-2")
    );
    // LiteLLM's AWS_ROLE_NAME and AWS_STS_ENDPOINT stand for the keys; AWS_REGION signs.
    let loaded = load(
        &bedrock(", aws_access_key_id: A, aws_secret_access_key: s"),
        &[("AWS_ROLE_NAME", "r2"), ("AWS_STS_ENDPOINT", "http://127.0.0.1:9/sts"), ("AWS_REGION", "ap-south-1")],
    )
    .unwrap();
    let AwsSource::AssumeRole { role, .. } = aws_source(&loaded) else { panic!("not a role") };
    assert_eq!((role.role_arn.as_str(), role.sts_endpoint.as_str()), ("r2", "http://127.0.0.1:9/sts"));
    assert_eq!(role.sts_region, "ap-south-1");
}

#[test]
fn a_web_identity_token_is_exchanged_for_the_role() {
    let loaded = load(
        &bedrock(", aws_role_name: r, aws_session_name: s, aws_web_identity_token: os.environ/OIDC"),
        &[("OIDC", "eyJ.oidc.token")],
    )
    .unwrap();
    let AwsSource::WebIdentity { token, role } = aws_source(&loaded) else { panic!("not web identity") };
    assert_eq!(token, &WebIdentityToken::Value("eyJ.oidc.token".into()));
    assert_eq!(role.session_name.as_deref(), Some("s"));
    // EKS's pair: the file, read again at each refresh.
    let eks = [
        ("AWS_WEB_IDENTITY_TOKEN_FILE", "/var/run/secrets/eks.amazonaws.com/serviceaccount/token"),
        ("AWS_ROLE_ARN", "arn:aws:iam::1:role/eks"),
        ("AWS_ROLE_SESSION_NAME", "pod-1"),
    ];
    let loaded = load(&bedrock(""), &eks).unwrap();
    let AwsSource::WebIdentity { token, role } = aws_source(&loaded) else { panic!("not web identity") };
    assert_eq!(token, &WebIdentityToken::File(eks[0].1.into()));
    assert_eq!((role.role_arn.as_str(), role.session_name.as_deref()), ("arn:aws:iam::1:role/eks", Some("pod-1")));
    assert!(warnings(&loaded).is_empty(), "{:?}", warnings(&loaded));
}

#[test]
fn a_profile_gives_its_keys_or_the_role_it_assumes() {
    let dir = dir("profile");
    let credentials = dir.join("credentials");
    std::fs::write(&credentials, "[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key = d\n\n[dev]\naws_access_key_id = AKIDDEV\naws_secret_access_key = dev-secret\naws_session_token = dev-token\n").unwrap();
    let config = dir.join("config");
    std::fs::write(&config, "[profile ops]\nrole_arn = arn:aws:iam::1:role/ops\nsource_profile = dev\nrole_session_name = ops-session\n\n[profile lonely]\nrole_arn = arn:aws:iam::1:role/x\n").unwrap();
    let files =
        [("AWS_SHARED_CREDENTIALS_FILE", credentials.to_str().unwrap()), ("AWS_CONFIG_FILE", config.to_str().unwrap())];
    let loaded = load(&bedrock(", aws_profile_name: dev"), &files).unwrap();
    let UpstreamAuth::AwsSigV4(keys) = auth(&loaded) else { panic!("not fixed keys: {:?}", auth(&loaded)) };
    assert_eq!((keys.access_key_id.as_str(), keys.session_token.as_deref()), ("AKIDDEV", Some("dev-token")));
    let loaded = load(&bedrock(", aws_profile_name: ops"), &files).unwrap();
    let AwsSource::AssumeRole { base, role } = aws_source(&loaded) else { panic!("not a role") };
    assert!(matches!(&**base, AwsSource::Keys(k) if k.access_key_id == "AKIDDEV"));
    assert_eq!(
        (role.role_arn.as_str(), role.session_name.as_deref()),
        ("arn:aws:iam::1:role/ops", Some("ops-session"))
    );
    // With no keys at all, the default chain takes the `default` profile (or AWS_PROFILE's).
    let loaded = load(&bedrock(""), &files).unwrap();
    assert!(matches!(auth(&loaded), UpstreamAuth::AwsSigV4(k) if k.access_key_id == "AKIDDEFAULT"));
    let with_profile = [files[0], files[1], ("AWS_PROFILE", "dev")];
    assert!(
        matches!(auth(&load(&bedrock(""), &with_profile).unwrap()), UpstreamAuth::AwsSigV4(k) if k.access_key_id == "AKIDDEV")
    );
    // A profile that is not there, or cannot give credentials, is an error at the key.
    let errors = load(&bedrock(", aws_profile_name: nope"), &files).err().unwrap();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].starts_with("model_list[0].litellm_params.aws_profile_name: profile \"nope\": no such profile (in "),
        "{errors:?}"
    );
    // A role's base named by credential_source.
    std::fs::write(&config, "[profile ec2]\nrole_arn = arn:aws:iam::1:role/a\ncredential_source = Ec2InstanceMetadata\n[profile env]\nrole_arn = arn:aws:iam::1:role/b\ncredential_source = Environment\n[profile lonely]\nrole_arn = arn:aws:iam::1:role/x\n").unwrap();
    let imds = [files[0], files[1], ("AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://127.0.0.1:9")];
    let loaded = load(&bedrock(", aws_profile_name: ec2"), &imds).unwrap();
    let AwsSource::AssumeRole { base, .. } = aws_source(&loaded) else { panic!("not a role") };
    assert_eq!(&**base, &AwsSource::InstanceMetadata { endpoint: "http://127.0.0.1:9".into() });
    let errors = load(&bedrock(", aws_profile_name: env"), &files).err().unwrap();
    assert!(
        errors[0].contains("credential_source Environment, but AWS_ACCESS_KEY_ID or AWS_SECRET_ACCESS_KEY is not set"),
        "{errors:?}"
    );
    let errors = load(&bedrock(", aws_profile_name: lonely"), &files).err().unwrap();
    assert!(
        errors[0].contains("role_arn without source_profile, credential_source or web_identity_token_file"),
        "{errors:?}"
    );
}

#[test]
fn with_no_keys_the_default_chain_ends_at_the_container_or_instance_metadata() {
    let container = [
        ("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/v2/credentials/abc"),
        ("AWS_CONTAINER_AUTHORIZATION_TOKEN", "ecs-auth"),
    ];
    let loaded = load(&bedrock(""), &container).unwrap();
    assert_eq!(
        aws_source(&loaded),
        &AwsSource::Container {
            url: "http://169.254.170.2/v2/credentials/abc".into(),
            authorization: Some("ecs-auth".into()),
            authorization_file: None,
        }
    );
    let loaded = load(&bedrock(""), &[("AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://127.0.0.1:9")]).unwrap();
    assert_eq!(aws_source(&loaded), &AwsSource::InstanceMetadata { endpoint: "http://127.0.0.1:9".into() });
    // Started, not refused: the warning says where they are asked and what happens until then.
    let warned = warnings(&loaded);
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert!(
        warned[0].starts_with("model_list[0].litellm_params: no AWS credentials in the entry, the environment, ")
            && warned[0].contains("EC2's instance metadata service at http://127.0.0.1:9")
            && warned[0].contains("requests fail until it answers"),
        "{warned:?}"
    );
    // A role with no keys is assumed with what the chain finds.
    let loaded = load(&bedrock(", aws_role_name: r"), &container).unwrap();
    let AwsSource::AssumeRole { base, .. } = aws_source(&loaded) else { panic!("not a role") };
    assert!(matches!(&**base, AwsSource::Container { .. }));
}

#[test]
fn half_a_key_pair_and_a_bad_sts_endpoint_are_errors_at_their_keys() {
    let errors = load(&bedrock(", aws_secret_access_key: s"), &[]).err().unwrap();
    assert_eq!(errors, ["model_list[0].litellm_params.aws_access_key_id: aws_secret_access_key is given without aws_access_key_id (or AWS_ACCESS_KEY_ID)"]);
    // The entry's half completed by the environment is a pair; half a pair only in the
    // environment is passed over for the rest of the chain.
    let loaded = load(&bedrock(", aws_secret_access_key: s"), &[("AWS_ACCESS_KEY_ID", "AKIDENV")]).unwrap();
    assert!(matches!(auth(&loaded), UpstreamAuth::AwsSigV4(k) if k.access_key_id == "AKIDENV"));
    let container = [("AWS_SECRET_ACCESS_KEY", "s"), ("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://127.0.0.1:9/c")];
    assert!(matches!(aws_source(&load(&bedrock(""), &container).unwrap()), AwsSource::Container { .. }));
    let errors = load(&bedrock(", aws_access_key_id: A, aws_secret_access_key: s, aws_role_name: r, aws_sts_endpoint: \"sts.amazonaws.com\""), &[]).err().unwrap();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].starts_with("model_list[0].litellm_params.aws_sts_endpoint: expected an http:// or https:// URL"),
        "{errors:?}"
    );
    // On another provider the AWS keys are ignored with a warning.
    let yaml =
        "model_list:\n  - model_name: gpt\n    litellm_params: {model: openai/gpt-4o, api_key: k, aws_role_name: r}\n";
    let warned = warnings(&load(yaml, &[]).unwrap());
    assert_eq!(
        warned,
        ["model_list[0].litellm_params.aws_role_name: ignored: only bedrock deployments read it (this one is openai)"]
    );
}

// ---------------------------------------------------------------- Vertex AI

fn vertex(params: &str) -> String {
    format!("model_list:\n  - model_name: pro\n    litellm_params: {{model: vertex_ai/gemini-2.5-pro{params}}}\n")
}

const USER_FILE: &str = r#"{"type": "authorized_user", "client_id": "123.apps.googleusercontent.com", "client_secret": "user-secret", "refresh_token": "1//refresh", "quota_project_id": "quota"}"#;

fn base(loaded: &Loaded) -> &str {
    &loaded.config.deployments[0].api_base
}

#[test]
fn google_application_credentials_may_name_a_users_file() {
    let dir = dir("adc-user");
    let file = dir.join("adc.json");
    std::fs::write(&file, USER_FILE).unwrap();
    let vars = [("GOOGLE_APPLICATION_CREDENTIALS", file.to_str().unwrap()), ("GOOGLE_CLOUD_PROJECT", "from-env")];
    let loaded = load(&vertex(""), &vars).unwrap();
    let UpstreamAuth::GoogleAuthorizedUser(user) = auth(&loaded) else { panic!("not a user: {:?}", auth(&loaded)) };
    assert_eq!(
        (user.refresh_token.as_str(), user.token_uri.as_str()),
        ("1//refresh", "https://oauth2.googleapis.com/token")
    );
    assert_eq!(
        base(&loaded),
        "https://us-central1-aiplatform.googleapis.com/v1/projects/from-env/locations/us-central1/publishers/google"
    );
    assert!(warnings(&loaded).is_empty(), "{:?}", warnings(&loaded));
    // A kind of file not served is an error naming where it came from.
    std::fs::write(&file, r#"{"type": "external_account", "audience": "x"}"#).unwrap();
    let errors = load(&vertex(""), &vars).err().unwrap();
    assert_eq!(errors.len(), 1);
    assert!(
        errors[0].starts_with(
            "GOOGLE_APPLICATION_CREDENTIALS (environment): credentials of type \"external_account\" are not supported"
        ),
        "{errors:?}"
    );
}

#[test]
fn gclouds_well_known_file_is_found_under_cloudsdk_config_or_home() {
    let dir = dir("adc-gcloud");
    std::fs::create_dir_all(dir.join(".config/gcloud")).unwrap();
    std::fs::write(dir.join(".config/gcloud/application_default_credentials.json"), USER_FILE).unwrap();
    let loaded = load(&vertex(", vertex_project: p1"), &[("HOME", dir.to_str().unwrap())]).unwrap();
    assert!(
        matches!(auth(&loaded), UpstreamAuth::GoogleAuthorizedUser(u) if u.client_id == "123.apps.googleusercontent.com")
    );
    // Without a project written, gcloud's active configuration gives it (`gcloud config set project`).
    std::fs::create_dir_all(dir.join(".config/gcloud/configurations")).unwrap();
    std::fs::write(dir.join(".config/gcloud/active_config"), "work\n").unwrap();
    std::fs::write(
        dir.join(".config/gcloud/configurations/config_work"),
        "[core]\naccount = me@example.com\nproject = from-gcloud\n",
    )
    .unwrap();
    let loaded = load(&vertex(""), &[("HOME", dir.to_str().unwrap())]).unwrap();
    assert_eq!(
        base(&loaded),
        "https://us-central1-aiplatform.googleapis.com/v1/projects/from-gcloud/locations/us-central1/publishers/google"
    );
    let sdk = dir.join("sdk");
    std::fs::create_dir_all(&sdk).unwrap();
    let account = include_str!("../../gateway/src/credentials/testdata/test-only-service-account.json");
    std::fs::write(sdk.join("application_default_credentials.json"), account).unwrap();
    let loaded = load(
        &vertex(", vertex_project: p1"),
        &[("HOME", dir.to_str().unwrap()), ("CLOUDSDK_CONFIG", sdk.to_str().unwrap())],
    )
    .unwrap();
    assert!(matches!(auth(&loaded), UpstreamAuth::GoogleServiceAccount(_)), "{:?}", auth(&loaded));
}

#[test]
fn with_nothing_found_the_metadata_server_is_asked_with_a_warning() {
    let loaded = load(&vertex(", vertex_project: p1"), &[("GCE_METADATA_HOST", "127.0.0.1:9")]).unwrap();
    assert!(matches!(auth(&loaded), UpstreamAuth::GoogleMetadata(m) if m.host == "127.0.0.1:9"), "{:?}", auth(&loaded));
    let warned = warnings(&loaded);
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert!(
        warned[0].starts_with("model_list[0].litellm_params.vertex_credentials: no credentials given (vertex_credentials, VERTEXAI_CREDENTIALS, GOOGLE_APPLICATION_CREDENTIALS, gcloud's application_default_credentials.json): the token is asked of the metadata server at 127.0.0.1:9"),
        "{warned:?}"
    );
    // Without a project anywhere, and no metadata server to say it, the entry cannot be placed.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().to_string();
    let errors = load(&vertex(""), &[("GCE_METADATA_HOST", &closed)]).err().unwrap();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].starts_with("model_list[0].litellm_params.vertex_project: required for vertex_ai: vertex_project (or VERTEXAI_PROJECT), a project_id in the credentials or GOOGLE_CLOUD_PROJECT; the metadata server at"),
        "{errors:?}"
    );
    // A user's credentials without a project do not ask the metadata server: the error says
    // what to give.
    let dir = dir("adc-no-project");
    let file = dir.join("adc.json");
    std::fs::write(&file, USER_FILE).unwrap();
    let vars = [("GOOGLE_APPLICATION_CREDENTIALS", file.to_str().unwrap()), ("GCE_METADATA_HOST", closed.as_str())];
    let errors = load(&vertex(""), &vars).err().unwrap();
    assert_eq!(
        errors,
        ["model_list[0].litellm_params.vertex_project: required for vertex_ai: vertex_project (or VERTEXAI_PROJECT), a project_id in the credentials or GOOGLE_CLOUD_PROJECT"]
    );
}
