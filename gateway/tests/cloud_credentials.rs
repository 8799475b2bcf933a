//! Cloud credentials the way clouds hand them out, through the real gateway: Bedrock signed with
//! temporary keys from STS (AssumeRole signed with the base keys, web identity with the token
//! file's content), from a shared-file profile, from the container endpoint and from EC2's
//! instance metadata (IMDSv2), refreshed before they expire; Vertex AI with Application Default
//! Credentials (a service account named by `GOOGLE_APPLICATION_CREDENTIALS`, a user's refresh
//! token in gcloud's file, the GCE metadata server). pointwork-mock plays Bedrock and Vertex
//! (checking SigV4 with the temporary keys and their session token, and its own tokens);
//! `fixtures/cloud_credentials.py` plays STS, the metadata endpoints and Google's token endpoint
//! for users (recomputing AssumeRole's signature with the base keys).

mod common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::{
    addr_after_http, recorded_headers, Client, Gateway, GatewayOptions, Mock, Process, TempDir, READY_DEADLINE,
};
use serde_json::{json, Value};

const BASE_AKID: &str = "AKIDPOINTWORKBASE";
const BASE_SECRET: &str = "base/secret+key";
const TEMP_AKID: &str = "ASIAPOINTWORKTEMP";
const TEMP_SECRET: &str = "temporary/secret+key";
const TEMP_TOKEN: &str = "FQoGZXIvYXdzEPointworkSessionToken//";
const USER_FILE: &str = r#"{"type": "authorized_user", "client_id": "123.apps.googleusercontent.com", "client_secret": "user-secret", "refresh_token": "1//refresh-token"}"#;
/// How long a refresh may take to show (the refresher's schedule, a busy machine).
const REFRESHED: Duration = Duration::from_secs(20);

/// The stand-in for STS, the metadata endpoints and Google's user token endpoint.
struct Clouds {
    _process: Process,
    addr: std::net::SocketAddr,
}

impl Clouds {
    /// Temporary keys living `lifetime` seconds.
    fn start(lifetime: u64) -> Clouds {
        let config = json!({
            "base_keys": {BASE_AKID: BASE_SECRET},
            "temporary": {"AccessKeyId": TEMP_AKID, "SecretAccessKey": TEMP_SECRET, "SessionToken": TEMP_TOKEN},
            "lifetime": lifetime,
            "container_authorization": "container-auth-token",
            "google_user": {"client_id": "123.apps.googleusercontent.com", "client_secret": "user-secret", "refresh_token": "1//refresh-token"},
            "project": "project-from-metadata",
        });
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cloud_credentials.py");
        let mut command = Command::new("python3");
        command.arg("-u").arg(script).arg(config.to_string());
        let mut process = Process::spawn("cloud credentials stand-in", command);
        let line = process.wait_for_line("listening on http://", READY_DEADLINE);
        Clouds { addr: addr_after_http(&line), _process: process }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Every request it handled, of `path`.
    fn received(&self, path: &str) -> Vec<Value> {
        let all = Client::connect(self.addr).request("GET", "/received", &[], b"").json();
        all.as_array().unwrap().iter().filter(|r| r["path"] == path).cloned().collect()
    }
}

/// pointwork-mock as Bedrock, knowing only the temporary keys and their session token.
fn bedrock_knowing_the_temporary_keys() -> Mock {
    Mock::start(
        "bedrock",
        &[
            "--aws-access-key-id",
            TEMP_AKID,
            "--aws-secret-access-key",
            TEMP_SECRET,
            "--aws-session-token",
            TEMP_TOKEN,
            "--aws-region",
            "us-east-1",
        ],
    )
}

fn bedrock_entry(mock: &Mock, params: &str) -> String {
    format!(
        "model_list:\n  - model_name: claude\n    litellm_params: {{model: bedrock/anthropic.claude-3-haiku-20240307-v1:0, api_base: \"http://{}\", aws_region_name: us-east-1{params}}}\n",
        mock.addr
    )
}

fn start(yaml: &str, home: &TempDir, env: &[(&str, &str)]) -> Gateway {
    let mut vars = vec![("HOME", home.path().to_str().unwrap())];
    vars.extend_from_slice(env);
    Gateway::start_with(yaml, GatewayOptions { env: vars, ..GatewayOptions::default() })
}

fn chat(gateway: &Gateway, model: &str) -> common::Response {
    let body = json!({"model": model, "messages": [{"role": "user", "content": "Say hello."}]});
    gateway.client().request(
        "POST",
        "/v1/chat/completions",
        &[("content-type", "application/json")],
        body.to_string().as_bytes(),
    )
}

/// The Bedrock call the mock took last was signed with the temporary keys and carried their
/// session token (the mock verified the signature, or the call would have failed).
fn assert_signed_with_temporary_keys(mock: &Mock) {
    let sent = mock.requests().pop().unwrap();
    assert_eq!(sent["path"], "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse");
    let authorization = recorded_headers(&sent, "authorization");
    assert!(authorization[0].starts_with(&format!("AWS4-HMAC-SHA256 Credential={TEMP_AKID}/")), "{authorization:?}");
    assert!(authorization[0].contains("x-amz-security-token"), "{authorization:?}");
    assert_eq!(recorded_headers(&sent, "x-amz-security-token"), [TEMP_TOKEN]);
}

#[test]
fn an_assumed_roles_keys_sign_bedrock_calls_and_are_refreshed_before_they_expire() {
    let clouds = Clouds::start(3);
    let mock = bedrock_knowing_the_temporary_keys();
    let params = format!(
        ", aws_access_key_id: {BASE_AKID}, aws_secret_access_key: \"{BASE_SECRET}\", aws_role_name: \"arn:aws:iam::123456789012:role/bedrock\", aws_session_name: pointwork-test, aws_external_id: ext-7, aws_sts_endpoint: \"{}\"",
        clouds.url("/sts")
    );
    let home = TempDir::new("home");
    let gateway = start(&bedrock_entry(&mock, &params), &home, &[]);
    let r = chat(&gateway, "claude");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_signed_with_temporary_keys(&mock);
    // The AssumeRole the stand-in took: signed with the base keys (it recomputed the signature
    // with them), for STS in the region, naming the role, session and external id.
    let assumed = clouds.received("/sts");
    let first = &assumed[0];
    assert_eq!(first["verdict"], "ok", "{first}");
    assert_eq!(first["form"]["Action"], "AssumeRole");
    assert_eq!(first["form"]["Version"], "2011-06-15");
    assert_eq!(first["form"]["RoleArn"], "arn:aws:iam::123456789012:role/bedrock");
    assert_eq!(first["form"]["RoleSessionName"], "pointwork-test");
    assert_eq!(first["form"]["ExternalId"], "ext-7");
    let authorization = first["headers"]["authorization"].as_str().unwrap();
    assert!(authorization.starts_with(&format!("AWS4-HMAC-SHA256 Credential={BASE_AKID}/")), "{authorization}");
    assert!(authorization.contains("/us-east-1/sts/aws4_request"), "{authorization}");
    // Keys living three seconds are fetched again by the refresher, with no request asking.
    common::wait_until(REFRESHED, "a second AssumeRole", || clouds.received("/sts").len() >= 2);
    assert!(clouds.received("/sts").iter().all(|r| r["verdict"] == "ok"));
    let r = chat(&gateway, "claude");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_signed_with_temporary_keys(&mock);
}

#[test]
fn a_wrong_base_secret_fails_only_that_deployments_requests_with_the_reason() {
    let clouds = Clouds::start(3600);
    let mock = bedrock_knowing_the_temporary_keys();
    let openai = Mock::start("openai", &[]);
    let params = format!(
        ", aws_access_key_id: {BASE_AKID}, aws_secret_access_key: wrong, aws_role_name: r, aws_sts_endpoint: \"{}\"",
        clouds.url("/sts")
    );
    let yaml = format!(
        "{}  - model_name: gpt\n    litellm_params: {{model: openai/gpt-4o, api_base: \"{}\", api_key: k}}\n",
        bedrock_entry(&mock, &params),
        openai.api_base()
    );
    let home = TempDir::new("home");
    let gateway = start(&yaml, &home, &[]);
    assert_eq!(clouds.received("/sts")[0]["verdict"], "SignatureDoesNotMatch");
    let r = chat(&gateway, "claude");
    assert_eq!(r.status, 503, "{}", r.text());
    let message = r.json()["error"]["message"].as_str().unwrap().to_string();
    assert!(message.contains("no usable credential") && message.contains("STS AssumeRole at"), "{message}");
    assert!(message.contains("HTTP 403"), "{message}");
    assert_eq!(mock.request_count(), 0);
    assert_eq!(chat(&gateway, "gpt").status, 200);
}

#[test]
fn eks_web_identity_sends_the_token_files_content_read_again_at_each_refresh() {
    let clouds = Clouds::start(3);
    let mock = bedrock_knowing_the_temporary_keys();
    let home = TempDir::new("home");
    let token_file = home.write("token", "eyJ.first-oidc-token\n");
    let sts = clouds.url("/sts");
    let env = [
        ("AWS_WEB_IDENTITY_TOKEN_FILE", token_file.to_str().unwrap()),
        ("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/eks-pod"),
        ("AWS_ROLE_SESSION_NAME", "pod-session"),
        ("AWS_STS_ENDPOINT", sts.as_str()),
    ];
    let gateway = start(&bedrock_entry(&mock, ""), &home, &env);
    let r = chat(&gateway, "claude");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_signed_with_temporary_keys(&mock);
    let first = &clouds.received("/sts")[0];
    assert_eq!(first["form"]["Action"], "AssumeRoleWithWebIdentity");
    assert_eq!(first["form"]["WebIdentityToken"], "eyJ.first-oidc-token");
    assert_eq!(first["form"]["RoleArn"], "arn:aws:iam::123456789012:role/eks-pod");
    assert_eq!(first["form"]["RoleSessionName"], "pod-session");
    assert!(first["headers"].get("authorization").is_none(), "web identity is not signed: {first}");
    // Kubernetes rotates the file; the next refresh sends what it holds then.
    home.write("token", "eyJ.rotated-oidc-token\n");
    common::wait_until(REFRESHED, "an exchange of the rotated token", || {
        clouds.received("/sts").iter().any(|r| r["form"]["WebIdentityToken"] == "eyJ.rotated-oidc-token")
    });
}

#[test]
fn the_web_identity_key_of_litellm_is_exchanged_for_its_role() {
    let clouds = Clouds::start(3600);
    let mock = bedrock_knowing_the_temporary_keys();
    let params = format!(
        ", aws_role_name: arn:aws:iam::1:role/r, aws_session_name: s, aws_web_identity_token: os.environ/OIDC_TOKEN, aws_sts_endpoint: \"{}\"",
        clouds.url("/sts")
    );
    let home = TempDir::new("home");
    let gateway = start(&bedrock_entry(&mock, &params), &home, &[("OIDC_TOKEN", "eyJ.env-token")]);
    assert_eq!(chat(&gateway, "claude").status, 200);
    assert_signed_with_temporary_keys(&mock);
    assert_eq!(clouds.received("/sts")[0]["form"]["WebIdentityToken"], "eyJ.env-token");
}

#[test]
fn a_profiles_keys_sign_and_a_profiles_role_is_assumed_with_its_source_profile() {
    let clouds = Clouds::start(3600);
    let mock = bedrock_knowing_the_temporary_keys();
    let home = TempDir::new("home");
    let credentials = home.write(
        "credentials",
        &format!("[temp]\naws_access_key_id = {TEMP_AKID}\naws_secret_access_key = {TEMP_SECRET}\naws_session_token = {TEMP_TOKEN}\n\n[base]\naws_access_key_id = {BASE_AKID}\naws_secret_access_key = {BASE_SECRET}\n"),
    );
    let config = home.write(
        "config",
        "[profile ops]\nrole_arn = arn:aws:iam::1:role/ops\nsource_profile = base\nrole_session_name = ops\n",
    );
    let sts = clouds.url("/sts");
    let env = [
        ("AWS_SHARED_CREDENTIALS_FILE", credentials.to_str().unwrap()),
        ("AWS_CONFIG_FILE", config.to_str().unwrap()),
        ("AWS_STS_ENDPOINT", sts.as_str()),
    ];
    let gateway = start(&bedrock_entry(&mock, ", aws_profile_name: temp"), &home, &env);
    assert_eq!(chat(&gateway, "claude").status, 200);
    assert_signed_with_temporary_keys(&mock);
    assert!(clouds.received("/sts").is_empty());
    drop(gateway);
    let gateway = start(&bedrock_entry(&mock, ", aws_profile_name: ops"), &home, &env);
    assert_eq!(chat(&gateway, "claude").status, 200);
    assert_signed_with_temporary_keys(&mock);
    let assumed = clouds.received("/sts");
    assert_eq!((&assumed[0]["verdict"], &assumed[0]["form"]["RoleSessionName"]), (&json!("ok"), &json!("ops")));
}

#[test]
fn with_no_keys_the_default_chain_asks_the_container_endpoint_or_instance_metadata() {
    let clouds = Clouds::start(3600);
    let mock = bedrock_knowing_the_temporary_keys();
    let home = TempDir::new("home");
    let container = clouds.url("/container");
    let env = [
        ("AWS_CONTAINER_CREDENTIALS_FULL_URI", container.as_str()),
        ("AWS_CONTAINER_AUTHORIZATION_TOKEN", "container-auth-token"),
    ];
    let gateway = start(&bedrock_entry(&mock, ""), &home, &env);
    assert_eq!(chat(&gateway, "claude").status, 200);
    assert_signed_with_temporary_keys(&mock);
    assert_eq!(clouds.received("/container")[0]["verdict"], "ok");
    drop(gateway);
    // IMDSv2: a session token first, then the role's name and its keys, each asked with it.
    let imds = clouds.url("");
    let gateway = start(&bedrock_entry(&mock, ""), &home, &[("AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.as_str())]);
    assert_eq!(chat(&gateway, "claude").status, 200);
    assert_signed_with_temporary_keys(&mock);
    assert_eq!(clouds.received("/latest/api/token")[0]["method"], "PUT");
    let keys = clouds.received("/latest/meta-data/iam/security-credentials/pointwork-instance-role");
    assert_eq!(keys[0]["verdict"], "ok", "{keys:?}");
    assert!(gateway.process.stderr().contains("EC2's instance metadata service at"), "{}", gateway.process.stderr());
}

#[test]
fn with_no_credential_anywhere_the_gateway_starts_and_only_those_requests_fail() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().to_string();
    let mock = bedrock_knowing_the_temporary_keys();
    let openai = Mock::start("openai", &[]);
    let yaml = format!(
        "{}  - model_name: gemini\n    litellm_params: {{model: vertex_ai/gemini-2.5-pro, vertex_project: p, api_base: \"{}\"}}\n  - model_name: gpt\n    litellm_params: {{model: openai/gpt-4o, api_base: \"{}\", api_key: k}}\n",
        bedrock_entry(&mock, ""),
        openai.api_base(),
        openai.api_base()
    );
    let home = TempDir::new("home");
    let imds = format!("http://{closed}");
    let env = [("AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.as_str()), ("GCE_METADATA_HOST", closed.as_str())];
    let gateway = start(&yaml, &home, &env);
    for (model, says) in
        [("claude", "/latest/api/token"), ("gemini", "/computeMetadata/v1/instance/service-accounts/default/token")]
    {
        let r = chat(&gateway, model);
        assert_eq!(r.status, 503, "{model}: {}", r.text());
        let message = r.json()["error"]["message"].as_str().unwrap().to_string();
        assert!(message.contains("no usable credential") && message.contains(says), "{model}: {message}");
    }
    // A Messages client gets the reason in Anthropic's error shape.
    let body = json!({"model": "claude", "max_tokens": 16, "messages": [{"role": "user", "content": "Hi"}]});
    let headers = [("content-type", "application/json"), ("anthropic-version", "2023-06-01")];
    let r = gateway.client().request("POST", "/v1/messages", &headers, body.to_string().as_bytes());
    assert_eq!(r.status, 503, "{}", r.text());
    assert_eq!(r.json()["type"], "error", "{}", r.text());
    assert!(r.json()["error"]["message"].as_str().unwrap().contains("no usable credential"), "{}", r.text());
    assert_eq!(chat(&gateway, "gpt").status, 200);
}

// ---------------------------------------------------------------- Vertex AI

#[test]
fn google_application_credentials_names_a_service_account_whose_token_uri_is_honoured() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut account: Value =
        serde_json::from_str(include_str!("../src/credentials/testdata/test-only-service-account.json")).unwrap();
    account["token_uri"] = format!("http://127.0.0.1:{port}/token").into();
    let home = TempDir::new("home");
    let file = home.write("sa.json", &account.to_string());
    let listen = format!("127.0.0.1:{port}");
    // The mock's token endpoint verifies the RS256 assertion with the account's public key.
    let mock = Mock::start(
        "vertex",
        &[
            "--listen",
            &listen,
            "--vertex-service-account",
            file.to_str().unwrap(),
            "--vertex-project",
            "pointwork-test",
        ],
    );
    let yaml = format!(
        "model_list:\n  - model_name: pro\n    litellm_params: {{model: vertex_ai/gemini-2.5-pro, api_base: \"http://{}\"}}\n",
        mock.addr
    );
    let gateway = start(&yaml, &home, &[("GOOGLE_APPLICATION_CREDENTIALS", file.to_str().unwrap())]);
    let r = chat(&gateway, "pro");
    assert_eq!(r.status, 200, "{}", r.text());
    let requests = mock.requests();
    assert_eq!(requests[0]["path"], "/token");
    let sent = requests.last().unwrap();
    // The project is the file's `project_id`.
    assert_eq!(
        sent["path"],
        "/v1/projects/pointwork-test/locations/us-central1/publishers/google/models/gemini-2.5-pro:generateContent"
    );
    assert!(recorded_headers(sent, "authorization")[0].starts_with("Bearer ya29.mock-"));
}

fn vertex_at(clouds: &Clouds, params: &str) -> String {
    format!(
        "model_list:\n  - model_name: pro\n    litellm_params: {{model: vertex_ai/gemini-2.5-pro, api_base: \"{}\"{params}}}\n",
        clouds.url("")
    )
}

#[test]
fn a_users_refresh_token_in_gclouds_file_is_exchanged_for_the_token_sent() {
    let clouds = Clouds::start(3600);
    let home = TempDir::new("home");
    let sdk = home.path().join("gcloud-config");
    std::fs::create_dir_all(&sdk).unwrap();
    let user: Value = serde_json::from_str(USER_FILE).unwrap();
    let mut user_file = user.clone();
    user_file["token_uri"] = clouds.url("/token").into();
    std::fs::write(sdk.join("application_default_credentials.json"), user_file.to_string()).unwrap();
    let env = [("CLOUDSDK_CONFIG", sdk.to_str().unwrap()), ("GOOGLE_CLOUD_PROJECT", "project-from-env")];
    let gateway = start(&vertex_at(&clouds, ""), &home, &env);
    let r = chat(&gateway, "pro");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["choices"][0]["message"]["content"], "Hello from the stand-in.");
    let grant = &clouds.received("/token")[0];
    assert_eq!(grant["verdict"], "ok", "{grant}");
    assert_eq!(grant["form"]["grant_type"], "refresh_token");
    assert_eq!(grant["form"]["refresh_token"], "1//refresh-token");
    let call = clouds.received(
        "/v1/projects/project-from-env/locations/us-central1/publishers/google/models/gemini-2.5-pro:generateContent",
    );
    assert_eq!(call[0]["headers"]["authorization"], "Bearer ya29.user-1");
}

#[test]
fn on_gce_the_metadata_server_gives_the_token_and_the_project() {
    let clouds = Clouds::start(3600);
    let home = TempDir::new("home");
    let host = clouds.addr.to_string();
    let gateway = start(&vertex_at(&clouds, ""), &home, &[("GCE_METADATA_HOST", host.as_str())]);
    let r = chat(&gateway, "pro");
    assert_eq!(r.status, 200, "{}", r.text());
    let token = &clouds.received("/computeMetadata/v1/instance/service-accounts/default/token")[0];
    assert_eq!((&token["verdict"], &token["headers"]["metadata-flavor"]), (&json!("ok"), &json!("Google")));
    let call = clouds.received(
        "/v1/projects/project-from-metadata/locations/us-central1/publishers/google/models/gemini-2.5-pro:generateContent",
    );
    assert!(call[0]["headers"]["authorization"].as_str().unwrap().starts_with("Bearer ya29.gce-"), "{call:?}");
}

#[test]
fn check_accepts_keyless_bedrock_and_vertex_entries_and_says_where_credentials_will_come_from() {
    let home = TempDir::new("home");
    let config = home.write(
        "config.yaml",
        "model_list:\n  - model_name: claude\n    litellm_params: {model: bedrock/anthropic.claude-3-haiku-20240307-v1:0}\n  - model_name: pro\n    litellm_params: {model: vertex_ai/gemini-2.5-pro, vertex_project: p}\n",
    );
    let mut command = Command::new(common::pointwork_bin());
    // Only HOME (an empty one): no cloud's variables, files or keys.
    command.args(["check", "--config"]).arg(&config).env_clear().env("HOME", home.path());
    let out = command.output().unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(said.contains("auth aws-instance-metadata") && said.contains("auth google-metadata-server"), "{said}");
    assert!(said.contains("model_list[0].litellm_params: no AWS credentials in the entry"), "{said}");
    assert!(said.contains("model_list[1].litellm_params.vertex_credentials: no credentials given"), "{said}");
}
