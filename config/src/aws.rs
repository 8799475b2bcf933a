//! AWS Bedrock deployments (`bedrock/<model id>`, `bedrock/converse/<model id>`), read as LiteLLM
//! reads them: the credential keys (`aws_access_key_id`, `aws_role_name`, `aws_profile_name`, …;
//! which is used is [`crate::aws_credentials`]'s) and `aws_region_name` (else `AWS_REGION_NAME`,
//! `AWS_REGION`, `AWS_DEFAULT_REGION`, else LiteLLM's `us-west-2`); the
//! endpoint `api_base` or `aws_bedrock_runtime_endpoint` (else `AWS_BEDROCK_RUNTIME_ENDPOINT`,
//! else `https://bedrock-runtime.{region}.amazonaws.com`). Every request is signed with SigV4.

use pointwork_core::{Deployment, Provider};

use crate::aws_credentials::{bedrock_credential, CredentialKeys};
use crate::azure::lookup;
use crate::check::{Checker, Fields, KeyPath};
use crate::kinds;

/// LiteLLM's region when none is given.
pub const DEFAULT_REGION: &str = "us-west-2";

/// The keys LiteLLM reads that Pointwork does not serve yet.
const NOT_SERVED: [&str; 1] = ["aws_bedrock_runtime_endpoint_fips"];

/// The credential keys, each read as a string.
const CREDENTIAL_KEYS: [&str; 10] = [
    "aws_access_key_id",
    "aws_secret_access_key",
    "aws_session_token",
    "aws_region_name",
    "aws_role_name",
    "aws_session_name",
    "aws_profile_name",
    "aws_web_identity_token",
    "aws_sts_endpoint",
    "aws_external_id",
];

pub(crate) struct AwsParams {
    keys: CredentialKeys,
    region: Option<String>,
    endpoint: Option<(String, KeyPath)>,
    /// `model_id`: the id or ARN invoked instead of the model (an application inference profile).
    pub(crate) model_id: Option<String>,
    /// Every AWS key written, for the warning on another provider.
    written: Vec<KeyPath>,
    not_served: Vec<KeyPath>,
}

pub(crate) fn read_aws_params(c: &mut Checker, p: &mut Fields) -> AwsParams {
    let written: Vec<KeyPath> = CREDENTIAL_KEYS
        .iter()
        .chain(&["aws_bedrock_runtime_endpoint"])
        .filter(|k| p.is_set(k))
        .map(|k| p.path.key(k))
        .collect();
    let endpoint_path = p.path.key("aws_bedrock_runtime_endpoint");
    let endpoint = c.optional(p, "aws_bedrock_runtime_endpoint", &kinds::NON_EMPTY_STRING).map(|e| (e, endpoint_path));
    let not_served = NOT_SERVED.iter().filter_map(|k| p.take(k).map(|(_, path)| path)).collect();
    let model_id = c.optional(p, "model_id", &kinds::NON_EMPTY_STRING);
    let region = c.optional(p, "aws_region_name", &kinds::NON_EMPTY_STRING);
    let keys = CredentialKeys {
        access_key_id: c.optional(p, "aws_access_key_id", &kinds::NON_EMPTY_STRING),
        secret_access_key: c.optional(p, "aws_secret_access_key", &kinds::SECRET),
        session_token: c.optional(p, "aws_session_token", &kinds::SECRET),
        role_name: c.optional(p, "aws_role_name", &kinds::NON_EMPTY_STRING),
        session_name: c.optional(p, "aws_session_name", &kinds::NON_EMPTY_STRING),
        profile_name: c.optional(p, "aws_profile_name", &kinds::NON_EMPTY_STRING),
        web_identity_token: c.optional(p, "aws_web_identity_token", &kinds::SECRET),
        sts_endpoint: c.optional(p, "aws_sts_endpoint", &kinds::NON_EMPTY_STRING),
        external_id: c.optional(p, "aws_external_id", &kinds::NON_EMPTY_STRING),
    };
    AwsParams { model_id, keys, region, endpoint, written, not_served }
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

/// Sets a Bedrock deployment's credential ([`crate::aws_credentials`]), or says what is wrong;
/// on another provider the AWS keys are ignored with a warning.
pub(crate) fn apply_aws_params(c: &mut Checker, params: AwsParams, d: &mut Deployment, entry: &KeyPath) {
    if d.provider != Provider::Bedrock {
        let model_id = params.model_id.is_some().then(|| entry.key("model_id"));
        for path in params.written.iter().chain(&params.not_served).chain(&model_id) {
            c.warn(path, format!("ignored: only bedrock deployments read it (this one is {})", d.provider.prefix()));
        }
        return;
    }
    for path in &params.not_served {
        c.error(path, "not supported yet");
    }
    let region = region(c, &params);
    if let Some(auth) = bedrock_credential(c, &params.keys, &region, entry) {
        d.auth = Some(Box::new(auth));
    }
}
