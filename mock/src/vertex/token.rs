//! Google's OAuth 2.0 token endpoint for service accounts (`POST /token`, the path of
//! `https://oauth2.googleapis.com/token`): a JWT-bearer grant whose assertion is checked as Google
//! checks it — three base64url parts, an RS256 header, `iss`, `scope`, `aud` the token URI,
//! `iat`/`exp` at most an hour apart and current — and, with a service-account file, its RS256
//! signature verified with that key's public half. The tokens it issues are what Vertex AI's
//! routes accept.

use std::collections::HashMap;
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use ring::signature::{KeyPair, RsaKeyPair, UnparsedPublicKey, RSA_PKCS1_2048_8192_SHA256};
use serde_json::{json, Value};

use crate::wire::form::parse_form;
use crate::wire::head::Method;

pub(crate) const CLOUD_PLATFORM_SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";
pub(crate) const GOOGLE_TOKEN_URI: &str = "https://oauth2.googleapis.com/token";
const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/// How far in the future `iat` may be (clock skew).
const MAX_SKEW_SECS: u64 = 300;
const SHORT_LIVED: &str = "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. \
                           Check your iat and exp values and use a clock with skew to account for clock differences \
                           between systems.";
const BAD_SIGNATURE: &str = "Invalid JWT Signature.";

/// The parts of a service-account file the checks need.
#[derive(Debug, Clone)]
pub(crate) struct ServiceAccount {
    pub client_email: String,
    pub token_uri: String,
    /// The DER `RSAPublicKey` of `private_key`.
    public_key: Vec<u8>,
}

/// Reads a Google service-account JSON (`private_key` PEM PKCS#8, `client_email`, `token_uri`).
pub(crate) fn load_service_account(path: &Path) -> io::Result<ServiceAccount> {
    let invalid =
        |what: &str| io::Error::new(io::ErrorKind::InvalidData, format!("service account {}: {what}", path.display()));
    let text = std::fs::read_to_string(path)
        .map_err(|error| io::Error::new(error.kind(), format!("service account {}: {error}", path.display())))?;
    let file: Value = serde_json::from_str(&text).map_err(|error| invalid(&error.to_string()))?;
    let field = |name: &str| file.get(name).and_then(Value::as_str).filter(|value| !value.is_empty());
    let pem = field("private_key").ok_or_else(|| invalid("no private_key"))?;
    let client_email = field("client_email").ok_or_else(|| invalid("no client_email"))?.to_owned();
    let token_uri = field("token_uri").unwrap_or(GOOGLE_TOKEN_URI).to_owned();
    let body: String = pem.lines().filter(|line| !line.starts_with("-----")).map(str::trim).collect();
    let der = STANDARD.decode(body).map_err(|_| invalid("private_key is not PEM"))?;
    let key = RsaKeyPair::from_pkcs8(&der).map_err(|_| invalid("private_key is not an RSA PKCS#8 key"))?;
    Ok(ServiceAccount { client_email, token_uri, public_key: key.public_key().as_ref().to_vec() })
}

/// What Vertex AI's routes make of a bearer token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TokenState {
    Valid,
    /// Issued here but past `expires_in`.
    Expired,
    /// Issued for scopes without `cloud-platform`.
    NarrowScope,
    /// Never issued here.
    Unknown,
}

/// The token endpoint's state: the account (when given) and the tokens issued.
#[derive(Debug)]
pub(crate) struct GoogleAuth {
    ttl_secs: u64,
    account: Option<ServiceAccount>,
    /// Token → (expiry, issued with the cloud-platform scope).
    issued: Mutex<HashMap<String, (Instant, bool)>>,
    count: AtomicU64,
}

impl GoogleAuth {
    pub(crate) fn new(ttl_secs: u64) -> Self {
        GoogleAuth { ttl_secs, account: None, issued: Mutex::new(HashMap::new()), count: AtomicU64::new(0) }
    }

    /// Verifies assertions with this account from now on.
    pub(crate) fn set_account(&mut self, account: ServiceAccount) {
        self.account = Some(account);
    }

    pub(crate) fn check(&self, token: &str) -> TokenState {
        let issued = self.issued.lock().unwrap_or_else(PoisonError::into_inner);
        match issued.get(token) {
            None => TokenState::Unknown,
            Some(&(expiry, _)) if Instant::now() >= expiry => TokenState::Expired,
            Some(&(_, false)) => TokenState::NarrowScope,
            Some(&(_, true)) => TokenState::Valid,
        }
    }

    /// Answers `POST /token`: status and JSON body.
    pub(crate) fn token_request(&self, method: Method, body: &[u8], now: u64) -> (u16, Vec<u8>) {
        if method != Method::Post {
            return refusal("invalid_request", "Only POST requests are supported.");
        }
        let form = parse_form(body);
        let field = |name: &str| form.iter().rev().find(|(key, _)| key == name).map(|(_, value)| value.as_str());
        let grant_type = field("grant_type").unwrap_or_default();
        if grant_type != JWT_BEARER {
            return refusal("unsupported_grant_type", &format!("Invalid grant_type: {grant_type}"));
        }
        let Some(assertion) = field("assertion").filter(|value| !value.is_empty()) else {
            return refusal("invalid_request", "Missing required parameter: assertion");
        };
        let scope = match self.check_assertion(assertion, now) {
            Ok(scope) => scope,
            Err((error, description)) => return refusal(error, &description),
        };
        let number = self.count.fetch_add(1, Ordering::Relaxed) + 1;
        let token = format!("ya29.mock-{number}-{:016x}", now.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ number);
        let cloud_platform = scope.split_whitespace().any(|scope| scope == CLOUD_PLATFORM_SCOPE);
        let mut issued = self.issued.lock().unwrap_or_else(PoisonError::into_inner);
        let instant = Instant::now();
        issued.retain(|_, (expiry, _)| *expiry > instant);
        issued.insert(token.clone(), (instant + Duration::from_secs(self.ttl_secs), cloud_platform));
        let answer = json!({"access_token": token, "expires_in": self.ttl_secs, "token_type": "Bearer"});
        (200, answer.to_string().into_bytes())
    }

    /// The assertion's scope when Google would grant it; else `(error, error_description)`.
    fn check_assertion(&self, assertion: &str, now: u64) -> Result<String, (&'static str, String)> {
        let grant = |description: &str| Err(("invalid_grant", description.to_owned()));
        let parts: Vec<&str> = assertion.split('.').collect();
        let [header, claims, signature] = parts[..] else {
            return Err(("invalid_request", "Invalid JWT: the assertion must be three base64url parts.".to_owned()));
        };
        let decode = |part: &str| URL_SAFE_NO_PAD.decode(part.trim_end_matches('=')).ok();
        let json = |part: &str| decode(part).and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok());
        let (Some(header_json), Some(claims_json), Some(signature_bytes)) =
            (json(header), json(claims), decode(signature))
        else {
            return Err(("invalid_request", "Invalid JWT: the assertion is not base64url-encoded JSON.".to_owned()));
        };
        let alg = header_json.get("alg").and_then(Value::as_str);
        let typ = header_json.get("typ").and_then(Value::as_str);
        if alg != Some("RS256") || typ.is_some_and(|typ| typ != "JWT") || signature_bytes.is_empty() {
            return grant(BAD_SIGNATURE);
        }
        let claim = |name: &str| claims_json.get(name).and_then(Value::as_str).filter(|value| !value.is_empty());
        let Some(issuer) = claim("iss") else {
            return grant("Invalid JWT: No issuer (iss) claim.");
        };
        if self.account.as_ref().is_some_and(|account| account.client_email != issuer) {
            return grant("Invalid grant: account not found");
        }
        let token_uri = self.account.as_ref().map_or(GOOGLE_TOKEN_URI, |account| account.token_uri.as_str());
        let audience_ok = match (&self.account, claim("aud")) {
            (Some(account), Some(audience)) => audience == account.token_uri,
            (None, Some(audience)) => audience.ends_with("/token"),
            (_, None) => false,
        };
        if !audience_ok {
            return grant(&format!("Invalid JWT: Failed audience check. The right audience is {token_uri}"));
        }
        let Some(scope) = claim("scope") else {
            return Err(("invalid_scope", "Empty or missing scope not allowed.".to_owned()));
        };
        let (iat, exp) =
            (claims_json.get("iat").and_then(Value::as_u64), claims_json.get("exp").and_then(Value::as_u64));
        let (Some(iat), Some(exp)) = (iat, exp) else {
            return grant(SHORT_LIVED);
        };
        if exp <= iat || exp - iat > 3600 || exp <= now || iat > now + MAX_SKEW_SECS {
            return grant(SHORT_LIVED);
        }
        if let Some(account) = &self.account {
            let key = UnparsedPublicKey::new(&RSA_PKCS1_2048_8192_SHA256, &account.public_key);
            let signed = &assertion[..header.len() + 1 + claims.len()];
            if key.verify(signed.as_bytes(), &signature_bytes).is_err() {
                return grant(BAD_SIGNATURE);
            }
        }
        Ok(scope.to_owned())
    }
}

/// Google's token error: 400 `{"error": E, "error_description": D}`.
fn refusal(error: &str, description: &str) -> (u16, Vec<u8>) {
    (400, json!({"error": error, "error_description": description}).to_string().into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::rand::SystemRandom;
    use ring::signature::RSA_PKCS1_SHA256;

    const NOW: u64 = 1_700_000_000;
    const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/testdata/vertex-service-account.json");

    fn jwt(header: &Value, claims: &Value, key: Option<&RsaKeyPair>) -> String {
        let signed =
            format!("{}.{}", URL_SAFE_NO_PAD.encode(header.to_string()), URL_SAFE_NO_PAD.encode(claims.to_string()));
        let signature = match key {
            Some(key) => {
                let mut signature = vec![0; key.public().modulus_len()];
                key.sign(&RSA_PKCS1_SHA256, &SystemRandom::new(), signed.as_bytes(), &mut signature).expect("signs");
                signature
            }
            None => b"not-a-signature".to_vec(),
        };
        format!("{signed}.{}", URL_SAFE_NO_PAD.encode(signature))
    }

    fn claims(aud: &str) -> Value {
        json!({"iss": "pointwork-test@mock-project.iam.gserviceaccount.com", "scope": CLOUD_PLATFORM_SCOPE,
               "aud": aud, "iat": NOW, "exp": NOW + 3600})
    }

    fn ask(auth: &GoogleAuth, assertion: &str) -> (u16, Value) {
        let form = format!("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion={assertion}");
        let (status, body) = auth.token_request(Method::Post, form.as_bytes(), NOW);
        (status, serde_json::from_slice(&body).expect("JSON"))
    }

    fn fixture_key() -> RsaKeyPair {
        let file: Value = serde_json::from_str(&std::fs::read_to_string(FIXTURE).expect("fixture")).expect("JSON");
        let pem = file["private_key"].as_str().expect("key");
        let body: String = pem.lines().filter(|line| !line.starts_with("-----")).collect();
        RsaKeyPair::from_pkcs8(&STANDARD.decode(body).expect("base64")).expect("PKCS#8")
    }

    #[test]
    fn a_signed_assertion_gets_a_token_and_a_tampered_one_does_not() {
        let mut auth = GoogleAuth::new(3599);
        auth.set_account(load_service_account(Path::new(FIXTURE)).expect("fixture loads"));
        let key = fixture_key();
        let header = json!({"alg": "RS256", "typ": "JWT", "kid": "0123"});
        let (status, answer) = ask(&auth, &jwt(&header, &claims(GOOGLE_TOKEN_URI), Some(&key)));
        assert_eq!(status, 200, "{answer}");
        assert_eq!((answer["expires_in"].as_u64(), answer["token_type"].as_str()), (Some(3599), Some("Bearer")));
        let token = answer["access_token"].as_str().expect("token");
        assert!(token.starts_with("ya29.mock-"));
        assert_eq!(auth.check(token), TokenState::Valid);
        assert_eq!(auth.check("ya29.other"), TokenState::Unknown);

        let good = jwt(&header, &claims(GOOGLE_TOKEN_URI), Some(&key));
        let mut parts: Vec<String> = good.split('.').map(str::to_owned).collect();
        let mut tampered_claims = claims(GOOGLE_TOKEN_URI);
        tampered_claims["scope"] = json!("https://www.googleapis.com/auth/cloud-platform https://x");
        parts[1] = URL_SAFE_NO_PAD.encode(tampered_claims.to_string());
        let (status, refused) = ask(&auth, &parts.join("."));
        assert_eq!((status, refused), (400, json!({"error": "invalid_grant", "error_description": BAD_SIGNATURE})));
        let unsigned = ask(&auth, &jwt(&header, &claims(GOOGLE_TOKEN_URI), None)).1;
        assert_eq!(unsigned["error_description"], BAD_SIGNATURE);
    }

    #[test]
    fn claims_are_checked_as_google_does() {
        let auth = GoogleAuth::new(60);
        let header = json!({"alg": "RS256", "typ": "JWT"});
        let mock_uri = "http://127.0.0.1:9/token";
        assert_eq!(ask(&auth, &jwt(&header, &claims(mock_uri), None)).0, 200, "any signature without an account");
        let mut long = claims(mock_uri);
        long["exp"] = json!(NOW + 7200);
        let mut expired = claims(mock_uri);
        expired["iat"] = json!(NOW - 7200);
        expired["exp"] = json!(NOW - 3600);
        let mut no_scope = claims(mock_uri);
        no_scope.as_object_mut().expect("object").remove("scope");
        let cases = [
            (jwt(&header, &long, None), "invalid_grant", SHORT_LIVED.to_owned()),
            (jwt(&header, &expired, None), "invalid_grant", SHORT_LIVED.to_owned()),
            (jwt(&header, &no_scope, None), "invalid_scope", "Empty or missing scope not allowed.".to_owned()),
            (
                jwt(&header, &claims("https://example.com/"), None),
                "invalid_grant",
                format!("Invalid JWT: Failed audience check. The right audience is {GOOGLE_TOKEN_URI}"),
            ),
            (jwt(&json!({"alg": "HS256"}), &claims(mock_uri), None), "invalid_grant", BAD_SIGNATURE.to_owned()),
        ];
        for (assertion, error, description) in cases {
            let (status, body) = ask(&auth, &assertion);
            assert_eq!(
                (status, body["error"].as_str(), body["error_description"].as_str()),
                (400, Some(error), Some(description.as_str()))
            );
        }
        assert_eq!(ask(&auth, "a.b").1["error"], "invalid_request");
        let (_, wrong_grant) = auth.token_request(Method::Post, b"grant_type=client_credentials", NOW);
        let wrong_grant: Value = serde_json::from_slice(&wrong_grant).expect("JSON");
        assert_eq!(
            wrong_grant,
            json!({"error": "unsupported_grant_type", "error_description": "Invalid grant_type: client_credentials"})
        );

        let mut narrow = claims(mock_uri);
        narrow["scope"] = json!("https://www.googleapis.com/auth/userinfo.email");
        let token = ask(&auth, &jwt(&header, &narrow, None)).1["access_token"].as_str().expect("token").to_owned();
        assert_eq!(auth.check(&token), TokenState::NarrowScope);
        let expired_at_once = GoogleAuth::new(0);
        let token = ask(&expired_at_once, &jwt(&header, &claims(mock_uri), None)).1["access_token"]
            .as_str()
            .expect("t")
            .to_owned();
        assert_eq!(expired_at_once.check(&token), TokenState::Expired);
    }
}
