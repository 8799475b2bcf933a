//! A Google service account's OAuth2 token request: a JWT assertion (RS256, signed with the
//! account's key by `ring`) exchanged at its `token_uri` with the JWT-bearer grant, as Google's
//! server-to-server flow describes it. The assertion lives an hour (Google's maximum).

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use pointwork_core::upstream_auth::GoogleServiceAccount;
use ring::rand::SystemRandom;
use ring::signature::{RsaKeyPair, RSA_PKCS1_SHA256};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::PrivatePkcs8KeyDer;

/// How long an assertion is valid: Google accepts at most an hour.
pub const ASSERTION_LIFETIME_SECS: u64 = 3600;
const JWT_BEARER_GRANT: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// A service account's key, parsed once.
pub struct ServiceAccountKey {
    key: RsaKeyPair,
}

impl ServiceAccountKey {
    /// The account's PEM PKCS#8 `private_key`; the error says why it cannot sign.
    pub fn parse(account: &GoogleServiceAccount) -> Result<ServiceAccountKey, String> {
        let der = PrivatePkcs8KeyDer::from_pem_slice(account.private_key_pem.as_bytes())
            .map_err(|e| format!("the service account's private_key is not a PEM PKCS#8 key: {e}"))?;
        let key = RsaKeyPair::from_pkcs8(der.secret_pkcs8_der())
            .map_err(|e| format!("the service account's private_key is not an RSA key ring can use: {e}"))?;
        Ok(ServiceAccountKey { key })
    }

    /// The signed assertion for `account` issued at `now` (seconds since the epoch).
    pub fn assertion(&self, account: &GoogleServiceAccount, now: u64) -> Result<String, String> {
        let mut header = serde_json::json!({"alg": "RS256", "typ": "JWT"});
        if let Some(kid) = &account.private_key_id {
            header["kid"] = kid.as_str().into();
        }
        let claims = serde_json::json!({
            "iss": account.client_email,
            "scope": account.scope,
            "aud": account.token_uri,
            "iat": now,
            "exp": now + ASSERTION_LIFETIME_SECS,
        });
        let mut jwt = URL_SAFE_NO_PAD.encode(header.to_string());
        jwt.push('.');
        jwt.push_str(&URL_SAFE_NO_PAD.encode(claims.to_string()));
        let mut signature = vec![0; self.key.public().modulus_len()];
        self.key
            .sign(&RSA_PKCS1_SHA256, &SystemRandom::new(), jwt.as_bytes(), &mut signature)
            .map_err(|_| "signing the JWT assertion failed".to_string())?;
        jwt.push('.');
        jwt.push_str(&URL_SAFE_NO_PAD.encode(signature));
        Ok(jwt)
    }

    /// The public half, for tests that verify an assertion.
    #[cfg(test)]
    fn public_key(&self) -> Vec<u8> {
        use ring::signature::KeyPair;
        self.key.public_key().as_ref().to_vec()
    }
}

/// The form body of the token request.
pub fn token_request_body(assertion: &str) -> String {
    format!("grant_type={}&assertion={assertion}", form_encode(JWT_BEARER_GRANT))
}

/// `application/x-www-form-urlencoded` encoding of one value.
pub fn form_encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'*' => out.push(b as char),
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::signature::{UnparsedPublicKey, RSA_PKCS1_2048_8192_SHA256};

    fn account() -> GoogleServiceAccount {
        let file: serde_json::Value =
            serde_json::from_str(include_str!("testdata/test-only-service-account.json")).unwrap();
        GoogleServiceAccount {
            client_email: file["client_email"].as_str().unwrap().into(),
            private_key_pem: file["private_key"].as_str().unwrap().into(),
            private_key_id: file["private_key_id"].as_str().map(str::to_string),
            token_uri: "https://oauth2.googleapis.com/token".into(),
            scope: pointwork_core::upstream_auth::GOOGLE_CLOUD_SCOPE.into(),
        }
    }

    fn decode(part: &str) -> serde_json::Value {
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
    }

    #[test]
    fn the_assertion_carries_googles_claims_and_verifies_with_the_public_key() {
        let account = account();
        let key = ServiceAccountKey::parse(&account).unwrap();
        let jwt = key.assertion(&account, 1_764_633_600).unwrap();
        let parts: Vec<&str> = jwt.split('.').collect();
        assert_eq!(parts.len(), 3);
        assert_eq!(
            decode(parts[0]),
            serde_json::json!({"alg": "RS256", "typ": "JWT", "kid": "0123456789abcdef0123456789abcdef01234567"})
        );
        assert_eq!(
            decode(parts[1]),
            serde_json::json!({
                "iss": "pointwork-test@pointwork-test.iam.gserviceaccount.com",
                "scope": "https://www.googleapis.com/auth/cloud-platform",
                "aud": "https://oauth2.googleapis.com/token",
                "iat": 1_764_633_600u64,
                "exp": 1_764_637_200u64,
            })
        );
        let signature = URL_SAFE_NO_PAD.decode(parts[2]).unwrap();
        let public = UnparsedPublicKey::new(&RSA_PKCS1_2048_8192_SHA256, key.public_key());
        let signed = format!("{}.{}", parts[0], parts[1]);
        public.verify(signed.as_bytes(), &signature).expect("the signature verifies");
        // A changed claim does not.
        let tampered = format!("{}.{}", parts[0], URL_SAFE_NO_PAD.encode(br#"{"iss":"someone-else"}"#));
        assert!(public.verify(tampered.as_bytes(), &signature).is_err());
    }

    #[test]
    fn a_key_that_is_not_pkcs8_rsa_is_refused_with_the_reason() {
        let mut bad = account();
        bad.private_key_pem = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n".into();
        let why = ServiceAccountKey::parse(&bad).err().unwrap();
        assert!(why.contains("not an RSA key"), "{why}");
        bad.private_key_pem = "not a key".into();
        assert!(ServiceAccountKey::parse(&bad).err().unwrap().contains("not a PEM PKCS#8 key"));
    }

    #[test]
    fn the_token_request_is_the_jwt_bearer_grant() {
        assert_eq!(
            token_request_body("a.b.c"),
            "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=a.b.c"
        );
        assert_eq!(form_encode("a b/c+d"), "a+b%2Fc%2Bd");
    }
}
