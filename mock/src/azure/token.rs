//! Microsoft Entra ID's token endpoint as the mock plays it, for Azure OpenAI's keyless
//! authentication: `POST /{tenant}/oauth2/v2.0/token` with a client-credentials form (a client
//! secret or a JWT client assertion) answers `{"token_type":"Bearer","expires_in":N,
//! "ext_expires_in":N,"access_token":"…"}`; the Azure routes accept exactly the tokens issued
//! here, until they expire. Refusals are Microsoft's `{"error","error_description",
//! "error_codes",…}` bodies with their `AADSTS` codes.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::json;

use crate::wire::form::parse_form;
use crate::wire::head::Method;

/// The scope a client asks for to call Azure OpenAI (Cognitive Services).
pub(crate) const COGNITIVE_SERVICES_SCOPE: &str = "https://cognitiveservices.azure.com/.default";
const COGNITIVE_SERVICES_AUDIENCE: &str = "https://cognitiveservices.azure.com";
const JWT_BEARER: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// Tokens issued and how long they live.
#[derive(Debug)]
pub(crate) struct Entra {
    ttl_secs: u64,
    /// When set, the only client secret accepted (`--azure-client-secret`); else any non-empty.
    client_secret: Option<String>,
    /// Token → (expiry, issued for Cognitive Services).
    issued: Mutex<HashMap<String, (Instant, bool)>>,
    count: AtomicU64,
}

/// What the Azure routes make of a bearer token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TokenCheck {
    Valid,
    /// Never issued here, expired, or issued for another audience: Azure's 401.
    Refused,
}

impl Entra {
    pub(crate) fn new(ttl_secs: u64, client_secret: Option<String>) -> Self {
        Entra { ttl_secs, client_secret, issued: Mutex::new(HashMap::new()), count: AtomicU64::new(0) }
    }

    pub(crate) fn check(&self, token: &str) -> TokenCheck {
        let issued = self.issued.lock().unwrap_or_else(PoisonError::into_inner);
        match issued.get(token) {
            Some(&(expiry, true)) if Instant::now() < expiry => TokenCheck::Valid,
            _ => TokenCheck::Refused,
        }
    }

    /// Answers a request to `/{tenant}/oauth2/v2.0/token`: status and JSON body.
    pub(crate) fn token_request(&self, method: Method, tenant: &str, body: &[u8]) -> (u16, Vec<u8>) {
        if method != Method::Post {
            return refusal(
                400,
                "invalid_request",
                900561,
                "The endpoint only accepts POST requests. Received a GET request.",
            );
        }
        let form = parse_form(body);
        let field = |name: &str| form.iter().rev().find(|(key, _)| key == name).map(|(_, value)| value.as_str());
        let missing = |name: &str| {
            let message = format!("The request body must contain the following parameter: '{name}'.");
            refusal(400, "invalid_request", 900144, &message)
        };
        let Some(grant_type) = field("grant_type").filter(|value| !value.is_empty()) else {
            return missing("grant_type");
        };
        if grant_type != "client_credentials" {
            let message = format!("The app requested an unsupported grant type '{grant_type}'.");
            return refusal(400, "unsupported_grant_type", 70003, &message);
        }
        let Some(client_id) = field("client_id").filter(|value| !value.is_empty()) else {
            return missing("client_id");
        };
        let Some(scope) = field("scope").filter(|value| !value.is_empty()) else {
            return missing("scope");
        };
        if !scope.ends_with("/.default") || scope.contains(' ') {
            let message = format!(
                "The provided value for scope {scope} is not valid. Client credential flows must have a scope value \
                 with /.default suffixed to the resource identifier (application ID URI)."
            );
            return refusal(400, "invalid_scope", 1002012, &message);
        }
        match (field("client_secret"), field("client_assertion")) {
            (Some(secret), _) if !secret.is_empty() => {
                if self.client_secret.as_deref().is_some_and(|expected| expected != secret) {
                    let message = format!(
                        "Invalid client secret provided. Ensure the secret being sent in the request is the client \
                         secret value, not the client secret ID, for a secret added to app '{client_id}'."
                    );
                    return refusal(401, "invalid_client", 7000215, &message);
                }
            }
            (_, Some(assertion)) if !assertion.is_empty() => {
                if field("client_assertion_type") != Some(JWT_BEARER) {
                    let message = "The required field 'client_assertion_type' is missing from the credential. Ensure \
                                   that you have all the necessary parameters for the login request.";
                    return refusal(400, "invalid_request", 90014, message);
                }
                if !is_jwt_shaped(assertion) {
                    return refusal(401, "invalid_client", 50027, "JWT token is invalid or malformed.");
                }
            }
            _ => {
                let message =
                    "The request body must contain the following parameter: 'client_assertion' or 'client_secret'.";
                return refusal(401, "invalid_client", 7000218, message);
            }
        }
        let for_cognitive_services = scope == COGNITIVE_SERVICES_SCOPE;
        let audience = scope.trim_end_matches("/.default");
        let token = self.issue(tenant, client_id, audience, for_cognitive_services);
        let body = json!({
            "token_type": "Bearer",
            "expires_in": self.ttl_secs,
            "ext_expires_in": self.ttl_secs,
            "access_token": token,
        });
        (200, body.to_string().into_bytes())
    }

    /// Makes and remembers a JWT-shaped token (unsigned: nobody but the mock reads it).
    fn issue(&self, tenant: &str, client_id: &str, audience: &str, for_cognitive_services: bool) -> String {
        let number = self.count.fetch_add(1, Ordering::Relaxed) + 1;
        let now = unix_seconds();
        let header = json!({"typ": "JWT", "alg": "RS256", "kid": "mock"});
        let claims = json!({
            "aud": audience,
            "iss": format!("https://sts.windows.net/{tenant}/"),
            "iat": now, "nbf": now, "exp": now + self.ttl_secs,
            "appid": client_id, "sub": client_id, "tid": tenant,
            "ver": "1.0", "jti": format!("mock-{number}"),
        });
        let token = format!(
            "{}.{}.{}",
            base64url(header.to_string().as_bytes()),
            base64url(claims.to_string().as_bytes()),
            base64url(format!("mock-signature-{number}").as_bytes())
        );
        let expiry = Instant::now() + Duration::from_secs(self.ttl_secs);
        let mut issued = self.issued.lock().unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        // Expired tokens are refused whether remembered or not: forget them.
        issued.retain(|_, (expiry, _)| *expiry > now);
        issued.insert(token.clone(), (expiry, for_cognitive_services && audience == COGNITIVE_SERVICES_AUDIENCE));
        token
    }
}

/// Microsoft's error body: `{"error","error_description","error_codes",…}`.
fn refusal(status: u16, error: &str, code: u32, message: &str) -> (u16, Vec<u8>) {
    let trace_id = "00000000-0000-4000-8000-00000000beef";
    let correlation_id = "00000000-0000-4000-8000-00000000cafe";
    let timestamp = utc_timestamp(unix_seconds());
    let body = json!({
        "error": error,
        "error_description": format!(
            "AADSTS{code}: {message}\r\nTrace ID: {trace_id}\r\nCorrelation ID: {correlation_id}\r\nTimestamp: {timestamp}"
        ),
        "error_codes": [code],
        "timestamp": timestamp,
        "trace_id": trace_id,
        "correlation_id": correlation_id,
        "error_uri": format!("https://login.microsoftonline.com/error?code={code}"),
    });
    (status, body.to_string().into_bytes())
}

/// Three non-empty base64url parts separated by dots.
fn is_jwt_shaped(token: &str) -> bool {
    let parts: Vec<&str> = token.split('.').collect();
    parts.len() == 3
        && parts.iter().all(|part| {
            !part.is_empty() && part.bytes().all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_')
        })
}

fn base64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for group in bytes.chunks(3) {
        let value = group.iter().enumerate().fold(0u32, |value, (at, &byte)| value | u32::from(byte) << (16 - 8 * at));
        for at in 0..=group.len() {
            out.push(ALPHABET[(value >> (18 - 6 * at) & 63) as usize] as char);
        }
    }
    out
}

fn unix_seconds() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |since| since.as_secs())
}

/// `YYYY-MM-DD hh:mm:ssZ` (Entra's `timestamp`).
fn utc_timestamp(seconds: u64) -> String {
    crate::wire::clock::rfc3339(seconds).replace('T', " ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn ask(entra: &Entra, form: &str) -> (u16, Value) {
        let (status, body) = entra.token_request(Method::Post, "tenant-1", form.as_bytes());
        (status, serde_json::from_slice(&body).expect("JSON"))
    }

    const SECRET_FORM: &str = "grant_type=client_credentials&client_id=app-1&client_secret=s%3Dcret\
                               &scope=https%3A%2F%2Fcognitiveservices.azure.com%2F.default";

    #[test]
    fn issues_tokens_the_azure_routes_accept() {
        let entra = Entra::new(3599, None);
        let (status, answer) = ask(&entra, SECRET_FORM);
        assert_eq!(status, 200, "{answer}");
        assert_eq!(answer["token_type"], "Bearer");
        assert_eq!(answer["expires_in"], 3599);
        assert_eq!(answer["ext_expires_in"], 3599);
        let token = answer["access_token"].as_str().expect("token");
        assert!(is_jwt_shaped(token), "{token}");
        assert_eq!(entra.check(token), TokenCheck::Valid);
        assert_eq!(entra.check("eyJ.made.up"), TokenCheck::Refused);

        let assertion = format!(
            "grant_type=client_credentials&client_id=app-1&scope={COGNITIVE_SERVICES_SCOPE}\
             &client_assertion_type={JWT_BEARER}&client_assertion=eyJh.eyJi.c2ln"
        );
        assert_eq!(ask(&entra, &assertion).0, 200);
    }

    #[test]
    fn expired_and_foreign_audience_tokens_are_refused() {
        let entra = Entra::new(0, None);
        let (_, answer) = ask(&entra, SECRET_FORM);
        assert_eq!(answer["expires_in"], 0);
        assert_eq!(entra.check(answer["access_token"].as_str().expect("token")), TokenCheck::Refused);

        let entra = Entra::new(60, None);
        let (status, answer) = ask(&entra, &SECRET_FORM.replace("cognitiveservices", "management"));
        assert_eq!(status, 200);
        assert_eq!(entra.check(answer["access_token"].as_str().expect("token")), TokenCheck::Refused);
    }

    #[test]
    fn refusals_carry_microsofts_codes() {
        let entra = Entra::new(60, Some("right".into()));
        let base = "grant_type=client_credentials&client_id=app-1&scope=https://cognitiveservices.azure.com/.default";
        let cases = [
            ("client_id=a&client_secret=b", 400, "invalid_request", 900144),
            ("grant_type=password&client_id=a", 400, "unsupported_grant_type", 70003),
            ("grant_type=client_credentials&client_secret=x&scope=s/.default", 400, "invalid_request", 900144),
            ("grant_type=client_credentials&client_id=a&client_secret=x", 400, "invalid_request", 900144),
            (
                "grant_type=client_credentials&client_id=a&client_secret=x&scope=https://x",
                400,
                "invalid_scope",
                1002012,
            ),
            (base, 401, "invalid_client", 7000218),
            (&format!("{base}&client_secret=wrong"), 401, "invalid_client", 7000215),
            (&format!("{base}&client_assertion=a.b.c"), 400, "invalid_request", 90014),
            (&format!("{base}&client_assertion_type={JWT_BEARER}&client_assertion=a.b"), 401, "invalid_client", 50027),
        ];
        for (form, status, error, code) in cases {
            let (got, body) = ask(&entra, form);
            assert_eq!(
                (got, body["error"].as_str(), body["error_codes"][0].as_u64()),
                (status, Some(error), Some(code)),
                "{form}"
            );
            let description = body["error_description"].as_str().expect("description");
            assert!(description.starts_with(&format!("AADSTS{code}: ")) && description.contains("\r\nTrace ID: "));
        }
        assert_eq!(ask(&entra, &format!("{base}&client_secret=right")).0, 200);
        assert_eq!(entra.token_request(Method::Get, "t", b"").0, 400);
    }

    #[test]
    fn helpers() {
        assert_eq!(base64url(b""), "");
        assert_eq!(base64url(b"f"), "Zg");
        assert_eq!(base64url(b"fo"), "Zm8");
        assert_eq!(base64url(b"foo"), "Zm9v");
        assert_eq!(base64url(&[0xfb, 0xff]), "-_8");
        assert_eq!(
            parse_form(b"a=1+2&b=%2F%zz&c"),
            [("a", "1 2"), ("b", "/%zz"), ("c", "")].map(|(k, v)| (k.to_owned(), v.to_owned()))
        );
        assert_eq!(utc_timestamp(0), "1970-01-01 00:00:00Z");
        assert_eq!(utc_timestamp(1_709_251_199), "2024-02-29 23:59:59Z");
    }
}
