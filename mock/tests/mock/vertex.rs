//! Vertex AI over TCP: Google's token endpoint with service-account JWTs signed by the test key
//! in `tests/testdata/vertex-service-account.json` (verified by the mock), the bearer-token
//! checks with Google's bodies, Gemini and Claude (`rawPredict`) on Vertex, and faults.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use pointwork_mock::{MockOptions, MockServer};
use ring::rand::SystemRandom;
use ring::signature::{RsaKeyPair, RSA_PKCS1_SHA256};
use serde_json::{json, Value};

use crate::binary::{first_line, KillOnDrop, BINARY};
use crate::client::{Client, Response};
use crate::gemini::sse_events;
use crate::start;

const ACCOUNT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/testdata/vertex-service-account.json");
const SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";
const GEMINI: &str = "/v1/projects/mock-project/locations/us-central1/publishers/google/models/gemini-2.0-flash";
const CLAUDE: &str =
    "/v1/projects/mock-project/locations/us-east5/publishers/anthropic/models/claude-sonnet-4@20250514";

fn account() -> Value {
    serde_json::from_str(&std::fs::read_to_string(ACCOUNT).expect("fixture")).expect("JSON")
}

fn key() -> RsaKeyPair {
    let pem = account()["private_key"].as_str().expect("private_key").to_owned();
    let body: String = pem.lines().filter(|line| !line.starts_with("-----")).collect();
    RsaKeyPair::from_pkcs8(&STANDARD.decode(body).expect("base64")).expect("PKCS#8")
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).expect("clock").as_secs()
}

/// A JWT as google-auth makes it: RS256 over `header.claims`, signed with the test key.
fn jwt(claims: &Value) -> String {
    let header = json!({"alg": "RS256", "typ": "JWT", "kid": account()["private_key_id"]});
    let signed =
        format!("{}.{}", URL_SAFE_NO_PAD.encode(header.to_string()), URL_SAFE_NO_PAD.encode(claims.to_string()));
    let key = key();
    let mut signature = vec![0; key.public().modulus_len()];
    key.sign(&RSA_PKCS1_SHA256, &SystemRandom::new(), signed.as_bytes(), &mut signature).expect("signs");
    format!("{signed}.{}", URL_SAFE_NO_PAD.encode(signature))
}

fn claims(scope: &str) -> Value {
    let now = now();
    json!({"iss": account()["client_email"], "scope": scope, "aud": account()["token_uri"], "iat": now, "exp": now + 3600})
}

fn token_request(client: &mut Client, assertion: &str) -> Response {
    let form = format!("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion={assertion}");
    client.request("POST", "/token", &[("Content-Type", "application/x-www-form-urlencoded")], form.as_bytes())
}

/// A bearer token for `scope` from the mock's token endpoint.
fn bearer(client: &mut Client, scope: &str) -> String {
    let answer = token_request(client, &jwt(&claims(scope)));
    assert_eq!(answer.status, 200, "{}", String::from_utf8_lossy(&answer.body));
    format!("Bearer {}", answer.json()["access_token"].as_str().expect("token"))
}

fn verifying(options: MockOptions) -> MockServer {
    start(MockOptions { name: "vertex".into(), vertex_service_account: Some(PathBuf::from(ACCOUNT)), ..options })
}

fn hello() -> Value {
    json!({"contents": [{"role": "user", "parts": [{"text": "Say hello."}]}]})
}

fn claude(stream: bool) -> Value {
    json!({"anthropic_version": "vertex-2023-10-16", "max_tokens": 64, "stream": stream,
           "messages": [{"role": "user", "content": "Say hello."}]})
}

fn post(client: &mut Client, path: &str, headers: &[(&str, &str)], body: &Value) -> Response {
    client.request("POST", path, headers, body.to_string().as_bytes())
}

#[test]
fn a_signed_jwt_buys_a_token_that_vertex_accepts() {
    let server = verifying(MockOptions::default());
    let mut client = Client::connect(server.addr());
    let issued = token_request(&mut client, &jwt(&claims(SCOPE)));
    assert_eq!(issued.status, 200);
    let issued = issued.json();
    assert_eq!((issued["expires_in"].as_u64(), issued["token_type"].as_str()), (Some(3599), Some("Bearer")));
    assert!(issued["access_token"].as_str().is_some_and(|token| token.starts_with("ya29.mock-")));
    let bearer = format!("Bearer {}", issued["access_token"].as_str().expect("token"));
    let auth = ("Authorization", bearer.as_str());

    let whole = post(&mut client, &format!("{GEMINI}:generateContent"), &[auth], &hello());
    assert_eq!(whole.status, 200, "{}", String::from_utf8_lossy(&whole.body));
    assert_eq!(whole.json()["candidates"][0]["content"]["parts"][0]["text"], "Hello from mock vertex");
    assert_eq!(whole.json()["modelVersion"], "gemini-2.0-flash");
    let beta = GEMINI.replace("/v1/", "/v1beta1/");
    let streamed =
        post(&mut client, &format!("{beta}:streamGenerateContent?alt=sse"), &[auth, ("x-mock-chunks", "2")], &hello());
    let events = sse_events(&streamed.body);
    assert_eq!(events.len(), 2);
    assert_eq!(events[1]["candidates"][0]["finishReason"], "STOP");

    let answered = post(&mut client, &format!("{CLAUDE}:rawPredict"), &[auth], &claude(false));
    assert_eq!(answered.status, 200);
    assert!(answered.header("request-id").is_some());
    let message = answered.json();
    assert_eq!(
        (message["type"].as_str(), message["model"].as_str()),
        (Some("message"), Some("claude-sonnet-4@20250514"))
    );
    assert_eq!(message["content"][0]["text"], "Hello from mock vertex");
    let streamed = post(&mut client, &format!("{CLAUDE}:streamRawPredict"), &[auth], &claude(false));
    assert_eq!(streamed.header("content-type"), Some("text/event-stream"));
    let names: Vec<String> = String::from_utf8_lossy(&streamed.body)
        .lines()
        .filter_map(|line| line.strip_prefix("event: ").map(str::to_owned))
        .collect();
    assert_eq!(names.first().map(String::as_str), Some("message_start"));
    assert_eq!(names.last().map(String::as_str), Some("message_stop"));

    let recorded = client.get("/mock/requests").json();
    assert_eq!(recorded[0]["path"], "/token");
    assert!(recorded[0]["body"].as_str().is_some_and(|body| body.contains("assertion=")));
}

#[test]
fn token_endpoint_refusals_are_googles() {
    let server = verifying(MockOptions::default());
    let mut client = Client::connect(server.addr());
    let refusal = |response: Response| (response.status, response.json());
    let grant = |description: &str| json!({"error": "invalid_grant", "error_description": description});

    let good = jwt(&claims(SCOPE));
    let mut parts: Vec<String> = good.split('.').map(str::to_owned).collect();
    let mut tampered = claims(SCOPE);
    tampered["iss"] = json!("someone-else@mock-project.iam.gserviceaccount.com");
    parts[1] = URL_SAFE_NO_PAD.encode(tampered.to_string());
    assert_eq!(refusal(token_request(&mut client, &parts.join("."))), (400, grant("Invalid grant: account not found")));
    let mut scope_swapped = claims(SCOPE);
    scope_swapped["scope"] = json!("https://www.googleapis.com/auth/cloud-platform.read-only");
    parts[1] = URL_SAFE_NO_PAD.encode(scope_swapped.to_string());
    assert_eq!(refusal(token_request(&mut client, &parts.join("."))), (400, grant("Invalid JWT Signature.")));

    let mut long = claims(SCOPE);
    long["exp"] = json!(now() + 7200);
    let (status, body) = refusal(token_request(&mut client, &jwt(&long)));
    assert_eq!((status, body["error"].as_str()), (400, Some("invalid_grant")));
    assert!(body["error_description"]
        .as_str()
        .is_some_and(|d| d.starts_with("Invalid JWT: Token must be a short-lived token (60 minutes)")));
    let mut elsewhere = claims(SCOPE);
    elsewhere["aud"] = json!("https://www.googleapis.com/oauth2/v4/token");
    assert_eq!(
        refusal(token_request(&mut client, &jwt(&elsewhere))),
        (400, grant("Invalid JWT: Failed audience check. The right audience is https://oauth2.googleapis.com/token"))
    );
    let wrong_grant = client.request("POST", "/token", &[], b"grant_type=client_credentials&assertion=x");
    assert_eq!(
        refusal(wrong_grant),
        (
            400,
            json!({"error": "unsupported_grant_type", "error_description": "Invalid grant_type: client_credentials"})
        )
    );
}

#[test]
fn bearer_tokens_and_projects_are_checked_with_googles_bodies() {
    let server = verifying(MockOptions { vertex_project: Some("mock-project".into()), ..MockOptions::default() });
    let mut client = Client::connect(server.addr());
    let path = format!("{GEMINI}:generateContent");
    let unauthenticated = |message: &str, reason: &str| {
        json!({"error": {"code": 401, "message": message, "status": "UNAUTHENTICATED", "details": [
            {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason, "domain": "googleapis.com",
             "metadata": {"service": "aiplatform.googleapis.com"}}]}})
    };
    let missing = post(&mut client, &path, &[], &hello());
    assert_eq!(
        (missing.status, missing.json()),
        (401, unauthenticated("Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.", "CREDENTIALS_MISSING"))
    );
    let invalid = "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.";
    let unknown = post(&mut client, &path, &[("Authorization", "Bearer ya29.made-up")], &hello());
    assert_eq!((unknown.status, unknown.json()), (401, unauthenticated(invalid, "ACCESS_TOKEN_TYPE_UNSUPPORTED")));
    let api_key = post(&mut client, &path, &[("x-goog-api-key", "AIza")], &hello());
    assert_eq!(api_key.status, 401);

    let narrow = bearer(&mut client, "https://www.googleapis.com/auth/userinfo.email");
    let scoped = post(&mut client, &path, &[("Authorization", &narrow)], &hello());
    assert_eq!(
        (scoped.status, scoped.json()["error"]["message"].as_str()),
        (403, Some("Request had insufficient authentication scopes."))
    );

    let good = bearer(&mut client, &format!("{SCOPE} https://www.googleapis.com/auth/userinfo.email"));
    let other_project = path.replace("mock-project", "other-project");
    let denied = post(&mut client, &other_project, &[("Authorization", &good)], &hello());
    assert_eq!(denied.status, 403);
    assert_eq!(denied.json()["error"]["status"], "PERMISSION_DENIED");
    assert!(denied.json()["error"]["message"].as_str().is_some_and(|m| m.starts_with("Permission 'aiplatform.endpoints.predict' denied on resource '//aiplatform.googleapis.com/projects/other-project/")));
    assert_eq!(post(&mut client, &path, &[("Authorization", &good)], &hello()).status, 200);

    let unversioned = json!({"max_tokens": 64, "messages": [{"role": "user", "content": "hi"}]});
    let refused = post(&mut client, &format!("{CLAUDE}:rawPredict"), &[("Authorization", &good)], &unversioned);
    assert_eq!(refused.status, 400);
    assert_eq!(
        refused.json()["error"],
        json!({"type": "invalid_request_error", "message": "anthropic_version: Field required"})
    );

    let expiring = verifying(MockOptions { vertex_token_ttl_secs: 0, ..MockOptions::default() });
    let mut client = Client::connect(expiring.addr());
    let issued = token_request(&mut client, &jwt(&claims(SCOPE))).json();
    assert_eq!(issued["expires_in"], 0);
    let stale = format!("Bearer {}", issued["access_token"].as_str().expect("token"));
    let expired = post(&mut client, &path, &[("Authorization", &stale)], &hello());
    assert_eq!((expired.status, expired.json()), (401, unauthenticated(invalid, "ACCESS_TOKEN_EXPIRED")));
}

#[test]
fn faults_answer_in_vertexs_and_anthropics_shapes() {
    let server = verifying(MockOptions::default());
    let mut client = Client::connect(server.addr());
    let token = bearer(&mut client, SCOPE);
    let auth = ("Authorization", token.as_str());
    let limited =
        post(&mut client, &format!("{GEMINI}:generateContent"), &[auth, ("x-mock-fault", "status:429")], &hello());
    assert_eq!(
        (limited.status, limited.json()),
        (
            429,
            json!({"error": {"code": 429, "message": "Resource exhausted. Please try again later. Please refer to https://cloud.google.com/vertex-ai/generative-ai/docs/error-code-429 for more details.", "status": "RESOURCE_EXHAUSTED"}})
        )
    );
    let claude_limited =
        post(&mut client, &format!("{CLAUDE}:rawPredict"), &[auth, ("x-mock-fault", "status:429")], &claude(false));
    assert_eq!(
        (claude_limited.status, claude_limited.json()["error"]["type"].as_str()),
        (429, Some("rate_limit_error"))
    );
    let overloaded =
        post(&mut client, &format!("{CLAUDE}:rawPredict"), &[auth, ("x-mock-fault", "status:529")], &claude(false));
    assert_eq!(overloaded.json()["error"]["type"], "overloaded_error");
    // The token is checked before any fault.
    let unauthenticated =
        post(&mut client, &format!("{GEMINI}:generateContent"), &[("x-mock-fault", "status:500")], &hello());
    assert_eq!(unauthenticated.status, 401);
}

#[test]
fn the_binary_takes_the_vertex_flags() {
    let child = Command::new(BINARY)
        .args(["--name", "vxbin", "--threads", "1", "--vertex-service-account", ACCOUNT])
        .args(["--vertex-project", "mock-project", "--vertex-token-ttl", "120"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run pointwork-mock");
    let mut child = KillOnDrop(child);
    let line = first_line(&mut child);
    let addr: SocketAddr = line.trim_end().rsplit("http://").next().expect("address").parse().expect("address");
    let mut client = Client::connect(addr);
    let issued = token_request(&mut client, &jwt(&claims(SCOPE))).json();
    assert_eq!(issued["expires_in"], 120);
    let token = format!("Bearer {}", issued["access_token"].as_str().expect("token"));
    assert_eq!(
        post(&mut client, &format!("{GEMINI}:generateContent"), &[("Authorization", &token)], &hello()).status,
        200
    );

    let output = Command::new(BINARY).args(["--vertex-service-account", "/nonexistent/sa.json"]).output().expect("run");
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("service account /nonexistent/sa.json"));
    let output = Command::new(BINARY).args(["--vertex-token-ttl", "soon"]).output().expect("run");
    assert_eq!(output.status.code(), Some(2));
}
