//! Credentials that are not a fixed key header: a request signed per request (AWS SigV4, with
//! fixed keys or with temporary ones from an [`AwsSource`]) or a bearer token obtained from a
//! token endpoint and refreshed before it expires (Microsoft Entra ID client credentials, a
//! Google service account, a Google user's refresh token, the GCE metadata server). The gateway
//! signs and fetches; this is what the config says. `Debug` never prints a secret whole.

mod aws_source;

use std::fmt;

pub use aws_source::{AwsKeys, AwsRole, AwsSource, WebIdentityToken};

use crate::secret::redact;

#[derive(Clone, PartialEq, Eq, Hash)]
pub enum UpstreamAuth {
    /// AWS Signature Version 4 for `service` in `region` (Bedrock: `bedrock`).
    AwsSigV4(AwsCredentials),
    /// AWS Signature Version 4 with credentials fetched from `source` and refreshed.
    AwsObtained(AwsObtained),
    /// Microsoft Entra ID's client-credentials grant: `POST {authority}/{tenant}/oauth2/v2.0/token`.
    EntraClientCredentials(EntraClient),
    /// A Google service account: a signed JWT assertion exchanged at `token_uri`.
    GoogleServiceAccount(GoogleServiceAccount),
    /// A Google user's credentials (`gcloud auth application-default login`): the refresh-token
    /// grant at `token_uri`.
    GoogleAuthorizedUser(GoogleAuthorizedUser),
    /// The GCE/GKE metadata server's token for the instance's default service account.
    GoogleMetadata(GoogleMetadata),
}

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct AwsObtained {
    pub source: AwsSource,
    /// The region and service requests are signed for (the deployment's, `bedrock`).
    pub region: String,
    pub service: String,
}

#[derive(Clone, PartialEq, Eq, Hash)]
pub struct GoogleAuthorizedUser {
    pub client_id: String,
    pub client_secret: String,
    pub refresh_token: String,
    /// `https://oauth2.googleapis.com/token` unless the file says otherwise.
    pub token_uri: String,
}

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct GoogleMetadata {
    /// `metadata.google.internal`, or `GCE_METADATA_HOST` (a host and port).
    pub host: String,
}

#[derive(Clone, PartialEq, Eq, Hash)]
pub struct AwsCredentials {
    pub access_key_id: String,
    pub secret_access_key: String,
    pub session_token: Option<String>,
    pub region: String,
    pub service: String,
}

#[derive(Clone, PartialEq, Eq, Hash)]
pub struct EntraClient {
    /// `https://login.microsoftonline.com` unless `AZURE_AUTHORITY_HOST` says otherwise.
    pub authority_host: String,
    pub tenant_id: String,
    pub client_id: String,
    pub client_secret: String,
    /// `https://cognitiveservices.azure.com/.default` unless `azure_scope` says otherwise.
    pub scope: String,
}

#[derive(Clone, PartialEq, Eq, Hash)]
pub struct GoogleServiceAccount {
    pub client_email: String,
    /// The PEM `-----BEGIN PRIVATE KEY-----` (PKCS#8) of the service-account file.
    pub private_key_pem: String,
    pub private_key_id: Option<String>,
    /// Where the assertion is exchanged (`https://oauth2.googleapis.com/token`).
    pub token_uri: String,
    pub scope: String,
}

/// Microsoft Entra ID's default authority host.
pub const ENTRA_AUTHORITY_HOST: &str = "https://login.microsoftonline.com";
/// The scope of an Azure OpenAI token.
pub const AZURE_COGNITIVE_SCOPE: &str = "https://cognitiveservices.azure.com/.default";
/// The scope Vertex AI needs.
pub const GOOGLE_CLOUD_SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";

impl UpstreamAuth {
    /// What kind of credential, for logs and `pointwork check`.
    pub fn kind(&self) -> &'static str {
        match self {
            UpstreamAuth::AwsSigV4(_) => "aws-sigv4",
            UpstreamAuth::EntraClientCredentials(_) => "entra-client-credentials",
            UpstreamAuth::AwsObtained(a) => a.source.kind(),
            UpstreamAuth::GoogleServiceAccount(_) => "google-service-account",
            UpstreamAuth::GoogleAuthorizedUser(_) => "google-authorized-user",
            UpstreamAuth::GoogleMetadata(_) => "google-metadata-server",
        }
    }

    /// Whether the gateway fetches something for it (a bearer token, temporary AWS keys) rather
    /// than signing each request with what the config holds.
    pub fn is_obtained(&self) -> bool {
        !matches!(self, UpstreamAuth::AwsSigV4(_))
    }
}

impl fmt::Debug for UpstreamAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UpstreamAuth::AwsSigV4(a) => f
                .debug_struct("AwsSigV4")
                .field("access_key_id", &a.access_key_id)
                .field("secret_access_key", &redact(&a.secret_access_key))
                .field("session_token", &a.session_token.as_deref().map(redact))
                .field("region", &a.region)
                .field("service", &a.service)
                .finish(),
            UpstreamAuth::EntraClientCredentials(e) => f
                .debug_struct("EntraClientCredentials")
                .field("authority_host", &e.authority_host)
                .field("tenant_id", &e.tenant_id)
                .field("client_id", &e.client_id)
                .field("client_secret", &redact(&e.client_secret))
                .field("scope", &e.scope)
                .finish(),
            UpstreamAuth::GoogleServiceAccount(g) => f
                .debug_struct("GoogleServiceAccount")
                .field("client_email", &g.client_email)
                .field("private_key_pem", &"…")
                .field("token_uri", &g.token_uri)
                .field("scope", &g.scope)
                .finish(),
            UpstreamAuth::AwsObtained(a) => a.fmt(f),
            UpstreamAuth::GoogleAuthorizedUser(g) => f
                .debug_struct("GoogleAuthorizedUser")
                .field("client_id", &g.client_id)
                .field("client_secret", &redact(&g.client_secret))
                .field("refresh_token", &redact(&g.refresh_token))
                .field("token_uri", &g.token_uri)
                .finish(),
            UpstreamAuth::GoogleMetadata(m) => m.fmt(f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_a_secret() {
        let aws = UpstreamAuth::AwsSigV4(AwsCredentials {
            access_key_id: "AKIDEXAMPLE".into(),
            secret_access_key: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY".into(),
            session_token: Some("FQoGZXIvYXdzEXAMPLETOKEN".into()),
            region: "us-east-1".into(),
            service: "bedrock".into(),
        });
        let shown = format!("{aws:?}");
        assert!(shown.contains("AKIDEXAMPLE") && shown.contains("…EKEY"), "{shown}");
        assert!(!shown.contains("wJalrXUtnFEMI") && !shown.contains("FQoGZXIvYXdz"), "{shown}");
        let google = UpstreamAuth::GoogleServiceAccount(GoogleServiceAccount {
            client_email: "sa@p.iam.gserviceaccount.com".into(),
            private_key_pem: "-----BEGIN PRIVATE KEY-----\nMIIEv\n-----END PRIVATE KEY-----\n".into(),
            private_key_id: None,
            token_uri: "https://oauth2.googleapis.com/token".into(),
            scope: GOOGLE_CLOUD_SCOPE.into(),
        });
        assert!(!format!("{google:?}").contains("MIIEv"));
        assert!(google.is_obtained() && !aws.is_obtained());
    }

    #[test]
    fn debug_never_shows_an_obtained_credentials_secret() {
        let user = UpstreamAuth::GoogleAuthorizedUser(GoogleAuthorizedUser {
            client_id: "123.apps.googleusercontent.com".into(),
            client_secret: "d-FL95Q19q7MQmFpd7hHD0Ty".into(),
            refresh_token: "1//0gRefreshTokenSecretPart".into(),
            token_uri: "https://oauth2.googleapis.com/token".into(),
        });
        let shown = format!("{user:?}");
        assert!(
            shown.contains("123.apps") && !shown.contains("d-FL95Q19") && !shown.contains("RefreshTokenSecret"),
            "{shown}"
        );
        let role = AwsRole {
            role_arn: "arn:aws:iam::1:role/r".into(),
            session_name: None,
            external_id: None,
            sts_endpoint: "https://sts.us-east-1.amazonaws.com".into(),
            sts_region: "us-east-1".into(),
        };
        let base = AwsSource::Keys(AwsKeys {
            access_key_id: "AKIDBASE".into(),
            secret_access_key: "wJalrXUtnFEMIbasesecret".into(),
            session_token: None,
        });
        let sources = [
            AwsSource::AssumeRole { base: Box::new(base), role: role.clone() },
            AwsSource::WebIdentity { token: WebIdentityToken::Value("eyJhbGciOiJSUzI1NiJ9.oidc".into()), role },
            AwsSource::Container {
                url: "http://169.254.170.2/v2".into(),
                authorization: Some("container-secret-token".into()),
                authorization_file: None,
            },
        ];
        for source in sources {
            let kind = source.kind();
            let auth = UpstreamAuth::AwsObtained(AwsObtained {
                source,
                region: "us-east-1".into(),
                service: "bedrock".into(),
            });
            let shown = format!("{auth:?}");
            assert!(
                !shown.contains("wJalrXUtnFEMI")
                    && !shown.contains("eyJhbGciOiJSUzI1NiJ9")
                    && !shown.contains("container-secret"),
                "{shown}"
            );
            assert_eq!(auth.kind(), kind);
            assert!(auth.is_obtained());
        }
    }
}
