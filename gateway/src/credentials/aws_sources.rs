//! Temporary AWS credentials, fetched as the AWS SDKs fetch them: STS `AssumeRole` (the Query
//! API, SigV4-signed for `sts` with the base credentials), STS `AssumeRoleWithWebIdentity`
//! (unsigned, the OIDC token re-read from its file each time), the container credentials
//! endpoint, and EC2's instance metadata service (IMDSv2: a session token first). The result is
//! a [`Signer`] for the deployment's region and service, used until shortly before the keys'
//! `Expiration`.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use aws_smithy_types::date_time::Format;
use aws_smithy_types::DateTime;
use pointwork_core::upstream_auth::{AwsCredentials, AwsKeys, AwsObtained, AwsRole, AwsSource, WebIdentityToken};
use serde::Deserialize;

use super::google_jwt::form_encode;
use super::http::{exchange, request, target_and_path, Clients};
use super::sigv4::Signer;
use super::token::{Obtained, Token};
use crate::upstream::fetch;

const STS_VERSION: &str = "2011-06-15";
const FORM: &str = "application/x-www-form-urlencoded; charset=utf-8";
/// How long the keys are used when their source gives no expiry.
const NO_EXPIRY_LIFETIME: Duration = Duration::from_secs(3600);
const IMDS_TOKEN_TTL_SECS: &str = "21600";

/// Keys, and when they expire when they do.
struct Fetched {
    keys: AwsKeys,
    expires: Option<SystemTime>,
}

/// The deployment's credentials now: a signer for its region and service.
pub async fn fetch(clients: &Clients, aws: &AwsObtained) -> Result<Token, String> {
    let started = Instant::now();
    let fetched = keys(clients, &aws.source).await?;
    let lifetime = match fetched.expires {
        Some(at) => at.duration_since(SystemTime::now()).map_err(|_| "the credentials fetched have expired")?,
        None => NO_EXPIRY_LIFETIME,
    };
    let signer = Signer::new(&AwsCredentials {
        access_key_id: fetched.keys.access_key_id,
        secret_access_key: fetched.keys.secret_access_key,
        session_token: fetched.keys.session_token,
        region: aws.region.clone(),
        service: aws.service.clone(),
    });
    Ok(Token::new(Obtained::SigV4(signer), started, lifetime))
}

/// The keys of `source`, fetching what it names (an assumed role's base first).
async fn keys(clients: &Clients, source: &AwsSource) -> Result<Fetched, String> {
    match source {
        AwsSource::Keys(keys) => Ok(Fetched { keys: keys.clone(), expires: None }),
        AwsSource::AssumeRole { base, role } => {
            let base = Box::pin(keys(clients, base)).await?;
            assume_role(clients, &base.keys, role).await
        }
        AwsSource::WebIdentity { token, role } => web_identity(clients, token, role).await,
        AwsSource::Container { url, authorization, authorization_file } => {
            let authorization = match authorization_file {
                Some(file) => Some(read_trimmed(file, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE")?),
                None => authorization.clone(),
            };
            let headers: Vec<(&str, &str)> = authorization.iter().map(|a| ("authorization", a.as_str())).collect();
            let body = exchange(&clients.metadata, "GET", url, &headers, b"").await?;
            metadata_keys(url, &body)
        }
        AwsSource::InstanceMetadata { endpoint } => instance_metadata(clients, endpoint).await,
    }
}

/// `sts:AssumeRole`, signed with `base`.
async fn assume_role(clients: &Clients, base: &AwsKeys, role: &AwsRole) -> Result<Fetched, String> {
    let mut form = sts_form("AssumeRole", role);
    if let Some(external_id) = &role.external_id {
        form.push_str("&ExternalId=");
        form.push_str(&form_encode(external_id));
    }
    let url = &role.sts_endpoint;
    let (target, path) = target_and_path(url)?;
    let unsigned = request("POST", &target, path, &[("content-type", FORM)], form.as_bytes());
    let signer = Signer::new(&AwsCredentials {
        access_key_id: base.access_key_id.clone(),
        secret_access_key: base.secret_access_key.clone(),
        session_token: base.session_token.clone(),
        region: role.sts_region.clone(),
        service: "sts".into(),
    });
    let headers = super::sign(&signer, &unsigned).map_err(|why| format!("STS {url}: {why}"))?;
    let signed = super::with_headers(unsigned, &headers);
    let body =
        fetch::send(&clients.remote, &target, signed).await.map_err(|e| format!("STS AssumeRole at {url}: {e}"))?;
    sts_credentials(url, &body)
}

/// `sts:AssumeRoleWithWebIdentity`: unsigned, the token in the form.
async fn web_identity(clients: &Clients, token: &WebIdentityToken, role: &AwsRole) -> Result<Fetched, String> {
    let token = match token {
        WebIdentityToken::File(file) => read_trimmed(file, "the web identity token file")?,
        WebIdentityToken::Value(token) => token.clone(),
    };
    let form = format!("{}&WebIdentityToken={}", sts_form("AssumeRoleWithWebIdentity", role), form_encode(&token));
    let url = &role.sts_endpoint;
    let body = exchange(&clients.remote, "POST", url, &[("content-type", FORM)], form.as_bytes())
        .await
        .map_err(|e| format!("STS AssumeRoleWithWebIdentity at {e}"))?;
    sts_credentials(url, &body)
}

/// The form an STS action starts with.
fn sts_form(action: &str, role: &AwsRole) -> String {
    let session = match &role.session_name {
        Some(name) => name.clone(),
        None => {
            format!("pointwork-session-{}", SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()))
        }
    };
    format!(
        "Action={action}&Version={STS_VERSION}&RoleArn={}&RoleSessionName={}",
        form_encode(&role.role_arn),
        form_encode(&session)
    )
}

/// IMDSv2: a session token (`PUT /latest/api/token`), the instance role's name, its keys.
async fn instance_metadata(clients: &Clients, endpoint: &str) -> Result<Fetched, String> {
    let endpoint = endpoint.trim_end_matches('/');
    let client = &clients.metadata;
    let ttl = [("x-aws-ec2-metadata-token-ttl-seconds", IMDS_TOKEN_TTL_SECS)];
    let token = exchange(client, "PUT", &format!("{endpoint}/latest/api/token"), &ttl, b"").await?;
    let token = String::from_utf8(token).map_err(|_| "the instance metadata token is not text")?;
    let with_token = [("x-aws-ec2-metadata-token", token.trim())];
    let roles_url = format!("{endpoint}/latest/meta-data/iam/security-credentials/");
    let roles = exchange(client, "GET", &roles_url, &with_token, b"").await?;
    let roles = String::from_utf8_lossy(&roles);
    let role = roles.lines().map(str::trim).find(|l| !l.is_empty()).ok_or_else(|| format!("{roles_url}: no role"))?;
    let url = format!("{roles_url}{role}");
    let body = exchange(client, "GET", &url, &with_token, b"").await?;
    metadata_keys(&url, &body)
}

/// The JSON the container and instance metadata endpoints answer with.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct MetadataCredentials {
    access_key_id: String,
    secret_access_key: String,
    token: Option<String>,
    expiration: Option<String>,
}

fn metadata_keys(url: &str, body: &[u8]) -> Result<Fetched, String> {
    let answer: MetadataCredentials =
        serde_json::from_slice(body).map_err(|e| format!("{url}: not an AWS credentials answer: {e}"))?;
    let expires = answer.expiration.as_deref().map(|e| expiry(url, e)).transpose()?;
    let keys = AwsKeys {
        access_key_id: answer.access_key_id,
        secret_access_key: answer.secret_access_key,
        session_token: answer.token,
    };
    Ok(Fetched { keys, expires })
}

/// The `<Credentials>` of an STS answer (`AssumeRoleResult`, `AssumeRoleWithWebIdentityResult`).
fn sts_credentials(url: &str, body: &[u8]) -> Result<Fetched, String> {
    let text = std::str::from_utf8(body).map_err(|_| format!("STS {url}: the answer is not UTF-8"))?;
    let credentials =
        element(text, "Credentials").ok_or_else(|| format!("STS {url}: no <Credentials> in the answer"))?;
    let field = |name: &str| {
        element(credentials, name).map(unescape).ok_or_else(|| format!("STS {url}: no <{name}> in <Credentials>"))
    };
    let keys = AwsKeys {
        access_key_id: field("AccessKeyId")?,
        secret_access_key: field("SecretAccessKey")?,
        session_token: Some(field("SessionToken")?),
    };
    Ok(Fetched { keys, expires: Some(expiry(url, &field("Expiration")?)?) })
}

/// The text inside the first `<name>…</name>`.
fn element<'a>(xml: &'a str, name: &str) -> Option<&'a str> {
    let open = format!("<{name}>");
    let start = xml.find(&open)? + open.len();
    let end = xml[start..].find(&format!("</{name}>"))? + start;
    Some(xml[start..end].trim())
}

/// XML's five predefined entities replaced.
fn unescape(text: &str) -> String {
    text.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&apos;", "'").replace("&amp;", "&")
}

/// An ISO 8601 timestamp (`2026-12-06T14:00:00Z`).
fn expiry(url: &str, text: &str) -> Result<SystemTime, String> {
    let at = DateTime::from_str(text.trim(), Format::DateTime)
        .map_err(|e| format!("{url}: the expiration {text:?} is not a timestamp: {e}"))?;
    SystemTime::try_from(at).map_err(|e| format!("{url}: the expiration {text:?}: {e}"))
}

fn read_trimmed(file: &str, what: &str) -> Result<String, String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("cannot read {what} {file:?}: {e}"))?;
    Ok(text.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const ASSUME_ROLE_ANSWER: &str = r#"<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <AssumeRoleResult>
    <AssumedRoleUser><Arn>arn:aws:sts::123456789012:assumed-role/demo/s</Arn><AssumedRoleId>ARO:s</AssumedRoleId></AssumedRoleUser>
    <Credentials>
      <AccessKeyId>ASIAIOSFODNN7EXAMPLE</AccessKeyId>
      <SecretAccessKey>wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY</SecretAccessKey>
      <SessionToken>AQoDYXdzEPT//////////wEXAMPLEtc764&amp;x</SessionToken>
      <Expiration>2030-07-15T23:28:33.359Z</Expiration>
    </Credentials>
  </AssumeRoleResult>
</AssumeRoleResponse>"#;

    #[test]
    fn an_sts_answer_gives_its_keys_token_and_expiry() {
        let fetched = sts_credentials("https://sts", ASSUME_ROLE_ANSWER.as_bytes()).unwrap();
        assert_eq!(fetched.keys.access_key_id, "ASIAIOSFODNN7EXAMPLE");
        assert_eq!(fetched.keys.secret_access_key, "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY");
        assert_eq!(fetched.keys.session_token.as_deref(), Some("AQoDYXdzEPT//////////wEXAMPLEtc764&x"));
        let expires = fetched.expires.unwrap().duration_since(UNIX_EPOCH).unwrap().as_secs();
        assert_eq!(expires, 1_910_388_513);
        let broken = ASSUME_ROLE_ANSWER.replace("<SessionToken>", "<Other>");
        assert!(sts_credentials("https://sts", broken.as_bytes()).err().unwrap().contains("no <SessionToken>"));
    }

    #[test]
    fn a_metadata_answer_gives_its_keys() {
        let body = br#"{"Code":"Success","AccessKeyId":"ASIA1","SecretAccessKey":"s","Token":"t","Expiration":"2030-01-01T00:00:00Z"}"#;
        let fetched = metadata_keys("http://imds", body).unwrap();
        assert_eq!((fetched.keys.access_key_id.as_str(), fetched.keys.session_token.as_deref()), ("ASIA1", Some("t")));
        assert!(fetched.expires.is_some());
        assert!(metadata_keys("http://imds", b"{}").err().unwrap().contains("not an AWS credentials answer"));
    }

    #[test]
    fn the_sts_form_names_the_action_role_and_session() {
        let role = AwsRole {
            role_arn: "arn:aws:iam::123456789012:role/demo".into(),
            session_name: Some("my session".into()),
            external_id: None,
            sts_endpoint: "https://sts.us-east-1.amazonaws.com".into(),
            sts_region: "us-east-1".into(),
        };
        assert_eq!(
            sts_form("AssumeRole", &role),
            "Action=AssumeRole&Version=2011-06-15&RoleArn=arn%3Aaws%3Aiam%3A%3A123456789012%3Arole%2Fdemo&RoleSessionName=my+session"
        );
        let unnamed = AwsRole { session_name: None, ..role };
        assert!(sts_form("AssumeRole", &unnamed).contains("&RoleSessionName=pointwork-session-"));
    }
}
