//! Where a Bedrock deployment's AWS credentials come from when they are not fixed keys: a role
//! assumed through STS (with keys or another source as its base), a web identity exchanged at
//! STS, the container credentials endpoint (ECS, EKS Pod Identity) or the EC2 instance metadata
//! service. The gateway fetches them off the hot path and refreshes them before they expire.

use std::fmt;

use crate::secret::redact;

/// A source of temporary (or, for [`AwsSource::Keys`], fixed) AWS credentials.
#[derive(Clone, PartialEq, Eq, Hash)]
pub enum AwsSource {
    /// Fixed keys, as the base of an assumed role.
    Keys(AwsKeys),
    /// `sts:AssumeRole`, signed with the base's credentials.
    AssumeRole { base: Box<AwsSource>, role: AwsRole },
    /// `sts:AssumeRoleWithWebIdentity` (unsigned) with an OIDC token.
    WebIdentity { token: WebIdentityToken, role: AwsRole },
    /// The container credentials endpoint (`AWS_CONTAINER_CREDENTIALS_FULL_URI` or
    /// `http://169.254.170.2` + `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI`).
    Container {
        url: String,
        /// `AWS_CONTAINER_AUTHORIZATION_TOKEN`: the `authorization` header's value.
        authorization: Option<String>,
        /// `AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE`: read at each fetch.
        authorization_file: Option<String>,
    },
    /// EC2's instance metadata service (IMDSv2) at `endpoint` (`http://169.254.169.254`).
    InstanceMetadata { endpoint: String },
}

/// An access key pair, and a session token with temporary keys.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct AwsKeys {
    pub access_key_id: String,
    pub secret_access_key: String,
    pub session_token: Option<String>,
}

/// The role an STS call asks for, and where STS is.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct AwsRole {
    pub role_arn: String,
    /// `RoleSessionName`; `pointwork-session-{unix seconds}` when none is given.
    pub session_name: Option<String>,
    pub external_id: Option<String>,
    /// STS's base URL (`https://sts.{region}.amazonaws.com`).
    pub sts_endpoint: String,
    /// The region STS requests are signed for.
    pub sts_region: String,
}

/// The OIDC token of a web identity.
#[derive(Clone, PartialEq, Eq, Hash)]
pub enum WebIdentityToken {
    /// A file read again at each refresh (`AWS_WEB_IDENTITY_TOKEN_FILE`, which EKS rotates).
    File(String),
    /// The token itself (`aws_web_identity_token`).
    Value(String),
}

impl AwsSource {
    /// What kind of source, for logs and `pointwork check`.
    pub fn kind(&self) -> &'static str {
        match self {
            AwsSource::Keys(_) => "aws-keys",
            AwsSource::AssumeRole { .. } => "aws-assume-role",
            AwsSource::WebIdentity { .. } => "aws-web-identity",
            AwsSource::Container { .. } => "aws-container-credentials",
            AwsSource::InstanceMetadata { .. } => "aws-instance-metadata",
        }
    }
}

impl fmt::Debug for AwsKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AwsKeys")
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &redact(&self.secret_access_key))
            .field("session_token", &self.session_token.as_deref().map(redact))
            .finish()
    }
}

impl fmt::Debug for WebIdentityToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WebIdentityToken::File(path) => f.debug_tuple("File").field(path).finish(),
            WebIdentityToken::Value(token) => f.debug_tuple("Value").field(&redact(token)).finish(),
        }
    }
}

impl fmt::Debug for AwsSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AwsSource::Keys(keys) => keys.fmt(f),
            AwsSource::AssumeRole { base, role } => {
                f.debug_struct("AssumeRole").field("base", base).field("role", role).finish()
            }
            AwsSource::WebIdentity { token, role } => {
                f.debug_struct("WebIdentity").field("token", token).field("role", role).finish()
            }
            AwsSource::Container { url, authorization, authorization_file } => f
                .debug_struct("Container")
                .field("url", url)
                .field("authorization", &authorization.as_deref().map(redact))
                .field("authorization_file", authorization_file)
                .finish(),
            AwsSource::InstanceMetadata { endpoint } => {
                f.debug_struct("InstanceMetadata").field("endpoint", endpoint).finish()
            }
        }
    }
}
