//! Which AWS credentials a Bedrock deployment signs with, in LiteLLM's order (each key falling
//! back to the environment variable LiteLLM reads for it):
//!
//! 1. `aws_web_identity_token` (`AWS_WEB_IDENTITY_TOKEN`) with `aws_role_name`
//!    (`AWS_ROLE_NAME`): STS `AssumeRoleWithWebIdentity`;
//! 2. `aws_role_name`: STS `AssumeRole`, signed with the entry's keys or, without them, the
//!    default chain's credentials; `aws_session_name`, `aws_external_id`, `aws_sts_endpoint`;
//! 3. `aws_profile_name` (`AWS_PROFILE_NAME`): that profile of the shared files;
//! 4. `aws_access_key_id` with `aws_secret_access_key` (and `aws_session_token`): fixed keys;
//! 5. else AWS's default chain, as boto3 walks it: web identity from `AWS_WEB_IDENTITY_TOKEN_FILE`
//!    with `AWS_ROLE_ARN` (and `AWS_ROLE_SESSION_NAME`), the shared files' profile (`AWS_PROFILE`
//!    or `default`), the container credentials endpoint (`AWS_CONTAINER_CREDENTIALS_FULL_URI` or
//!    `…_RELATIVE_URI`), then EC2's instance metadata service (`AWS_EC2_METADATA_SERVICE_ENDPOINT`,
//!    else `http://169.254.169.254`) — which is the last resort: a deployment that reaches it is
//!    started with a warning and its requests fail, with the reason, until it answers.
//!
//! STS is `aws_sts_endpoint`, else `AWS_STS_ENDPOINT`, else `AWS_ENDPOINT_URL_STS`, else
//! `https://sts.{region}.amazonaws.com`; its requests are signed for the region in its host, else
//! `AWS_REGION`, `AWS_DEFAULT_REGION`, else the deployment's region.

use pointwork_core::upstream_auth::{AwsCredentials, AwsKeys, AwsObtained, AwsRole, AwsSource, WebIdentityToken};
use pointwork_core::UpstreamAuth;

use crate::aws_profile::{Profile, SharedFiles};
use crate::azure::lookup;
use crate::check::{Checker, KeyPath};

const CONTAINER_HOST: &str = "http://169.254.170.2";
const INSTANCE_METADATA: &str = "http://169.254.169.254";
/// How deep `source_profile` chains are followed.
const MAX_PROFILE_DEPTH: usize = 4;

/// The credential keys an entry writes (`aws_access_key_id`, `aws_role_name`, …), as read.
pub(crate) struct CredentialKeys {
    pub(crate) access_key_id: Option<String>,
    pub(crate) secret_access_key: Option<String>,
    pub(crate) session_token: Option<String>,
    pub(crate) role_name: Option<String>,
    pub(crate) session_name: Option<String>,
    pub(crate) profile_name: Option<String>,
    pub(crate) web_identity_token: Option<String>,
    pub(crate) sts_endpoint: Option<String>,
    pub(crate) external_id: Option<String>,
}

/// A Bedrock deployment's credential; `None` after an error.
pub(crate) fn bedrock_credential(
    c: &mut Checker,
    p: &CredentialKeys,
    region: &str,
    entry: &KeyPath,
) -> Option<UpstreamAuth> {
    let param = |c: &Checker, value: &Option<String>, env: &str| value.clone().or_else(|| lookup(c, env));
    let access_key_id = param(c, &p.access_key_id, "AWS_ACCESS_KEY_ID");
    let secret_access_key = param(c, &p.secret_access_key, "AWS_SECRET_ACCESS_KEY");
    let session_token = param(c, &p.session_token, "AWS_SESSION_TOKEN");
    let role_name = param(c, &p.role_name, "AWS_ROLE_NAME");
    let web_identity_token = param(c, &p.web_identity_token, "AWS_WEB_IDENTITY_TOKEN");
    let profile_name = param(c, &p.profile_name, "AWS_PROFILE_NAME");
    let keys = match (access_key_id, secret_access_key) {
        (Some(access_key_id), Some(secret_access_key)) => {
            Some(AwsKeys { access_key_id, secret_access_key, session_token })
        }
        (None, None) => None,
        // Half a pair in the environment alone is passed over, as boto3's chain does.
        _ if p.access_key_id.is_none() && p.secret_access_key.is_none() => None,
        (None, Some(_)) => {
            c.error(
                entry.key("aws_access_key_id"),
                "aws_secret_access_key is given without aws_access_key_id (or AWS_ACCESS_KEY_ID)",
            );
            return None;
        }
        (Some(_), None) => {
            c.error(
                entry.key("aws_secret_access_key"),
                "aws_access_key_id is given without aws_secret_access_key (or AWS_SECRET_ACCESS_KEY)",
            );
            return None;
        }
    };
    let sts = Sts::new(c, p, region, entry)?;
    let source = if let Some(role_arn) = role_name {
        let role = sts.role(
            role_arn,
            param(c, &p.session_name, "AWS_SESSION_NAME"),
            param(c, &p.external_id, "AWS_EXTERNAL_ID"),
        );
        match (web_identity_token, keys) {
            (Some(token), _) => AwsSource::WebIdentity { token: WebIdentityToken::Value(token), role },
            (None, Some(keys)) => AwsSource::AssumeRole { base: Box::new(AwsSource::Keys(keys)), role },
            (None, None) => AwsSource::AssumeRole { base: Box::new(default_chain(c, &sts, entry)), role },
        }
    } else if let Some(name) = profile_name {
        let files = SharedFiles::read(c);
        match profile_source(c, &files, &name, &sts, 0) {
            Ok(source) => source,
            Err(why) => {
                c.error(entry.key("aws_profile_name"), format!("profile {name:?}: {why} (in {})", files.described));
                return None;
            }
        }
    } else if let Some(keys) = keys {
        AwsSource::Keys(keys)
    } else {
        default_chain(c, &sts, entry)
    };
    Some(match source {
        AwsSource::Keys(keys) => UpstreamAuth::AwsSigV4(AwsCredentials {
            access_key_id: keys.access_key_id,
            secret_access_key: keys.secret_access_key,
            session_token: keys.session_token,
            region: region.to_string(),
            service: "bedrock".into(),
        }),
        source => {
            UpstreamAuth::AwsObtained(AwsObtained { source, region: region.to_string(), service: "bedrock".into() })
        }
    })
}

/// Where STS is and what region its requests are signed for.
struct Sts {
    endpoint: Option<String>,
    region: String,
}

impl Sts {
    fn new(c: &mut Checker, p: &CredentialKeys, region: &str, entry: &KeyPath) -> Option<Sts> {
        let (written, path) = match (&p.sts_endpoint, lookup(c, "AWS_STS_ENDPOINT"), lookup(c, "AWS_ENDPOINT_URL_STS"))
        {
            (Some(endpoint), _, _) => (Some(endpoint.clone()), entry.key("aws_sts_endpoint").to_string()),
            (None, Some(env), _) => (Some(env), "AWS_STS_ENDPOINT (environment)".to_string()),
            (None, None, Some(env)) => (Some(env), "AWS_ENDPOINT_URL_STS (environment)".to_string()),
            (None, None, None) => (None, String::new()),
        };
        let endpoint = match written.map(|e| crate::api_base::parse_api_base(&e)) {
            Some(Ok(endpoint)) => Some(endpoint),
            Some(Err(why)) => {
                c.error(path, why);
                return None;
            }
            None => None,
        };
        let region = endpoint
            .as_deref()
            .and_then(region_in_sts_host)
            .or_else(|| lookup(c, "AWS_REGION"))
            .or_else(|| lookup(c, "AWS_DEFAULT_REGION"))
            .unwrap_or_else(|| region.to_string());
        Some(Sts { endpoint, region })
    }

    fn role(&self, role_arn: String, session_name: Option<String>, external_id: Option<String>) -> AwsRole {
        AwsRole {
            role_arn,
            session_name,
            external_id,
            sts_endpoint: self.endpoint.clone().unwrap_or_else(|| format!("https://sts.{}.amazonaws.com", self.region)),
            sts_region: self.region.clone(),
        }
    }
}

/// The region of `https://sts.{region}.amazonaws.com` (and its FIPS and VPC endpoint forms).
fn region_in_sts_host(url: &str) -> Option<String> {
    let host = url.split("://").nth(1)?.split(['/', ':']).next()?;
    let labels: Vec<&str> = host.split('.').collect();
    let at = labels.iter().position(|l| *l == "sts" || *l == "sts-fips")?;
    let region = labels.get(at + 1)?;
    let rest = labels[at + 2..].join(".");
    let known = ["amazonaws.com", "amazonaws.com.cn", "vpce.amazonaws.com"];
    known.contains(&rest.as_str()).then(|| region.to_string())
}

/// AWS's default chain beyond the environment's keys (checked before): see the module's list.
fn default_chain(c: &mut Checker, sts: &Sts, entry: &KeyPath) -> AwsSource {
    if let (Some(file), Some(role_arn)) = (lookup(c, "AWS_WEB_IDENTITY_TOKEN_FILE"), lookup(c, "AWS_ROLE_ARN")) {
        let role = sts.role(role_arn, lookup(c, "AWS_ROLE_SESSION_NAME"), None);
        return AwsSource::WebIdentity { token: WebIdentityToken::File(file), role };
    }
    let files = SharedFiles::read(c);
    let name = lookup(c, "AWS_PROFILE").unwrap_or_else(|| "default".into());
    if files.profile(&name).is_some() {
        match profile_source(c, &files, &name, sts, 0) {
            Ok(source) => return source,
            Err(why) => c.warn(entry, format!("AWS profile {name:?} is not used: {why} (in {})", files.described)),
        }
    }
    if let Some(source) = container(c) {
        return source;
    }
    let endpoint = instance_metadata_endpoint(c);
    c.warn(
        entry,
        format!(
            "no AWS credentials in the entry, the environment, {} or a container's settings: they are asked of EC2's instance metadata service at {endpoint}, and this deployment's requests fail until it answers",
            files.described
        ),
    );
    AwsSource::InstanceMetadata { endpoint }
}

/// EC2's instance metadata service: `AWS_EC2_METADATA_SERVICE_ENDPOINT`, else its link-local address.
fn instance_metadata_endpoint(c: &Checker) -> String {
    lookup(c, "AWS_EC2_METADATA_SERVICE_ENDPOINT").unwrap_or_else(|| INSTANCE_METADATA.into())
}

/// The environment's key pair (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`).
fn environment_keys(c: &Checker) -> Option<AwsSource> {
    Some(AwsSource::Keys(AwsKeys {
        access_key_id: lookup(c, "AWS_ACCESS_KEY_ID")?,
        secret_access_key: lookup(c, "AWS_SECRET_ACCESS_KEY")?,
        session_token: lookup(c, "AWS_SESSION_TOKEN"),
    }))
}

/// The container credentials endpoint, when the environment names one.
fn container(c: &Checker) -> Option<AwsSource> {
    let url = lookup(c, "AWS_CONTAINER_CREDENTIALS_FULL_URI").or_else(|| {
        lookup(c, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI").map(|path| format!("{CONTAINER_HOST}{path}"))
    })?;
    Some(AwsSource::Container {
        url,
        authorization: lookup(c, "AWS_CONTAINER_AUTHORIZATION_TOKEN"),
        authorization_file: lookup(c, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"),
    })
}

/// A profile's source: its fixed keys, or the role it assumes from its base.
fn profile_source(c: &Checker, files: &SharedFiles, name: &str, sts: &Sts, depth: usize) -> Result<AwsSource, String> {
    let profile = files.profile(name).ok_or("no such profile")?;
    let get = |key: &str| profile.get(key).filter(|v| !v.is_empty()).cloned();
    let Some(role_arn) = get("role_arn") else {
        return keys_of(profile)
            .ok_or_else(|| "it has neither aws_access_key_id with aws_secret_access_key nor role_arn".into());
    };
    let role = AwsRole {
        role_arn,
        session_name: get("role_session_name"),
        external_id: get("external_id"),
        ..sts.role(String::new(), None, None)
    };
    if let Some(file) = get("web_identity_token_file") {
        return Ok(AwsSource::WebIdentity { token: WebIdentityToken::File(file), role });
    }
    let base = match (get("source_profile"), get("credential_source")) {
        (Some(source), _) if source == name => keys_of(profile).ok_or("its source_profile is itself, without keys")?,
        (Some(_), _) if depth >= MAX_PROFILE_DEPTH => return Err("source_profile chains deeper than 4".into()),
        (Some(source), _) => {
            let base = profile_source(c, files, &source, sts, depth + 1);
            base.map_err(|why| format!("source_profile {source:?}: {why}"))?
        }
        (None, Some(kind)) => match kind.as_str() {
            "Ec2InstanceMetadata" => AwsSource::InstanceMetadata { endpoint: instance_metadata_endpoint(c) },
            "EcsContainer" => {
                container(c).ok_or("credential_source EcsContainer, but no AWS_CONTAINER_CREDENTIALS_* is set")?
            }
            "Environment" => environment_keys(c)
                .ok_or("credential_source Environment, but AWS_ACCESS_KEY_ID or AWS_SECRET_ACCESS_KEY is not set")?,
            _ => {
                return Err(format!(
                    "credential_source {kind:?} is not one of Ec2InstanceMetadata, EcsContainer, Environment"
                ))
            }
        },
        (None, None) => {
            return Err("role_arn without source_profile, credential_source or web_identity_token_file".into())
        }
    };
    Ok(AwsSource::AssumeRole { base: Box::new(base), role })
}

fn keys_of(profile: &Profile) -> Option<AwsSource> {
    let get = |key: &str| profile.get(key).filter(|v| !v.is_empty()).cloned();
    Some(AwsSource::Keys(AwsKeys {
        access_key_id: get("aws_access_key_id")?,
        secret_access_key: get("aws_secret_access_key")?,
        session_token: get("aws_session_token"),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sts_region_is_read_from_its_host() {
        assert_eq!(region_in_sts_host("https://sts.eu-west-1.amazonaws.com").as_deref(), Some("eu-west-1"));
        assert_eq!(
            region_in_sts_host("https://vpce-1a.sts.us-east-2.vpce.amazonaws.com").as_deref(),
            Some("us-east-2")
        );
        assert_eq!(region_in_sts_host("https://sts-fips.us-west-2.amazonaws.com/").as_deref(), Some("us-west-2"));
        assert_eq!(region_in_sts_host("https://sts.amazonaws.com"), None);
        assert_eq!(region_in_sts_host("http://127.0.0.1:9"), None);
    }
}
