//! AWS Bedrock deployments (`bedrock/<model id>`, `bedrock/converse/<model id>`), read as LiteLLM
//! reads them: `aws_access_key_id`, `aws_secret_access_key`, `aws_session_token` and
//! `aws_region_name` (else `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`,
//! `AWS_REGION_NAME`, `AWS_REGION`, `AWS_DEFAULT_REGION`, else LiteLLM's `us-west-2`); the
//! endpoint `api_base` or `aws_bedrock_runtime_endpoint` (else `AWS_BEDROCK_RUNTIME_ENDPOINT`,
//! else `https://bedrock-runtime.{region}.amazonaws.com`). Every request is signed with SigV4.
//! Role assumption, profiles and web identity are not served yet: such a key is an error.

use pointwork_core::upstream_auth::AwsCredentials;
use pointwork_core::{Deployment, Provider, UpstreamAuth};

use crate::azure::lookup;
use crate::check::{Checker, Fields, KeyPath};
use crate::kinds;

/// LiteLLM's region when none is given.
pub const DEFAULT_REGION: &str = "us-west-2";

/// The credential keys LiteLLM reads that Pointwork does not serve yet.
const NOT_SERVED: [&str; 7] = [
    "aws_role_name",
    "aws_session_name",
    "aws_profile_name",
    "aws_web_identity_token",
    "aws_sts_endpoint",
    "aws_external_id",
    "aws_bedrock_runtime_endpoint_fips",
];

pub(crate) struct AwsParams {
    access_key_id: Option<String>,
    secret_access_key: Option<String>,
    session_token: Option<String>,
    region: Option<String>,
    endpoint: Option<(String, KeyPath)>,
    /// `model_id`: the id or ARN invoked instead of the model (an application inference profile).
    pub(crate) model_id: Option<String>,
    /// Every AWS key written, for the warning on another provider.
    written: Vec<KeyPath>,
    not_served: Vec<KeyPath>,
}

pub(crate) fn read_aws_params(c: &mut Checker, p: &mut Fields) -> AwsParams {
    let keys = ["aws_access_key_id", "aws_secret_access_key", "aws_session_token", "aws_region_name"];
    let written: Vec<KeyPath> =
        keys.iter().chain(&["aws_bedrock_runtime_endpoint"]).filter(|k| p.is_set(k)).map(|k| p.path.key(k)).collect();
    let endpoint_path = p.path.key("aws_bedrock_runtime_endpoint");
    let endpoint = c.optional(p, "aws_bedrock_runtime_endpoint", &kinds::NON_EMPTY_STRING).map(|e| (e, endpoint_path));
    let not_served = NOT_SERVED.iter().filter_map(|k| p.take(k).map(|(_, path)| path)).collect();
    AwsParams {
        model_id: c.optional(p, "model_id", &kinds::NON_EMPTY_STRING),
        access_key_id: c.optional(p, "aws_access_key_id", &kinds::NON_EMPTY_STRING),
        secret_access_key: c.optional(p, "aws_secret_access_key", &kinds::SECRET),
        session_token: c.optional(p, "aws_session_token", &kinds::SECRET),
        region: c.optional(p, "aws_region_name", &kinds::NON_EMPTY_STRING),
        endpoint,
        written,
        not_served,
    }
}

/// The Bedrock runtime endpoint: `api_base`, else `aws_bedrock_runtime_endpoint`, else
/// `AWS_BEDROCK_RUNTIME_ENDPOINT`, else the region's.
pub(crate) fn bedrock_api_base(c: &mut Checker, written: Option<String>, params: &AwsParams) -> Option<String> {
    let endpoint = match (written, &params.endpoint) {
        (Some(base), _) => base,
        (None, Some((endpoint, path))) => match crate::api_base::parse_api_base(endpoint) {
            Ok(base) => base,
            Err(e) => {
                c.error(path, e);
                return None;
            }
        },
        (None, None) => match lookup(c, "AWS_BEDROCK_RUNTIME_ENDPOINT") {
            Some(env) => match crate::api_base::parse_api_base(&env) {
                Ok(base) => base,
                Err(e) => {
                    c.error("AWS_BEDROCK_RUNTIME_ENDPOINT (environment)", e);
                    return None;
                }
            },
            None => format!("https://bedrock-runtime.{}.amazonaws.com", region(c, params)),
        },
    };
    Some(endpoint.trim_end_matches('/').to_string())
}

fn region(c: &Checker, params: &AwsParams) -> String {
    params
        .region
        .clone()
        .or_else(|| ["AWS_REGION_NAME", "AWS_REGION", "AWS_DEFAULT_REGION"].iter().find_map(|n| lookup(c, n)))
        .unwrap_or_else(|| DEFAULT_REGION.to_string())
}

/// LiteLLM's Bedrock route prefixes (`bedrock/converse/…`, `bedrock/invoke/…`,
/// `bedrock/deepseek_r1/{arn}`, …): they pick LiteLLM's request format, not the model.
const ROUTE_PREFIXES: [&str; 7] = ["converse/", "invoke/", "deepseek_r1/", "llama/", "nova/", "qwen2/", "qwen3/"];

/// Bedrock's model id: `model_id` when given (an application inference profile's ARN), else
/// the model without LiteLLM's route prefix; every chat goes through Converse here.
pub(crate) fn bedrock_model_id<'a>(upstream: &'a str, params: &'a AwsParams) -> &'a str {
    if let Some(id) = &params.model_id {
        return id;
    }
    ROUTE_PREFIXES.iter().find_map(|p| upstream.strip_prefix(p)).unwrap_or(upstream)
}

/// Sets a Bedrock deployment's SigV4 credentials, or says what is missing; on another provider
/// the AWS keys are ignored with a warning.
pub(crate) fn apply_aws_params(c: &mut Checker, params: AwsParams, d: &mut Deployment, entry: &KeyPath) {
    if d.provider != Provider::Bedrock {
        let model_id = params.model_id.is_some().then(|| entry.key("model_id"));
        for path in params.written.iter().chain(&params.not_served).chain(&model_id) {
            c.warn(path, format!("ignored: only bedrock deployments read it (this one is {})", d.provider.prefix()));
        }
        return;
    }
    for path in &params.not_served {
        c.error(path, "not supported yet: give aws_access_key_id and aws_secret_access_key (and aws_session_token)");
    }
    let region = region(c, &params);
    let access_key_id = params.access_key_id.clone().or_else(|| lookup(c, "AWS_ACCESS_KEY_ID"));
    let secret_access_key = params.secret_access_key.clone().or_else(|| lookup(c, "AWS_SECRET_ACCESS_KEY"));
    let session_token = params.session_token.clone().or_else(|| lookup(c, "AWS_SESSION_TOKEN"));
    match (access_key_id, secret_access_key) {
        (Some(access_key_id), Some(secret_access_key)) => {
            d.auth = Some(Box::new(UpstreamAuth::AwsSigV4(AwsCredentials {
                access_key_id,
                secret_access_key,
                session_token,
                region,
                service: "bedrock".to_string(),
            })));
        }
        (None, _) => c.error(
            entry.key("aws_access_key_id"),
            "required for bedrock: aws_access_key_id (or AWS_ACCESS_KEY_ID) with aws_secret_access_key",
        ),
        (Some(_), None) => c.error(
            entry.key("aws_secret_access_key"),
            "required for bedrock: aws_secret_access_key (or AWS_SECRET_ACCESS_KEY) with aws_access_key_id",
        ),
    }
}
