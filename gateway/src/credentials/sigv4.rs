//! AWS Signature Version 4 with the `aws-sigv4` crate: the method, the path and query as sent,
//! the headers given and the body's SHA-256 are signed; the `x-amz-date`,
//! `x-amz-security-token` (with a session token) and `authorization` headers it gives are added
//! to the request.

use std::time::SystemTime;

use aws_credential_types::Credentials;
use aws_sigv4::http_request::{sign, SignableBody, SignableRequest, SigningSettings};
use aws_sigv4::sign::v4;
use aws_smithy_runtime_api::client::identity::Identity;
use pointwork_core::upstream_auth::AwsCredentials;

/// One deployment's credentials, ready to sign.
pub struct Signer {
    identity: Identity,
    region: String,
    service: String,
}

/// The parts of a request that are signed.
pub struct Signable<'a> {
    pub method: &'a str,
    /// The path and query exactly as sent.
    pub path: &'a str,
    /// The headers signed: `host` first (the URI's authority), then the others.
    pub headers: &'a [(&'a str, &'a str)],
    pub body: &'a [u8],
}

impl Signer {
    pub fn new(c: &AwsCredentials) -> Signer {
        let credentials = Credentials::new(
            c.access_key_id.clone(),
            c.secret_access_key.clone(),
            c.session_token.clone(),
            None,
            "pointwork-config",
        );
        Signer { identity: credentials.into(), region: c.region.clone(), service: c.service.clone() }
    }

    /// The headers to add to `request` signed at `time`, as `(name, value)`.
    pub fn headers(&self, request: &Signable<'_>, time: SystemTime) -> Result<Vec<(String, String)>, String> {
        let params = v4::SigningParams::builder()
            .identity(&self.identity)
            .region(&self.region)
            .name(&self.service)
            .time(time)
            .settings(SigningSettings::default())
            .build()
            .map_err(|e| format!("SigV4 parameters: {e}"))?
            .into();
        let host = request.headers.iter().find(|(name, _)| name.eq_ignore_ascii_case("host")).map_or("", |h| h.1);
        let uri = format!("https://{host}{}", request.path);
        let headers = request.headers.iter().copied();
        let signable = SignableRequest::new(request.method, uri, headers, SignableBody::Bytes(request.body))
            .map_err(|e| format!("SigV4: the request cannot be signed: {e}"))?;
        let (instructions, _signature) =
            sign(signable, &params).map_err(|e| format!("SigV4 signing failed: {e}"))?.into_parts();
        Ok(instructions.headers().map(|(name, value)| (name.to_string(), value.to_string())).collect())
    }
}

#[cfg(test)]
#[path = "sigv4_tests.rs"]
mod tests;
