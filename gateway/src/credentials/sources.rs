//! How each obtained credential is fetched, on the refresher's thread: Microsoft Entra ID's
//! client-credentials grant, a Google service account's JWT-bearer grant, a Google user's
//! refresh-token grant, the GCE metadata server's token, and temporary AWS keys
//! ([`super::aws_sources`]). Each fetch is one or a few whole HTTP/1.1 exchanges.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use pointwork_core::upstream_auth::{
    AwsObtained, EntraClient, GoogleAuthorizedUser, GoogleMetadata, GoogleServiceAccount,
};
use pointwork_core::UpstreamAuth;
use serde::Deserialize;

use super::google_jwt::{form_encode, token_request_body, ServiceAccountKey};
use super::http::{exchange, Clients};
use super::token::{Obtained, Token};

/// The path of the GCE metadata server's token for the default service account.
const GCE_TOKEN_PATH: &str = "/computeMetadata/v1/instance/service-accounts/default/token";

/// How a credential is fetched.
pub enum Source {
    Entra(EntraClient),
    GoogleAccount(GoogleServiceAccount, Box<ServiceAccountKey>),
    GoogleUser(GoogleAuthorizedUser),
    GoogleMetadata(GoogleMetadata),
    Aws(AwsObtained),
}

impl Source {
    /// The source of `auth`; fails when the credential cannot be used (a key that does not parse).
    pub fn new(auth: &UpstreamAuth) -> Result<Source, String> {
        match auth {
            UpstreamAuth::EntraClientCredentials(e) => Ok(Source::Entra(e.clone())),
            UpstreamAuth::GoogleServiceAccount(g) => {
                Ok(Source::GoogleAccount(g.clone(), Box::new(ServiceAccountKey::parse(g)?)))
            }
            UpstreamAuth::GoogleAuthorizedUser(g) => Ok(Source::GoogleUser(g.clone())),
            UpstreamAuth::GoogleMetadata(m) => Ok(Source::GoogleMetadata(m.clone())),
            UpstreamAuth::AwsObtained(a) => Ok(Source::Aws(a.clone())),
            UpstreamAuth::AwsSigV4(_) => Err("SigV4 with fixed keys signs each request: nothing to fetch".into()),
        }
    }

    /// Fetches the credential now.
    pub async fn fetch(&self, clients: &Clients) -> Result<Token, String> {
        let started = Instant::now();
        match self {
            Source::Aws(aws) => super::aws_sources::fetch(clients, aws).await,
            Source::GoogleMetadata(m) => {
                let url = format!("http://{}{GCE_TOKEN_PATH}", m.host);
                let body = exchange(&clients.metadata, "GET", &url, &[("metadata-flavor", "Google")], b"").await?;
                bearer(&url, &body, started)
            }
            _ => {
                let (url, form) = self.token_request()?;
                let headers = [("content-type", "application/x-www-form-urlencoded"), ("accept", "application/json")];
                let body = exchange(&clients.remote, "POST", &url, &headers, form.as_bytes()).await?;
                bearer(&url, &body, started)
            }
        }
    }

    /// A token endpoint's URL and the form body to post there.
    fn token_request(&self) -> Result<(String, String), String> {
        match self {
            Source::Entra(e) => Ok((
                format!("{}/{}/oauth2/v2.0/token", e.authority_host, e.tenant_id),
                format!(
                    "grant_type=client_credentials&client_id={}&client_secret={}&scope={}",
                    form_encode(&e.client_id),
                    form_encode(&e.client_secret),
                    form_encode(&e.scope)
                ),
            )),
            Source::GoogleAccount(account, key) => {
                let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
                Ok((account.token_uri.clone(), token_request_body(&key.assertion(account, now)?)))
            }
            Source::GoogleUser(user) => Ok((
                user.token_uri.clone(),
                format!(
                    "grant_type=refresh_token&client_id={}&client_secret={}&refresh_token={}",
                    form_encode(&user.client_id),
                    form_encode(&user.client_secret),
                    form_encode(&user.refresh_token)
                ),
            )),
            Source::GoogleMetadata(_) | Source::Aws(_) => Err("not a token endpoint's grant".into()),
        }
    }
}

#[derive(Deserialize)]
struct TokenAnswer {
    access_token: String,
    expires_in: Option<serde_json::Value>,
}

/// A bearer token from an OAuth2 token answer (`access_token`, `expires_in`, an hour when absent).
fn bearer(url: &str, body: &[u8], started: Instant) -> Result<Token, String> {
    let answer: TokenAnswer =
        serde_json::from_slice(body).map_err(|e| format!("token endpoint {url}: not a token answer: {e}"))?;
    let lifetime = match answer.expires_in {
        Some(serde_json::Value::Number(n)) => n.as_u64(),
        Some(serde_json::Value::String(s)) => s.parse().ok(),
        _ => None,
    };
    let lifetime = Duration::from_secs(lifetime.unwrap_or(3600));
    Ok(Token::new(Obtained::Bearer(format!("Bearer {}", answer.access_token)), started, lifetime))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_entra_request_is_the_client_credentials_grant() {
        let source = Source::Entra(EntraClient {
            authority_host: "https://login.microsoftonline.com".into(),
            tenant_id: "tenant-1".into(),
            client_id: "app id".into(),
            client_secret: "s&cret".into(),
            scope: "https://cognitiveservices.azure.com/.default".into(),
        });
        let (url, form) = source.token_request().unwrap();
        assert_eq!(url, "https://login.microsoftonline.com/tenant-1/oauth2/v2.0/token");
        assert_eq!(
            form,
            "grant_type=client_credentials&client_id=app+id&client_secret=s%26cret&scope=https%3A%2F%2Fcognitiveservices.azure.com%2F.default"
        );
    }

    #[test]
    fn an_authorized_user_asks_with_its_refresh_token() {
        let source = Source::GoogleUser(GoogleAuthorizedUser {
            client_id: "123.apps.googleusercontent.com".into(),
            client_secret: "d-FL95Q".into(),
            refresh_token: "1//0g/refresh".into(),
            token_uri: "https://oauth2.googleapis.com/token".into(),
        });
        let (url, form) = source.token_request().unwrap();
        assert_eq!(url, "https://oauth2.googleapis.com/token");
        assert_eq!(
            form,
            "grant_type=refresh_token&client_id=123.apps.googleusercontent.com&client_secret=d-FL95Q&refresh_token=1%2F%2F0g%2Frefresh"
        );
    }
}
